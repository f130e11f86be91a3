#!/bin/sh
# marian-import.sh DIR [OUT.tsr]: turns a downloaded Marian model
# directory into an attn model, then translates standard input with it
# if there is any (text in, text out).  The files it looks for, as the
# published models name them:
#   OPUS-MT (a zip from the Helsinki-NLP release pages, unpacked):
#     *.npz (the parameters), *.vocab.yml (the ids), source.spm and
#     target.spm (how text is cut), decoder.yml (beam size, length
#     penalty, length factor);
#   Bergamot (browsermt's models and students):
#     model.*.bin (Marian's float .bin; the int8 "intgemm" .bin files are
#     not read: take the float model or its .npz), vocab.*.spm, or
#     srcvocab.*.spm and trgvocab.*.spm.
# Example:
#   examples/marian-import.sh opus-mt-es-en es-en.tsr < in.es > out.en
set -eu
dir=${1:?usage: marian-import.sh DIR [OUT.tsr]}
out=${2:-$(basename "$dir").tsr}

one() {	# one PATTERN...: the single file of DIR that matches, or nothing
	for p; do
		set -- "$dir"/$p
		[ -e "$1" ] || continue
		[ $# -eq 1 ] || { echo "$dir: $# files match $p" >&2; exit 1; }
		echo "$1"
		return
	done
}

model=$(one '*.npz' 'model*.bin')
[ -n "$model" ] || { echo "$dir: no *.npz or model*.bin" >&2; exit 1; }
case $model in *intgemm*)
	echo "$model: an int8 (intgemm) model; use the float one" >&2
	exit 1 ;;
esac
yml=$(one '*.vocab.yml' 'vocab.yml')
src=$(one source.spm 'srcvocab*.spm')
tgt=$(one target.spm 'trgvocab*.spm')
shared=$(one 'vocab*.spm')
dec=$(one decoder.yml)

if [ -n "$yml" ]; then		# OPUS-MT: ids from the yml, cut by the .spm
	set -- "$yml" ${src:+"$src"} ${tgt:+"$tgt"}
elif [ -n "$src" ] && [ -n "$tgt" ]; then
	set -- "$src" "$tgt"
elif [ -n "$shared" ]; then
	set -- "$shared"
else
	echo "$dir: no vocabulary (*.vocab.yml, source.spm, vocab*.spm)" >&2
	exit 1
fi
train-step --import marian -m "$out" ${dec:+--decoder-config "$dec"} \
	"$model" "$@"
echo "$out: made from $model" >&2

if [ ! -t 0 ]; then
	tokenize -m "$out" | embed -m "$out" | encode -m "$out" |
		attend -m "$out" | beam -m "$out"
fi
