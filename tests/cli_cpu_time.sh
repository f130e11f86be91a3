#!/bin/sh
# train-step --cpu-time: the time limit counts CPU time, not the wall
# clock's.  A run stopped (SIGSTOP) for longer than its limit goes on
# training when continued; without --cpu-time the same run stops at once.
set -u
. "$(dirname "$0")/lib/cli.sh"
export ATTN_THREADS=1

casa_pairs 200 5 9 >pairs.txt
cut -f1 pairs.txt | tokenize -l 270 >vocab.src 2>/dev/null &&
	cut -f2 pairs.txt | tokenize -l 270 >vocab.tgt 2>/dev/null ||
	fail "tokenize --learn failed"
new_model m.tsr rnnencdec vocab.src vocab.tgt batch_tokens=60 ||
	fail "train-step --init failed"
tokenize -p -m m.tsr <pairs.txt >pairs.tsr || fail "tokenize --pairs failed"

# stopped OPTS...: trains a copy of m.tsr for 3 s (-T 3) with -L 1 and
# OPTS, stopped for 5 s after its first progress line; prints the number
# of progress lines written after it was continued (or "failed: WHY").
stopped() {
	cp m.tsr r.tsr
	# (the last run's log gone first: its lines would pass for this
	# run's before the shell truncated the file for it)
	rm -f log
	train-step -m r.tsr -T 3 -L 1 -E 100000 "$@" pairs.tsr 2>log &
	pid=$!
	i=0
	until grep -q '^train-step: [0-9]' log 2>/dev/null; do
		i=$((i + 1))
		[ $i -lt 600 ] || { echo "failed: no progress line in 30 s"; return; }
		sleep 0.05
	done
	kill -s STOP $pid || { echo "failed: ended before it was stopped"; return; }
	before=$(grep -c '^train-step: [0-9]' log)
	sleep 5
	kill -s CONT $pid
	wait $pid || { echo "failed: $(tail -n 1 log)"; return; }
	echo $(($(grep -c '^train-step: [0-9]' log) - before))
}
n=$(stopped --cpu-time)
case $n in failed*) fail "--cpu-time: $n" ;; esac
[ "$n" -ge 5 ] || fail "--cpu-time: $n updates after the stop (want >= 5)"
n=$(stopped)
case $n in failed*) fail "wall clock: $n" ;; esac
[ "$n" -le 1 ] || fail "wall clock: $n updates after a stop of 5 s (want <= 1)"
exit 0
