/*
 * gemm_i8_mquant_avx512.c: Marian's quantisation of x (marian_quant,
 * marian_i8.h) for the AVX-512 int8 sets, 16 lanes of a row at a time:
 * v = x qa by vcvtps2dq to the nearest integer (even on ties: Marian's
 * 1.5 2^23), vpmovsdb saturating to bytes and the maximum with -127.  The
 * same q as gemm_i8_mquant_avx2's float clamps: v at or past 127.5 gives
 * 127, at or below -127.5 -127, and NaN or |v| >= 2^31 vcvtps2dq's
 * 0x80000000, -128 saturated, so -127 (Marian's NaN and overflow case).
 * Four rows at a time, so that a quad position's four rows are one
 * 16-byte store into the strip.  The bytes forms only, q + 128
 * (WPACK_XS_U8, vpdpbusd) and q + 127 (WPACK_XS_U8S, Marian's unsigned
 * form where intgemm saturates); the int16 form is the AVX2 code's.  Zero
 * past M and K (q = 0).
 */
#include <immintrin.h>
#include <stdint.h>
#include <string.h>

#include "kernels/gemm_packed.h"
#include "kernels/kern_impl.h"

/* Quads p .. p + 3 of row x (K values), q in the form's bytes (shift). */
static inline __m128i quads4(const float *x, int K, int p, __m512 a,
			     __m128i shift, int u8s)
{
	int left = K - 4 * p;
	__mmask16 m = left >= 16 ? 0xffff : (__mmask16)((1u << left) - 1);
	__m512i q = _mm512_cvtps_epi32(_mm512_mul_ps(
		_mm512_maskz_loadu_ps(m, x + 4 * p), a));
	__m128i b = _mm_max_epi8(_mm512_cvtsepi32_epi8(q),
				 _mm_set1_epi8(-127));

	return u8s ? _mm_add_epi8(b, shift) : _mm_xor_si128(b, shift);
}

void gemm_i8_mquant_avx512(void *xs, const float *x, float qa, int M, int K,
			   int kq, int rmax, int form, int s0, int s1)
{
	if (form == WPACK_XS_I16) {
		gemm_i8_mquant_avx2(xs, x, qa, M, K, kq, rmax, form, s0, s1);
		return;
	}
	const __m512 a = _mm512_set1_ps(qa);
	const int u8s = form == WPACK_XS_U8S;
	/* q + 127 or q + 128; q = 0 in the form, past M */
	const __m128i shift = _mm_set1_epi8(u8s ? 127 : (char)0x80);
	size_t strip = (size_t)kq * rmax;

	for (int s = s0; s < s1; s++)
		for (int r0 = 0; r0 < rmax; r0 += 4) {
			uint32_t *d = (uint32_t *)xs + (size_t)s * strip + r0;
			int i0 = s * rmax + r0;
			int nr = rmax - r0 < 4 ? rmax - r0 : 4;
			const float *xr[4];

#pragma GCC unroll 4
			for (int t = 0; t < 4; t++)
				xr[t] = t < nr && i0 + t < M ?
					x + (size_t)(i0 + t) * K : NULL;
			for (int p = 0; p < kq; p += 4) {
				__m128i b[4], c[4];
#pragma GCC unroll 4
				for (int t = 0; t < 4; t++)
					b[t] = xr[t] ? quads4(xr[t], K, p, a,
							      shift, u8s) : shift;
				/* b: a row's four quads; c: a quad's rows */
				__m128i t0 = _mm_unpacklo_epi32(b[0], b[1]);
				__m128i t1 = _mm_unpackhi_epi32(b[0], b[1]);
				__m128i t2 = _mm_unpacklo_epi32(b[2], b[3]);
				__m128i t3 = _mm_unpackhi_epi32(b[2], b[3]);
				c[0] = _mm_unpacklo_epi64(t0, t2);
				c[1] = _mm_unpackhi_epi64(t0, t2);
				c[2] = _mm_unpacklo_epi64(t1, t3);
				c[3] = _mm_unpackhi_epi64(t1, t3);
				uint32_t *dp = d + (size_t)p * rmax;
				if (nr == 4 && p + 4 <= kq) {
#pragma GCC unroll 4
					for (int u = 0; u < 4; u++)
						_mm_storeu_si128(
							(__m128i *)(dp + u * rmax),
							c[u]);
					continue;
				}
				for (int u = 0; u < 4 && p + u < kq; u++) {
					uint32_t q[4];
					_mm_storeu_si128((__m128i *)q, c[u]);
					memcpy(dp + u * rmax, q,
					       sizeof(uint32_t) * nr);
				}
			}
		}
}
