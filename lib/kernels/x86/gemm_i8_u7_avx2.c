/*
 * gemm_i8_u7_avx2.c: the int8 kernel of gemm_packed.h for AVX2 CPUs
 * without VNNI, on vpmaddubsw: x in the 7-bit form (quant_rows_u7: u in
 * [0, 127] with a zero point per row), so that vpmaddubsw's pairs of
 * u8 x s8 products, at most 2 127 128 in size, never saturate int16;
 * vpmaddwd by ones then adds the pairs into int32 (a column's quad), and
 * vpaddd into the accumulator: 32 products in two multiply instructions
 * where gemm_i8_avx2.c's vpmaddwd on sign-extended bytes does 16 in one,
 * and no vpmovsxbw.  At the end each row takes off zp_i sum_k wq_jk (the
 * pack's qsum / 128, exact): the exact sum of (u - zp) wq, then the one
 * float sequence of every kernel.
 *
 * Tiles of up to 6 rows by half a panel (16 columns, two vectors of 8
 * columns of 4 bytes, the layout of the VNNI kernels), 12 accumulators;
 * the vector of ones is read from memory by each vpmaddwd (AVX2's 16
 * registers hold the accumulators, the panel's two vectors, x's
 * broadcast quad and the product: ubs below).
 */
#include <immintrin.h>
#include <math.h>
#include <string.h>

#include "kernels/gemm_packed.h"
#include "kernels/kern_impl.h"
#include "gemm_i8_end.h"
#include "vmath_avx2.h"

#define RMAX 6
/* The first pass over a panel asks for its bytes this far ahead, as the
 * AVX512_VNNI kernel does (gemm_i8_avx512vnni.c says why). */
#define PF_AHEAD 4096

/* vpmaddwd's ones, read from memory by each */
static const int16_t ones16[16] __attribute__((aligned(32))) = {
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1
};

/* *c += the sums of a's and w's quads of bytes (u8 by s8), in asm: with
 * intrinsics gcc 12 kept the ones in a register and spilled five of the
 * 6-row tile's accumulators to the stack. */
static inline __attribute__((always_inline)) void
ubs(__m256i *c, __m256i a, __m256i w)
{
	__m256i t;

	__asm__("vpmaddubsw %[w], %[a], %[t]\n\t"
		"vpmaddwd %[ones], %[t], %[t]\n\t"
		"vpaddd %[t], %[c], %[c]"
		: [c] "+x"(*c), [t] "=&x"(t)
		: [a] "x"(a), [w] "x"(w),
		  [ones] "m"(*(const __m256i *)ones16));
}

static inline __attribute__((always_inline)) void
tile(int R, const struct wpack_i8_job *j, const uint8_t *xs, int i, int g)
{
	const int8_t *P = j->P + g * 64;
	__m256i c[RMAX][2];
	int nc = j->cols - g * 16;
	float *C = j->C + (long)i * j->ldc + g * 16;
	int first = i == 0 && g == 0;	/* the pass that reads P from memory */

#pragma GCC unroll 6
	for (int r = 0; r < R; r++)
		c[r][0] = c[r][1] = _mm256_setzero_si256();
	for (int p = 0; p < j->kq; p++) {
		__m256i w0 = _mm256_loadu_si256((const __m256i *)P);
		__m256i w1 = _mm256_loadu_si256((const __m256i *)(P + 32));
		if (first) {	/* both halves of the panel's row of quads */
			_mm_prefetch((const char *)P + PF_AHEAD, _MM_HINT_T0);
			_mm_prefetch((const char *)P + PF_AHEAD + 64,
				     _MM_HINT_T0);
		}
#pragma GCC unroll 6
		for (int r = 0; r < R; r++) {
			int q;
			memcpy(&q, xs + r * 4, sizeof q);
			__m256i a = _mm256_set1_epi32(q);
			ubs(&c[r][0], a, w0);
			ubs(&c[r][1], a, w1);
		}
		xs += RMAX * 4;
		P += WPACK_NR * 4;
	}
	/* the columns' sums of wq: qsum is 128 times them, exactly */
	__m256i s0 = _mm256_srai_epi32(_mm256_loadu_si256(
		(const __m256i *)(j->qsum + g * 16)), 7);
	__m256i s1 = _mm256_srai_epi32(_mm256_loadu_si256(
		(const __m256i *)(j->qsum + g * 16 + 8)), 7);
	__m256 ws0 = ldr(j->ws + g * 16, nc);
	__m256 ws1 = nc > 8 ? ldr(j->ws + g * 16 + 8, nc - 8)
			    : _mm256_setzero_ps();
	__m256 z = _mm256_setzero_ps();
	__m256 b0 = j->b ? ldr(j->b + g * 16, nc) : z;
	__m256 b1 = j->b && nc > 8 ? ldr(j->b + g * 16 + 8, nc - 8) : z;
#pragma GCC unroll 6
	for (int r = 0; r < R; r++) {
		float *cr = C + r * j->ldc, sx = j->sx[i + r];
		__m256i zp = _mm256_set1_epi32(j->zx[i + r]);
		str(cr, nc, i8_end_256(_mm256_sub_epi32(c[r][0],
				_mm256_mullo_epi32(zp, s0)), sx, ws0, b0,
				WPACK_I8_BIAS(j), j->relu));
		if (nc > 8)
			str(cr + 8, nc - 8, i8_end_256(_mm256_sub_epi32(
				c[r][1], _mm256_mullo_epi32(zp, s1)), sx, ws1,
				b1, WPACK_I8_BIAS(j), j->relu));
	}
}

