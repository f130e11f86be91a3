#!/bin/sh
# End to end: translating the Bible dev set (1076 Spanish verses; skipped
# when it is not there) with the repository's trained model
# (models/bible-es-en.tsr), text in and text out through tokenize | embed |
# encode | attend | decode (greedy) or beam -k 4: sentences and target
# tokens per second (the translation's subword units, </s> included), with
# ATTN_THREADS 1 and 2 (every stage of the pipeline runs in its own
# process); for the model, its int8 export (train-step -x --dtype int8),
# and the int8 export with decode and beam --kv f16.  The baseline, timed in the same run, is the tokenize stage
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
train-step -x m8.tsr --dtype int8 -m "$m" || exit 1
# search HOW MODEL [OPTION...]
search() {
	how=$1 sm=$2
	shift 2
	if [ "$how" = greedy ]; then decode -m "$sm" "$@"
	else beam -m "$sm" -k 4 "$@"; fi
}
for variant in f32 int8 "int8, --kv f16"; do
	mm=$m kv=
	case $variant in int8*) mm=m8.tsr ;; esac
	case $variant in *f16) kv="--kv f16" ;; esac
	echo "$variant:"
	for th in 1 2; do
		export ATTN_THREADS=$th
		for how in greedy "beam 4"; do
			t0=$(now)
			times > c0
			# shellcheck disable=SC2086
			tokenize -m "$mm" "$src" | embed -m "$mm" | encode -m "$mm" |
				attend -m "$mm" | search "$how" "$mm" $kv > out ||
				exit 1
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
done
