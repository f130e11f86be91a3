#!/bin/sh
# story.sh: the story of attention, trained and compared (issue 15; the
# paper's Figure 2 grown up).  Every variant is trained with its recipe
# (examples/recipes.sh: the same sizes where they apply) on the same pairs
# with one joint vocabulary, for the same time on one thread (CPU time,
# train-step --cpu-time: on a machine shared with other work each variant
# still gets the same computation):
#
#   rnnencdec         the RNN encoder-decoder, one vector for the sentence
#   seq2seq           Sutskever et al.'s deep LSTMs, the source reversed
#   seq2seq-forward   the same, the source in its order
#   diagonal          rnnsearch, the two cursors in sync (attention=diagonal)
#   window            rnnsearch, Graves' soft window (attention=window)
#   additive          rnnsearch, Bahdanau's search (attention=additive)
#   transformer       the Transformer, sinusoidal positions
#   rope              the Transformer, rotary positions (pos=rope)
#
# A variant that this train-step cannot make (an architecture or key it
# does not know) is skipped with a message.  Then each model translates
# the dev set greedily and with beam search, and the script writes:
#
#   WORKDIR/story.md          the table: dev BLEU greedy and beam, updates
#                             made, seconds trained, target tokens/s (the
#                             training log's, weighted by time)
#   WORKDIR/length/           examples/length-experiment.sh's table of BLEU
#                             (beam) by source length
#   DOC/story-length.svg      its plot, a line per variant
#   DOC/story-attention.svg   the attention of dev verse VERSE under
#                             diagonal, window, additive and the
#                             Transformer (its last layer's cross-attention,
#                             the mean of its heads), side by side
#
#   sh examples/story.sh [WORKDIR]
#
# Stopping it (^C) saves the model in training and the time it had; running
# it again resumes where it stopped: a variant trains until its time is
# spent in all, and what is made already (models, translations) is kept.
#
# Settings (environment): DATA (a directory with train.es, train.en,
# dev.es and dev.en; default /work/shared/data/bible-es-en), TRAIN_TIME
# (seconds of training of each variant, 2100), VOCAB (8000), K (beam size,
# 4), SAVE (updates between saves, 100), VERSE (the dev line drawn, 323),
# DOC (where the figures go, the repository's doc/), VARIANTS (the names
# to run, default all), and the recipes' (examples/recipes.sh; LR, BATCH
# and SEED apply to every variant that has them).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/recipes.sh"
. "$here/cputime.sh"
command -v train-step >/dev/null || PATH=$here/../build/bin:$PATH
abs() { case $1 in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
say() { echo "story.sh: $*" >&2; }
DATA=$(abs "${DATA:-/work/shared/data/bible-es-en}")
DOC=$(abs "${DOC:-$here/../doc}")
TRAIN_TIME=${TRAIN_TIME:-2100} VOCAB=${VOCAB:-8000} K=${K:-4}
SAVE=${SAVE:-100} VERSE=${VERSE:-323}
VARIANTS=${VARIANTS:-rnnencdec seq2seq seq2seq-forward diagonal window
additive transformer rope}
ATTN_THREADS=1
export ATTN_THREADS
for f in train.es train.en dev.es dev.en; do
	[ -r "$DATA/$f" ] || { say "$DATA/$f: cannot read"; exit 1; }
done
W=${1:-story}
mkdir -p "$W" "$DOC"
cd "$W"

# The variants: NAME ARCH SETTINGS.
settings() {
	case $1 in
	rnnencdec) echo "rnnencdec $(recipe_rnn rnnencdec)" ;;
	seq2seq) echo "seq2seq $(recipe_rnn seq2seq) -S reverse=1" ;;
	seq2seq-forward) echo "seq2seq $(recipe_rnn seq2seq) -S reverse=0" ;;
	diagonal | window | additive)
		echo "rnnsearch $(recipe_rnn rnnsearch) -S attention=$1" ;;
	transformer) echo "transformer $(recipe_transformer) -S pos=sinusoidal" ;;
	rope) echo "transformer $(recipe_transformer) -S pos=rope" ;;
	*) say "$1: no such variant"; exit 2 ;;
	esac
}

# One vocabulary, one stream of pairs for all (tmp, then renamed: a run
# stopped halfway leaves no half file).
if [ ! -e vocab ]; then
	say "learning a vocabulary of $VOCAB units"
	tokenize -l "$VOCAB" "$DATA/train.es" "$DATA/train.en" > vocab.tmp
	mv vocab.tmp vocab
