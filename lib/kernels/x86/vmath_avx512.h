/*
 * vmath_avx512.h: the AVX-512 vector functions that more than one kernel
 * family uses.
 */
#ifndef ATTN_VMATH_AVX512_H
#define ATTN_VMATH_AVX512_H

#include <immintrin.h>

/*
 * e^x for x <= 88 as exp256 (vmath_avx2.h) computes it, the scaling by
 * 2^n one vscalefps, which is right down to the subnormals; NaN stays
 * NaN, -inf gives 0.
 */
static inline __m512 exp512(__m512 x)
{
	const __m512 log2e = _mm512_set1_ps(1.44269504088896341f);
	const __m512 ln2_hi = _mm512_set1_ps(0.693359375f);
	const __m512 ln2_lo = _mm512_set1_ps(-2.12194440e-4f);

	x = _mm512_max_ps(_mm512_set1_ps(-104.0f), x);
	__m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, log2e),
					_MM_FROUND_TO_NEAREST_INT |
					_MM_FROUND_NO_EXC);
	__m512 r = _mm512_fnmadd_ps(n, ln2_hi, x);
	r = _mm512_fnmadd_ps(n, ln2_lo, r);
	__m512 p = _mm512_set1_ps(1.9875691500e-4f);
	p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3981999507e-3f));
	p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
	p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
	p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
	p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
	p = _mm512_fmadd_ps(p, _mm512_mul_ps(r, r), r);
	return _mm512_scalef_ps(_mm512_add_ps(p, _mm512_set1_ps(1.0f)), n);
}

#endif
