#!/bin/sh
# Training you can watch and stop: a progress line after the first update
# and every --log-time seconds (elapsed time, step, epoch and its share,
# loss, tokens/s, time left); --dev reports the dev loss and the BLEU of
# greedy translations of the first --dev-lines pairs (the BLEU bleu(1)
# gives to decode(1)'s output), keeps the best model as MODEL.best and
# --patience stops; --batch-tokens sets the training batch; misuse is
# refused and leaves the model as it was.
set -eu
. "$(dirname "$0")/lib/cli.sh"

sentences 11 400 1 4 "s R" > pairs.txt
head -n 360 pairs.txt > train.txt
tail -n 40 pairs.txt > dev.txt
tokenize -l 300 train.txt > vocab 2>/dev/null
new_model m.tsr transformer vocab vocab d_model=32 ffn=64 tie=all \
	norm=pre warmup=30 batch_tokens=300
tokenize -p -m m.tsr train.txt > train.tsr
tokenize -p -m m.tsr dev.txt > dev.tsr
cp m.tsr fresh.tsr

# the first update, then none for 1000 updates
train-step -m m.tsr -n 3 -L 1000 train.tsr 2> log
n='[0-9.]+'
line="^train-step: 0:00:0[0-9]  step 1  epoch 1 \([0-9]+%\)  loss $n  ppl $n"
line="$line  lr [0-9.e-]+  [0-9]+ tok/s  left 0:00:0[0-9]\$"
grep -Eq "$line" log ||
	fail "no progress at the first update: $(cat log)"
[ "$(grep -c ' step [0-9]*  epoch' log)" -eq 1 ] || fail "$(cat log)"
# and every 0.2 seconds, in 1.5 seconds
cp fresh.tsr t.tsr
train-step -m t.tsr -T 1.5 -L 1000000 --log-time 0.2 train.tsr 2> log
n=$(grep -c ' step [0-9]*  epoch' log)
[ "$n" -ge 4 ] || fail "$n progress lines in 1.5 s every 0.2 s: $(cat log)"
grep -q 'epoch [2-9][0-9]* (' log ||
	fail "the epoch does not advance: $(cat log)"

# dev evaluation: loss, BLEU of 30 of the 40 pairs, the best model kept
cp fresh.tsr d.tsr
train-step -m d.tsr -n 300 -E 1000 -D 50 --dev-lines 30 -d dev.tsr \
	train.tsr 2> log
dev='dev loss [0-9.]*  dev ppl [0-9.]*  dev BLEU [0-9.]* (30 pairs)'
[ "$(grep -c "$dev" log)" -eq 6 ] ||
	fail "not 6 evaluations of 30 pairs: $(cat log)"
[ -e d.tsr.best ] || fail "no d.tsr.best"
# the best is the highest BLEU reported, and bleu(1) agrees with it
saved='(30 pairs)  best: saved as d.tsr.best'
best=$(sed -n "s/.*dev BLEU \([0-9.]*\) $saved\$/\1/p" log | tail -n 1)
step=$(grep 'best: saved' log | tail -n 1 | sed 's/.*  step \([0-9]*\) .*/\1/')
top=$(sed -n 's/.*dev BLEU \([0-9.]*\) .*/\1/p' log | sort -n | tail -n 1)
[ -n "$best" ] && [ "$best" = "$top" ] || fail "best $best, highest $top"
tensordump -t d.tsr.best | grep -q "^\"step=$step\\\\n\"$" ||
	fail "d.tsr.best is not step $step"
# and the model remembers it, for a resumed run to compare with
tensordump -t d.tsr | grep -q "^\"dev_best_step=$step\\\\n\"$" ||
	fail "d.tsr: no dev_best_step=$step"
tensordump -t d.tsr | sed -n 's/^"dev_best_bleu=\(.*\)\\n"$/\1/p' |
	awk -v b="$best" '{ v = $1 }
		END { exit !(v != "" && sprintf("%.2f", v) == b) }' ||
	fail "d.tsr: dev_best_bleu is not $best"
head -n 30 dev.txt | cut -f1 | tokenize -m d.tsr.best | embed -m d.tsr.best |
	encode -m d.tsr.best | attend -m d.tsr.best | decode -m d.tsr.best > hyp
head -n 30 dev.txt | cut -f2 > ref
[ "$(bleu -b -w 2 ref < hyp)" = "$best" ] ||
	fail "bleu says $(bleu -b -w 2 ref < hyp), train-step $best"

# patience: stops 2 evaluations after the best
cp fresh.tsr p.tsr
train-step -m p.tsr -n 100000 -E 100000 -D 10 --patience 2 -d dev.tsr \
	train.tsr 2> log
stop='2 evaluations without a better one (the best at step [0-9]*): stopping'
grep -q "$stop" log ||
	fail "no stop for patience: $(cat log)"
bstep=$(sed -n 's/.*(the best at step \([0-9]*\)).*/\1/p' log)
pstep=$(sed -n 's/.*saved p.tsr at step \([0-9]*\),.*/\1/p' log)
[ "$pstep" -eq $((bstep + 20)) ] || fail "stopped at $pstep, best $bstep"

# --batch-tokens: one pass in more, smaller batches; stored in the model
cp fresh.tsr b1.tsr
cp fresh.tsr b2.tsr
train-step -q -m b1.tsr -e 1 train.tsr
train-step -q -m b2.tsr -e 1 --batch-tokens 100 train.tsr
s1=$(tensordump -t b1.tsr | sed -n 's/^"step=\([0-9]*\)\\n"$/\1/p')
s2=$(tensordump -t b2.tsr | sed -n 's/^"step=\([0-9]*\)\\n"$/\1/p')
[ "$s2" -gt $((2 * s1)) ] ||
	fail "batches of 100 tokens: $s2 updates, of 300: $s1"
tensordump -t b2.tsr | grep -q '^"batch_tokens=100\\n"$' ||
	fail "batch_tokens not stored"

# misuse: exit 2, the model unchanged
cp m.tsr before.tsr
for args in "--patience 2" "--dev-lines 5" "--batch-tokens 0" \
	"--log-time -1" "--dev-lines x -d dev.tsr"; do
	rc=0
	# shellcheck disable=SC2086
	train-step -m m.tsr -n 5 $args train.tsr 2> err || rc=$?
	[ "$rc" -eq 2 ] || fail "$args: exit $rc"
	grep -q '^train-step: ' err || fail "$args: $(cat err)"
	cmp -s m.tsr before.tsr || fail "$args changed the model"
done
exit 0
