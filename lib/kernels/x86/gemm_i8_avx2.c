/*
 * gemm_i8_avx2.c: the AVX2 int8 kernel of gemm_packed.h, on vpmaddwd.
 *
 * Why not vpmaddubsw: it multiplies unsigned by signed bytes and adds
 * pairs into int16 with saturation.  x shifted to u8 (q + 128, up to 255)
 * times weights up to 127 makes pairs up to 64770, which saturate; the
 * usual ways out cost precision (weights cut to [-63, 63], or x to 7
 * bits) or an extra vpsignb per product vector (|x| times sign-adjusted
 * w, which stays below 2 127 127 = 32258).  vpmaddwd multiplies int16 by
 * int16 and adds pairs into int32, where no sum of ours comes near a
 * limit (K 127 127 < 2^31 for K up to WPACK_I8_KMAX): both operands are
 * sign-extended int8, exact, with no shift to correct.  Per 32 products
 * it costs two vpmaddwd and two vpaddd, against vpmaddubsw's three
 * multiply-port instructions (vpsignb, vpmaddubsw, vpmaddwd to widen) and
 * a vpaddd; the panel's bytes are widened once (vpmovsxbw) for all the
 * rows of a tile.  (On Zen 5 that came to 1.0-1.15x f32's rate at 16-64
 * rows, and kern_i8 takes the 7-bit form of gemm_i8_u7_avx2.c on CPUs
 * without VNNI; this kernel gives the exact 8-bit sums there for
 * Marian's signed products, and for comparisons.)
 *
 * Tiles of up to 6 rows by 8 columns: per quad of k, two vpmovsxbw of the
 * panel's 8 columns (4 columns of 4 bytes each), a 64-bit broadcast of
 * the row's 4 int16 of x, and per row two vpmaddwd into 12 accumulators
 * that hold, per column, the sums of k = 0, 1 and k = 2, 3 (mod 4) apart,
 * added at the end (vphaddd).
 */
#include <immintrin.h>
#include <math.h>
#include <string.h>

#include "kernels/gemm_packed.h"
#include "kernels/kern_impl.h"
#include "kernels/marian_i8.h"
#include "gemm_i8_end.h"
#include "vmath_avx2.h"

#define RMAX 6
/* The first pass over a panel asks for its bytes this far ahead, as the
 * AVX-512 kernels do (gemm_i8_tile512.h says why). */
#define PF_AHEAD 4096

static inline __attribute__((always_inline)) void
tile(int R, const struct wpack_i8_job *j, const int16_t *xs, int i, int g)
{
	const int8_t *P = j->P + g * 32;
	__m256i c[RMAX][2];
	int nc = j->cols - g * 8;
	float *C = j->C + (long)i * j->ldc + g * 8;
	int first = i == 0 && g == 0;	/* the pass that reads P from memory */

#pragma GCC unroll 6
	for (int r = 0; r < R; r++)
		c[r][0] = c[r][1] = _mm256_setzero_si256();
	for (int p = 0; p < j->kq; p++) {
		__m256i w0 = _mm256_cvtepi8_epi16(
			_mm_loadu_si128((const __m128i *)P));
		__m256i w1 = _mm256_cvtepi8_epi16(
			_mm_loadu_si128((const __m128i *)(P + 16)));
		if (first) {	/* the whole row of quads, 128 bytes */
			_mm_prefetch((const char *)P + PF_AHEAD, _MM_HINT_T0);
			_mm_prefetch((const char *)P + PF_AHEAD + 64,
				     _MM_HINT_T0);
		}
#pragma GCC unroll 6
		for (int r = 0; r < R; r++) {
			long long q;
			memcpy(&q, xs + r * 4, sizeof q);
			__m256i a = _mm256_set1_epi64x(q);
			c[r][0] = _mm256_add_epi32(c[r][0],
						   _mm256_madd_epi16(a, w0));
			c[r][1] = _mm256_add_epi32(c[r][1],
						   _mm256_madd_epi16(a, w1));
		}
		xs += RMAX * 4;
		P += WPACK_NR * 4;
	}
	__m256 ws = ldr(j->ws + g * 8, nc);
	__m256 b = j->b ? ldr(j->b + g * 8, nc) : _mm256_setzero_ps();
#pragma GCC unroll 6
	for (int r = 0; r < R; r++) {
		/* lanes of c[r][0]: columns 0, 0, 1, 1 | 2, 2, 3, 3; the
		 * pairs added: 0, 1, 4, 5 | 2, 3, 6, 7; reordered by 64 bits */
		__m256i s = _mm256_hadd_epi32(c[r][0], c[r][1]);
		s = _mm256_permute4x64_epi64(s, 0xd8);
		str(C + r * j->ldc, nc, i8_end_256(s, j->sx[i + r], ws, b,
						   WPACK_I8_BIAS(j), j->relu));
	}
}

