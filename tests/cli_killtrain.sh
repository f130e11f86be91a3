#!/bin/sh
# Training killed with SIGKILL at several points, in the middle of updates
# and of saves: the model file always loads as a model, its step never goes
# back, training resumes from it, and the resumed model is bit for bit the
# one an unbroken run makes.
set -u
. "$(dirname "$0")/lib/cli.sh"
export ATTN_THREADS=1           # results depend on the thread count
N=60                            # updates in all

# A made-up parallel corpus and its vocabularies.
casa_pairs 400 7 12 >pairs.txt
cut -f1 pairs.txt | tokenize -l 280 >vocab.src 2>/dev/null &&
	cut -f2 pairs.txt | tokenize -l 280 >vocab.tgt 2>/dev/null ||
	fail "tokenize --learn failed"
new_model m.tsr rnnsearch vocab.src vocab.tgt hidden=16 batch_tokens=120 ||
	fail "train-step --init failed"
tokenize -p -m m.tsr <pairs.txt >pairs.tsr || fail "tokenize --pairs failed"

# step MODEL: the step in its model.config.
step() {
	tensordump -t -n model.config "$1" | sed -n 's/^"step=\([0-9]*\)\\n"$/\1/p'
}
# loads MODEL: a program takes it as a model.
loads() {
	tensordump -c "$1" >/dev/null &&
		echo hola | tokenize -m "$1" | embed -m "$1" >/dev/null
}

cp m.tsr ref.tsr
train-step -q -m ref.tsr -n $N pairs.tsr || fail "the unbroken run failed"
[ "$(step ref.tsr)" -eq $N ] || fail "the unbroken run did not reach step $N"

# Runs of 8 updates, each saved, killed after 0 to 0.25 s.
prev=0 insave=0
for d in 0 0.01 0.02 0.04 0.06 0.09 0.13 0.25; do
	train-step -q -m m.tsr -n 6 -E 1 pairs.tsr 2>/dev/null &
	pid=$!
	sleep $d
	kill -s KILL $pid 2>/dev/null
	wait $pid 2>/dev/null
	ls m.tsr.tmp* >/dev/null 2>&1 && insave=$((insave + 1))
	rm -f m.tsr.tmp*
	loads m.tsr || fail "killed after $d s: the model does not load"
	s=$(step m.tsr)
	[ "$s" -ge $prev ] || fail "killed after $d s: step $s after $prev"
	prev=$s
done
[ $prev -lt $N ] || fail "the killed runs went past step $N"
echo "8 kills, $insave in a save, at step $prev"

train-step -q -m m.tsr -n $((N - prev)) pairs.tsr || fail "no resuming"
[ "$(step m.tsr)" -eq $N ] || fail "the resumed run did not reach step $N"
cmp m.tsr ref.tsr || fail "the resumed model is not the unbroken run's"
exit 0
