#!/bin/sh
# bible-both-ways.sh MODEL [WORKDIR]: a Transformer trained by attn
# (train-step, Marian-compatible settings: pos=marian, no <s>, ln_eps
# 1e-6, norm=post or norm=pre with pre_kv=input; a SentencePiece
# vocabulary with Marian's ids) checked against native Marian, both ways.
# Everything is made in WORKDIR (default build/bible-both-ways):
#
#   float   train-step --export-marian exp -m MODEL; marian-decoder -c
#           exp/decoder.yml translates the first $LINES (500) lines of
#           dev.es greedy (-b 1) and the first $BEAM_LINES with beam
#           $BEAM (4; the export of attn's own model writes no beam-size,
#           and Marian's default 12 costs three times as much), normalize
#           0 (Marian's default),
#           raw text in and out, one thread, --mini-batch 1; against
#           attn's decode/beam of MODEL with the flags that match Marian's
#           search (--min-len 0 -a 3 -c 0; beam -k $BEAM -l 0), and
#           against attn's import of exp (examples/marian-import.sh: the
#           decoder.yml's settings, no flag but beam's -k $BEAM).
#   round   the import of exp exported again (exp2) and imported again:
#           the two imports byte for byte (cmp), and every record of MODEL
#           against the import's (tensordump -t: the shortest digits that
#           read back to the same bits); model.config's keys listed apart.
#   int8    marian-conv -g intgemm8 of exp/model.npz, with and without
#           alphas (Firefox's pipeline: --dump-quantmult on the
#           $ALPHA_LINES lines of dev.es after the tested ones,
#           extract_stats.py's 127 / (mean + 1.1 std));
#           marian-decoder --gemm-precision int8shiftAll (no alphas) or
#           int8shiftAlphaAll against train-step --import marian of the
#           same .bin, greedy and beam (attn's stages with -b 1 for the
#           file without alphas: Marian's multipliers are then its
#           batch's, one sentence).
#   lex     a lexical shortlist: align (IBM Model 2, --no-fold) on
#           train.{es,en} cut into pieces by the vocabulary, its forward
#           table t(en | es) written as Marian's lex.s2t ("target source
#           prob"), marian-conv --shortlist lex.s2t 100 100 0; the alphas
#           model greedy with --shortlist lex.bin false against attn's
#           import with --lex lex.bin.
#
# For every comparison it prints the lines of identical text; for each
# differing line both texts, each side's own log-probability (Marian's
# --n-best, attn's --scores) and attn's score(1) of both texts under the
# model that translated (the margin; score(1) re-cuts the text and adds
# the </s> that an output stopped by the length limit lacks).  Exits 1 if
# a float comparison has a differing line, an int8 one is below 98%, or
# native Marian is absent.
#
# The translations run as JOBS (2) processes of one thread at a time.
# Settings (environment): DATA (../shared/data/bible-es-en), LINES (500),
# BEAM (4), BEAM_LINES (the beam searches' lines: LINES), ALPHA_LINES (the
# alphas' sample: 100 lines of dev.es after the tested ones), JOBS,
# BUILD (attn's build folder, build), MARIAN_NATIVE (the folder of
# marian-decoder and marian-conv; else tools/marian-ref/native.sh finds
# it).  Needs Debian's sentencepiece (spm_encode, spm_export_vocab) and
# python3-numpy.  Without native Marian only "round" runs, and it says so.
set -eu
prog=bible-both-ways.sh
[ $# -ge 1 ] && [ $# -le 2 ] || { echo "usage: $prog MODEL [WORKDIR]" >&2; exit 2; }
root=$(cd "$(dirname "$0")/../.." && pwd)
MODEL=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
[ -f "$MODEL" ] || { echo "$prog: $1: no such model" >&2; exit 1; }
W=${2:-$root/build/bible-both-ways}
mkdir -p "$W"
W=$(cd "$W" && pwd)
DATA=${DATA:-$root/../shared/data/bible-es-en}
N=${LINES:-500}
K=${BEAM:-4}
NB=${BEAM_LINES:-$N}
NA=${ALPHA_LINES:-100}
J=${JOBS:-2}
PATH=$root/${BUILD:-build}/bin:$PATH
export ATTN_THREADS=1
log() { echo "$prog: $*" >&2; }
for t in spm_encode spm_export_vocab; do
	command -v $t > /dev/null ||
		{ log "no $t (apt-get install sentencepiece)"; exit 1; }
done

. "$root/tools/marian-ref/native.sh"
M=
if [ -n "${MARIAN_NATIVE:-}" ] || [ -x "$root/../shared/tools/marian-native/build.sh" ]; then
	M=$(marian_native 2> /dev/null && echo "$MARIAN_BIN") || M=
fi
# Marian's float products on the kernels attn runs
marian_blas
if [ -z "$M" ]; then
	log "native Marian is ABSENT (set MARIAN_NATIVE to the folder of" \
	    "marian-decoder and marian-conv): only the round trip (no Marian" \
	    "needed) runs; float, int8 and lex are NOT checked"
fi

head -n "$N" "$DATA/dev.es" > "$W/in.es"
head -n "$N" "$DATA/dev.en" > "$W/ref.en"
head -n "$NB" "$DATA/dev.es" > "$W/inb.es"
head -n "$NB" "$DATA/dev.en" > "$W/refb.en"
E=$W/exp
rm -rf "$E" "$W/exp2"
train-step --export-marian "$E" -m "$MODEL"
V=$E/vocab.spm
[ -f "$V" ] || { log "the export has no joint vocab.spm: not this script's case"; exit 1; }
log "attn: the import of exp (marian-import.sh)"
rm -f "$W/imp.tsr" "$W/imp2.tsr"
sh "$root/examples/marian-import.sh" "$E" "$W/imp.tsr" < /dev/null

# attn MODEL PROG IN OUT [ARGS]: IN through attn's pipeline and PROG;
# OUT.txt the text, OUT.logp attn's --scores.  attn1: every stage one
# sentence a batch (-b 1), for int8shiftAll, whose activations'
# multipliers Marian takes per call over its batch (--mini-batch 1)
attn() { a_b=; attn_ "$@"; }
attn1() { a_b="-b 1"; attn_ "$@"; }
attn_() {
	a_m=$1 a_p=$2 a_i=$3 a_o=$4; shift 4
	# shellcheck disable=SC2086
	tokenize -m "$a_m" "$a_i" | embed -m "$a_m" $a_b |
		encode -m "$a_m" $a_b | attend -m "$a_m" $a_b |
		"$a_p" -m "$a_m" --scores $a_b "$@" > "$a_o.out"
	sed 's/ [|][|][|] [^|]*$//' "$a_o.out" > "$a_o.txt"
	sed 's/.* [|][|][|] //' "$a_o.out" > "$a_o.logp"
}
# marian IN OUT ARGS: marian-decoder -c exp/decoder.yml on IN; OUT.txt the
# text, OUT.logp the best hypothesis' log-probability (--n-best's F0)
marian() {
	m_i=$1 m_o=$2; shift 2
	"$M/marian-decoder" -c "$E/decoder.yml" --cpu-threads 1 \
		--mini-batch 1 --maxi-batch 1 --quiet --n-best "$@" \
		< "$m_i" > "$m_o.nbest"
	awk -F ' [|][|][|] ' '!($1 in seen) { seen[$1]; sub(/^F0= /, "", $3)
		print $2 > "'"$m_o.txt"'"; print $3 > "'"$m_o.logp"'" }' "$m_o.nbest"
}
# task COMMAND...: run in the background, JOBS at a time
njobs=0
task() {
	"$@" &
	njobs=$((njobs + 1))
	[ $njobs -lt "$J" ] || { wait; njobs=0; }
}
# rescore SCORER IN NAME: attn's score(1) under SCORER of NAME.txt as the
# translation of IN, line by line, in NAME.rescore (one sentence a batch)
rescore() {
	paste "$2" "$3.txt" | tokenize -p -m "$1" | embed -m "$1" -b 1 |
		encode -m "$1" -b 1 | attend -m "$1" -b 1 |
		score -m "$1" -b 1 > "$3.rescore"
}
bad=0
# compare LABEL IN MARIAN ATTN SCORER GOAL: identical lines of MARIAN.txt
# and ATTN.txt (translations of IN); each differing line with its
# log-probabilities; GOAL: the percentage of identical lines wanted
compare() {
	c_l=$1 c_i=$2 c_m=$3 c_a=$4 c_s=$5 c_g=$6
	c_n=$(wc -l < "$c_i")
	if [ "$(wc -l < "$c_m.txt")" -ne "$c_n" ] || [ "$(wc -l < "$c_a.txt")" -ne "$c_n" ]; then
		echo "$c_l: FAILED: $(wc -l < "$c_m.txt") lines from Marian," \
		     "$(wc -l < "$c_a.txt") from attn, for $c_n"
		bad=1
		return 0
	fi
	same=$(paste -d '\n' "$c_m.txt" "$c_a.txt" |
		awk 'NR % 2 { a = $0; next } $0 == a { n++ } END { print n + 0 }')
	echo "$c_l: $same of $c_n lines identical"
	[ "$same" -eq "$c_n" ] && return 0
	[ $((same * 100)) -ge $((c_n * c_g)) ] || bad=1
	rescore "$c_s" "$c_i" "$c_m"
	rescore "$c_s" "$c_i" "$c_a"
	paste "$c_m.txt" "$c_a.txt" "$c_m.logp" "$c_a.logp" "$c_m.rescore" \
		"$c_a.rescore" | awk -F '\t' -v l="$c_l" '$1 != $2 {
		printf "%s line %d: marian: %s\n", l, NR, $1
		printf "%s line %d: attn:   %s\n", l, NR, $2
		printf "%s line %d: logp marian %s (Marian), attn %s (attn);" \
			" under attn: marian %s, attn %s, margin %.4g\n",
			l, NR, $3, $4, $5, $6, $6 - $5 }'
}

