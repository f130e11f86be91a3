/*
 * vmath_avx2.h: exp, tanh and sigmoid of 8 floats, for the *_avx2.c files
 * only (they need -mavx2 -mfma).  Errors: doc/kernels.md.
 *
 * exp: x = n ln2 + r, |r| <= ln2 / 2, with n rounded and ln2 in two parts
 * (Cody and Waite); e^r by the degree-6 polynomial of Cephes' expf; the
 * result scaled by 2^n in two halves, so that results from the subnormal
 * range up to FLT_MAX come out right and beyond them 0 or inf.  NaN stays
 * NaN (the clamps keep it: max/min return their second operand on NaN).
 */
#ifndef ATTN_VMATH_AVX2_H
#define ATTN_VMATH_AVX2_H

#include <immintrin.h>

/* e^r * 2^n as above, without the clamps; a, the part of n scaled by
 * after the polynomial. */
static inline __m256 exp256_poly(__m256 x, __m256 *n)
{
	const __m256 log2e = _mm256_set1_ps(1.44269504088896341f);
	const __m256 ln2_hi = _mm256_set1_ps(0.693359375f);
	const __m256 ln2_lo = _mm256_set1_ps(-2.12194440e-4f);

	*n = _mm256_round_ps(_mm256_mul_ps(x, log2e),
			     _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
	__m256 r = _mm256_fnmadd_ps(*n, ln2_hi, x);
	r = _mm256_fnmadd_ps(*n, ln2_lo, r);
	__m256 p = _mm256_set1_ps(1.9875691500e-4f);
	p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
	p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
	p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
	p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
	p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
	p = _mm256_fmadd_ps(p, _mm256_mul_ps(r, r), r);
	return _mm256_add_ps(p, _mm256_set1_ps(1.0f));
}

/* 2^n for integral n in [-126, 127] */
static inline __m256 pow2_256(__m256i n)
{
	return _mm256_castsi256_ps(_mm256_slli_epi32(
		_mm256_add_epi32(n, _mm256_set1_epi32(127)), 23));
}

static inline __m256 exp256(__m256 x)
{
	x = _mm256_min_ps(_mm256_set1_ps(89.0f), x);
	x = _mm256_max_ps(_mm256_set1_ps(-104.0f), x);
	__m256 n, p = exp256_poly(x, &n);
	/* 2^n = 2^n1 2^n2, n1 = n / 2, each a valid float exponent */
	__m256i ni = _mm256_cvtps_epi32(n);
	__m256i n1 = _mm256_srai_epi32(ni, 1), n2 = _mm256_sub_epi32(ni, n1);
	return _mm256_mul_ps(_mm256_mul_ps(p, pow2_256(n1)), pow2_256(n2));
}

/*
 * tanh: x P(x^2) / Q(x^2) with |x| clamped to 9 (where tanh rounds to 1),
 * P of degree 6 and Q of degree 3 fitted to tanh(x) / x on [0, 9] for
 * relative error (least squares, reweighted: 2.2e-8 in exact arithmetic).
 * NaN stays NaN through the clamps.
 */
static inline __m256 tanh256(__m256 x)
{
	__m256 c = _mm256_max_ps(_mm256_set1_ps(-9.0f),
				 _mm256_min_ps(_mm256_set1_ps(9.0f), x));
	__m256 z = _mm256_mul_ps(c, c);
	__m256 p = _mm256_set1_ps(-9.0131020058264589e-14f);
	p = _mm256_fmadd_ps(p, z, _mm256_set1_ps(5.484198905180019e-11f));
	p = _mm256_fmadd_ps(p, z, _mm256_set1_ps(-2.0657751615374902e-8f));
	p = _mm256_fmadd_ps(p, z, _mm256_set1_ps(1.1261821859592216e-5f));
	p = _mm256_fmadd_ps(p, z, _mm256_set1_ps(0.0031142926223914906f));
	p = _mm256_fmadd_ps(p, z, _mm256_set1_ps(0.13093283214053012f));
	p = _mm256_fmadd_ps(p, z, _mm256_set1_ps(0.99999999740087878f));
	__m256 q = _mm256_set1_ps(0.00025611618557787203f);
	q = _mm256_fmadd_ps(q, z, _mm256_set1_ps(0.024536400890212676f));
	q = _mm256_fmadd_ps(q, z, _mm256_set1_ps(0.46426612838401547f));
	q = _mm256_fmadd_ps(q, z, _mm256_set1_ps(1.0f));
	return _mm256_div_ps(_mm256_mul_ps(c, p), q);
}

/*
 * sigmoid: with e = e^-|x| (never overflows), 1 / (1 + e) for x >= 0 and
 * e / (1 + e) below, which stays accurate down to the subnormal results.
 */
static inline __m256 sigmoid256(__m256 x)
{
	const __m256 sign = _mm256_set1_ps(-0.0f), one = _mm256_set1_ps(1.0f);
	__m256 e = exp256(_mm256_or_ps(x, sign));
	__m256 s = _mm256_div_ps(one, _mm256_add_ps(one, e));
	__m256 neg = _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_LT_OQ);
	return _mm256_blendv_ps(s, _mm256_mul_ps(e, s), neg);
}

/* The mask of the first n (0..8) lanes, for the tails of arrays. */
static inline __m256i mask256(long n)
{
	const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
	return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(n < 8 ? n : 8)), idx);
}

/*
 * Loads and stores of the 8 floats at p of which rem (> 0) remain: whole
 * vectors while rem >= 8, masked ones for the tail only (masked stores are
 * slow on some processors).  lanes(rem): the mask as floats, for and-ing
 * away the lanes past the end.
 */
static inline __m256 ldr(const float *p, long rem)
{
	return rem >= 8 ? _mm256_loadu_ps(p) : _mm256_maskload_ps(p, mask256(rem));
}

static inline void str(float *p, long rem, __m256 v)
{
	if (rem >= 8)
		_mm256_storeu_ps(p, v);
	else
		_mm256_maskstore_ps(p, mask256(rem), v);
}

static inline __m256 lanes(long rem)
{
	return _mm256_castsi256_ps(mask256(rem));
}

/* for (i = 0; i < n; i += 8) with rem = n - i the floats that remain */
#define FOR_LANES(i, n, rem) \
	for (long i = 0, rem = (n); i < (n); i += 8, rem = (n) - i)

static inline float hsum256(__m256 v)
{
	__m128 s = _mm_add_ps(_mm256_castps256_ps128(v),
			      _mm256_extractf128_ps(v, 1));
	s = _mm_add_ps(s, _mm_movehl_ps(s, s));
	s = _mm_add_ss(s, _mm_movehdup_ps(s));
	return _mm_cvtss_f32(s);
}

static inline float hmax256(__m256 v)
{
	__m128 s = _mm_max_ps(_mm256_castps256_ps128(v),
			      _mm256_extractf128_ps(v, 1));
	s = _mm_max_ps(s, _mm_movehl_ps(s, s));
	s = _mm_max_ss(s, _mm_movehdup_ps(s));
	return _mm_cvtss_f32(s);
}

#endif
