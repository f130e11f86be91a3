/*
 * gemm_bf16_avx512bf16.c: the AVX512_BF16 kernels of sgemm's bf16
 * precision (gemm_bf16.c): packers that round floats to bf16 pairs along
 * k, and a 12x32 micro-kernel of vdpbf16ps, which adds two products of
 * bf16 pairs into each float lane at the rate of one float FMA: twice the
 * multiply-adds.  24 accumulators hide its latency; per pair of k, two
 * loads of B and 12 broadcasts of A's pairs.  (14 rows, 28 accumulators,
 * leave gcc too few registers: it spills one of B's in the loop, and
 * measured no faster.)
 */
#include <immintrin.h>

#include "kernels/gemm_packed.h"
#include "kernels/kern_impl.h"

#define MR 12
#define NR 32

static __mmask16 first(int n)
{
	return n >= 16 ? 0xffff : n <= 0 ? 0 : (__mmask16)((1u << n) - 1);
}

/* x rounded to bf16 in the upper 16 bits of each lane (the lower 16 are
 * rubbish), as f32_to_bf16 of tensor.h: to nearest, ties to even, by
 * adding 0x7fff and the lowest kept bit; NaN quieted, never rounded. */
static inline __m512i bf16_hi(__m512 x)
{
	__m512i v = _mm512_castps_si512(x);
	__m512i odd = _mm512_and_si512(_mm512_srli_epi32(v, 16),
				       _mm512_set1_epi32(1));
	__m512i r = _mm512_add_epi32(v, _mm512_add_epi32(odd,
				     _mm512_set1_epi32(0x7fff)));
	__mmask16 nan = _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q);

	return _mm512_mask_or_epi32(r, nan, v, _mm512_set1_epi32(0x400000));
}

/* Lane j: x0[j] in bf16 in the low half, x1[j] in the high half. */
static inline __m512i pairs_across(__m512 x0, __m512 x1)
{
	return _mm512_mask_blend_epi16(0xaaaaaaaa,
				       _mm512_srli_epi32(bf16_hi(x0), 16),
				       bf16_hi(x1));
}

/* Lane j: x[2j] in bf16 in the low half, x[2j + 1] in the high half, for
 * the 32 floats x = lo, hi. */
static inline __m512i pairs_along(__m512 lo, __m512 hi)
{
	static const short odd[32] __attribute__((aligned(64))) = {
		1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31,
		33, 35, 37, 39, 41, 43, 45, 47, 49, 51, 53, 55, 57, 59, 61, 63,
	};
	return _mm512_permutex2var_epi16(bf16_hi(lo),
					 _mm512_load_si512(odd), bf16_hi(hi));
}

/* x [k, n] by rows: a pair of rows at a time, each read once,
 * sequentially, 16 columns converted at once. */
static void pack_rows(int w, int k, int n, const float *x, long ld,
		      uint32_t *d)
{
	int kp = (k + 1) / 2;
	size_t strip = (size_t)w * kp;

	for (int p = 0; p < kp; p++) {
		const float *r0 = x + 2L * p * ld;
		const float *r1 = 2 * p + 1 < k ? r0 + ld : NULL;
		uint32_t *o = d + (size_t)p * w;
		for (int j0 = 0; j0 < n; j0 += w, o += strip) {
			for (int c = 0; c < w; c += 16) {
				__m512 v0 = _mm512_setzero_ps(), v1 = v0;
				int j = j0 + c;
				if (j < n) {
					__mmask16 lm = first(n - j);
					v0 = _mm512_maskz_loadu_ps(lm, r0 + j);
					if (r1)
						v1 = _mm512_maskz_loadu_ps(lm,
									   r1 + j);
				}
				_mm512_mask_storeu_epi32(o + c, first(w - c),
						pairs_across(v0, v1));
			}
		}
	}
}

/* The 16 x 16 dwords r[i][j] transposed in place: unpacking pairs of rows
 * by dwords, then by pairs of dwords, leaves each 128-bit lane holding
 * four rows of one column; two shuffles of lanes gather them. */
static inline void transpose16(__m512i r[16])
{
	__m512i a[16], b[16];

#pragma GCC unroll 8
	for (int i = 0; i < 16; i += 2) {
		a[i] = _mm512_unpacklo_epi32(r[i], r[i + 1]);
		a[i + 1] = _mm512_unpackhi_epi32(r[i], r[i + 1]);
	}
#pragma GCC unroll 4
	for (int i = 0; i < 16; i += 4) {
		b[i] = _mm512_unpacklo_epi64(a[i], a[i + 2]);
		b[i + 1] = _mm512_unpackhi_epi64(a[i], a[i + 2]);
		b[i + 2] = _mm512_unpacklo_epi64(a[i + 1], a[i + 3]);
		b[i + 3] = _mm512_unpackhi_epi64(a[i + 1], a[i + 3]);
	}
	/* b[4g + m], lane l: rows 4g .. 4g + 3 of column 4l + m */
#pragma GCC unroll 4
	for (int m = 0; m < 4; m++) {
		__m512i c0 = _mm512_shuffle_i32x4(b[m], b[4 + m], 0x44);
		__m512i c1 = _mm512_shuffle_i32x4(b[m], b[4 + m], 0xee);
		__m512i d0 = _mm512_shuffle_i32x4(b[8 + m], b[12 + m], 0x44);
		__m512i d1 = _mm512_shuffle_i32x4(b[8 + m], b[12 + m], 0xee);
		r[m] = _mm512_shuffle_i32x4(c0, d0, 0x88);
		r[4 + m] = _mm512_shuffle_i32x4(c0, d0, 0xdd);
		r[8 + m] = _mm512_shuffle_i32x4(c1, d1, 0x88);
		r[12 + m] = _mm512_shuffle_i32x4(c1, d1, 0xdd);
	}
}