# --- round: import, export, import ------------------------------------------
log "round trip: exp -> imp.tsr -> exp2 -> imp2.tsr"
train-step --export-marian "$W/exp2" -m "$W/imp.tsr"
train-step --import marian -m "$W/imp2.tsr" --decoder-config "$W/exp2/decoder.yml" \
	"$W/exp2/model.npz" "$W/exp2/vocab.spm"
if cmp "$W/imp.tsr" "$W/imp2.tsr"; then
	echo "round: imp.tsr and imp2.tsr byte-identical ($(wc -c < "$W/imp.tsr") bytes)"
else
	echo "round: imp.tsr and imp2.tsr DIFFER"; bad=1
fi
for f in model.npz vocab.spm decoder.yml; do
	cmp -s "$E/$f" "$W/exp2/$f" && r=identical || r=differ
	echo "round: exp/$f and exp2/$f $r"
done
echo "round: decoder.yml's lines the import added:" \
	"$(diff "$E/decoder.yml" "$W/exp2/decoder.yml" | sed -n 's/^> //p' | tr '\n' ' ')"
names() { tensordump -H "$1" | awk '{ print $2 }' | LC_ALL=C sort; }
names "$MODEL" > "$W/model.names"
names "$W/imp.tsr" > "$W/imp.names"
LC_ALL=C comm -23 "$W/model.names" "$W/imp.names" > "$W/only-model.names"
# model.config apart; optim.* is training state (the optimiser's moments,
# the generator's state), which an import starts afresh
LC_ALL=C comm -12 "$W/model.names" "$W/imp.names" |
	grep -v -e '^model\.config$' -e '^optim\.' > "$W/both.names"
