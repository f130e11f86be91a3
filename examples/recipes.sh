# recipes.sh: the model settings of the repository's recipes in one place,
# for the scripts that make models (sourced: . examples/recipes.sh).  Each
# function prints the train-step -S options of its recipe; the settings
# named in its comment come from the environment, with the recipe's
# defaults.

# The Transformer of models/bible-es-en.tsr (examples/bible-transformer.sh):
# d 256, ffn 1024, 4 heads, 3 + 3 layers, every embedding tied; NORM (pre),
# LR (noam's factor, 1), WARMUP (300), BATCH (target tokens a batch, 2000),
# DROPOUT (0.1), SMOOTH (label smoothing, 0.1), SEED (1).  These defaults
# suit 35 minutes of training (doc/results.md's equal-time comparison and
# examples/story.sh); bible-transformer.sh's long run sets WARMUP 1000,
# BATCH 4000 and DROPOUT 0.3.
recipe_transformer() {
	echo "-S d_model=256 -S heads=4 -S ffn=1024 -S enc_layers=3" \
	     "-S dec_layers=3 -S norm=${NORM:-pre} -S tie=all" \
	     "-S lr=${LR:-1} -S warmup=${WARMUP:-300}" \
	     "-S batch_tokens=${BATCH:-2000} -S dropout=${DROPOUT:-0.1}" \
	     "-S label_smoothing=${SMOOTH:-0.1} -S seed=${SEED:-1}"
}

# Guided alignment's fine-tune of models/bible-es-en.tsr
# (examples/bible-transformer.sh, doc/alignment.md): head 0 of decoder
# layer 1 trained, at the step that reads each target unit, towards the
# links read beside the pairs, with weight GUIDED_WEIGHT (0.5).
recipe_guided() {
	echo "-S guided_weight=${GUIDED_WEIGHT:-0.5} -S guided_layer=1" \
	     "-S guided_head=0 -S guided_shift=1"
}

# The recurrent models of examples/bible-rnnsearch.sh, for ARCH (the
# argument): EMB and HIDDEN (256), OPTIM (adam), LR (0.001), BATCH (2000),
# SEED (1); rnnsearch's ATT (256) and, for rnnsearch and rnnencdec, MAXOUT
# (128).  seq2seq takes its other keys (layers, reverse, dropout) at their
# defaults.
recipe_rnn() {
	printf '%s' "-S emb=${EMB:-256} -S hidden=${HIDDEN:-256}" \
	     " -S optim=${OPTIM:-adam} -S lr=${LR:-0.001}" \
	     " -S batch_tokens=${BATCH:-2000} -S seed=${SEED:-1}"
	case $1 in
	rnnsearch) printf ' -S att=%s -S maxout=%s' "${ATT:-256}" \
		"${MAXOUT:-128}" ;;
	rnnencdec) printf ' -S maxout=%s' "${MAXOUT:-128}" ;;
	esac
	echo
}
