/*
 * gemm_i8_mquant_avx512.c: Marian's quantisation of x (marian_quant,
 * marian_i8.h) for the AVX-512 int8 sets, 16 lanes at a time: the float
 * operations of gemm_i8_mquant_avx2 (gemm_i8_avx2.c says why each), then
 * vpmovdb to bytes and four quads to their places in the strip.  The
 * bytes forms only, q + 128 (WPACK_XS_U8, vpdpbusd) and q + 127
 * (WPACK_XS_U8S, Marian's unsigned form where intgemm saturates); the
 * int16 form is the AVX2 code's.  Zero past M and K (q = 0).
 */
#include <immintrin.h>
#include <stdint.h>
#include <string.h>

#include "kernels/gemm_packed.h"
#include "kernels/kern_impl.h"

void gemm_i8_mquant_avx512(void *xs, const float *x, float qa, int M, int K,
			   int kq, int rmax, int form, int s0, int s1)
{
	if (form == WPACK_XS_I16) {
		gemm_i8_mquant_avx2(xs, x, qa, M, K, kq, rmax, form, s0, s1);
		return;
	}
	const __m512 a = _mm512_set1_ps(qa), big = _mm512_set1_ps(2147483648.0f);
	const __m512 hi2 = _mm512_set1_ps(200), lo2 = _mm512_set1_ps(-200);
	const __m512 hi = _mm512_set1_ps(127), lo = _mm512_set1_ps(-127);
	const __m512 magic = _mm512_set1_ps(0x1.8p23f);
	const __m128i shift = _mm_set1_epi8(form == WPACK_XS_U8S ? 127 :
					    (char)0x80);
	/* q = 0 in the form, past M */
	const uint32_t zero = form == WPACK_XS_U8S ? 0x7f7f7f7fu : 0x80808080u;
	size_t strip = (size_t)kq * rmax;

	for (int s = s0; s < s1; s++)
		for (int r = 0; r < rmax; r++) {
			int i = s * rmax + r;
			uint32_t *d = (uint32_t *)xs + (size_t)s * strip + r;

			if (i >= M) {
				for (int p = 0; p < kq; p++)
					d[(size_t)p * rmax] = zero;
				continue;
			}
			const float *xr = x + (size_t)i * K;
			for (int p = 0; p < kq; p += 4) {
				int left = K - 4 * p;
				__mmask16 m = left >= 16 ? 0xffff :
					      (__mmask16)((1u << left) - 1);
				__m512 v = _mm512_mul_ps(_mm512_maskz_loadu_ps(
					m, xr + 4 * p), a);
				__mmask16 bad = _mm512_cmp_ps_mask(
					v, big, _CMP_NLT_UQ);
				v = _mm512_max_ps(lo2, _mm512_min_ps(hi2, v));
				v = _mm512_sub_ps(_mm512_add_ps(v, magic),
						  magic);
				v = _mm512_max_ps(lo, _mm512_min_ps(hi, v));
				v = _mm512_mask_blend_ps(bad, v, lo);
				__m128i b = _mm512_cvtepi32_epi8(
					_mm512_cvtps_epi32(v));
				b = form == WPACK_XS_U8S ?
				    _mm_add_epi8(b, shift) :
				    _mm_xor_si128(b, shift);
				uint32_t *dp = d + (size_t)p * rmax;
				if (p + 4 <= kq) {	/* four quads, no loop */
					dp[0] = (uint32_t)_mm_cvtsi128_si32(b);
					dp[rmax] = (uint32_t)
						_mm_extract_epi32(b, 1);
					dp[2 * (size_t)rmax] = (uint32_t)
						_mm_extract_epi32(b, 2);
					dp[3 * (size_t)rmax] = (uint32_t)
						_mm_extract_epi32(b, 3);
					continue;
				}
				uint32_t q[4];
				_mm_storeu_si128((__m128i *)q, b);
				for (int t = 0; p + t < kq; t++)
					dp[(size_t)t * rmax] = q[t];
			}
		}
}
