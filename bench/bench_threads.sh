#!/bin/sh
# threads: what a second thread buys in translation, as the ratio of the
# wall-clock times of one thread and of two (--threads) in the same run.
# Batched input: the first SENTENCES (default 256, four of the programs'
# default batches of 64) verses of 14-19 words of the Bible dev set (about
# 25 subword units each; skipped when it is not there): encode from
# embed's output, decode (greedy) and beam -k 4 from attend's memory, each
# program timed whole (model loading included).  The Transformer is the
# shipped model (models/bible-es-en.tsr); the RNNsearch a fresh one at
# issue 6's sizes (emb, hidden, att 256, maxout 128; its sentences run to
# the maximum length).  One and two threads alternate, ROUNDS times
# (default 5); the medians.  The outputs of both thread counts must be the
# same bytes.  Wall-clock ratios mean something only on an idle machine.
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/lib.sh"
rounds=${ROUNDS:-5}
sentences=${SENTENCES:-256}
need "$data/dev.es" "$data/train.es" "$data/train.en"
in_tmp
awk 'NF >= 14 && NF <= 19' "$data/dev.es" | head -n "$sentences" > src
head -2000 "$data/train.es" > es
head -2000 "$data/train.en" > en
tokenize -l 8000 es en > vocab 2>/dev/null || exit 1
train-step -i -m rnn.tsr -a rnnsearch -s vocab -t vocab -S emb=256 \
	-S hidden=256 -S att=256 -S maxout=128 || exit 1
ln -s "$root/models/bible-es-en.tsr" tf.tsr
for a in tf rnn; do
	tokenize -m $a.tsr < src | embed -m $a.tsr > $a.emb || exit 1
	encode -m $a.tsr < $a.emb | attend -m $a.tsr > $a.mem || exit 1
done
for a in tf rnn; do
	for how in encode decode "beam -k 4"; do
		in=$a.mem
		[ "$how" = encode ] && in=$a.emb
		: > t1
		: > t2
		r=0
		while [ $r -lt "$rounds" ]; do
			for th in 1 2; do
				t0=$(now)
				$how --threads $th -m $a.tsr < $in \
					> out$th || exit 1
				echo "$t0 $(now)" | awk '{ print $2 - $1 }' \
					>> t$th
			done
			cmp -s out1 out2 || {
				echo "bench_threads: $a $how: the outputs" \
				     "of 1 and 2 threads differ"
				exit 1
			}
			r=$((r + 1))
		done
		name=$(echo "$a" | sed 's/tf/transformer/; s/rnn/rnnsearch/')
		printf '%-11s %-10s 1 thread %.3f s, 2 threads %.3f s: ' \
			"$name" "$how" "$(median < t1)" "$(median < t2)"
		echo "$(median < t1) $(median < t2)" |
			awk '{ printf "%.2fx\n", $1 / $2 }'
	done
done
