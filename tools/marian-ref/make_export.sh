#!/bin/sh
# make_export.sh: regenerates tests/fixtures/marian/export/, what
# tests/cli_marian_export.sh checks train-step --export-marian against
# without Marian: three of tools/marian-ref's random Marian models
# (post: post-norm swish, every embedding tied; pre: pre-norm relu,
# target-output tying; ssru-pre: pre-norm swish SSRU decoder, target
# tying), imported with decoder.yml (beam 4, normalize 0.6,
# max-length-factor 2.5), and two of attn's own, 1 + 1 layers (none-pre:
# pre-norm relu, nothing tied; src-post: post-norm swish, the source
# embedding the target's), exported and imported so; all fine-tuned by
# attn to copy sentences of the vocabulary's words (1500 updates: they
# learn the words, not yet to stop: see cli_marian_export.sh), and
# exported: NAME.npz, and native Marian's translations of
# input.txt with it, greedy (NAME.b1) and beam 4 (NAME.b4), each line
# Marian's n-best-1 "text ||| F0= log p ||| normalised".
#
# Run from the repository root after make; BUILD names the build
# directory (default build).  Native Marian: MARIAN_DECODER, else
# marian-decoder on PATH, else /work/shared/tools/marian-native's
# prebuilt one.  Without it this says so and changes nothing.
set -eu
top=$(pwd)
BUILD=${BUILD:-build}
F=$top/tests/fixtures/marian
out=$F/export
M=${MARIAN_DECODER:-$(command -v marian-decoder || true)}
[ -n "$M" ] || M=/work/shared/tools/marian-native/prebuilt/marian-decoder
if ! [ -x "$M" ] || ! "$M" --version >/dev/null 2>&1; then
	echo "make_export.sh: native Marian (marian-decoder) is not here" \
	     "(tried ${MARIAN_DECODER:-PATH and $M}): set MARIAN_DECODER;" \
	     "tests/fixtures/marian/export/ is left as it is" >&2
	exit 1
fi
case $BUILD in /*) PATH=$BUILD/bin:$PATH ;; *) PATH=$top/$BUILD/bin:$PATH ;; esac
# sentences(); T, a temporary directory, made the working one
. "$top/tests/lib/cli.sh"

words="la luna come verde mar el gato casa perro una grande rojo"
# 400 training pairs (copies), 50 held-out sources, 1 to 5 words
sentences 7 400 1 5 "s s" "$words" > pairs.txt
sentences 8 50 1 5 "s" "$words" > input.txt
mkdir -p "$out"
cp input.txt "$out/input.txt"
S=$F/vocab.spm
for v in post pre ssru-pre none-pre src-post; do
	case $v in
	none-pre) train-step -i -m $v.tsr -a transformer -s "$S" -t "$S" \
		-S d_model=16 -S heads=2 -S ffn=32 -S enc_layers=1 \
		-S dec_layers=1 -S pos=marian -S ln_eps=1e-6 -S norm=pre \
		-S pre_kv=input -S tie=none -S ffn_act=relu ;;
	src-post) train-step -i -m $v.tsr -a transformer -s "$S" -t "$S" \
		-S d_model=16 -S heads=2 -S ffn=32 -S enc_layers=1 \
		-S dec_layers=1 -S pos=marian -S ln_eps=1e-6 -S norm=post \
		-S tie=src -S ffn_act=swish ;;
	*) train-step --import marian -m $v.tsr \
		--decoder-config "$F/decoder.yml" "$F/$v.npz" "$S" ;;
	esac
	tokenize -p -m $v.tsr pairs.txt > pairs.tsr
	train-step -q -m $v.tsr -n 1500 --threads 1 pairs.tsr
	case $v in *-*)
		# attn's own model, through an export, as an imported one
		# (decoder.yml's settings), as the test imports it
		train-step --export-marian $v.0 -m $v.tsr
		train-step --import marian -m $v.tsr --force \
			--decoder-config "$F/decoder.yml" $v.0/model.npz "$S" ;;
	esac
	rm -rf $v.dir
	train-step --export-marian $v.dir -m $v.tsr
	cp $v.dir/model.npz "$out/$v.npz"
	for b in 1 4; do
		"$M" -c $v.dir/decoder.yml -i input.txt -b $b --n-best \
			--cpu-threads 1 --quiet > $v.b$b
		# the best of each sentence's n-best, "i ||| " off
		awk -F " [|][|][|] " '!seen[$1]++ {
			sub(/^[0-9]+ [|][|][|] /, ""); print }' $v.b$b \
			> "$out/$v.b$b"
	done
done
echo "make_export.sh: wrote $out with $("$M" --version 2>&1 | tail -1)"
