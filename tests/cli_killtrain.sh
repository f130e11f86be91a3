#!/bin/sh
# Training killed with SIGKILL at several points, in the middle of updates
# and of saves: the model file always loads as a model, its step never goes
# back, training resumes from it, and the resumed model is bit for bit the
# one an unbroken run makes.
set -u
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "cli_killtrain: $*" >&2; exit 1; }
cd "$T" || exit 1
export ATTN_THREADS=1           # results depend on the thread count
N=60                            # updates in all

# A made-up parallel corpus and its vocabularies.
awk 'BEGIN {
	split("la casa verde el perro come pan y agua mesa gato negro", s, " ")
	split("the house green the dog eats bread and water table cat black", t, " ")
	for (i = 0; i < 400; i++) {
		n = 2 + i % 7; a = ""; b = ""
		for (j = 0; j < n; j++) {
			k = 1 + (i * 7 + j * 5) % 12
			a = a (j ? " " : "") s[k]; b = b (j ? " " : "") t[k]
		}
		print a "\t" b
	}
}' >pairs.txt
cut -f1 pairs.txt | tokenize -l 280 >vocab.src 2>/dev/null &&
	cut -f2 pairs.txt | tokenize -l 280 >vocab.tgt 2>/dev/null ||
	fail "tokenize --learn failed"
train-step -i -m m.tsr -a rnnsearch -s vocab.src -t vocab.tgt -S emb=8 \
    -S hidden=16 -S att=8 -S maxout=4 -S batch_tokens=120 ||
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
