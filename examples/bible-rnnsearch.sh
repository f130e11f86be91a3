#!/bin/sh
# bible-rnnsearch.sh: the real-data recipe.  Trains an RNNsearch (or with
# ARCH=rnnencdec the baseline without attention) on the Spanish-English
# Bible corpus, translates the dev set and scores it with BLEU against the
# KJV (and the WEB as a second reference).
#
#   sh examples/bible-rnnsearch.sh [WORKDIR]
#
# Settings (environment): DATA (default /work/shared/data/bible-es-en),
# ARCH (rnnsearch), VOCAB (8000 joint units), EMB, HIDDEN, ATT (256),
# MAXOUT (128), OPTIM (adam), LR (0.001), BATCH (2000 target tokens), SEED
# (1), as examples/recipes.sh reads them; MINUTES (training time, default
# 35), SAVE (updates between saves, 100), K (beam size, 5), THREADS (1).
# The defaults are the runs reported in doc/results.md (35 minutes on one
# core of a 2-core Debian 12 machine).
# Stopping it (^C) saves the model; running it again resumes training.
set -eu
DATA=${DATA:-/work/shared/data/bible-es-en}
W=${1:-bible-rnnsearch}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/recipes.sh"
ARCH=${ARCH:-rnnsearch} VOCAB=${VOCAB:-8000}
MINUTES=${MINUTES:-35} SAVE=${SAVE:-100} K=${K:-5}
ATTN_THREADS=${THREADS:-1}
export ATTN_THREADS
mkdir -p "$W"
cd "$W"

if [ ! -e model.tsr ]; then
	tokenize -l "$VOCAB" "$DATA/train.es" "$DATA/train.en" > vocab
	# shellcheck disable=SC2046
	train-step -i -m model.tsr -a "$ARCH" -s vocab -t vocab \
		$(recipe_rnn "$ARCH")
fi
[ -e train.tsr ] ||
	paste "$DATA/train.es" "$DATA/train.en" | tokenize -p -m model.tsr > train.tsr
[ -e dev.tsr ] ||
	paste "$DATA/dev.es" "$DATA/dev.en" | tokenize -p -m model.tsr > dev.tsr

seconds=$((MINUTES * 60))
train-step -m model.tsr -T "$seconds" -E "$SAVE" -k 100 -L 20 \
	-d dev.tsr -D "$SAVE" train.tsr

translate() {
	tokenize -m "$1" "$DATA/dev.es" | embed -m "$1" | encode -m "$1" |
		attend -m "$1"
}
translate model.tsr > dev.mem.tsr
decode -m model.tsr < dev.mem.tsr > dev.greedy.en
beam -m model.tsr -k "$K" < dev.mem.tsr > dev.beam.en
for f in greedy beam; do
	echo "$f: $(bleu -f text "$DATA/dev.en" < dev.$f.en)"
	echo "$f, KJV and WEB as references: $(bleu -b "$DATA/dev.en" "$DATA/dev.en2" < dev.$f.en)"
done
if [ "$(ls model.tsr.ckpt.* 2>/dev/null | wc -l)" -ge 5 ]; then
	train-step -A 5 -m model.tsr -o avg.tsr
	translate avg.tsr | beam -m avg.tsr -k "$K" > dev.avg.en
	echo "beam $K, last 5 checkpoints averaged: $(bleu -b "$DATA/dev.en" < dev.avg.en)"
fi
