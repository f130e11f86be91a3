#!/bin/sh
# aer.sh: the alignment error rate, precision and recall of a Pharaoh
# alignment against a gold one (Och and Ney 2003), over all lines.
#
# usage: tools/aer.sh [-t TAGGED] HYP SURE [POSSIBLE]
#
# HYP, SURE and POSSIBLE hold "i-j" pairs, line for line; POSSIBLE holds
# the sure links too (those of SURE not in it are added).  With A the
# hypothesis' links, S the sure and P the possible ones, summed over lines:
#
#	precision = |A & P| / |A|, recall = |A & S| / |S|,
#	AER = 1 - (|A & S| + |A & P|) / (|A| + |S|)
#
# Without POSSIBLE, P = S and AER = 1 - F1.  Prints one line:
# "AER 59.5 P 41.2 R 38.1 |A| 1234 |S| 567 |P| 890" (percentages).
#
# -t TAGGED (strongs-gold.sh's dev.tagged: each line the target words,
# from 0, that the gold could link) drops the hypothesis' links of every
# other target word before counting.  A gold made from a partial
# annotation (Strong's numbers tag about half of the KJV's words) has no
# link for the words it does not tag, so the AER without -t also counts
# the hypothesis' choice of which words to link; with -t it counts only
# the links of words the gold has judged.
set -eu
usage() { echo "usage: $0 [-t TAGGED] HYP SURE [POSSIBLE]" >&2; exit 2; }
tagged=
while getopts t: o; do
	case $o in
	t) tagged=$OPTARG ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 2 ] || [ $# -eq 3 ] || usage
for f in "$@" ${tagged:+"$tagged"}; do
	[ -r "$f" ] || { echo "$0: $f: cannot read" >&2; exit 1; }
done
poss=${3:-$2}
n=$(wc -l < "$1")
for f in "$2" "$poss" ${tagged:+"$tagged"}; do
	[ "$(wc -l < "$f")" -eq "$n" ] ||
		{ echo "$0: $f: $(wc -l < "$f") lines, $1 $n" >&2; exit 1; }
done
# Without -t, every target word is judged: a fourth column of "all".
if [ -n "$tagged" ]; then
	paste -d '\t' "$1" "$2" "$poss" "$tagged"
else
	paste -d '\t' "$1" "$2" "$poss" | sed 's/$/\tall/'
fi | awk -F '\t' -v prog="$0" '
{
	for (k in t) delete t[k]
	n = split($4, x, " ")
	for (i = 1; i <= n; i++) {
		if (x[i] != "all" && x[i] !~ /^[0-9]+$/) {
			printf "%s: line %d of the tagged words: \"%s\" is " \
			       "not a word number\n", prog, NR, x[i] > "/dev/stderr"
			bad = 1; exit 1
		}
		t[x[i]] = 1
	}
	for (k in s) delete s[k]
	for (k in p) delete p[k]
	n = split($2, x, " ")
	for (i = 1; i <= n; i++) { chk(x[i], 2); s[x[i]] = p[x[i]] = 1 }
	n = split($3, x, " ")
	for (i = 1; i <= n; i++) { chk(x[i], 3); p[x[i]] = 1 }
	for (k in s) S++
	for (k in p) P++
	for (k in a) delete a[k]
	n = split($1, x, " ")
	for (i = 1; i <= n; i++) {
		chk(x[i], 1)
		if (!("all" in t) && !(substr(x[i], index(x[i], "-") + 1) in t))
			continue
		if (x[i] in a) continue
		a[x[i]] = 1; A++
		AS += x[i] in s; AP += x[i] in p
	}
}
function chk(l, f) {
	if (l !~ /^[0-9]+-[0-9]+$/) {
		printf "%s: line %d of file %d: \"%s\" is not i-j\n", prog, NR,
		       f, l > "/dev/stderr"
		bad = 1; exit 1
	}
}
END {
	if (bad) exit 1
	if (A == 0 || S == 0) {
		printf "%s: no links in %s\n", prog,
		       A ? "the gold" : "the hypothesis" > "/dev/stderr"
		exit 1
	}
	printf "AER %.1f P %.1f R %.1f |A| %d |S| %d |P| %d\n",
	       100 * (1 - (AS + AP) / (A + S)), 100 * AP / A, 100 * AS / S,
	       A, S, P
}'
