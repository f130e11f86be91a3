#!/bin/sh
# tune-decoding.sh: dev BLEU of a model's translations for each beam size
# and length penalty of a grid, with the share of outputs that loop and
# their length against the reference's; one markdown table on stdout.
#
# usage: tools/tune-decoding.sh MODEL SRC REF [WORKDIR]
#
# Settings (environment): KS (beam sizes, default "1 2 4 5 8"), ALPHAS
# (length penalties, default "0.6 1.0 1.4"; k 1 is greedy, which has
# none), BLOCK (--block-repeats of every run, default 0), B (beam's -b).
# The source is encoded once (WORKDIR/mem.tsr); each run's output is kept
# as WORKDIR/k.K.alpha.A.txt, so a second call only scores.
set -eu
[ $# -ge 3 ] || { echo "usage: $0 MODEL SRC REF [WORKDIR]" >&2; exit 2; }
model=$1 src=$2 ref=$3 w=${4:-tune}
KS=${KS:-1 2 4 5 8} ALPHAS=${ALPHAS:-0.6 1.0 1.4} BLOCK=${BLOCK:-0}
B=${B:-16}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$w"
[ -s "$w/mem.tsr" ] || tokenize -m "$model" "$src" | embed -m "$model" |
	encode -m "$model" | attend -m "$model" > "$w/mem.tsr"
echo "| beam | alpha | BLEU | BP | hyp/ref length | looping lines |"
echo "|---:|---:|---:|---:|---:|---:|"
for k in $KS; do
	for a in $ALPHAS; do
		[ "$k" = 1 ] && a=-
		out=$w/k.$k.alpha.$a.block.$BLOCK.txt
		if [ ! -s "$out" ]; then
			if [ "$k" = 1 ]; then
				decode -m "$model" --block-repeats "$BLOCK" \
					< "$w/mem.tsr" > "$out"
			else
				beam -m "$model" -k "$k" -l "$a" -b "$B" \
					--block-repeats "$BLOCK" \
					< "$w/mem.tsr" > "$out"
			fi
		fi
		bleu -f text "$ref" < "$out" | awk -v k="$k" -v a="$a" \
			-v rep="$(sh "$here/repeats.sh" "$out" |
				  sed 's/.*: \([0-9]* of [0-9]*\) lines.*/\1/')" '
		{ for (i = 1; i <= NF; i++) {
			if ($i == "=" && b == "") b = $(i + 1)
			if ($i == "(BP") bp = $(i + 2)
			if ($i == "ratio") r = $(i + 2) } }
		END { printf "| %s | %s | %s | %s | %s | %s |\n",
		      k, a, b, bp, r, rep }'
		if [ "$k" = 1 ]; then break; fi
	done
done
