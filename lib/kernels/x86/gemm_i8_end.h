/*
 * gemm_i8_end.h: the end of a row of an int8 tile, shared by the int8
 * kernels of gemm_packed.h (gemm_i8_*.c): the row's exact int32 sums s
 * (each kernel's correction already taken off) as floats, times the
 * row's scale sx by the columns' ws, plus the bias b (fused) when
 * bias, then max(., 0) when relu.  256-bit in every kernel
 * file, 512-bit in the AVX-512 ones.
 */
#ifndef ATTN_GEMM_I8_END_H
#define ATTN_GEMM_I8_END_H

#include <immintrin.h>

static inline __attribute__((always_inline)) __m256
i8_end_256(__m256i s, float sx, __m256 ws, __m256 b, int bias, int relu)
{
	__m256 v = _mm256_cvtepi32_ps(s);
	__m256 sc = _mm256_mul_ps(_mm256_set1_ps(sx), ws);

	v = bias ? _mm256_fmadd_ps(v, sc, b) : _mm256_mul_ps(v, sc);
	return relu ? _mm256_max_ps(v, _mm256_setzero_ps()) : v;
}

#ifdef __AVX512F__
static inline __attribute__((always_inline)) __m512
i8_end_512(__m512i s, float sx, __m512 ws, __m512 b, int bias, int relu)
{
	__m512 v = _mm512_cvtepi32_ps(s);
	__m512 sc = _mm512_mul_ps(_mm512_set1_ps(sx), ws);

	v = bias ? _mm512_fmadd_ps(v, sc, b) : _mm512_mul_ps(v, sc);
	return relu ? _mm512_max_ps(v, _mm512_setzero_ps()) : v;
}
#endif

#endif
