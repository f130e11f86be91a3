#!/bin/sh
# End to end: translating the Bible dev set (1076 Spanish verses; skipped
# when it is not there) with the repository's trained model
# (models/bible-es-en.tsr), text in and text out through tokenize | embed |
# encode | attend | decode (greedy) or beam -k 4: sentences and target
# tokens per second (the translation's subword units, </s> included), with
# ATTN_THREADS 1 and 2 (every stage of the pipeline runs in its own
# process).  The baseline, timed in the same run, is the tokenize stage
# alone.
root=$(cd "$(dirname "$0")/.." && pwd)
m=$root/models/bible-es-en.tsr
src=${ATTN_DATA:-/work/shared/data}/bible-es-en/dev.es
if [ ! -r "$src" ]; then
	echo "bench_e2e: $src not found; skipped"
	exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
now() { date +%s.%N; }
sents=$(wc -l < "$src")
t0=$(now)
tokenize -m "$m" "$src" > /dev/null || exit 1
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
		tokenize -m "$m" "$src" | embed -m "$m" | encode -m "$m" |
			attend -m "$m" | search "$how" > out || exit 1
		t=$(echo "$t0 $(now)" | awk '{ print $2 - $1 }')
		tok=$(tokenize -T -m "$m" -f ids out | wc -w)
		awk -v th="$th" -v how="$how" -v t="$t" -v tok="$tok" \
		    -v n="$sents" -v b="$base" 'BEGIN { printf "threads %d, " \
		    "%s: %.1f s, %.1f sentences/s, %.0f target tokens/s " \
		    "(%.1fx the time of tokenize alone)\n", th, how, t, n / t,
		    tok / t, t / b }'
	done
done
