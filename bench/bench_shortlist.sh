#!/bin/sh
# The vocabulary shortlist: decode and beam -k 4 with and without
# --shortlist (train-step --shortlist's default sizes, learned from the
# Bible's training pairs) on the memory of the dev set (1076 verses;
# skipped when the corpus is not there) with the repository's model
# (models/bible-es-en.tsr), one thread: the decoding stage's CPU time
# (user + system), the runs of the two alternated SL_REPS times (default
# 3, so that both see the same load), and the ratio of the medians, the
# full softmax's over the shortlist's; the baseline is the full softmax.
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/lib.sh"
m=$root/models/bible-es-en.tsr
need "$data/dev.es" "$data/train.es" "$data/train.en"
in_tmp
export ATTN_THREADS=1
cp "$m" sl.tsr
paste "$data/train.es" "$data/train.en" | tokenize -p -m sl.tsr |
	train-step --shortlist -q -m sl.tsr || exit 1
tokenize -m sl.tsr "$data/dev.es" | embed -m sl.tsr | encode -m sl.tsr |
	attend -m sl.tsr > mem.tsr || exit 1
for how in decode "beam -k 4"; do
	: > t.full
	: > t.sl
	for r in $(seq "${SL_REPS:-3}"); do
		for o in full sl; do
			f=
			[ $o = sl ] && f=--shortlist
			times > c0
			$how -m sl.tsr $f < mem.tsr > out.$o || exit 1
			times > c1
			cputime c0 c1 >> t.$o
		done
	done
	n=$(paste out.full out.sl | awk -F '\t' '$1 != $2' | wc -l)
	awk -v how="$how" -v f="$(median < t.full)" -v s="$(median < t.sl)" \
	    -v n="$n" -v all="$(wc -l < out.full)" 'BEGIN {
	    printf "%-10s full softmax %.2f s CPU, --shortlist %.2f s: " \
	    "%.2fx (%d of %d lines differ)\n", how, f, s, f / s, n, all }'
done
