#!/bin/sh
# seq2seq (doc/MODELS.md) through every program: a small model learns to
# copy short random sequences (which no untrained model does); N updates
# in one run and N/2 + N/2 give the same file byte for byte, with dropout
# too; every stage, decode, beam and score give the same bytes whatever
# the batch size (on the reference kernels, whose rounding does not
# depend on the rows, and the same text on the machine's own); the last
# checkpoints average; the f16 and bf16 exports translate as their f32
# models of the same weights.
set -eu
. "$(dirname "$0")/lib/cli.sh"

# copying up to four of eight two-letter words
sentences 5 600 1 4 "s s" > pairs.txt
cut -f1 pairs.txt > src.txt
tokenize -l 300 src.txt > vocab 2>/dev/null
train-step -i -m m.tsr -a seq2seq -s vocab -t vocab -S emb=16 \
	-S hidden=24 -S layers=2 -S optim=adam -S lr=0.01 -S batch_tokens=200
tensordump -t m.tsr | grep -q '^"reverse=1\\n"$' || fail "reverse is not 1"
cp m.tsr a.tsr
cp m.tsr b.tsr
tokenize -p -m m.tsr pairs.txt > pairs.tsr
head -100 pairs.txt > test.txt
translate() {
	cut -f1 test.txt | tokenize -m "$1" | embed -m "$1" | encode -m "$1" |
		attend -m "$1" > mem.tsr
	decode -m "$1" < mem.tsr
}
accuracy() {
	translate "$1" > out.txt
	cut -f2 test.txt | paste - out.txt | awk -F'\t' '$1 == $2' | wc -l
}
before=$(accuracy m.tsr)
train-step -q -m m.tsr -n 2000 pairs.tsr
after=$(accuracy m.tsr)
[ "$before" -le 5 ] || fail "untrained: $before of 100 copied"
[ "$after" -ge 90 ] || fail "trained: only $after of 100 copied"
# the memory: the last states and cells of both layers, [2 x 24]
tensordump mem.tsr |
	awk '$1 == 0 && $2 ~ /^(enc|att)\.[hc]$/ { print $2, $4 }' |
	sort > shapes
printf '%s\n' 'att.c [48]' 'att.h [48]' 'enc.c [48]' 'enc.h [48]' > want
cmp -s shapes want || fail "the memory: $(cat shapes)"

# resuming: 30 updates, and 12 + 18 (across a pass's end); with dropout,
# whose generator is saved with the model, too
train-step -q -m a.tsr -n 30 pairs.tsr
train-step -q -m b.tsr -n 12 pairs.tsr
cmp -s a.tsr b.tsr && fail "12 updates gave the model of 30"
train-step -q -m b.tsr -n 18 pairs.tsr
cmp a.tsr b.tsr || fail "12 + 18 updates differ from 30"
train-step -i -m d.tsr -a seq2seq -s vocab -t vocab -S emb=16 \
	-S hidden=24 -S dropout=0.3 -S lr=0.01 -S batch_tokens=200
cp d.tsr e.tsr
train-step -q -m d.tsr -n 30 pairs.tsr
train-step -q -m e.tsr -n 12 pairs.tsr
train-step -q -m e.tsr -n 18 pairs.tsr
cmp d.tsr e.tsr || fail "dropout: 12 + 18 updates differ from 30"

# batch sizes: every stage and program, byte for byte on the reference
# kernels
export ATTN_KERNELS=reference
cut -f1 test.txt | tokenize -m m.tsr > ids.tsr
prev=ids.tsr
for s in embed encode attend; do
	$s -m m.tsr -b 1 < $prev > $s.1.tsr
	$s -m m.tsr -b 64 < $prev > $s.64.tsr
	cmp $s.1.tsr $s.64.tsr || fail "$s -b 64 and -b 1 differ"
	prev=$s.1.tsr
done
decode -m m.tsr -b 1 --scores < attend.1.tsr > d1
decode -m m.tsr -b 64 --scores < attend.1.tsr > d64
cmp d1 d64 || fail "decode -b 64 and -b 1 differ"
beam -m m.tsr -k 3 -b 1 < attend.1.tsr > b1
beam -m m.tsr -k 3 -b 16 < attend.1.tsr > b16
cmp b1 b16 || fail "beam -b 16 and -b 1 differ"
tokenize -p -m m.tsr test.txt | embed -m m.tsr | encode -m m.tsr |
	attend -m m.tsr > pmem.tsr
score -m m.tsr -b 1 < pmem.tsr > s1
score -m m.tsr -b 64 < pmem.tsr > s64
cmp s1 s64 || fail "score -b 64 and -b 1 differ"
[ "$(wc -l < s1)" -eq 100 ] || fail "score: $(wc -l < s1) lines"
# greedy is beam 1, and scores the greedy output as score does
beam -m m.tsr -k 1 -b 7 < attend.1.tsr > k1
decode -m m.tsr < attend.1.tsr > g
cmp k1 g || fail "beam -k 1 is not greedy"
unset ATTN_KERNELS
translate m.tsr > t64
cut -f1 test.txt | tokenize -m m.tsr | embed -m m.tsr -b 1 |
	encode -m m.tsr -b 3 | attend -m m.tsr -b 5 | decode -m m.tsr -b 1 > t1
cmp t1 t64 || fail "the machine's kernels: -b 1 translates otherwise"

# checkpoints: the last three kept, and averaged
train-step -q -m b.tsr -n 10 -E 2 -k 3 pairs.tsr
train-step -A 3 -m b.tsr -o avg.tsr
train-step -A 3 -o avg2.tsr b.tsr.ckpt.36 b.tsr.ckpt.38 b.tsr.ckpt.40
cmp avg.tsr avg2.tsr || fail "the two ways of averaging differ"
[ "$(translate avg.tsr | wc -l)" -eq 100 ] || fail "the average translates"

# exports: f16 (and its f32 model of the same weights) and bf16
train-step -x e16.tsr -m m.tsr
train-step -x eb.tsr --dtype bf16 -m m.tsr
train-step -A 1 -o r16.tsr e16.tsr
translate e16.tsr > o16
translate r16.tsr > or
cmp o16 or || fail "the f16 export translates otherwise than its f32 model"
[ "$(translate eb.tsr | wc -l)" -eq 100 ] || fail "the bf16 export"
o=$(cut -f2 test.txt | paste - o16 | awk -F'\t' '$1 == $2' | wc -l)
[ "$o" -ge 85 ] || fail "the f16 export copies only $o of 100"
if train-step -q -m e16.tsr -n 1 pairs.tsr 2> err; then
	fail "trained an exported model"
fi
exit 0
