#!/bin/sh
# diagonal.sh: the diagonal alignment, a baseline for aer.sh: target word
# j of n links to source word floor((j + 1/2) m / n) of m, from 0.
#
# usage: tools/diagonal.sh SOURCE TARGET > pharaoh
set -eu
[ $# -eq 2 ] || { echo "usage: $0 SOURCE TARGET" >&2; exit 2; }
paste -d '\t' "$1" "$2" | awk -F '\t' '{
	m = split($1, s, " "); n = split($2, t, " ")
	out = ""
	for (j = 0; j < n && m > 0; j++)
		out = out (j ? " " : "") int((j + 0.5) * m / n) "-" j
	print out
}'
