#!/bin/sh
# attn against native Marian (marian-decoder, tools/marian-ref/native.sh)
# on models of the sizes people run, random weights (tools/marian-ref/
# fullsize.py), all over one joint 32,000-piece SentencePiece vocabulary
# (the student's vocab.ende.spm, trained on ui-en-de):
#   base f32      a Transformer-base (512, 8 heads, ffn 2048, 6 + 6,
#                 swish, tied-all), made here once (FULLSIZE_DIR/bench);
#                 attn: its import (train-step --import marian);
#   base int8     the same .npz by marian-conv -g intgemm8 with alphas
#                 as Firefox's pipeline makes them (marian-decoder
#                 --dump-quantmult on dev.en's lines 1001-1200, then
#                 fullsize.py alphas: 127 / (mean + 1.1 std) of each
#                 activation's maxima; Marian --gemm-precision
#                 int8shiftAlphaAll, its fastest); attn: the import of that
#                 .bin (Marian's int8 arithmetic: "import"), and attn's own
#                 int8 export of the f32 import (train-step -x --dtype
#                 int8: "export").  Without alphas Marian quantises each
#                 product's input by the maximum over its whole batch, so
#                 a sentence's output depends on its batch's other
#                 sentences and neither side's batches can match the
#                 other's;
#   student int8  tools/marian-ref/fullsize.sh's Firefox-shaped student
#                 (256, 6 encoder layers, 2 SSRU decoder layers), intgemm8
#                 with alphas (int8shiftAlphaAll) and its lexical
#                 shortlist on both sides; attn: the import of its Firefox
#                 directory (student.tsr).  make check-fullsize makes it in
#                 build/fullsize (FULLSIZE_DIR); not measured without it.
# Both sides with Firefox's settings: normalize 1.0, word-penalty 0,
# max-length-factor 2.0.  (OPUS-MT's own vocabularies have sizes that are
# not multiples of 8, which Marian's int8 output layer refuses.)
# Each greedy and beam 4, at 1 thread and at every core (attn: ATTN_THREADS
# for each of its five programs; Marian: --cpu-threads), on the first
# BENCH_LINES (2000) lines of ui-en-de's dev.en, English.
#
# Marian's settings (browsermt/marian-dev's options; BENCH_MINI_BATCH and
# BENCH_MAXI_BATCH change them): --mini-batch 16 --maxi-batch 100
# --maxi-batch-sort src (the fastest of 1 to 256 sentences a batch on 300
# lines: batches of sentences of one length), --skip-cost for greedy (the
# best logit without the softmax: the same choice; not for beam, where it
# would sum raw logits), --quiet.  Its float products are OpenBLAS's (one
# thread each: OPENBLAS_NUM_THREADS=1), its int8 ones intgemm's.  Both
# sides read and write text: times include cutting it into pieces.
#
# The ISAs (BENCH_ISAS, default "best avx2 avx2-novnni"): best, both sides
# on the CPU's best (attn's default kernels; OpenBLAS's SkylakeX kernels on
# an AVX-512 CPU, intgemm's own choice); avx2 and avx2-novnni, an AVX2
# core: attn under ATTN_KERNELS=avx2 (with AVX-VNNI) or avx2-novnni, Marian
# under OPENBLAS_CORETYPE=Haswell and INTGEMM_CPUID=AVX2 (intgemm has no
# AVX-VNNI path).  BENCH_THREADS (default "1 N", N the cores).  BENCH_ROWS
# (default all: base-f32 base-int8-import base-int8-export student-int8).
#
# Agreement first, as bench_torch checks: the first BENCH_CHECK_LINES
# (100; 0 for none) lines by both, Marian at --mini-batch 1 (its length limit is
# max-length-factor times the widest source of its batch; at 1 it is each
# sentence's, attn's rule), and the identical lines counted.  The timed
# runs batch Marian, so where a random model runs to the limit Marian may
# say more: the identical lines of every timed row are printed too.
#
# Time basis: CPU seconds (user + system of the processes) of the
# translation, loading apart: those of the same command on an empty input
# subtracted.  On the rows of more than one thread the wall clock too
# (the same subtraction), which is what threads shorten.  Tokens: pieces
# of each side's output text (vocab.ende.spm), a second; attn / Marian.
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/lib.sh"
. "$root/tools/marian-ref/native.sh"
skip() { echo "bench_marian_native: not measured: $*"; exit 0; }
W=${FULLSIZE_DIR:-$root/build/fullsize}
[ -d "$W" ] || skip "no $W (make check-fullsize)"
W=$(cd "$W" && pwd) || exit 1
dev=${ATTN_DATA:-/work/shared/data}/ui-en-de/dev.en
lines=${BENCH_LINES:-2000}
check=${BENCH_CHECK_LINES:-100}
mini=${BENCH_MINI_BATCH:-16}
maxi=${BENCH_MAXI_BATCH:-100}
isas=${BENCH_ISAS:-best avx2 avx2-novnni}
cores=$(getconf _NPROCESSORS_ONLN)
threads=${BENCH_THREADS:-1 $cores}
need "$dev"
( marian_native ) 2> /dev/null || skip "no native Marian (MARIAN_NATIVE)"
marian_native
command -v spm_encode > /dev/null 2>&1 || skip "no spm_encode"
S=$W/student
v=$S/vocab.ende.spm
for f in "$S/model.ende.intgemm.alphas.bin" "$S/lex.50.50.ende.s2t.bin" \
    "$v" "$W/student.tsr"; do
	[ -s "$f" ] || skip "no $f (make check-fullsize makes the models)"
