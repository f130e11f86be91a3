#!/bin/sh
# examples/train.sh on a tiny corpus (reversing and upper-casing up to four
# of eight two-letter words) for 600 updates: it holds out a dev set,
# trains with the dev BLEU and the best model kept, averages, exports an
# f16 model that translates every line (as many lines out as in), and
# scores the dev set; a given dev set is used as given; bad arguments are
# refused.
set -eu
. "$(dirname "$0")/lib/cli.sh"
recipe=$root/examples/train.sh

sentences 7 300 1 4 "s R" > pairs.txt
cut -f1 pairs.txt > src.txt
cut -f2 pairs.txt > tgt.txt
small="d_model=32 heads=2 ffn=64 enc_layers=1 dec_layers=1 batch_tokens=300"
export VOCAB=300 SAVE=20 AVG=3 THREADS=1 SETTINGS="$small"

STEPS=600 sh "$recipe" src.txt tgt.txt run > log 2>&1 ||
	{ cat log; fail "exit $?"; }
[ "$(wc -l < run/dev.src)" -eq 30 ] || fail "dev: not a tenth held out"
[ "$(wc -l < run/train.src)" -eq 270 ] || fail "train: not 270 lines"
tail -n 30 tgt.txt | cmp -s - run/dev.tgt || fail "dev: not the last lines"
for f in dev.greedy dev.beam; do
	[ "$(wc -l < run/$f)" -eq 30 ] || fail "$f: not 30 lines"
done
grep -q '^greedy: BLEU.* = [0-9.]* ' run/bleu.txt || fail "no greedy BLEU"
grep -q '^beam 4: BLEU.* = [0-9.]* ' run/bleu.txt || fail "no beam BLEU"
avg='averaging the 3 checkpoints of the last fifth:'
grep -q "$avg model.tsr.ckpt.560 model.tsr.ckpt.580 model.tsr.ckpt.600\$" log ||
	fail "not the last 3 checkpoints averaged: $(grep averag log)"
grep -q 'dev BLEU [0-9.]* (30 pairs)' log || fail "no dev BLEU in training"
[ -e run/model.tsr.best ] || fail "no best model kept"
tensordump -H run/model.f16.tsr | grep -q ' f16 ' || fail "export not f16"
tensordump -H run/model.f16.tsr | grep -q ' optim\.' &&
	fail "optimiser exported"
# every line of the source translated, line N for line N
M=run/model.f16.tsr
tokenize -m $M src.txt | embed -m $M | encode -m $M | attend -m $M |
	decode -m $M > all.out
[ "$(wc -l < all.out)" -eq 300 ] || fail "$(wc -l < all.out) lines of 300"
# 600 updates teach it most of the task: the greedy BLEU is above 50
bleu -b run/dev.tgt < run/dev.greedy |
	awk '{ exit !($1 > 50) }' ||
	fail "dev BLEU $(bleu -b run/dev.tgt < run/dev.greedy)"

# a dev set given
head -n 20 src.txt > dsrc
head -n 20 tgt.txt > dtgt
DEV_SRC=dsrc DEV_TGT=dtgt TIME=0.5 sh "$recipe" src.txt tgt.txt run2 \
	> /dev/null 2> log || { cat log; fail "exit $? with DEV_SRC"; }
cmp -s dtgt run2/dev.tgt || fail "DEV_TGT not the dev set"
[ "$(wc -l < run2/train.src)" -eq 300 ] || fail "DEV_SRC: not all trained on"
[ "$(wc -l < run2/dev.greedy)" -eq 20 ] || fail "DEV_SRC: not 20 lines"

# a short run: of the checkpoints 40, 80 and 100 only the last fifth's
# (80 and 100) are averaged
SAVE=40 STEPS=100 sh "$recipe" src.txt tgt.txt run4 > log 2>&1 ||
	{ cat log; fail "exit $? (run4)"; }
avg='averaging the 2 checkpoints of the last fifth:'
grep -q "$avg model.tsr.ckpt.80 model.tsr.ckpt.100\$" log ||
	fail "run4: $(grep averag log)"

# refusals
rc=0
sh "$recipe" src.txt tgt.txt 2> err || rc=$?
[ "$rc" -eq 2 ] || fail "two arguments: exit $rc"
head -n 10 tgt.txt > short.txt
rc=0
sh "$recipe" src.txt short.txt run3 2> err || rc=$?
[ "$rc" -eq 1 ] || fail "different lengths: exit $rc"
grep -q 'differ in their number of lines' err || fail "$(cat err)"
[ ! -e run3 ] || fail "run3 made for refused input"
rc=0
DEV_SRC=dsrc sh "$recipe" src.txt tgt.txt run3 2> err || rc=$?
[ "$rc" -eq 2 ] || fail "DEV_SRC alone: exit $rc"
# without VOCAB, a corpus this small gets a vocabulary in proportion
# (270 pairs: 500 units, the least), and says so (before: 8,000 units
# asked of 300 lines, without a word)
(unset VOCAB; STEPS=2 sh "$recipe" src.txt tgt.txt run5 > log 2>&1) ||
	{ cat log; fail "exit $? (run5)"; }
grep -q "train.sh: 270 training pairs: a vocabulary of 500 units, not 8000" \
	log || fail "no word of the vocabulary's size: $(head -3 log)"
exit 0
