#!/bin/sh
# bible-rnnsearch.sh: the real-data recipe.  Trains an RNNsearch on the
# Spanish-English Bible corpus, translates the dev set and scores it with
# BLEU against the KJV (and the WEB as a second reference).
#
#   sh examples/bible-rnnsearch.sh [WORKDIR]
#
# Settings (environment): DATA (default /work/shared/data/bible-es-en),
# VOCAB (8000 joint units), EMB, HIDDEN, ATT (256), MAXOUT (128), OPTIM
# (adam), LR (0.0005), BATCH (4000 target tokens), HOURS (training time,
# default 2), SAVE (updates between saves, 500), K (beam size, 5).
# Stopping it (^C) saves the model; running it again resumes training.
set -eu
DATA=${DATA:-/work/shared/data/bible-es-en}
W=${1:-bible-rnnsearch}
VOCAB=${VOCAB:-8000} EMB=${EMB:-256} HIDDEN=${HIDDEN:-256}
ATT=${ATT:-256} MAXOUT=${MAXOUT:-128} OPTIM=${OPTIM:-adam}
LR=${LR:-0.0005} BATCH=${BATCH:-4000} HOURS=${HOURS:-2}
SAVE=${SAVE:-500} K=${K:-5}
mkdir -p "$W"
cd "$W"

if [ ! -e model.tsr ]; then
	tokenize -l "$VOCAB" "$DATA/train.es" "$DATA/train.en" > vocab
	train-step -i -m model.tsr -a rnnsearch -s vocab -t vocab \
		-S emb="$EMB" -S hidden="$HIDDEN" -S att="$ATT" \
		-S maxout="$MAXOUT" -S optim="$OPTIM" -S lr="$LR" \
		-S batch_tokens="$BATCH"
fi
[ -e train.tsr ] ||
	paste "$DATA/train.es" "$DATA/train.en" | tokenize -p -m model.tsr > train.tsr
[ -e dev.tsr ] ||
	paste "$DATA/dev.es" "$DATA/dev.en" | tokenize -p -m model.tsr > dev.tsr

seconds=$(awk -v h="$HOURS" 'BEGIN { print int(h * 3600) }')
train-step -m model.tsr -T "$seconds" -E "$SAVE" -k 5 -L 100 \
	-d dev.tsr -D "$SAVE" train.tsr

translate() {
	tokenize -m "$1" "$DATA/dev.es" | embed -m "$1" | encode -m "$1" |
		attend -m "$1"
}
translate model.tsr > dev.mem.tsr
decode -m model.tsr < dev.mem.tsr > dev.greedy.en
beam -m model.tsr -k "$K" < dev.mem.tsr > dev.beam.en
echo "greedy: $(bleu -b "$DATA/dev.en" "$DATA/dev.en2" < dev.greedy.en)"
echo "beam $K: $(bleu -b "$DATA/dev.en" "$DATA/dev.en2" < dev.beam.en)"
if ls model.tsr.ckpt.* > /dev/null 2>&1; then
	n=$(ls model.tsr.ckpt.* | wc -l)
	train-step -A "$n" -m model.tsr -o avg.tsr
	translate avg.tsr | beam -m avg.tsr -k "$K" > dev.avg.en
	echo "beam $K, last $n checkpoints averaged: $(bleu -b "$DATA/dev.en" "$DATA/dev.en2" < dev.avg.en)"
fi
