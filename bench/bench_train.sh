#!/bin/sh
# train-step: target tokens per second of an RNNsearch with emb, hidden and
# att 256, maxout 128, a joint vocabulary of 8000 units and batches of 4000
# target tokens (issue 6's sizes), on 4000 verse pairs of the Bible corpus
# when it is there (skipped when not), with 1 and with 2 threads.  The
# figure is the mean of the progress lines after the first two updates;
# the baseline is PyTorch's 2,050 target tokens/s on one core at these
# sizes (measured elsewhere: PyTorch is not installed here).
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/lib.sh"
steps=${BENCH_STEPS:-8}
need "$data/train.es" "$data/train.en"
in_tmp
head -4000 "$data/train.es" > es
head -4000 "$data/train.en" > en
tokenize -l 8000 es en > vocab 2>/dev/null || exit 1
train-step -i -m m.tsr -a rnnsearch -s vocab -t vocab -S emb=256 \
	-S hidden=256 -S att=256 -S maxout=128 -S batch_tokens=4000 \
	-S optim=adam -S lr=0.0005 || exit 1
paste es en | tokenize -p -m m.tsr > pairs.tsr || exit 1
for th in 1 2; do
	cp m.tsr t.tsr
	ATTN_THREADS=$th train-step -m t.tsr -n "$steps" -L 1 -E 1000000 \
		pairs.tsr 2> log || { cat log; exit 1; }
	awk -v th="$th" '/ step [0-9]+ / { for (i = 1; i <= NF; i++)
			if ($i == "tok/s") { n++; if (n > 2) { s += $(i - 1); k++ } } }
		END { printf "threads %d: %.0f target tokens/s (%.2fx PyTorch'"'"'s "\
			"2050 on one core)\n", th, s / k, s / k / 2050 }' log |
		tee -a rates
done
awk '{ r[NR] = $3 } END { printf "2 threads / 1 thread: %.2fx\n", r[2] / r[1] }' rates