set --
while read -r n; do set -- "$@" -n "$n"; done < "$W/both.names"
# (a record header's "end" marks the frame's last record, wherever it is)
tensordump -t "$@" "$MODEL" | sed 's/^\(record .*\) end$/\1/' > "$W/model.records"
tensordump -t "$@" "$W/imp.tsr" | sed 's/^\(record .*\) end$/\1/' > "$W/imp.records"
if cmp -s "$W/model.records" "$W/imp.records"; then
	echo "round: the $(wc -l < "$W/both.names") records of the import other" \
	     "than model.config and optim.* equal MODEL's bit for bit"
else
	echo "round: records of MODEL and the import DIFFER:"
	diff "$W/model.records" "$W/imp.records" | grep '^[<>] record' | head
	bad=1
fi
[ -s "$W/only-model.names" ] &&
	echo "round: MODEL's records the export does not carry:" \
	     "$(wc -l < "$W/only-model.names") ($(sed 's/^\([^.]*\.[^.]*\)\..*/\1.*/' \
	     "$W/only-model.names" | sort | uniq -c | tr -s ' \n' '  '))"
echo "round: records of both not compared: model.config," \
	"$(LC_ALL=C comm -12 "$W/model.names" "$W/imp.names" | grep '^optim\.' |
	tr '\n' ' ')"
