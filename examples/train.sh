#!/bin/sh
# train.sh: a translation model for any language pair, from two files of
# lines that translate each other (line N of SRC_FILE is translated by
# line N of TGT_FILE).  Learns one joint subword vocabulary, makes a
# Transformer with the settings of examples/bible-transformer.sh (d 256,
# ffn 1024, 4 heads, 3 + 3 layers, pre-norm, every embedding tied, noam
# warmup 300, batches of 2000 target tokens: train-step's defaults),
# trains it for TIME seconds with the dev loss and greedy BLEU every SAVE
# updates (the best model kept as model.tsr.best), averages the last AVG
# checkpoints of the last fifth of training, exports the average with f16 parameters, and scores its
# greedy and beam translations of the dev set with BLEU.
#
#   sh examples/train.sh SRC_FILE TGT_FILE DIR
#
# Everything goes to DIR: vocab, model.tsr (the trained model, with its
# optimiser's state), model.tsr.ckpt.STEP, model.tsr.best (the best by
# dev BLEU during training), avg.tsr, model.f16.tsr (the
# model to translate with), dev.greedy and dev.beam (the dev set's
# translations) and bleu.txt.  Stopping it (^C) saves the model; running it
# again resumes training for another TIME seconds.
#
# Settings (environment): TIME (seconds of training, default 2100),
# STEPS (instead of TIME, stop after this many updates),
# VOCAB (subword units: 8000, or for fewer than 20,000 pairs 8000 in
# proportion, at least 500), THREADS (1), MATMUL (bf16 where the CPU has
# AVX512_BF16, else f32: train-step --matmul), BATCH (target tokens a
# batch, 2000), SAVE (updates between saves and dev losses, 100), AVG
# (checkpoints averaged, 5), K (beam size, 4), DEV_EVAL (dev pairs
# scored during training, 500), PATIENCE (stop after this many
# evaluations without a better one; default: never), SETTINGS (more
# KEY=VALUE settings of the model, separated by spaces: train-step(1)),
# DEV_SRC and DEV_TGT (the dev set; without them the last DEV_LINES lines
# of the given files, default 500 and at most a tenth of them, are held
# out as the dev set and not trained on).
set -eu
[ $# -eq 3 ] || {
	echo "usage: sh examples/train.sh SRC_FILE TGT_FILE DIR" >&2
	exit 2
}
command -v train-step >/dev/null ||
	PATH=$(cd "$(dirname "$0")/.." && pwd)/build/bin:$PATH
VOCAB_GIVEN=${VOCAB:+1}
TIME=${TIME:-2100} VOCAB=${VOCAB:-8000} THREADS=${THREADS:-1}
BATCH=${BATCH:-2000} SAVE=${SAVE:-100} AVG=${AVG:-5} K=${K:-4}
DEV_LINES=${DEV_LINES:-500} DEV_EVAL=${DEV_EVAL:-500}
SETTINGS=${SETTINGS:-} PATIENCE=${PATIENCE:-}
if [ -z "${MATMUL:-}" ]; then
	MATMUL=f32
	grep -q avx512_bf16 /proc/cpuinfo 2>/dev/null && MATMUL=bf16
fi
ATTN_THREADS=$THREADS
export ATTN_THREADS

abs() { case $1 in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
say() { echo "train.sh: $*" >&2; }
lines() { wc -l < "$1" | tr -d ' '; }

src=$(abs "$1") tgt=$(abs "$2")
dev_src=${DEV_SRC:+$(abs "$DEV_SRC")} dev_tgt=${DEV_TGT:+$(abs "$DEV_TGT")}
for f in "$src" "$tgt" ${dev_src:+"$dev_src"} ${dev_tgt:+"$dev_tgt"}; do
	[ -r "$f" ] || { say "$f: cannot read"; exit 1; }
done
case ${dev_src:+s}${dev_tgt:+t} in
s | t) say "DEV_SRC and DEV_TGT go together"; exit 2 ;;
esac
n=$(lines "$src")
[ "$n" -eq "$(lines "$tgt")" ] ||
	{ say "$1 and $2 differ in their number of lines"; exit 1; }
mkdir -p "$3"
cd "$3"

