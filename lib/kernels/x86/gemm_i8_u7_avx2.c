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
 * Tiles of up to 6 rows by half a panel (gemm_i8_tile256.h, the layout
 * of the VNNI kernels), 12 accumulators; the vector of ones is read from
 * memory by each vpmaddwd (AVX2's 16 registers hold the accumulators,
 * the panel's two vectors, x's broadcast quad and the product: ubs
 * below).
 */
#include <immintrin.h>
#include <math.h>
#include <stdint.h>

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

#define I8_PRODUCT(c, a, w) ubs(c, a, w)
#define I8_USETS(R) 1
#define I8_U7 1
#include "gemm_i8_tile256.h"

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
	.mbias = gemm_i8_mbias_avx2,
	.exact = &gemm_i8_avx2,
	.msat = &gemm_i8_u7_avx2,
};
