#!/bin/sh
# The alignment gold's tools on hand-made lines: tools/strongs-links.awk
# (strongs-gold.sh's links from the words' Strong's numbers: possible
# when a number is shared, sure when both words are its only heads in
# the line) and tools/aer.sh (AER, precision and recall worked out by
# hand, -t, and its refusals).  Under the awk of PATH: .ci/run runs the
# suite under mawk and under gawk.
set -eu
. "$(dirname "$0")/lib/cli.sh"

links=$root/tools/strongs-links.awk
aer=$root/tools/aer.sh

# Line 1: "días" (head) and "en", "los" (not heads) carry H3117, as
# "days" (head) does: días-days sure, en-days and los-days possible;
# "Dios" H430 heads once on each side: sure.
# Line 2: H8199 heads twice on each side ("juzgaban los jueces", "the
# judges ruled"): four possible links, none sure; H1 heads once on each
# side but the English word is no head: possible only.
# Line 3: a word of two numbers, one of them unique (H2) and the other
# (H3) heading twice in Spanish: sure through H2; the other H3 head
# links possibly.
# Line 4: no numbers at all.
printf '%s\t%s\n' \
	'H3117/0 H3117/0 H3117/1 H430/1' '- H430/1 - H3117/1' \
	'H8199/1 - H8199/1 H1/1' 'H8199/1 - H8199/1 H1/0' \
	'H2,H3/1 H3/1' 'H3,H2/1' \
	'- -' '- - -' > maps
awk -F '\t' -v sure=sure -v poss=poss -v tagged=tagged -f "$links" maps \
	2> log || fail "strongs-links.awk exited $?"
printf '2-3 3-1\n\n0-0\n\n' | cmp -s - sure ||
	fail "sure: $(tr '\n' '|' < sure)"
printf '%s\n' '0-3 1-3 2-3 3-1' '0-0 0-2 2-0 2-2 3-3' '0-0 1-0' '' |
	cmp -s - poss || fail "possible: $(tr '\n' '|' < poss)"
printf '1 3\n0 2 3\n0\n\n' | cmp -s - tagged ||
	fail "tagged: $(tr '\n' '|' < tagged)"
grep -qx 'gold: 4 lines, 3 sure links, 11 possible (sure included), 6 English words tagged' log ||
	fail "counts: $(cat log)"

# aer.sh.  Gold: S = {0-0, 1-1} on line 1, {0-0} on line 2; P adds 1-2
# and 0-1.  Hypothesis: 0-0 1-2 2-2 | 0-1 (line 2 adds 0-1 to P by its
# POSSIBLE line).  |A| = 4, |S| = 3, |A&S| = 1, |A&P| = 3:
# AER = 1 - 4/7 = 42.9, P = 75.0, R = 33.3.
printf '0-0 1-1\n0-0\n' > S
printf '0-0 1-1 1-2\n0-1\n' > P
printf '0-0 1-2 2-2\n0-1\n' > A
got=$(sh "$aer" A S P)
[ "$got" = "AER 42.9 P 75.0 R 33.3 |A| 4 |S| 3 |P| 5" ] ||
	fail "aer.sh A S P: $got"
# Without POSSIBLE, P = S: |A&S| = |A&P| = 1, AER = 1 - 2/7 = 71.4 (1 - F1).
got=$(sh "$aer" A S)
[ "$got" = "AER 71.4 P 25.0 R 33.3 |A| 4 |S| 3 |P| 3" ] ||
	fail "aer.sh A S: $got"
# -t: English word 2 of line 1 untagged, so 1-2 and 2-2 are not counted:
# |A| = 2 (0-0, 0-1), |A&S| = 1, |A&P| = 2: AER = 1 - 3/5 = 40.0.
printf '0 1\n1\n' > tagged
got=$(sh "$aer" -t tagged A S P)
[ "$got" = "AER 40.0 P 100.0 R 33.3 |A| 2 |S| 3 |P| 5" ] ||
	fail "aer.sh -t: $got"

# Refusals: a line count that differs, a link that is not i-j, a word
# number that is not one, an unreadable file (exit 1); bad usage (2).
refuse() {	# status message-pattern args...
	want=$1 pat=$2; shift 2
	set +e; sh "$aer" "$@" > out 2> err; rc=$?; set -e
	[ $rc -eq "$want" ] || fail "aer.sh $*: exit $rc, not $want"
	grep -q "$pat" err || fail "aer.sh $*: message: $(cat err)"
}
printf '0-0\n' > short
refuse 1 'short: 1 lines, A 2' A short P
printf '0-0\n0_1\n' > bad
refuse 1 'line 2 of file 1: "0_1" is not i-j' bad S P
printf '0\nx\n' > badtag
refuse 1 'line 2 of the tagged words: "x" is not a word number' \
	-t badtag A S P
refuse 1 'nothing: cannot read' A nothing
refuse 2 'usage:' A
refuse 2 'usage:' -x A S
exit 0
