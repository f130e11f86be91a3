#!/bin/sh
# names.sh: how the proper names of a Spanish text come through in English
# translations of it.
#
# usage: tools/names.sh ES EN GOLD [-t TRAIN_EN] HYP...
#
# ES and EN are the source and its reference, GOLD a Pharaoh alignment of
# them (strongs-gold.sh's dev.possible), line for line with HYP.  A name
# is a word capitalised in the middle of a Spanish line: not its first
# word, nor the first after a word ending in . ? ! : or ;.  Its English
# counterparts are the capitalised words of EN that GOLD links to it; if
# there are none, the name itself when EN's line has it (a name spelt the
# same in both languages); else it has none and is not counted.  Words
# are compared without the punctuation around them and without an
# English possessive ('s, s').  A name comes through in a line of HYP that
# holds one of its counterparts.  With -t, names whose counterparts occur
# fewer than 20 times in all in TRAIN_EN are also counted apart as rare.
#
# Prints the names' counts, then for each HYP "HYP: X of N names (P%)",
# and the rare ones.
#
# usage: tools/names.sh -l ES
#
# Lists the capitalised words of ES that count as names by the rule
# above, whether or not they have a counterpart: one line each, the line
# number (from 1) and the word without its punctuation, tab-separated.
set -eu
# The patterns below match bytes (\200-\377, UTF-8 sequences spelt byte by
# byte): in a UTF-8 locale gawk reads them as characters and refuses the
# ranges ("Invalid collation character").
export LC_ALL=C
usage() {
	echo "usage: $0 ES EN GOLD [-t TRAIN_EN] HYP..." >&2
	echo "       $0 -l ES" >&2
	exit 2
}
list=0 train=/dev/null
if [ "${1:-}" = -l ]; then
	[ $# -eq 2 ] || usage
	list=1 es=$2 en=/dev/null gold=/dev/null
	shift 2
else
	[ $# -ge 4 ] || usage
	es=$1 en=$2 gold=$3
	shift 3
	if [ "$1" = -t ]; then
		train=$2
		shift 2
	fi
	[ $# -ge 1 ] || { echo "$0: no HYP" >&2; exit 2; }
fi
for f in "$es" "$en" "$gold" "$train" "$@"; do
	[ -r "$f" ] || { echo "$0: $f: cannot read" >&2; exit 1; }
done
awk -v es="$es" -v en="$en" -v gold="$gold" -v train="$train" \
    -v list="$list" -f /dev/fd/3 "$@" 3<<'EOF2'
# the word without the punctuation around it nor a possessive
function bare(w) {
	gsub(/^([^A-Za-z0-9\200-\377]|\302[\241\253\277]|\342\200[\230\234])+/,
	     "", w)
	gsub(/([^A-Za-z0-9\200-\377]|\302\273|\342\200[\231\235])+$/, "", w)
	sub(/(\342\200\231|')s?$/, "", w)
	return w
}
function capital(w) {
	return w ~ /^([A-Z]|\303[\200-\236])/
}
BEGIN {
	while ((getline l < es) > 0) {
		L++
		getline e < en
		getline g < gold
		ne = split(e, ew, /[ \t]+/)
		for (j = 1; j <= ne; j++) ew[j] = bare(ew[j])
		for (k in byword) delete byword[k]
		for (j = 1; j <= ne; j++) byword[ew[j]] = 1
		ng = split(g, gl, " ")
		ns = split(l, sw, /[ \t]+/)
		for (i = 2; i <= ns; i++) {
			# after a sentence's end, closing quotes and all
			if (sw[i - 1] ~ /[.?!:;][^A-Za-z0-9]*$/)
				continue
			w = bare(sw[i])
			if (!capital(w))
				continue
			if (list) {
				print L "\t" w
				continue
			}
			c = ""
			for (k = 1; k <= ng; k++) {
				split(gl[k], p, "-")
				if (p[1] == i - 1 && capital(ew[p[2] + 1]) &&
				    index(" " c " ", " " ew[p[2] + 1] " ") == 0)
					c = c (c == "" ? "" : " ") ew[p[2] + 1]
			}
			if (c != "")
				bystrong++
			else if (w in byword) {
				c = w
				byspell++
			} else {
				none++
				continue
			}
			N++
			nl[N] = L; cp[N] = c
			if (!(w in seen)) { seen[w] = 1; distinct++ }
			nc = split(c, cc, " ")
			for (k = 1; k <= nc; k++) want[cc[k]] = 0
		}
	}
	if (list)
		exit
	# how often each counterpart occurs in TRAIN_EN
	while ((getline t < train) > 0) {
		n = split(t, tw, /[ \t]+/)
		for (j = 1; j <= n; j++) {
			w = bare(tw[j])
			if (w in want) want[w]++
		}
	}
	for (i = 1; i <= N; i++) {
		nc = split(cp[i], cc, " ")
		f = 0
		for (k = 1; k <= nc; k++) f += want[cc[k]]
		rare[i] = train != "/dev/null" && f < 20
		R += rare[i]
	}
	printf "names: %d in %d lines (%d distinct); counterparts by Strong's " \
	       "%d, by spelling %d; %d names without one left out\n", N, L,
	       distinct, bystrong, byspell, none
}
FNR == 1 {
	if (file != "")
		report()
	file = FILENAME
	for (i = 1; i <= N; i++) got[i] = 0
}
{
	lines = FNR
	n = split($0, hw, /[ \t]+/)
	for (k in inhyp) delete inhyp[k]
	for (j = 1; j <= n; j++) inhyp[bare(hw[j])] = 1
	while (at < N && nl[at + 1] == FNR) {
		at++
		nc = split(cp[at], cc, " ")
		for (k = 1; k <= nc; k++)
			if (cc[k] in inhyp) { got[at] = 1; break }
	}
}
function report(   i, x, xr) {
	if (lines != L) {
		printf "names.sh: %s: %d lines, not %d\n", file, lines, L \
			> "/dev/stderr"
		exit 1
	}
	for (i = 1; i <= N; i++) { x += got[i]; xr += got[i] && rare[i] }
	printf "%s: %d of %d names (%.1f%%)", file, x, N, N ? 100 * x / N : 0
	if (train != "/dev/null")
		printf "; rare (< 20 in %s): %d of %d (%.1f%%)", train, xr, R,
		       R ? 100 * xr / R : 0
	printf "\n"
	at = 0
}
END { if (file != "") report() }
EOF2