static void panel(const struct wpack_i8_job *j)
{
	const int16_t *x16 = j->xs;

	for (int i = 0; i < j->M; i += RMAX) {
		const int16_t *xs = x16 + (size_t)i * j->kq * 4;
		for (int g = 0; g * 8 < j->cols; g++)
			switch (j->M - i < RMAX ? j->M - i : RMAX) {
#define T(R) case R: tile(R, j, xs, i, g); break
			T(1); T(2); T(3); T(4); T(5); T(6);
#undef T
			}
	}
}

/* A row of quads that are zero (q + 128 for the u8 form). */
static void zero_row(uint64_t *d16, uint32_t *d8, int kq, int rmax, int form)
{
	for (int p = 0; p < kq; p++)
		if (form == WPACK_XS_I16)
			d16[(size_t)p * rmax] = 0;
		else	/* q = 0 */
			d8[(size_t)p * rmax] = form == WPACK_XS_U8S ?
					       0x7f7f7f7fu : 0x80808080u;
}

/* Quads p and p + 1 (if p + 1 < kq) of a row, 8 int16 in h, into their
 * places in the form. */
static inline void put_quads(uint64_t *d16, uint32_t *d8, int p, int kq,
			     int rmax, int form, __m128i h)
{
	size_t at = (size_t)p * rmax;

	if (form == WPACK_XS_I16) {
		_mm_storel_epi64((__m128i *)(d16 + at), h);
		if (p + 1 < kq)
			d16[at + rmax] = (uint64_t)_mm_extract_epi64(h, 1);
		return;
	}
	h = _mm_packs_epi16(h, h);	/* q + 128, or + 127 (U8S) */
	h = form == WPACK_XS_U8S ? _mm_add_epi8(h, _mm_set1_epi8(127))
				 : _mm_xor_si128(h, _mm_set1_epi8((char)0x80));
	d8[at] = (uint32_t)_mm_cvtsi128_si32(h);
	if (p + 1 < kq)
		d8[at + rmax] = (uint32_t)_mm_extract_epi32(h, 1);
}

/*
 * quant_rows_i8's arithmetic 8 lanes at a time, so the same bits: the
 * maximum (exact in any order), NaN for a NaN or an infinity, x 127/max
 * rounded to nearest even (vroundps, as the scalar version's 1.5 2^23
 * trick) and clamped; then two quads per 8 values into their places of
 * the strip (kern_impl.h's struct gemm_i8).
 */
void gemm_i8_quant_avx2(void *xs, float *sx, const float *x, int M, int K,
			int kq, int rmax, int form)
{
	const __m256 sign = _mm256_set1_ps(-0.0f), zero = _mm256_setzero_ps();
	const __m256 lo = _mm256_set1_ps(-127), hi = _mm256_set1_ps(127);
	size_t strip = (size_t)kq * rmax;

	for (int s = 0; s < M; s += rmax)
		for (int r = 0; r < rmax; r++) {
			int i = s + r;
			uint64_t *d16 = (uint64_t *)xs + (size_t)s / rmax *
					strip + r;
			uint32_t *d8 = (uint32_t *)xs + (size_t)s / rmax *
				       strip + r;
			if (i >= M) {
				zero_row(d16, d8, kq, rmax, form);
				continue;
			}
			const float *xr = x + (size_t)i * K;
			__m256 m = zero, z = zero;
			for (int k = 0; k < K; k += 8) {
				__m256 v = ldr(xr + k, K - k);
				m = _mm256_max_ps(m, _mm256_andnot_ps(sign, v));
				z = _mm256_add_ps(z, _mm256_mul_ps(v, zero));
			}
			float lm[8], lz[8], amax = 0, nan = 0;
			_mm256_storeu_ps(lm, m);
			_mm256_storeu_ps(lz, z);
			for (int l = 0; l < 8; l++) {
				amax = lm[l] > amax ? lm[l] : amax;
				nan += lz[l];
			}
			if (nan != 0)
				amax = NAN;
			if (!(amax > 0)) {
				sx[i] = amax == 0 ? 0 : NAN;
				zero_row(d16, d8, kq, rmax, form);
				continue;
			}
			__m256 inv = _mm256_set1_ps(127.0f / amax);
			sx[i] = amax / 127.0f;
			for (int p = 0; p < kq; p += 2) {
				__m256 v = _mm256_mul_ps(ldr(xr + 4 * p,
							     K - 4 * p), inv);
				v = _mm256_round_ps(v, _MM_FROUND_TO_NEAREST_INT |
						       _MM_FROUND_NO_EXC);
				v = _mm256_min_ps(_mm256_max_ps(v, lo), hi);
				__m256i q = _mm256_cvtps_epi32(v);
				__m128i h = _mm_packs_epi32(
					_mm256_castsi256_si128(q),
					_mm256_extracti128_si256(q, 1));
				put_quads(d16, d8, p, kq, rmax, form, h);
			}
		}
}

