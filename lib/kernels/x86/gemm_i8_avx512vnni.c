/*
 * gemm_i8_avx512vnni.c: the int8 kernel of gemm_packed.h with AVX512_VNNI:
 * vpdpbusd multiplies 4 unsigned bytes by 4 signed ones and adds the four
 * products to an int32 lane, with no intermediate rounding or saturation.
 * x comes as q + 128 (in [1, 255]), so a lane sums (q + 128) wq over k
 * and the kernel subtracts the column's 128 sum_k wq (qsum) at the end:
 * the exact sum of q wq (every partial sum within K 255 127 < 2^31).
 * Tiles of up to 12 rows by a panel's 32 columns (gemm_i8_tile512.h),
 * 24 accumulators; vpdpbusd's chain through its accumulator (5 cycles a
 * step) gives tiles of 1 or 2 rows 4 sets of them, of 3 to 5 rows 2.  x
 * is quantised and packed by gemm_i8_avx2.c's code (Marian's way by
 * gemm_i8_mquant_avx512.c).
 */
#include <immintrin.h>

/* *c += the dot products of a's and w's quads of bytes (vpdpbusd), in
 * asm: with the intrinsic, gcc 12 copied each accumulator of a wide tile
 * to another register and back around the instruction, which writes its
 * first operand, and spilled some (18 stack accesses and 110
 * instructions a quad of k for 12 rows' 24 vpdpbusd), and 64 rows
 * reached 0.32 of the int8 peak. */
static inline __attribute__((always_inline)) void
dpbusd(__m512i *c, __m512i a, __m512i w)
{
	__asm__("vpdpbusd %[w], %[a], %[c]" : [c] "+v"(*c)
		: [a] "v"(a), [w] "v"(w));
}

#define I8_PRODUCT(c, a, w) dpbusd(c, a, w)
#define I8_CONSTS
#define I8_USETS(R) ((R) <= 2 ? 4 : (R) <= 5 ? 2 : 1)
#define I8_U7 0
#include "gemm_i8_tile512.h"

const struct gemm_i8 gemm_i8_avx512vnni = {
	.rmax = RMAX,
	.xs_form = WPACK_XS_U8,
	.panel = panel,
	.quant = gemm_i8_quant_avx2,
	.mquant = gemm_i8_mquant_avx512,
	.mbias = gemm_i8_mbias_avx2,
};
