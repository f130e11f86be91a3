#!/bin/sh
# int8_modes.sh [DIR...]: what native Marian translates with make_int8.sh's
# int8 students (default DIR: tests/fixtures/marian/int8 and int8-self)
# in two more ways:
# - DIR/signed.{greedy,scores} and DIR/float32.{greedy,scores}:
#   --gemm-precision int8 and float32 (Marian's default): the products by
#   the intgemm8 matrices neither shifted nor with alphas (multipliers per
#   call, so --mini-batch 1); by the tied output layer int8 with the
#   first, float with the second; greedy, on the alphas file;
# - DIR/avx2/: on a CPU without AVX512_VNNI.  intgemm picks its kernels
# by AVX512_VNNI alone; without it (AVX512BW, AVX2, SSSE3, all the same
# numbers) the unsigned products sum pairs of bytes with vpmaddubsw,
# which saturates at int16, so Marian's int8 translations differ from
# its AVX512_VNNI ones (on int8/: 44 of 100 greedy lines alike).
# INTGEMM_CPUID=AVX2 makes Marian run those kernels on any CPU.  The
# same runs as make_int8.sh's: {alphas,noalphas}.{greedy,beam,scores},
# lex.{greedy,scores}.  The input and vocabulary are int8/'s.
# MARIAN=DIR as make_int8.sh.  make check does not run this: its outputs
# are committed (tests/cli_marian_int8.sh reads them).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/int8_runs.sh"
F=$here/../../tests/fixtures/marian
M=${MARIAN:-}
if [ -z "$M" ] && [ -x /work/shared/tools/marian-native/build.sh ]; then
	M=$(/work/shared/tools/marian-native/build.sh 2>/dev/null) || M=
fi
if [ -z "$M" ] || [ ! -x "$M/marian-decoder" ]; then
	echo "int8_modes.sh: native Marian is absent (no marian-decoder in" \
	     "MARIAN=${MARIAN:-unset}): nothing made" >&2
	exit 1
fi
[ $# -gt 0 ] || set -- "$F/int8" "$F/int8-self"
v=$F/int8/vocab.spm
log=$(mktemp)
trap 'rm -f "$log"' EXIT
dec() {
	INTGEMM_CPUID=$cpu "$M/marian-decoder" -v "$v" "$v" --cpu-threads 1 \
		--quiet "$@" < "$F/int8/input.txt" 2> "$log" ||
		{ cat "$log" >&2; exit 1; }
}
for D; do
	mkdir -p "$D/avx2"
	cpu=AVX2
	int8_runs "$D" "$D/avx2"
	cpu=AVX512VNNI	# (the signed form is exact on every CPU)
	for g in int8 float32; do
		k=$g
		[ $g = int8 ] && k=signed
		set -- -m "$D/student.intgemm8.alphas.bin" --gemm-precision \
			$g --mini-batch 1 --maxi-batch 1 -b 1
		dec "$@" > "$D/$k.greedy"
		int8_scores "$@" > "$D/$k.scores"
	done
	echo "int8_modes.sh: wrote $D/avx2" >&2
done