done
# base: made once, kept in $B
B=$W/bench
mkdir -p "$B"
printf '%s\n' 'beam-size: 4' 'normalize: 1.0' 'word-penalty: 0' \
	'max-length-factor: 2.0' > "$B/decoder.yml"
if [ ! -s "$B/base.npz" ]; then
	/usr/bin/python3 "$root/tools/marian-ref/fullsize.py" opus "$B" \
		32000 || exit 1
	mv "$B/model.npz" "$B/base.npz"
fi
if [ ! -s "$B/base.alphas.bin" ]; then
	sed -n 1001,1200p "$dev" > "$B/sample.en"
	OPENBLAS_NUM_THREADS=1 "$MARIAN_BIN/marian-decoder" -m "$B/base.npz" \
		-v "$v" "$v" -b 1 --cpu-threads 1 --mini-batch 16 --quiet \
		--dump-quantmult < "$B/sample.en" > /dev/null \
		2> "$B/quantmults" || { tail "$B/quantmults"; exit 1; }
	/usr/bin/python3 "$root/tools/marian-ref/fullsize.py" alphas \
		"$B/quantmults" "$B/base.npz" "$B/alphas.npz" || exit 1
	"$MARIAN_BIN/marian-conv" -f "$B/alphas.npz" \
		-t "$B/base.alphas.bin" -g intgemm8 > "$B/conv.log" 2>&1 ||
		{ cat "$B/conv.log"; exit 1; }
fi
# the int8 import with the gemm-precision Marian runs below (without
# one a configuration means Marian's default, float32)
{ cat "$B/decoder.yml"; echo 'gemm-precision: int8shiftAlphaAll'; } \
	> "$B/decoder-int8.yml"
for m in f32:base.npz:decoder alphas:base.alphas.bin:decoder-int8; do
	k=${m%%:*} f=${m#*:} f=${f%%:*}
	[ -s "$B/base.$k.tsr" ] && continue
	train-step --import marian -m "$B/base.$k.tsr" \
		--decoder-config "$B/${m##*:}.yml" "$B/$f" "$v" \
		> "$B/import.log" 2>&1 || { cat "$B/import.log"; exit 1; }
done
if [ ! -s "$B/base.export.tsr" ]; then
	train-step -x "$B/base.export.tsr" --dtype int8 -m "$B/base.f32.tsr" ||
		exit 1
fi
in_tmp
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
head -n "$lines" "$dev" > in.en
head -n "$check" "$dev" > check.en
: > empty.en
isa_flags=$(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' |
	grep -E '^(avx2|avx512f|avx512bw|avx512_vnni|avx512_bf16|avx_vnni)$' |
	tr '\n' ' ')
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $cores" \
	"cores; $isa_flags; $lines lines of ui-en-de dev.en; load average" \
	"$(cut -d' ' -f1-3 /proc/loadavg) at the start"
echo "Marian: $("$MARIAN_BIN/marian-decoder" --version 2>&1 | tail -1)" \
	"($MARIAN_BIN), --mini-batch $mini --maxi-batch $maxi" \
	"--maxi-batch-sort src, --skip-cost for greedy"

# the rows: NAME MARIAN'S-NAME ATTN-MODEL MARIAN'S-MODEL-AND-PRODUCTS
# (the two int8 rows of base share Marian's run)
rows="base-f32 base-f32 $B/base.f32.tsr -m $B/base.npz --gemm-precision float32
base-int8-import base-int8 $B/base.alphas.tsr -m $B/base.alphas.bin --gemm-precision int8shiftAlphaAll
base-int8-export base-int8 $B/base.export.tsr -m $B/base.alphas.bin --gemm-precision int8shiftAlphaAll
student-int8 student-int8 $W/student.tsr -m $S/model.ende.intgemm.alphas.bin --gemm-precision int8shiftAlphaAll --shortlist $S/lex.50.50.ende.s2t.bin false"
# BENCH_ROWS (default all): the rows to run, by name
if [ -n "${BENCH_ROWS:-}" ]; then
	rows=$(echo "$rows" | awk -v keep=" $BENCH_ROWS " \
		'index(keep, " " $1 " ")')
	[ -n "$rows" ] || skip "no row named in BENCH_ROWS=$BENCH_ROWS"
fi
# field ROW N: the row's Nth field
field() { echo "$rows" | awk -v r="$1" -v n="$2" '$1 == r { print $n }'; }

# isa_env ISA: the environment of both sides for ISA (best, avx2,
# avx2-novnni); Marian's OpenBLAS as attn's kernels (native.sh)
isa_env() {
	case $1 in
	best)	unset ATTN_KERNELS INTGEMM_CPUID ;;
	*)	export ATTN_KERNELS=$1 INTGEMM_CPUID=AVX2 ;;
	esac
	marian_blas
}

