#!/bin/sh
# repeats.sh: how many lines of a text loop: a phrase of 1 to 6 words
# said three times in a row ("and and and", "the son of the son of the son
# of").  Words are the line's space-separated words, compared as they
# are (case and punctuation count: "holy, holy, holy," repeats).
#
# usage: tools/repeats.sh [-l] FILE...
#
# Prints "FILE: N of M lines repeat (P%)"; with -l also each such line's
# number and its first repeated phrase.
set -eu
list=0
[ "${1:-}" = -l ] && { list=1; shift; }
[ $# -ge 1 ] || { echo "usage: $0 [-l] FILE..." >&2; exit 2; }
for f in "$@"; do
	[ -r "$f" ] || { echo "$0: $f: cannot read" >&2; exit 1; }
	awk -v list="$list" -v name="$f" '
	{
		n = split($0, w, /[ \t]+/)
		if (n > 0 && w[1] == "") { for (i = 1; i < n; i++) w[i] = w[i+1]; n-- }
		hit = ""
		for (k = 1; k <= 6 && hit == ""; k++)
			for (i = 1; i + 3 * k - 1 <= n && hit == ""; i++) {
				for (j = 0; j < 2 * k; j++)
					if (w[i + j] != w[i + j + k])
						break
				if (j == 2 * k) {
					hit = w[i]
					for (j = 1; j < k; j++)
						hit = hit " " w[i + j]
				}
			}
		if (hit != "") {
			r++
			if (list)
				printf "%s:%d: %s\n", name, NR, hit
		}
	}
	END { printf "%s: %d of %d lines repeat (%.1f%%)\n", name, r, NR,
		     NR ? 100 * r / NR : 0 }' "$f"
done