# the sides as lines without tabs (tokenize -p reads SOURCE<TAB>TARGET)
if [ ! -e train.src ]; then
	if [ -n "$dev_src" ]; then
		[ "$(lines "$dev_src")" -eq "$(lines "$dev_tgt")" ] ||
			{ say "DEV_SRC and DEV_TGT differ in lines"; exit 1; }
		hold=0
		tr '\t' ' ' < "$dev_src" > dev.src
		tr '\t' ' ' < "$dev_tgt" > dev.tgt
	else
		hold=$DEV_LINES
		[ "$hold" -le $((n / 10)) ] || hold=$((n / 10))
		[ "$hold" -ge 1 ] ||
			{ say "too few lines to hold out a dev set"; exit 1; }
		tail -n "$hold" "$src" | tr '\t' ' ' > dev.src
		tail -n "$hold" "$tgt" | tr '\t' ' ' > dev.tgt
	fi
	head -n $((n - hold)) "$tgt" | tr '\t' ' ' > train.tgt
	head -n $((n - hold)) "$src" | tr '\t' ' ' > train.src
fi
if [ ! -e model.tsr ]; then
	# 8,000 units suit 20,000 pairs and more (the Bible's 28,000); a
	# smaller corpus would learn units seen once or twice, which it
	# cannot train: it gets a size in proportion, unless VOCAB says
	n=$(lines train.src)
	if [ -z "$VOCAB_GIVEN" ] && [ "$n" -lt 20000 ]; then
		VOCAB=$((n * 8000 / 20000))
		[ "$VOCAB" -ge 500 ] || VOCAB=500
		say "$n training pairs: a vocabulary of $VOCAB units, not" \
		    "8000 (set VOCAB to choose)"
	fi
	say "learning a vocabulary of $VOCAB units"
	tokenize -l "$VOCAB" train.src train.tgt > vocab
	# shellcheck disable=SC2046
	train-step -i -m model.tsr -a transformer -s vocab -t vocab \
		-S d_model=256 -S heads=4 -S ffn=1024 -S enc_layers=3 \
		-S dec_layers=3 -S norm=pre -S tie=all -S lr=1 -S warmup=300 \
		-S batch_tokens="$BATCH" -S dropout=0.1 \
		-S label_smoothing=0.1 \
		$(for s in $SETTINGS; do echo "-S $s"; done)
fi
[ -e train.tsr ] ||
	paste train.src train.tgt | tokenize -p -m model.tsr > train.tsr
[ -e dev.tsr ] || paste dev.src dev.tgt | tokenize -p -m model.tsr > dev.tsr

limit="-T $TIME" what="$TIME s"
[ -z "${STEPS:-}" ] || limit="-n $STEPS" what="$STEPS updates"
[ -z "$PATIENCE" ] || limit="$limit --patience $PATIENCE"
say "training for $what ($THREADS threads, $MATMUL products)"
# shellcheck disable=SC2086
train-step -m model.tsr --matmul "$MATMUL" $limit -E "$SAVE" \
	-k "$AVG" -L 50 -d dev.tsr --dev-lines "$DEV_EVAL" train.tsr

# The newest AVG checkpoints of the last fifth of training: in a short run
# (TIME small against SAVE) older ones are of a model still far from the
# last, and their average is worse than the last alone.
last=$(tensordump -n model.config -t model.tsr |
	sed -n 's/^"step=\([0-9]*\)\\n"$/\1/p')
ckpts=$(ls model.tsr.ckpt.* 2>/dev/null | sed 's/.*\.//' | sort -n |
	awk -v last="$last" '5 * $1 >= 4 * last' | tail -n "$AVG" |
	sed 's/^/model.tsr.ckpt./')
have=$(echo $ckpts | wc -w)
if [ "$have" -ge 2 ]; then
	say "averaging the $have checkpoints of the last fifth:" $ckpts
	# shellcheck disable=SC2086
	train-step -A "$have" -m model.tsr -o avg.tsr $ckpts
else
	cp model.tsr avg.tsr.tmp
	mv avg.tsr.tmp avg.tsr
fi
train-step -x model.f16.tsr -m avg.tsr

say "translating the dev set ($(lines dev.src) lines)"
M=model.f16.tsr
tokenize -m $M dev.src | embed -m $M | encode -m $M | attend -m $M > dev.mem.tsr
decode -m $M < dev.mem.tsr > dev.greedy
beam -m $M -k "$K" < dev.mem.tsr > dev.beam
rm -f dev.mem.tsr
{
	echo "greedy: $(bleu -f text dev.tgt < dev.greedy)"
	echo "beam $K: $(bleu -f text dev.tgt < dev.beam)"
} | tee bleu.txt
