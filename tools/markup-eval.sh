#!/bin/sh
# markup-eval.sh: how well an alignment projects a tag, against a gold.
#
# usage: tools/markup-eval.sh SRC TGT SURE ALIGNMENT
#
# SRC and TGT hold the pairs (a line each), SURE the gold's sure links
# and ALIGNMENT the links to judge (Pharaoh "i-j", i a word of SRC, j of
# TGT, from 0), line for line.  For each sure link i-j that is the only
# sure link of both words (a one-to-one pair: the gold says where a tag
# around word i belongs), the line of SRC with <b> and </b> around word
# i goes through examples/markup.awk's projection onto the line of TGT by
# ALIGNMENT, as examples/translate-markup.sh -t does.  Prints one line:
#
#	cases 9319 exact 84.5 more 5.2 wrong 10.3 none 0.0
#
# the cases, then the percentages of them where the bold words of the
# output are word j alone, j and others, only others, and none (the
# element empty).
set -eu
[ $# -eq 4 ] || { echo "usage: $0 SRC TGT SURE ALIGNMENT" >&2; exit 2; }
for f in "$@"; do
	[ -r "$f" ] || { echo "$0: $f: cannot read" >&2; exit 1; }
done
n=$(wc -l < "$1")
for f in "$2" "$3" "$4"; do
	[ "$(wc -l < "$f")" -eq "$n" ] ||
		{ echo "$0: $f has $(wc -l < "$f") lines, $1 $n" >&2; exit 1; }
done
mk=$(dirname "$0")/../examples/markup.awk
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

# the cases: SRC's line marked (stdout), and "LINE J" in key
awk -v sure="$3" -v key="$tmp/key" '{
	getline g < sure
	split("", ns); split("", nt)
	m = split(g, p, " ")
	for (k = 1; k <= m; k++) {
		split(p[k], ij, "-"); ns[ij[1]]++; nt[ij[2]]++
	}
	nw = split($0, w, " ")
	for (k = 1; k <= m; k++) {
		split(p[k], ij, "-")
		if (ns[ij[1]] != 1 || nt[ij[2]] != 1)
			continue
		o = ""
		for (x = 1; x <= nw; x++)
			o = o (x > 1 ? " " : "") \
			    (x - 1 == ij[1] ? "<b>" w[x] "</b>" : w[x])
		print o
		print NR, ij[2] > key
	}
}' "$1" > "$tmp/marked"
awk -v mode=strip -v tags="$tmp/tags" -f "$mk" < "$tmp/marked" > /dev/null
awk -v tgt="$2" -v al="$4" 'BEGIN {
	while ((getline t < tgt) > 0) { getline a < al; T[++n] = t; A[n] = a }
} { print T[$1] " ||| " A[$1] }' "$tmp/key" |
	awk -v mode=project -v tags="$tmp/tags" -f "$mk" > "$tmp/out"

# the bold words of each output: those with text inside <b>
awk -v key="$tmp/key" '{
	getline k < key; split(k, kk, " ")
	nt = split($0, t, " ")
	bold = hit = 0
	for (x = 1; x <= nt; x++) {
		s = t[x]; in_b = 0
		while (s != "") {
			if (match(s, /^<[^<>]*>/)) {
				if (substr(s, 1, RLENGTH) == "<b>") depth++
				else if (substr(s, 1, RLENGTH) == "</b>") depth--
				s = substr(s, RLENGTH + 1)
			} else {
				if (depth > 0) in_b = 1
				match(s, /^[^<]+/)
				s = substr(s, RLENGTH > 0 ? RLENGTH + 1 : 2)
			}
		}
		if (in_b) { bold++; if (x - 1 == kk[2]) hit = 1 }
	}
	N++
	if (hit && bold == 1) exact++
	else if (hit) more++
	else if (bold) wrong++
	else none++
} END {
	if (!N) { print "cases 0"; exit }
	printf "cases %d exact %.1f more %.1f wrong %.1f none %.1f\n", N,
	       100 * exact / N, 100 * more / N, 100 * wrong / N, 100 * none / N
}' "$tmp/out"
