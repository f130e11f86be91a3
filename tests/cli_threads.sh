#!/bin/sh
# Translation gives the same bytes on any number of threads: decode and
# beam -k 4 of a fresh Transformer and fresh RNNsearches (additive and
# window attention), on 1 to 4 threads, and with -b 1 (every sentence
# alone) on 2; score and score -A (forced decoding) on 1 and 3.  A batch
# of several sentences is dealt out to the threads, a search each
# (search_deal.c); a batch of one splits each step's work instead.  The sizes
# put each parallel part of a step above its grain, so that its work is
# split: the products (an output layer of [48 rows, 128] x [128, 1000]: a
# thread's share is over sgemm's and linear_packed's 2^17 multiply-adds),
# the attention (48 rows of 128 values over 6 and more keys: over
# attn_step's 2^16), and the search's selection (beams of 4 over 1000
# units: over search_beam.c's 2^15 scores a chunk).  Each sentence's result
# must not depend on which thread computes it, nor on the sentences
# beside it.
set -eu
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cd "$T"
fail() { echo "cli_threads: $*" >&2; exit 1; }

# random words of a 26-letter alphabet: a vocabulary of about 1000 units
awk 'BEGIN { srand(11)
	for (i = 0; i < 1500; i++) {
		n = 6 + int(rand() * 8); s = ""
		for (j = 0; j < n; j++) {
			w = ""; m = 2 + int(rand() * 6)
			for (c = 0; c < m; c++)
				w = w sprintf("%c", 97 + int(rand() * 26))
			s = s (j ? " " : "") w
		}
		print s } }' > train.txt
head -48 train.txt > in.txt
tokenize -l 1000 train.txt > vocab 2>/dev/null
train-step -i -m tf.tsr -a transformer -s vocab -t vocab -S d_model=128 \
	-S heads=4 -S ffn=256 -S enc_layers=1 -S dec_layers=2 -S tie=all
train-step -i -m rnn.tsr -a rnnsearch -s vocab -t vocab -S emb=64 \
	-S hidden=64 -S att=64 -S maxout=128
train-step -i -m win.tsr -a rnnsearch -s vocab -t vocab -S emb=64 \
	-S hidden=64 -S maxout=128 -S attention=window -S window_k=3
for a in tf rnn win; do
	v=$(tensordump -t -n model.config $a.tsr |
		sed -n 's/^"tgt_vocab=\(.*\)\\n"$/\1/p')
	[ "$v" -ge 900 ] || fail "$a: a target vocabulary of $v units, not ~1000"
	tokenize -m $a.tsr in.txt | embed -m $a.tsr | encode -m $a.tsr |
		attend -m $a.tsr > $a.mem
	for how in "decode -c 8" "beam -k 4 -c 8"; do
		$how -m $a.tsr --threads 1 < $a.mem > one
		[ "$(wc -l < one)" -eq 48 ] || fail "$a $how: not 48 lines"
		for th in 2 3 4; do
			$how -m $a.tsr --threads $th < $a.mem > many
			cmp -s one many ||
				fail "$a $how: $th threads differ from one"
		done
		$how -m $a.tsr --threads 2 -b 1 < $a.mem > alone
		cmp -s one alone ||
			fail "$a $how: -b 1 differs from batches of 48"
	done
	paste in.txt in.txt | tokenize -p -m $a.tsr | embed -m $a.tsr |
		encode -m $a.tsr | attend -m $a.tsr > $a.pairs
	for how in "score" "score -A"; do
		$how -m $a.tsr --threads 1 < $a.pairs > one
		[ "$(wc -l < one)" -eq 48 ] || fail "$a $how: not 48 lines"
		$how -m $a.tsr --threads 3 < $a.pairs | cmp -s - one ||
			fail "$a $how: 3 threads differ from one"
	done
done
exit 0
