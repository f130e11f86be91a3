# native.sh: sourced by the scripts that run native Marian (reference
# outputs and speed; never a dependency of attn).  Sets MARIAN_BIN to the
# folder holding marian-decoder and marian-conv: $MARIAN_NATIVE if set,
# else what ../shared/tools/marian-native/build.sh gives (beside the
# repository) (its prebuilt
# programs, or a build of about an hour), else says it is absent and
# exits 1.
marian_native() {
	if [ -n "${MARIAN_NATIVE:-}" ]; then
		MARIAN_BIN=$MARIAN_NATIVE
	else
		# the repository: $root where the caller has set it (a
		# bench/ script), else two folders above tools/marian-ref's
		b=${root:-$(cd "$(dirname "$0")/../.." && pwd)}
		b=$b/../shared/tools/marian-native/build.sh
		[ -x "$b" ] && MARIAN_BIN=$("$b" 2>/dev/null) || MARIAN_BIN=
	fi
	if [ -z "$MARIAN_BIN" ] || ! "$MARIAN_BIN/marian-decoder" --version \
	    > /dev/null 2>&1; then
		echo "$(basename "$0"): no native Marian: set MARIAN_NATIVE to" \
		     "the folder of marian-decoder and marian-conv (built by" \
		     "shared/tools/marian-native/build.sh)" >&2
		exit 1
	fi
}

# marian_blas: OPENBLAS_CORETYPE for Marian's float products (attention's
# scores and context, the float layers) as attn's kernels in force
# (ATTN_KERNELS, else the CPU's best): SkylakeX where attn runs AVX-512,
# Haswell where it runs AVX2.  An environment that pins OpenBLAS to older
# kernels (OPENBLAS_CORETYPE=Haswell on an AVX-512 CPU) makes Marian's
# float sums round otherwise than attn's, which int8 turns into different
# quantised values: on a Bible model, 33 of 58 steps of a line apart by up
# to 0.04 nats (Haswell), none with SkylakeX.
marian_blas() {
	case ${ATTN_KERNELS:-} in
	avx2*|reference) OPENBLAS_CORETYPE=Haswell ;;
	*)	if grep -qw avx512f /proc/cpuinfo; then
			OPENBLAS_CORETYPE=SkylakeX
		else
			OPENBLAS_CORETYPE=Haswell
		fi ;;
	esac
	export OPENBLAS_CORETYPE
}
