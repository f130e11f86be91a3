#!/bin/sh
# decode: translation speed in target tokens per second, greedy and batched,
# of an RNNsearch at issue 6's sizes (emb, hidden, att 256, maxout 128, a
# joint vocabulary of 8000 units) on 500 Spanish verses of the Bible corpus
# (skipped when it is not there); the model is fresh, so every sentence
# runs to the maximum length.  With 1 and 2 threads, and the time of
# embed | encode | attend beside it, and the ratio of the two decoding
# times (bench_threads.sh: medians of more runs); beam -k 5 for comparison.
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/lib.sh"
need "$data/train.es" "$data/train.en" "$data/dev.es"
in_tmp
head -4000 "$data/train.es" > es
head -4000 "$data/train.en" > en
tokenize -l 8000 es en > vocab 2>/dev/null || exit 1
train-step -i -m m.tsr -a rnnsearch -s vocab -t vocab -S emb=256 \
	-S hidden=256 -S att=256 -S maxout=128 || exit 1
head -500 "$data/dev.es" | tokenize -m m.tsr > ids.tsr || exit 1
for th in 1 2; do
	export ATTN_THREADS=$th
	t0=$(now)
	embed -m m.tsr < ids.tsr | encode -m m.tsr | attend -m m.tsr > mem.tsr
	t1=$(now)
	decode -m m.tsr -t < mem.tsr > dec.tsr || exit 1
	t2=$(now)
	tok=$(tensordump -n hyp.ids dec.tsr | awk 'NR > 1 { gsub(/[][]/, "", $4);
		s += $4 } END { print s }')
	echo "threads $th: decode $(echo "$tok $t1 $t2" | awk '{ printf "%.0f", $1 / ($3 - $2) }') target tokens/s ($tok tokens in $(echo "$t1 $t2" | awk '{ printf "%.2f", $2 - $1 }') s); embed|encode|attend $(echo "$t0 $t1" | awk '{ printf "%.2f", $2 - $1 }') s"
	echo "$t1 $t2" | awk '{ print $2 - $1 }' > time$th
done
echo "decode, 2 threads against 1: $(cat time1 time2 |
	awk '{ t[NR] = $1 } END { printf "%.2fx", t[1] / t[2] }') (one run each)"
t1=$(now)
beam -m m.tsr -k 5 < mem.tsr > /dev/null || exit 1
t2=$(now)
echo "threads 2: beam -k 5 $(echo "$t1 $t2" | awk '{ printf "%.2f", $2 - $1 }') s for 500 sentences"