LC_ALL=C comm -13 "$W/model.names" "$W/imp.names" > "$W/only-imp.names"
[ -s "$W/only-imp.names" ] &&
	echo "round: the import's records MODEL lacks:" "$(tr '\n' ' ' < "$W/only-imp.names")"
cfg() { tensordump -t -n model.config "$1" | sed -n 's/^"\(.*\)\\n"$/\1/p' | LC_ALL=C sort; }
cfg "$MODEL" > "$W/model.cfg"
cfg "$W/imp.tsr" > "$W/imp.cfg"
echo "round: model.config lines of MODEL alone:" \
	"$(LC_ALL=C comm -23 "$W/model.cfg" "$W/imp.cfg" | tr '\n' ' ')"
echo "round: model.config lines of the import alone:" \
	"$(LC_ALL=C comm -13 "$W/model.cfg" "$W/imp.cfg" | tr '\n' ' ')"

[ -n "$M" ] || { log "native Marian is ABSENT: float, int8 and lex not checked"; exit 1; }

# --- int8 and lex: the files ----------------------------------------------
log "int8: marian-conv, the alphas"
"$M/marian-conv" -f "$E/model.npz" -t "$W/model.intgemm8.bin" -g intgemm8 \
	> "$W/conv.log" 2>&1
sed -n "$((N + 1)),$((N + NA))p" "$DATA/dev.es" > "$W/sample.es"
"$M/marian-decoder" -m "$E/model.npz" -v "$V" "$V" -b 1 --cpu-threads 1 \
	--quiet --dump-quantmult < "$W/sample.es" > /dev/null 2> "$W/quantmults"
/usr/bin/python3 "$root/tools/marian-ref/fullsize.py" alphas "$W/quantmults" \
	"$E/model.npz" "$W/alphas.npz"
"$M/marian-conv" -f "$W/alphas.npz" -t "$W/model.intgemm8.alphas.bin" \
	-g intgemm8 >> "$W/conv.log" 2>&1
if [ ! -s "$W/lex.s2t" ]; then
	log "lex: align on the pieces of train.{es,en}"
	spm_export_vocab --model="$V" | cut -f 1 > "$W/pieces"
	for l in es en; do
		spm_encode --model="$V" < "$DATA/train.$l" > "$W/train.$l.pieces"
	done
	align --no-fold -q -t -o "$W/align.tsr" "$W/train.es.pieces" "$W/train.en.pieces"
	tensordump -t -n 'align.*' "$W/align.tsr" > "$W/align.txt"
	/usr/bin/python3 "$root/tools/marian-ref/fullsize.py" lex "$W/align.txt" \
	"$W/pieces" "$W/lex.s2t"
fi
"$M/marian-conv" --shortlist "$W/lex.s2t" 100 100 0 -V "$V" "$V" \
	-d "$W/lex.bin" > "$W/conv-lex.log" 2>&1
echo "lex: $(wc -l < "$W/lex.s2t") entries in lex.s2t; lex.bin $(wc -c < "$W/lex.bin") bytes"
A8=$W/model.intgemm8.alphas.bin
# the export's decoder.yml with the gemm-precision Marian is given below
# on its command line (without one the import takes Marian's default,
# float32, as marian-decoder would)
for g in int8shiftAll int8shiftAlphaAll; do
	{ cat "$E/decoder.yml"; echo "gemm-precision: $g"; } > "$W/$g.yml"