fi
if [ ! -e train.tsr ]; then
	paste "$DATA/train.es" "$DATA/train.en" | tokenize -p -v vocab \
		> train.tsr.tmp
	mv train.tsr.tmp train.tsr
fi

# init NAME: makes NAME/model.tsr; 1 when train-step cannot (usage error,
# exit 2: an architecture or key it does not know), with a message.
init() {
	[ -e "$1/model.tsr" ] && return 0
	mkdir -p "$1"
	name=$1
	# shellcheck disable=SC2046
	set -- $(settings "$1")
	arch=$1
	shift
	if train-step -i -m "$name/model.tsr" -a "$arch" -s vocab -t vocab \
		"$@" train.tsr 2> "$name/init.err"; then
		return 0
	else
		rc=$?
	fi
	if [ "$rc" -eq 2 ]; then
		say "$name: skipped, this train-step cannot make it:" \
		    "$(head -n 1 "$name/init.err")"
		return 1
	fi
	cat "$name/init.err" >&2
	exit 1
}

# train NAME: until TRAIN_TIME seconds of training are spent in all
# (NAME/trained.s, the CPU seconds of its train-step runs so far, loading
# included; NAME/trained.done once a run ends at its limit).
stop=
trap 'stop=1' INT TERM
train() {
	[ -e "$1/trained.done" ] && return 0
	spent=$(cat "$1/trained.s" 2>/dev/null || echo 0)
	left=$((TRAIN_TIME - spent))
	if [ "$left" -gt 0 ]; then
		say "$1: training for $left s ($spent s done)"
		times > "$1/times.0"
		rc=0
		train-step -m "$1/model.tsr" -T "$left" --cpu-time -E "$SAVE" \
			-L 50 train.tsr 2>> "$1/train.log" || rc=$?
		times > "$1/times.1"
		# whole seconds, rounded up
		took=$(cputime "$1/times.0" "$1/times.1" |
			awk '{ s = int($1); print s + ($1 > s) }')
		echo $((spent + took)) > "$1/trained.s.tmp"
		mv "$1/trained.s.tmp" "$1/trained.s"
		[ "$rc" -eq 0 ] || {
			say "$1: train-step failed (status $rc):"
			tail -n 3 "$1/train.log" >&2
			exit 1
		}
		# ended before its limit: stopped by a signal (maybe sent to
		# train-step alone); a model half trained is not translated
		[ -z "$stop" ] && [ "$took" -ge "$left" ] || {
			say "$1: stopped at $((spent + took)) s of" \
			    "$TRAIN_TIME; run it again to resume"
			exit 130
		}
	fi
	touch "$1/trained.done"
}

# translate NAME: NAME/dev.greedy.en and NAME/dev.beam.en, unless newer
# than the model.
translate() {
	M=$1/model.tsr
	[ "$1/dev.beam.en" -nt "$M" ] && [ "$1/dev.greedy.en" -nt "$M" ] &&
		return 0
	say "$1: translating the dev set"
	tokenize -m "$M" "$DATA/dev.es" | embed -m "$M" | encode -m "$M" |
		attend -m "$M" > "$1/dev.mem.tsr"
	decode -m "$M" < "$1/dev.mem.tsr" > "$1/dev.greedy.tmp"
	beam -m "$M" -k "$K" < "$1/dev.mem.tsr" > "$1/dev.beam.tmp"
	rm -f "$1/dev.mem.tsr"
	mv "$1/dev.greedy.tmp" "$1/dev.greedy.en"
	mv "$1/dev.beam.tmp" "$1/dev.beam.en"
}

made=
for v in $VARIANTS; do
	settings "$v" > /dev/null
	init "$v" || continue
	train "$v"
	translate "$v"
	made="$made $v"
done
[ -n "$made" ] || { say "no variant made"; exit 1; }

# BLEU by source length, beam (the plot) and greedy (its "all" row), by
# examples/length-experiment.sh on the translations.
lengths() {     # lengths DIR greedy|beam
	out=$1 how=$2
	shift 2
	set --
	for v in $made; do set -- "$@" "$v=$v/dev.$how.en"; done
	sh "$here/length-experiment.sh" -o "$out" -k "$K" \
		-t "BLEU by source length, $how (dev, $TRAIN_TIME s each)" \
		"$DATA/dev.es" "$DATA/dev.en" "$@" > /dev/null
}
lengths length beam
lengths length-greedy greedy
cp length/plot.svg "$DOC/story-length.svg.tmp"
mv "$DOC/story-length.svg.tmp" "$DOC/story-length.svg"

