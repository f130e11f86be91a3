/*
 * gemm_i8_avxvnni.c: the int8 kernel of gemm_packed.h with AVX-VNNI, the
 * VEX form of vpdpbusd on 256-bit vectors that CPUs without AVX-512 may
 * have: as gemm_i8_avx512vnni.c (x as q + 128, 128 sum_k wq subtracted
 * at the end, exact), for the AVX2 table.  Tiles of up to 6 rows by half
 * a panel (gemm_i8_tile256.h), 12 accumulators, in 2 sets for up to 3
 * rows (vpdpbusd's chain through its accumulator).
 */
#include <immintrin.h>

#define I8_PRODUCT(c, a, w) (*(c) = _mm256_dpbusd_avx_epi32(*(c), a, w))
#define I8_USETS(R) ((R) <= 3 ? 2 : 1)
#define I8_U7 0
#include "gemm_i8_tile256.h"

const struct gemm_i8 gemm_i8_avxvnni = {
	.rmax = RMAX,
	.xs_form = WPACK_XS_U8,
	.panel = panel,
	.quant = gemm_i8_quant_avx2,
	.mquant = gemm_i8_mquant_avx2,
	.mbias = gemm_i8_mbias_avx2,
	.msat = &gemm_i8_u7_avx2,
};
