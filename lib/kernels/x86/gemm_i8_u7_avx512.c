/*
 * gemm_i8_u7_avx512.c: the int8 kernel of gemm_packed.h for AVX-512 CPUs
 * without AVX512_VNNI (Skylake-SP, Cascade Lake has it): the 7-bit form
 * of gemm_i8_u7_avx2.c on zmm with AVX512BW's vpmaddubsw, vpmaddwd by
 * ones and vpaddd (64 products in two multiply instructions), x's
 * pairs of u8 x s8 products at most 2 127 128 in size, never saturated;
 * at the end zp_i sum_k wq_jk (qsum / 128) off each row's sums, exact.
 *
 * Tiles of up to 12 rows by a panel's 32 columns (gemm_i8_tile512.h),
 * 24 accumulators (32 registers: those, the panel's two, x's, a
 * product's and the ones).  The chain through an accumulator is one
 * vpaddd, so tiles of few rows need no second set.  x is quantised and
 * packed by the AVX2 code (gemm_i8_quant_u7_avx2; Marian's way by
 * gemm_i8_mquant_avx512.c).
 */
#include <immintrin.h>

/* *c += the sums of a's and w's quads of bytes (u8 by s8), in asm: with
 * intrinsics gcc 12 hoisted the broadcasts of x and spilled 10 of the
 * 12-row tile's accumulators to the stack. */
static inline __attribute__((always_inline)) void
ubs(__m512i *c, __m512i a, __m512i w, __m512i ones)
{
	__m512i t;

	__asm__("vpmaddubsw %[w], %[a], %[t]\n\t"
		"vpmaddwd %[ones], %[t], %[t]\n\t"
		"vpaddd %[t], %[c], %[c]"
		: [c] "+v"(*c), [t] "=&v"(t)
		: [a] "v"(a), [w] "v"(w), [ones] "v"(ones));
}

#define I8_PRODUCT(c, a, w) ubs(c, a, w, ones)
#define I8_CONSTS const __m512i ones = _mm512_set1_epi16(1);
#define I8_USETS(R) 1
#define I8_U7 1
#include "gemm_i8_tile512.h"

const struct gemm_i8 gemm_i8_u7_avx512 = {
	.rmax = RMAX,
	.xs_form = WPACK_XS_U7,
	.panel = panel,
	.quant_u7 = gemm_i8_quant_u7_avx2,
	.mquant = gemm_i8_mquant_avx512,
	.mbias = gemm_i8_mbias_avx2,
	.exact = &gemm_i8_avx2,
	.msat = &gemm_i8_u7_avx512,
};