/* Up to 16 rows of x (row stride ld; rows past nr as zeros), k of each
 * from x up to 32 (zeros past), as pairs along k transposed:
 * o[q * os + c] = pair q of row c, the columns of sm stored. */
static inline void pack_16x32(const float *x, long ld, int nr, int k,
			      uint32_t *o, long os, __mmask16 sm)
{
	__mmask16 m0 = first(k), m1 = first(k - 16);
	int pairs = k >= 32 ? 16 : (k + 1) / 2;
	__m512i v[16];

#pragma GCC unroll 16
	for (int c = 0; c < 16; c++) {
		v[c] = _mm512_setzero_si512();
		if (c >= nr)
			continue;
		const float *r = x + c * ld;
		__builtin_prefetch(r + 64);
		__builtin_prefetch(r + 80);
		v[c] = pairs_along(_mm512_maskz_loadu_ps(m0, r),
				   _mm512_maskz_loadu_ps(m1, r + 16));
	}
	transpose16(v);
	for (int q = 0; q < pairs; q++)
		_mm512_mask_storeu_epi32(o + q * os, sm, v[q]);
}

/* x [n, k] (op(x) [k, n] transposed): for each strip, 16 of its rows
 * read side by side to their end (more streams at once would be more than
 * the hardware prefetcher follows), 32 entries (16 pairs) of each at a
 * time, and the 16 x 16 pairs transposed. */
static void pack_cols(int w, int k, int n, const float *x, long ld,
		      uint32_t *d)
{
	int kp = (k + 1) / 2;
	size_t strip = (size_t)w * kp;

	for (int j0 = 0; j0 < n; j0 += w, d += strip) {
		for (int c0 = 0; c0 < w; c0 += 16) {
			int rows = n - j0 - c0 < w - c0 ? n - j0 - c0 : w - c0;
			const float *x0 = rows > 0 ? x + (long)(j0 + c0) * ld :
					  x;
			for (int k0 = 0; k0 < k; k0 += 32)
				pack_16x32(x0 + k0, ld, rows, k - k0,
					   d + (size_t)(k0 / 2) * w + c0, w,
					   first(w - c0));
		}
	}
}

/* C [12, 32] = fma(alpha, Ap Bp, C) over kp pairs (kern_impl.h): per
 * pair, row r's pair of A broadcast against B's 32 columns' pairs. */
static void ukr_12x32(int kp, float alpha, const uint32_t *A,
		      const uint32_t *B, float *C, long ldc)
{
	__m512 c[MR][2];

	const float *cp = C;
#pragma GCC unroll 16
	for (int r = 0; r < MR; r++, cp += ldc) {
		c[r][0] = c[r][1] = _mm512_setzero_ps();
		/* C is far (L3 or memory) and wanted only at the end */
		_mm_prefetch((const char *)cp, _MM_HINT_T0);
		_mm_prefetch((const char *)(cp + NR - 1), _MM_HINT_T0);
	}
	for (int p = 0; p < kp; p++) {
		__m512i b0 = _mm512_loadu_si512(B);
		__m512i b1 = _mm512_loadu_si512(B + 16);
#pragma GCC unroll 16
		for (int r = 0; r < MR; r++) {
			__m512i a = _mm512_set1_epi32((int)A[r]);
			c[r][0] = _mm512_dpbf16_ps(c[r][0], (__m512bh)a,
						   (__m512bh)b0);
			c[r][1] = _mm512_dpbf16_ps(c[r][1], (__m512bh)a,
						   (__m512bh)b1);
		}
		A += MR;
		B += NR;
	}
	__m512 al = _mm512_set1_ps(alpha);
#pragma GCC unroll 16
	for (int r = 0; r < MR; r++, C += ldc) {
		_mm512_storeu_ps(C, _mm512_fmadd_ps(al, c[r][0],
						    _mm512_loadu_ps(C)));
		_mm512_storeu_ps(C + 16, _mm512_fmadd_ps(al, c[r][1],
						_mm512_loadu_ps(C + 16)));
	}
}

/* KC: K of the models (512) in one pass over C, an A strip of 12 x 512
 * (12 KB) in L1; NC: a B panel of 512 x 512 (512 KB) in L2; MC: the A
 * block (2 MB) in L3.  On Zen 4 (32 KB L1d, 1 MB L2), KC 512 to 1024, NC
 * 256 to 1024 and MC 2040 or 4092 measured the same, to the noise (5%)
 * of a shared machine: the kernel, not the caches, sets the pace. */
const struct gemm_bf16 gemm_bf16_avx512bf16 = {
	.mr = MR, .nr = NR, .mc = 2040, .kc = 512, .nc = 512,
	.kernel = ukr_12x32,
	.pack_rows = pack_rows,
	.pack_cols = pack_cols,
	.wpack_panel = wpack_panel_bf16_avx512bf16,
};
