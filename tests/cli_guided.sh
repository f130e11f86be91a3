#!/bin/sh
# Guided alignment: tokenize --links maps word links to units (every unit
# of a linked source word to every unit of the target word, an unlinked
# target unit to the source's </s>) and refuses files that do not match
# the pairs line for line; train-step --set guided_* trains an existing
# model's head on them, refusing links without the weight and the weight
# without links; its head then aligns as the links say (monotone links of
# pairs that reverse, which the other head does not give), and score -A
# reads that head by default, a target word whose mass is on </s> left
# unlinked; and the same with guided_shift=1.
set -eu
. "$(dirname "$0")/lib/cli.sh"

sentences 5 600 2 5 "s r" > pairs.txt
cut -f1 pairs.txt > src.txt
tokenize -l 300 src.txt > vocab 2>/dev/null
new_model m.tsr transformer vocab vocab optim=adam lr=0.003 \
	schedule=constant batch_tokens=300 dropout=0 seed=3
# links j-j for every target word but the first: not the reversal the
# translation needs
awk -F'\t' '{ n = split($1, w, " "); o = ""
	for (i = 1; i < n; i++) o = o (i > 1 ? " " : "") i "-" i
	print o }' pairs.txt > mono.txt

# by hand: units ▁ab ▁cd </s> and ▁cd ▁ab </s>; "0-1" links ▁ab to ▁ab,
# the rest of the target to the source's </s> (unit 2)
printf 'ab cd\tcd ab\n' | tokenize -p -m m.tsr -f units |
	grep -qx '▁ab ▁cd </s>	▁cd ▁ab </s>' || fail "units: not one a word"
echo 0-1 > one.txt
printf 'ab cd\tcd ab\n' | tokenize -p -m m.tsr --links one.txt |
	tensordump -n align.links -t > got
printf 'tsr-text 1\nrecord align.links i32 [3,2] frame 0 end\n2 0\n0 1\n2 2\n\n' |
	cmp -s - got || fail "align.links: $(cat got)"

# refusals: line counts, links past the words, what is not a link
rc=0
tokenize -p -m m.tsr --links one.txt pairs.txt > /dev/null 2> err || rc=$?
[ "$rc" -eq 1 ] && grep -q '^tokenize: one.txt: 1 lines, and pairs.txt has more' err ||
	fail "fewer links: exit $rc, $(cat err)"
rc=0
printf '0-1\n0-0\n' > two.txt	# (its first line fits the pair)
printf 'ab cd\tcd ab\n' | tokenize -p -m m.tsr --links two.txt > /dev/null 2> err ||
	rc=$?
[ "$rc" -eq 1 ] && grep -q 'more lines than the 1 pairs' err ||
	fail "more links: exit $rc, $(cat err)"
for bad in 0-2 2-0 x-1 '0-1 1' 0:1; do
	echo "$bad" > bad.txt
	rc=0
	printf 'ab cd\tcd ab\n' | tokenize -p -m m.tsr --links bad.txt \
		> /dev/null 2> err || rc=$?
	[ "$rc" -eq 1 ] && grep -q '^tokenize: bad.txt:1: ' err ||
		fail "link '$bad': exit $rc, $(cat err)"
done
rc=0
tokenize -m m.tsr --links one.txt src.txt > /dev/null 2> err || rc=$?
[ "$rc" -eq 2 ] || fail "--links without --pairs: exit $rc"

tokenize -p -m m.tsr --links mono.txt pairs.txt > mono.tsr
tokenize -p -m m.tsr pairs.txt > plain.tsr
cp m.tsr g.tsr
rc=0
train-step -q -m g.tsr -n 1 mono.tsr 2> err || rc=$?
[ "$rc" -eq 1 ] && grep -q 'no guided_weight' err ||
	fail "links without the weight: exit $rc, $(cat err)"
rc=0
train-step -q -m g.tsr -n 1 -S guided_weight=1 plain.tsr 2> err || rc=$?
[ "$rc" -eq 1 ] && grep -q 'no align.links' err ||
	fail "the weight without links: exit $rc, $(cat err)"
rc=0
train-step -q -m g.tsr -n 1 -S guided_weight=1 -S guided_head=2 \
	mono.tsr 2> err || rc=$?
[ "$rc" -eq 1 ] && grep -q 'guided_head=2' err ||
	fail "a head the model lacks: exit $rc, $(cat err)"
cmp -s g.tsr m.tsr || fail "a refusal changed the model"

train-step -m g.tsr -n 1500 -L 500 -S guided_weight=1 -S guided_layer=0 \
	-S guided_head=1 mono.tsr 2> log
tensordump -n model.config -t g.tsr | grep -q '"guided_head=1\\n"' ||
	fail "guided_head not kept in the config"
awk '/align/ { for (i = 1; i < NF; i++) if ($i == "align") a[n++] = $(i + 1) }
	END { exit !(n >= 3 && a[n - 1] < a[0] / 10) }' log ||
	fail "the guided loss did not fall: $(cat log)"

tokenize -p -m g.tsr pairs.txt | stages g.tsr > mem.tsr
score -m g.tsr -A < mem.tsr > al.txt
cmp -s al.txt mono.txt || fail "the guided head: $(diff al.txt mono.txt | head -4)"
score -m g.tsr -A --layers 0 --heads 1 --null < mem.tsr | cmp -s - al.txt ||
	fail "-A is not --layers 0 --heads 1 --null"
# (by lines counted, not one line: awk's rand(), and so pairs.txt,
# differs between mawk and gawk)
awk -F'\t' '{ n = split($1, w, " "); o = ""
	for (i = 0; i < n; i++) o = o (i ? " " : "") i "-" (n - 1 - i)
	print o }' pairs.txt > rev.txt
score -m g.tsr -A --layers 0 --heads 0 < mem.tsr | paste -d '|' - rev.txt |
	awk -F'|' '$1 == $2 { k++ } END { exit !(k >= 0.9 * NR) }' ||
	fail "the unguided head does not reverse, unlike the guided one"
cut -f1 pairs.txt | head -20 | tokenize -m g.tsr | stages g.tsr |
	decode -m g.tsr -A | sed 's/.* ||| //' | paste -d '|' - al.txt |
	awk -F'|' '$1 == $2 { k++ } END { exit !(k >= 18) }' ||
	fail "decode -A does not read the guided head"

# guided_shift=1: the head trained at the position that reads each unit,
# which -A then reads (--shift)
cp m.tsr s.tsr
train-step -q -m s.tsr -n 1500 -S guided_weight=1 -S guided_layer=0 \
	-S guided_head=1 -S guided_shift=1 mono.tsr
tokenize -p -m s.tsr pairs.txt | stages s.tsr > smem.tsr
score -m s.tsr -A < smem.tsr > sal.txt
cmp -s sal.txt mono.txt || fail "shifted: $(diff sal.txt mono.txt | head -4)"
score -m s.tsr -A --layers 0 --heads 1 --null --shift < smem.tsr |
	cmp -s - sal.txt || fail "-A is not --layers 0 --heads 1 --null --shift"
