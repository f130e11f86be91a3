/*
 * gemm_packed_avx512.h: the end of a row of a tile, shared by the AVX-512
 * kernels of gemm_packed.h (f32 and bf16): the row's 32 sums v0, v1 plus
 * the bias b0, b1 (when bias), then max(., 0) (when relu), stored to the
 * panel's columns of the row (masks m0, m1).
 */
#ifndef ATTN_GEMM_PACKED_AVX512_H
#define ATTN_GEMM_PACKED_AVX512_H

#include <immintrin.h>

static inline __attribute__((always_inline)) void
wpack_row_out_512(float *cr, __m512 v0, __m512 v1, int bias, __m512 b0,
		  __m512 b1, int relu, __mmask16 m0, __mmask16 m1)
{
	if (bias) {
		v0 = _mm512_add_ps(v0, b0);
		v1 = _mm512_add_ps(v1, b1);
	}
	if (relu) {
		v0 = _mm512_max_ps(v0, _mm512_setzero_ps());
		v1 = _mm512_max_ps(v1, _mm512_setzero_ps());
	}
	_mm512_mask_storeu_ps(cr, m0, v0);
	_mm512_mask_storeu_ps(cr + 16, m1, v1);
}

#endif
