#!/bin/sh
# End to end: translating the Bible dev set (1076 Spanish verses; skipped
# when it is not there) with the repository's trained model
# (models/bible-es-en.tsr), text in and text out through tokenize | embed |
# encode | attend | decode (greedy) or beam -k 4: sentences and target
# tokens per second (the translation's subword units, </s> included), with
# ATTN_THREADS 1 and 2 (every stage of the pipeline runs in its own
# process).  The baseline, timed in the same run, is the tokenize stage
# alone.  With one thread, also the pipeline's CPU time (every stage's,
# less tokenize's alone) against PyTorch's on the same sentences from the
# same ids, where make bench-torch has measured it (ATTN_BENCH_TORCH).
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/lib.sh"
m=$root/models/bible-es-en.tsr
src=$data/dev.es
need "$src"
in_tmp
# PyTorch's best rate for a workload of bench/torch/bench_torch.py, or
# nothing
torch() {
	[ -r "${ATTN_BENCH_TORCH:-}" ] &&
		awk -v k="$1" '$1 == k { print $2 }' "$ATTN_BENCH_TORCH"
}
sents=$(wc -l < "$src")
t0=$(now)
times > c0
tokenize -m "$m" "$src" > /dev/null || exit 1
times > c1
ctok=$(cputime c0 c1)
base=$(echo "$t0 $(now)" | awk '{ print $2 - $1 }')
printf 'baseline: tokenize alone %.3f s (%.0f sentences/s)\n' "$base" \
	"$(echo "$sents $base" | awk '{ print $1 / $2 }')"
search() {
	if [ "$1" = greedy ]; then decode -m "$m"; else beam -m "$m" -k 4; fi
}
for th in 1 2; do
	export ATTN_THREADS=$th
	for how in greedy "beam 4"; do
		t0=$(now)
		times > c0
		tokenize -m "$m" "$src" | embed -m "$m" | encode -m "$m" |
			attend -m "$m" | search "$how" > out || exit 1
		times > c1
		c=$(echo "$(cputime c0 c1) $ctok" | awk '{ print $1 - $2 }')
		t=$(echo "$t0 $(now)" | awk '{ print $2 - $1 }')
		tok=$(tokenize -T -m "$m" -f ids out | wc -w)
		awk -v th="$th" -v how="$how" -v t="$t" -v tok="$tok" \
		    -v n="$sents" -v b="$base" 'BEGIN { printf "threads %d, " \
		    "%s: %.1f s, %.1f sentences/s, %.0f target tokens/s " \
		    "(%.1fx the time of tokenize alone)\n", th, how, t, n / t,
		    tok / t, t / b }'
		[ "$th" = 1 ] || continue
		key=e2e.$(echo "$how" | tr -d ' ')
		awk -v c="$c" -v tok="$tok" -v pt="$(torch "$key")" -v k="$key" \
		    'BEGIN { printf "       %-18s %.0f target tokens per CPU " \
		    "second after tokenize: ", k, tok / c; if (pt > 0)
		    printf "%.2fx PyTorch (its %.0f)\n", tok / c / pt, pt
		    else print "PyTorch'"'"'s figure absent (make bench-torch)" }'
	done
done
