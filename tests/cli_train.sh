#!/bin/sh
# train-step on a small rnnsearch model: it learns to reverse short random
# sequences, which no untrained model does; N updates in one run and N/2 +
# N/2 give the same file byte for byte, with f32 or bf16 products, and
# with a setting changed when resuming (-S); SIGTERM
# saves and exits 0; the last checkpoints average; bad input is refused.
set -eu
. "$(dirname "$0")/lib/cli.sh"

# reversing up to four of eight two-letter words
sentences 5 600 1 4 "s r" > pairs.txt
cut -f1 pairs.txt > src.txt
tokenize -l 300 src.txt > vocab 2>/dev/null
new_model m.tsr rnnsearch vocab vocab emb=16 hidden=24 att=16 maxout=8 \
	optim=adam lr=0.01 batch_tokens=200
cp m.tsr a.tsr
cp m.tsr b.tsr
tokenize -p -m m.tsr pairs.txt > pairs.tsr
head -100 pairs.txt > test.txt
accuracy() {
	cut -f1 test.txt | tokenize -m "$1" | embed -m "$1" | encode -m "$1" |
		attend -m "$1" | decode -m "$1" > out.txt
	cut -f2 test.txt | paste - out.txt | awk -F'\t' '$1 == $2' | wc -l
}
before=$(accuracy m.tsr)
train-step -q -m m.tsr -n 2000 pairs.tsr
after=$(accuracy m.tsr)
[ "$before" -le 5 ] || fail "untrained: $before of 100 reversed"
[ "$after" -ge 90 ] || fail "trained: only $after of 100 reversed"

# resuming: 30 updates, and 12 + 18 (across a pass's end: 600 pairs are
# about 13 batches)
train-step -q -m a.tsr -n 30 pairs.tsr
train-step -q -m b.tsr -n 12 pairs.tsr
cmp -s a.tsr b.tsr && fail "12 updates gave the model of 30"
train-step -q -m b.tsr -n 18 pairs.tsr
cmp a.tsr b.tsr || fail "12 + 18 updates differ from 30"
tensordump -t a.tsr | grep -q '^"step=30\\n"$' || fail "step is not 30"

# a setting given when resuming (-S lr=0.02) holds from the run's first
# update: 5 updates, and 1 + 4 (the second run reads lr from the file)
cp a.tsr c.tsr
cp a.tsr d.tsr
train-step -m c.tsr -S lr=0.02 -n 5 -L 1 --log-time 0 pairs.tsr 2> log
grep -q ' lr 0.02 ' log || fail "-S lr=0.02 not used: $(head -n 1 log)"
train-step -q -m d.tsr -S lr=0.02 -n 1 pairs.tsr
train-step -q -m d.tsr -n 4 pairs.tsr
cmp c.tsr d.tsr || fail "-S lr=0.02 for 5 updates differs from 1 + 4"

# bf16 products: another model than f32's, resumed as unbroken; refused
# where the CPU cannot
if grep -q avx512_bf16 /proc/cpuinfo; then
	cp m.tsr h1.tsr
	cp m.tsr h2.tsr
	cp m.tsr f.tsr
	train-step -q -m f.tsr -n 30 pairs.tsr
	train-step -q --matmul bf16 -m h1.tsr -n 30 pairs.tsr
	train-step -q --matmul=bf16 -m h2.tsr -n 12 pairs.tsr
	train-step -q --matmul=bf16 -m h2.tsr -n 18 pairs.tsr
	cmp h1.tsr h2.tsr || fail "bf16: 12 + 18 updates differ from 30"
	cmp -s h1.tsr f.tsr && fail "bf16 gave f32's model"
	ATTN_KERNELS=avx2 train-step -q --matmul bf16 -m h1.tsr -n 1 \
		pairs.tsr 2> err && fail "bf16 accepted on AVX2 kernels"
	grep -q 'train-step: --matmul bf16: ' err || fail "bf16: $(cat err)"
fi
rc=0
train-step -q --matmul fp8 -m m.tsr -n 1 pairs.tsr 2> err || rc=$?
[ "$rc" -eq 2 ] || fail "--matmul fp8 exited $rc"
rc=0
train-step -A 2 --matmul bf16 -m m.tsr -o x.tsr 2> err || rc=$?
[ "$rc" -eq 2 ] || fail "--matmul with --average exited $rc"

# SIGTERM: saved, exit 0
cp b.tsr c.tsr
train-step -q -m c.tsr -n 1000000 -E 1000000 pairs.tsr &
pid=$!
sleep 1
kill -TERM "$pid"
wait "$pid" || fail "train-step exited $? on SIGTERM"
step=$(tensordump -t c.tsr | sed -n 's/^"step=\([0-9]*\)\\n"$/\1/p')
[ "$step" -gt 30 ] || fail "nothing saved on SIGTERM (step $step)"

# checkpoints: the last three kept, and averaged
train-step -q -m b.tsr -n 10 -E 2 -k 3 pairs.tsr
ls b.tsr.ckpt.* | sort > ckpts
[ "$(wc -l < ckpts)" -eq 3 ] || fail "kept: $(cat ckpts)"
[ -e b.tsr.ckpt.40 ] && [ -e b.tsr.ckpt.36 ] || fail "kept: $(cat ckpts)"
train-step -A 3 -m b.tsr -o avg.tsr
train-step -A 3 -o avg2.tsr b.tsr.ckpt.36 b.tsr.ckpt.38 b.tsr.ckpt.40
cmp avg.tsr avg2.tsr || fail "the two ways of averaging differ"
echo "ab cd" | tokenize -m avg.tsr | embed -m avg.tsr | encode -m avg.tsr |
	attend -m avg.tsr | decode -m avg.tsr > /dev/null

# refusals
if echo "ab" | tokenize -m m.tsr | train-step -q -m m.tsr -n 1 2> err; then
	fail "training on a stream without tgt.ids"
fi
grep -q 'tgt.ids' err || fail "no tgt.ids: $(cat err)"
if train-step -i -m x.tsr -a nosuch -s vocab -t vocab 2> err; then
	fail "an unknown architecture accepted"
fi
grep -q nosuch err || fail "unknown arch: $(cat err)"
if train-step -q -m m.tsr -n 0 pairs.tsr 2> /dev/null; then
	fail "--steps 0 accepted"
fi
exit 0