done
for k in noalphas alphas lex; do
	rm -f "$W/$k.tsr"
	case $k in
	noalphas) set -- --decoder-config "$W/int8shiftAll.yml" \
		"$W/model.intgemm8.bin" ;;
	alphas) set -- --decoder-config "$W/int8shiftAlphaAll.yml" "$A8" ;;
	lex) set -- --decoder-config "$W/int8shiftAlphaAll.yml" \
		--lex "$W/lex.bin" "$A8" ;;
	esac
	train-step --import marian -m "$W/$k.tsr" "$@" "$V"
done

# --- the translations, JOBS at a time ----------------------------------------
log "translating: native Marian and attn, $N lines greedy, $NB beam $K"
I=$W/in.es IB=$W/inb.es
g8="--gemm-precision int8shiftAll" a8="--gemm-precision int8shiftAlphaAll"
task marian "$I" "$W/marian.greedy" -b 1
task marian "$IB" "$W/marian.beam" -b "$K"
task attn "$MODEL" decode "$I" "$W/own.greedy" --min-len 0 -a 3 -c 0
task attn "$MODEL" beam "$IB" "$W/own.beam" -k "$K" -l 0 --min-len 0 -a 3 -c 0
task attn "$W/imp.tsr" decode "$I" "$W/imp.greedy"
task attn "$W/imp.tsr" beam "$IB" "$W/imp.beam" -k "$K"
task marian "$I" "$W/marian.noalphas.greedy" -m "$W/model.intgemm8.bin" $g8 -b 1
task marian "$I" "$W/marian.alphas.greedy" -m "$A8" $a8 -b 1
task marian "$I" "$W/marian.lex.greedy" -m "$A8" $a8 -b 1 --shortlist "$W/lex.bin" false
task attn1 "$W/noalphas.tsr" decode "$I" "$W/attn.noalphas.greedy"
task attn "$W/alphas.tsr" decode "$I" "$W/attn.alphas.greedy"
task attn "$W/lex.tsr" decode "$I" "$W/attn.lex.greedy"
task marian "$IB" "$W/marian.noalphas.beam" -m "$W/model.intgemm8.bin" $g8 -b "$K"
task marian "$IB" "$W/marian.alphas.beam" -m "$A8" $a8 -b "$K"
task attn1 "$W/noalphas.tsr" beam "$IB" "$W/attn.noalphas.beam" -k "$K"
task attn "$W/alphas.tsr" beam "$IB" "$W/attn.alphas.beam" -k "$K"
wait

# --- the comparisons ---------------------------------------------------------
compare "float greedy, attn's MODEL" "$I" "$W/marian.greedy" "$W/own.greedy" "$MODEL" 100
compare "float beam $K, attn's MODEL" "$IB" "$W/marian.beam" "$W/own.beam" "$MODEL" 100
compare "float greedy, import" "$I" "$W/marian.greedy" "$W/imp.greedy" "$W/imp.tsr" 100
compare "float beam $K, import" "$IB" "$W/marian.beam" "$W/imp.beam" "$W/imp.tsr" 100
for k in noalphas alphas; do
	compare "int8 $k greedy" "$I" "$W/marian.$k.greedy" "$W/attn.$k.greedy" "$W/$k.tsr" 98
	compare "int8 $k beam $K" "$IB" "$W/marian.$k.beam" "$W/attn.$k.beam" "$W/$k.tsr" 98
done
compare "int8 alphas + shortlist greedy" "$I" "$W/marian.lex.greedy" "$W/attn.lex.greedy" "$W/lex.tsr" 98
same=$(paste -d '\n' "$W/marian.alphas.greedy.txt" "$W/marian.lex.greedy.txt" |
	awk 'NR % 2 { a = $0; next } $0 == a { n++ } END { print n + 0 }')
echo "lex: Marian's own greedy with and without the shortlist: $same of $N lines identical"
for f in marian.greedy own.greedy marian.alphas.greedy marian.lex.greedy; do
	printf 'BLEU %s (%d lines): ' "$f" "$N"
	bleu -f text "$W/ref.en" < "$W/$f.txt" | head -n 1
done
for f in marian.beam own.beam; do
	printf 'BLEU %s (%d lines): ' "$f" "$NB"
	bleu -f text "$W/refb.en" < "$W/$f.txt" | head -n 1
done
exit $bad
