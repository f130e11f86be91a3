/*
 * gemm_packed_avx2.c: the AVX2+FMA kernel of gemm_packed.h: a panel's 32
 * columns in two halves of 16, tiles of up to 6 rows, 12 accumulators of
 * 8, per step of k two loads of the panel and up to 6 broadcasts of x.
 * A decoder step's weights come from L3 (a small Transformer's are 18 MB,
 * L2 is 2 MB on a Sapphire Rapids core) and the hardware's prefetchers
 * leave much of that to latency, so the first strip of rows of each
 * half-panel prefetches the same block of the next panel into L2, a line
 * a step of k (past the last panel of W the prefetches are wasted,
 * harmless): a small model's step, 32 rows, went from 0.43 to 0.51 of
 * the AVX2 FMA peak with it.
 */
#include <immintrin.h>

#include "kernels/gemm_packed.h"
#include "vmath_avx2.h"

#define RMAX WPACK_RMAX_AVX2

static inline __attribute__((always_inline)) void
tile(int R, int kc, const float *xs, const float *P, float *C, long ldc,
     int cols, int first, const float *b, int relu, const float *pf)
{
	__m256 c[RMAX][2];
	long r0 = cols < 8 ? cols : 8, r1 = cols - r0;

#pragma GCC unroll 6
	for (int r = 0; r < R; r++)
		c[r][0] = c[r][1] = _mm256_setzero_ps();
#pragma GCC unroll 2
	for (int k = 0; k < kc; k++) {
		__m256 b0 = _mm256_load_ps(P), b1 = _mm256_load_ps(P + 8);
#pragma GCC unroll 6
		for (int r = 0; r < R; r++) {
			__m256 a = _mm256_broadcast_ss(xs + r);
			c[r][0] = _mm256_fmadd_ps(a, b0, c[r][0]);
			c[r][1] = _mm256_fmadd_ps(a, b1, c[r][1]);
		}
		if (pf)
			_mm_prefetch((const char *)(pf + 16 * k), _MM_HINT_T1);
		xs += RMAX;
		P += WPACK_NR;
	}
	__m256 z = _mm256_setzero_ps();
	__m256 b0 = b && r0 > 0 ? ldr(b, r0) : z;
	__m256 b1 = b && r1 > 0 ? ldr(b + 8, r1) : z;
#pragma GCC unroll 6
	for (int r = 0; r < R; r++) {
		float *cr = C + r * ldc;
		__m256 v0 = _mm256_add_ps(c[r][0], first || r0 <= 0 ? z :
					  ldr(cr, r0));
		__m256 v1 = _mm256_add_ps(c[r][1], first || r1 <= 0 ? z :
					  ldr(cr + 8, r1));
		if (b) {
			v0 = _mm256_add_ps(v0, b0);
			v1 = _mm256_add_ps(v1, b1);
		}
		if (relu) {
			v0 = _mm256_max_ps(v0, z);
			v1 = _mm256_max_ps(v1, z);
		}
		if (r0 > 0)
			str(cr, r0, v0);
		if (r1 > 0)
			str(cr + 8, r1, v1);
	}
}

void wpack_panel_avx2(const struct wpack_job *j)
{
	const float *next = j->P + (size_t)j->K * WPACK_NR;

	for (int k0 = 0; k0 < j->K; k0 += j->kc) {
		int kc = j->K - k0 < j->kc ? j->K - k0 : j->kc;
		int first = k0 == 0;
		int last = k0 + kc == j->K;

		for (int h = 0; h < WPACK_NR && h < j->cols; h += 16) {
			const float *P = j->P + (size_t)k0 * WPACK_NR + h;
			const float *b = last && j->b ? j->b + h : NULL;
			int cols = j->cols - h < 16 ? j->cols - h : 16;

			for (int i = 0; i < j->M; i += RMAX) {
				const float *xs = j->xs + (size_t)i * j->K +
						  (size_t)k0 * RMAX;
				float *C = j->C + i * j->ldc + h;
				const float *pf = i ? NULL : next +
					(size_t)k0 * WPACK_NR + h * kc;
				switch (j->M - i < RMAX ? j->M - i : RMAX) {
#define T(R) case R: tile(R, kc, xs, P, C, j->ldc, cols, first, b, last && j->relu, pf); break
				T(1); T(2); T(3); T(4); T(5); T(6);
#undef T
				}
			}
		}
	}
}
