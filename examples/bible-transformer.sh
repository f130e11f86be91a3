#!/bin/sh
# bible-transformer.sh: the recipe of the repository's model
# (models/bible-es-en.tsr).  Trains a Transformer (d 256, ffn 1024, 4 heads,
# 3 + 3 layers, pre-norm, every embedding tied to one joint vocabulary of
# 8000 units) on the Spanish-English Bible corpus with two threads, for
# 6000 updates of batches of 4000 target tokens (dropout 0.3, warm-up 1000:
# 1 h 40 min on a 2-core machine), keeps a checkpoint every SAVE updates,
# exports the mean of the last two (5500 and 6000) as f16; then fine-tunes
# that export with guided alignment (doc/alignment.md): align, trained on
# the text of train and dev, gives the training pairs' links (its
# posterior links at 0.9), and two rounds of 963 updates on one thread
# (35 minutes each), each from the f16 export of the one before, teach
# one head of the decoder to follow them, so that score -A, decode -A
# and beam -A give word alignments (the second round is for the
# translation: dev BLEU 30.8 to 31.4); exports the result as f16, and
# scores its greedy and beam translations of the dev set (beam's
# defaults) with BLEU against the KJV (and with the WEB as a second
# reference).
#
#   sh examples/bible-transformer.sh [WORKDIR]
#
# Settings (environment): DATA (default /work/shared/data/bible-es-en),
# VOCAB (8000), NORM (pre), LR (noam's factor, 1), WARMUP (1000), BATCH
# (target tokens a batch, 4000), DROPOUT (0.3), SMOOTH (label smoothing,
# 0.1), SEED (1), as examples/recipes.sh reads them;
# STEPS (stop after this many updates in all, 6000: the repository's
# model), TRAIN_TIME (instead, seconds of training: doc/results.md's
# 35-minute comparison is TRAIN_TIME=2100 WARMUP=300 BATCH=2000 DROPOUT=0.1
# MATMUL=bf16 THREADS=1 AVERAGE=1 SAVE=100, with a vocabulary of
# tokenize's version 1 then),
# SAVE (updates between saves, 500, each kept as model.tsr.ckpt.STEP),
# THREADS (2), MATMUL (f32, or bf16: train-step --matmul), AVERAGE (2:
# the mean of the last 2 checkpoints, train-step --average; 1: the model
# as trained), GUIDED (updates of a round of the guided fine-tune, 963;
# 0: none, and OUT is the first export), GUIDED_ROUNDS (2; 0: none; round
# R's model guidedR.tsr, its export guidedR.f16.tsr), GUIDED_THREADS (1),
# GUIDED_WEIGHT (0.5), OUT (the export, WORKDIR/bible-es-en.tsr; before
# guidance, unguided.tsr).
# Stopping it (^C) saves the model; running it again resumes training
# where it stopped, and a resumed run gives the model an unbroken one
# gives (with the same THREADS, GUIDED_THREADS and MATMUL).
#
# Each round starts from the f16 export's f32 copy (train-step -A 1; no
# optimiser state), as the repository's model did; that model's first
# copy was made through tensordump's text (doc/alignment.md), which
# rounds each value to the digits it prints, so this recipe's model is
# not that file bit for bit.
set -eu
DATA=${DATA:-/work/shared/data/bible-es-en}
W=${1:-bible-transformer}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/recipes.sh"
VOCAB=${VOCAB:-8000} SAVE=${SAVE:-500} THREADS=${THREADS:-2}
MATMUL=${MATMUL:-f32} AVERAGE=${AVERAGE:-2}
GUIDED=${GUIDED:-963} GUIDED_ROUNDS=${GUIDED_ROUNDS:-2}
GUIDED_THREADS=${GUIDED_THREADS:-1}
WARMUP=${WARMUP:-1000} BATCH=${BATCH:-4000} DROPOUT=${DROPOUT:-0.3}
[ -n "${TRAIN_TIME:-}" ] || STEPS=${STEPS:-6000}
mkdir -p "$W"
cd "$W"
OUT=${OUT:-bible-es-en.tsr}
[ "$GUIDED_ROUNDS" -gt 0 ] || GUIDED=0
if [ "$GUIDED" -gt 0 ]; then FIRST=unguided.tsr; else FIRST=$OUT; fi
step() {	# the updates model $1 has made
	tensordump -n model.config -t "$1" |
		sed -n 's/^"step=\([0-9]*\)\\n"$/\1/p'
}