static void panel(const struct wpack_i8_job *j)
{
	const uint8_t *x8 = j->xs;

	for (int i = 0; i < j->M; i += RMAX) {
		const uint8_t *xs = x8 + (size_t)i * j->kq * 4;
		for (int g = 0; g * 16 < j->cols; g++)
			switch (j->M - i < RMAX ? j->M - i : RMAX) {
#define T(R) case R: tile(R, j, xs, i, g); break
			T(1); T(2); T(3); T(4); T(5); T(6);
#undef T
			}
	}
}

/*
 * quant_rows_u7's arithmetic 8 lanes at a time, so the same bits: the
 * least and greatest values with 0 (exact in any order), NaN for a NaN
 * or an infinity, u7_row's s, inv and zp, then x inv rounded to nearest
 * even (vroundps, as the scalar version's 1.5 2^23), + zp, clamped to
 * [0, 127]; two quads per 8 values into their places of the strip
 * (kern_impl.h's struct gemm_i8).  Past K the quads hold zp (the
 * panel's weights there are zero), past M zero.
 */
void gemm_i8_quant_u7_avx2(void *xs, float *sx, int32_t *zx, const float *x,
			   int M, int K, int kq, int rmax)
{
	const __m256 zero = _mm256_setzero_ps(), top = _mm256_set1_ps(127);
	size_t strip = (size_t)kq * rmax;

	for (int s = 0; s < M; s += rmax)
		for (int r = 0; r < rmax; r++) {
			int i = s + r;
			uint32_t *d = (uint32_t *)xs + (size_t)s / rmax *
				      strip + r;
			if (i >= M) {
				for (int p = 0; p < kq; p++)
					d[(size_t)p * rmax] = 0;
				continue;
			}
			const float *xr = x + (size_t)i * K;
			__m256 lo = zero, hi = zero, nz = zero;
			for (int k = 0; k < K; k += 8) {
				__m256 v = ldr(xr + k, K - k);
				lo = _mm256_min_ps(lo, v);
				hi = _mm256_max_ps(hi, v);
				nz = _mm256_add_ps(nz, _mm256_mul_ps(v, zero));
			}
			float l[8], h[8], n[8], mn = 0, mx = 0, nan = 0, inv;
			_mm256_storeu_ps(l, lo);
			_mm256_storeu_ps(h, hi);
			_mm256_storeu_ps(n, nz);
			for (int t = 0; t < 8; t++) {
				mn = l[t] < mn ? l[t] : mn;
				mx = h[t] > mx ? h[t] : mx;
				nan += n[t];
			}
			if (nan != 0 || !u7_row(mn, mx, &sx[i], &inv, &zx[i])) {
				sx[i] = nan != 0 ? NAN : 0;
				zx[i] = 0;
				for (int p = 0; p < kq; p++)
					d[(size_t)p * rmax] = 0;
				continue;
			}
			__m256 vi = _mm256_set1_ps(inv);
			__m256 vz = _mm256_set1_ps((float)zx[i]);
			for (int p = 0; p < kq; p += 2) {
				__m256 v = _mm256_mul_ps(ldr(xr + 4 * p,
							     K - 4 * p), vi);
				v = _mm256_round_ps(v, _MM_FROUND_TO_NEAREST_INT |
						       _MM_FROUND_NO_EXC);
				v = _mm256_add_ps(v, vz);
				v = _mm256_min_ps(_mm256_max_ps(v, zero), top);
				__m256i q = _mm256_cvtps_epi32(v);
				__m128i h16 = _mm_packs_epi32(
					_mm256_castsi256_si128(q),
					_mm256_extracti128_si256(q, 1));
				__m128i b8 = _mm_packus_epi16(h16, h16);
				size_t at = (size_t)p * rmax;
				d[at] = (uint32_t)_mm_cvtsi128_si32(b8);
				if (p + 1 < kq)
					d[at + rmax] = (uint32_t)
						_mm_extract_epi32(b8, 1);
			}
		}
}

const struct gemm_i8 gemm_i8_u7_avx2 = {
	.rmax = RMAX,
	.xs_form = WPACK_XS_U7,
	.panel = panel,
	.quant_u7 = gemm_i8_quant_u7_avx2,
	.mquant = gemm_i8_mquant_avx2,
	.exact = &gemm_i8_avx2,
	.msat = &gemm_i8_u7_avx2,
};