# The table: a row per variant.
steps() {
	tensordump -n model.config -t "$1/model.tsr" |
		sed -n 's/^"step=\([0-9]*\)\\n"$/\1/p'
}
# tokens/s of a log: its lines' figures weighted by the time since the
# line before (a run's clock starts at 0).
toks() {
	awk '/^train-step: [0-9]+:[0-9]+:[0-9]+ .* tok\/s/ {
		split($2, c, ":"); t = c[1] * 3600 + c[2] * 60 + c[3]
		for (i = 3; i < NF; i++)
			if ($(i + 1) == "tok/s")
				r = $i
		dt = t > last ? t - last : t; last = t
		sum += r * dt; tot += dt }
		END { if (tot > 0) printf "%.0f", sum / tot; else print "-" }' \
		"$1/train.log" 2>/dev/null || echo -
}
# all VARIANT DIR: the variant's BLEU on the whole set, from DIR/table.tsv.
all() {
	awk -F '\t' -v v="$1" 'NR == 1 { for (i = 4; i <= NF; i++)
		if ($i == v) c = i } $1 == "all" { print $c }' "$2/table.tsv"
}
{
	echo "| variant | arch | updates | seconds | tokens/s |" \
	     "dev BLEU greedy | dev BLEU beam $K |"
	echo "| --- | --- | ---: | ---: | ---: | ---: | ---: |"
	for v in $made; do
		echo "| $v | $(settings "$v" | cut -d ' ' -f 1) | $(steps "$v") |" \
		     "$(cat "$v/trained.s") | $(toks "$v") |" \
		     "$(all "$v" length-greedy) | $(all "$v" length) |"
	done
} > story.md
cat story.md

# The attention of one dev verse, side by side: decode's att.weights
# drawn by tensordump -g, each picture placed beside the one before.
set --
for v in diagonal window additive transformer; do
	case " $made " in *" $v "*) ;; *) continue ;; esac
	M=$v/model.tsr
	sed -n "${VERSE}p" "$DATA/dev.es" | tokenize -m "$M" | embed -m "$M" |
		encode -m "$M" | attend -m "$M" | decode -m "$M" -t |
		tensordump -g "$v/attention.svg" -m "$M"
	set -- "$@" "$v/attention.svg"
done
if [ $# -gt 0 ]; then
	awk -v verse="$VERSE" '
	FNR == 1 { n++; name[n] = FILENAME; sub(/\/.*/, "", name[n]) }
	# the backgrounds and frame titles of the pictures go
	/^<\?xml/ || /^<\/svg>/ || /^<rect width="100%"/ || /^<title>/ ||
	    /^<text x="10" y="24" font-size="14">frame / { next }
	/^<svg / {
		match($0, /width="[0-9.]+"/)
		w[n] = substr($0, RSTART + 7, RLENGTH - 8) + 0
		match($0, /height="[0-9.]+"/)
		h[n] = substr($0, RSTART + 8, RLENGTH - 9) + 0
		next
	}
	{ gsub(/id="/, "id=\"" name[n] "-"); body[n] = body[n] $0 "\n" }
	END {
		for (i = 1; i <= n; i++) {
			x[i] = width
			width += w[i] + 20
			if (h[i] > height)
				height = h[i]
		}
		printf "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		printf "<svg xmlns=\"http://www.w3.org/2000/svg\" " \
		    "version=\"1.1\" width=\"%d\" height=\"%d\" " \
		    "viewBox=\"0 0 %d %d\" font-family=\"DejaVu Sans, " \
		    "sans-serif\" font-size=\"12\">\n", width, height + 40,
		    width, height + 40
		printf "<rect width=\"100%%\" height=\"100%%\" " \
		    "fill=\"#ffffff\"/>\n"
		for (i = 1; i <= n; i++) {
			printf "<text x=\"%d\" y=\"26\" font-size=\"16\">" \
			    "%s (dev line %d)</text>\n", x[i] + 10, name[i],
			    verse
			printf "<g transform=\"translate(%d,40)\">\n%s</g>\n",
			    x[i], body[i]
		}
		print "</svg>"
	}' "$@" > "$DOC/story-attention.svg.tmp"
	mv "$DOC/story-attention.svg.tmp" "$DOC/story-attention.svg"
fi
say "story.md, $DOC/story-length.svg, $DOC/story-attention.svg"