if [ ! -e model.tsr ]; then
	tokenize -l "$VOCAB" "$DATA/train.es" "$DATA/train.en" > vocab
	# shellcheck disable=SC2046
	train-step -i -m model.tsr -a transformer -s vocab -t vocab \
		$(recipe_transformer)
fi
[ -e train.tsr ] ||
	paste "$DATA/train.es" "$DATA/train.en" | tokenize -p -m model.tsr > train.tsr
[ -e dev.tsr ] ||
	paste "$DATA/dev.es" "$DATA/dev.en" | tokenize -p -m model.tsr > dev.tsr

if [ -z "${TRAIN_TIME:-}" ]; then
	have=$(step model.tsr)
	[ "$have" -ge "$STEPS" ] ||
		ATTN_THREADS=$THREADS train-step -m model.tsr \
			--matmul "$MATMUL" -n $((STEPS - have)) -E "$SAVE" \
			-k 1000 -L 50 train.tsr
else
	ATTN_THREADS=$THREADS train-step -m model.tsr --matmul "$MATMUL" \
		-T "$TRAIN_TIME" -E "$SAVE" -k 1000 -L 50 train.tsr
fi
if [ "$AVERAGE" -gt 1 ]; then
	train-step --average "$AVERAGE" -m model.tsr -o average.tsr
	train-step -x "$FIRST" -m average.tsr
else
	train-step -x "$FIRST" -m model.tsr
fi

if [ "$GUIDED" -gt 0 ]; then
	if [ ! -e align.tsr ]; then
		cat "$DATA/train.es" "$DATA/dev.es" > all.es
		cat "$DATA/train.en" "$DATA/dev.en" > all.en
		align --threads "$THREADS" -t -o align.tsr all.es all.en
	fi
	[ -e train.al ] ||
		align -m align.tsr -s posterior --threshold 0.9 \
			"$DATA/train.es" "$DATA/train.en" > train.al
	[ -e guided-train.tsr ] ||
		paste "$DATA/train.es" "$DATA/train.en" |
		tokenize -p -m "$FIRST" --links train.al > guided-train.tsr
	from=$FIRST r=1
	while [ "$r" -le "$GUIDED_ROUNDS" ]; do
		[ -e guided$r.tsr ] || train-step -A 1 -o guided$r.tsr "$from"
		left=$(($(step "$from") + GUIDED - $(step guided$r.tsr)))
		# shellcheck disable=SC2046
		[ "$left" -le 0 ] ||
			ATTN_THREADS=$GUIDED_THREADS train-step -m guided$r.tsr \
				$(recipe_guided) -n "$left" -L 50 guided-train.tsr
		from=guided$r.f16.tsr
		[ "$r" -lt "$GUIDED_ROUNDS" ] || from=$OUT
		train-step -x "$from" -m guided$r.tsr
		r=$((r + 1))
	done
fi

tokenize -m "$OUT" "$DATA/dev.es" | embed -m "$OUT" | encode -m "$OUT" |
	attend -m "$OUT" > dev.mem.tsr
decode -m "$OUT" < dev.mem.tsr > dev.greedy.en
beam -m "$OUT" < dev.mem.tsr > dev.beam.en
for h in greedy beam; do
	echo "$h: $(bleu -f text "$DATA/dev.en" < dev.$h.en)"
	echo "$h, 2 references: $(bleu -f text "$DATA/dev.en" "$DATA/dev.en2" < dev.$h.en)"
done