# marian ROW BEAM THREADS MINI IN: Marian's translation of IN.en to stdout
marian() {
	k=$2 t=$3 mb=$4 in=$5
	set -- $(echo "$rows" | awk -v r="$1" '$1 == r { $1 = $2 = $3 = ""
		print }')
	[ "$k" = 1 ] && set -- "$@" --skip-cost
	"$MARIAN_BIN/marian-decoder" "$@" -v "$v" "$v" --normalize 1.0 \
		--word-penalty 0 --max-length-factor 2.0 -b "$k" \
		--cpu-threads "$t" --mini-batch "$mb" --maxi-batch "$maxi" \
		--maxi-batch-sort src --quiet < "$in.en"
}

# attn ROW BEAM THREADS IN: attn's translation of IN.en to stdout
attn() {
	m=$(field "$1" 3)
	in=$4
	ATTN_THREADS=$3
	export ATTN_THREADS
	if [ "$2" = 1 ]; then set -- decode -m "$m"
	else set -- beam -k "$2" -m "$m"; fi
	tokenize -m "$m" "$in.en" | embed -m "$m" | encode -m "$m" |
		attend -m "$m" | "$@"
}

# clock OUT CMD...: runs CMD > OUT; prints its CPU seconds (user + system
# of the shell's children: call it within $(...)) and wall seconds
clock() {
	o=$1
	shift
	times > "$tmp/t0"
	w0=$(now)
	"$@" > "$o" || exit 1
	w1=$(now)
	times > "$tmp/t1"
	echo "$(cputime "$tmp/t0" "$tmp/t1") $w0 $w1" |
		awk '{ printf "%.3f %.3f\n", $1, $3 - $2 }'
}

# timed OUT SIDE ROW BEAM THREADS [MINI]: SIDE's (attn or marian) seconds
# of translating in.en, CPU and wall, less those of empty.en; text to OUT
timed() {
	o=$1
	shift
	e=$(clock /dev/null "$@" empty) || exit 1
	f=$(clock "$o" "$@" in) || exit 1
	# at least a millisecond: a tiny input's share is within the noise
	echo "$f $e" | awk '{ c = $1 - $3; w = $2 - $4
		printf "%.3f %.3f\n", (c > 0.001 ? c : 0.001),
			(w > 0.001 ? w : 0.001) }'
}

# tokens FILE: the pieces of FILE's text
tokens() {
	spm_encode --model="$v" < "$1" | awk '{ s += NF } END { print s + 0 }'
}

# same A B: the identical lines of A and B, "n/N"
same() {
	paste -d '\n' "$1" "$2" | awk 'NR % 2 { a = $0; next } $0 == a { n++ }
		END { printf "%d/%d", n, NR / 2 }'
}

isa_env best
[ "$check" -gt 0 ] &&
echo "agreement on the first $check lines (Marian --mini-batch 1," \
	"$cores threads; attn's best kernels): identical lines"
[ "$check" -gt 0 ] && for r in $(echo "$rows" | cut -d' ' -f1); do
	for k in 1 4; do
		(marian $r $k "$cores" 1 check) > m.check 2> m.err ||
			{ cat m.err; exit 1; }
		(attn $r $k "$cores" check) > a.check || exit 1
		echo "  $r beam $k: $(same m.check a.check)"
	done
done

echo "row, search, threads, ISA: attn tokens/s (tokens, CPU s), Marian" \
	"tokens/s (tokens, CPU s), attn / Marian; all cores: the same by the" \
	"wall clock; identical lines"
for t in $threads; do
	for r in $(echo "$rows" | cut -d' ' -f1); do
		for k in 1 4; do
			for i in $isas; do
				isa_env $i
				mi=best
				[ $i = best ] || mi=avx2
				mo=m.$(field $r 2).$k.$t.$mi
				[ -s $mo.time ] ||
					timed $mo.txt marian $r $k $t "$mini" \
						> $mo.time || exit 1
				timed a.txt attn $r $k $t > a.time || exit 1
				echo "$(cat a.time) $(tokens a.txt)" \
				     "$(cat $mo.time) $(tokens $mo.txt)" |
				awk -v r=$r -v k=$k -v t=$t -v i=$i \
				    -v s="$(same $mo.txt a.txt)" '{
					a = $3 / $1; m = $6 / $4
					printf "  %-16s %s %d thr %-11s attn %6.0f " \
					       "tok/s (%d, %.2f s), Marian %6.0f " \
					       "tok/s (%d, %.2f s), %5.2f x", r,
					       k == 1 ? "greedy" : "beam " k, t, i,
					       a, $3, $1, m, $6, $4, a / m
					if (t > 1)
						printf "; wall %.2f s, %.2f s, " \
						       "%5.2f x", $2, $5,
						       ($3 / $2) / ($6 / $5)
					printf "; %s\n", s
				}'
			done
		done
	done
done
echo "load average $(cut -d' ' -f1-3 /proc/loadavg) at the end"