/*
 * Marian's quantisation (marian_quant, marian_i8.h) of strips s0 .. s1-1
 * of x's rows into the form, 8 lanes at a time: v = x qa to the nearest
 * integer by vcvtps2dq (even on ties: Marian's 1.5 2^23), saturated to
 * int16 and clamped to [-127, 127].  The same q as Marian's float clamps:
 * v at or past 127.5 gives 127, at or below -127.5 -127, and NaN or |v| >=
 * 2^31 vcvtps2dq's 0x80000000, -32768 saturated, so -127 (Marian's NaN and
 * overflow case).  Zero past M and K, as linear_marian's loops made them.
 */
void gemm_i8_mquant_avx2(void *xs, const float *x, float qa, int M, int K,
			 int kq, int rmax, int form, int s0, int s1)
{
	const __m256 a = _mm256_set1_ps(qa);
	const __m128i lo = _mm_set1_epi16(-127), hi = _mm_set1_epi16(127);
	size_t strip = (size_t)kq * rmax;

	for (int s = s0; s < s1; s++)
		for (int r = 0; r < rmax; r++) {
			int i = s * rmax + r;
			uint64_t *d16 = (uint64_t *)xs + (size_t)s * strip + r;
			uint32_t *d8 = (uint32_t *)xs + (size_t)s * strip + r;
			if (i >= M) {
				zero_row(d16, d8, kq, rmax, form);
				continue;
			}
			const float *xr = x + (size_t)i * K;
			for (int p = 0; p < kq; p += 2) {
				__m256i q = _mm256_cvtps_epi32(_mm256_mul_ps(
					ldr(xr + 4 * p, K - 4 * p), a));
				__m128i h = _mm_packs_epi32(
					_mm256_castsi256_si128(q),
					_mm256_extracti128_si256(q, 1));
				put_quads(d16, d8, p, kq, rmax, form,
					  _mm_min_epi16(_mm_max_epi16(h, lo), hi));
			}
		}
}

/* struct gemm_i8's mbias, eight at a time: the same fma and product
 * (vcvtdq2ps is the cast's rounding). */
void gemm_i8_mbias_avx2(float *mb, const int32_t *c, float ub, const float *b,
			int n)
{
	const __m256 u = _mm256_set1_ps(ub);
	int j = 0;

	for (; j + 8 <= n; j += 8) {
		__m256 cf = _mm256_cvtepi32_ps(
			_mm256_loadu_si256((const __m256i *)(c + j)));
		_mm256_storeu_ps(mb + j, b ? _mm256_fmadd_ps(
			cf, u, _mm256_loadu_ps(b + j)) : _mm256_mul_ps(cf, u));
	}
	for (; j < n; j++)
		mb[j] = marian_i8_bias(c[j], ub, b ? b + j : NULL);
}

const struct gemm_i8 gemm_i8_avx2 = {
	.rmax = RMAX,
	.xs_form = WPACK_XS_I16,
	.panel = panel,
	.quant = gemm_i8_quant_avx2,
	.mquant = gemm_i8_mquant_avx2,
	.mbias = gemm_i8_mbias_avx2,
	.msat = &gemm_i8_u7_avx2,
};
