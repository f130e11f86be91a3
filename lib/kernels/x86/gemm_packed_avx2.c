/*
 * gemm_packed_avx2.c: the AVX2+FMA kernel of gemm_packed.h: a panel's 32
 * columns in two halves of 16, tiles of up to 6 rows, 12 accumulators of
 * 8, per step of k two loads of the panel and up to 6 broadcasts of x;
 * strips of up to 3 rows take the 32 columns at once.
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

/*
 * C [R, 8 V] += the tile's products (V vectors of 8 columns from the
 * panel's column h, rows of WPACK_NR; cols of them in C), with, when pf,
 * V / 2 lines of the next panel prefetched a step of k.
 */
static inline __attribute__((always_inline)) void
tile(int R, int V, int kc, const float *xs, const float *P, float *C,
     long ldc, int cols, int first, const float *b, int relu,
     const float *pf)
{
	__m256 c[RMAX][4], z = _mm256_setzero_ps(), bv[4];
	long n[4];

#pragma GCC unroll 4
	for (int v = 0; v < V; v++)
		n[v] = cols - 8 * v < 0 ? 0 : cols - 8 * v > 8 ? 8 :
		       cols - 8 * v;
#pragma GCC unroll 6
	for (int r = 0; r < R; r++)
#pragma GCC unroll 4
		for (int v = 0; v < V; v++)
			c[r][v] = z;
#pragma GCC unroll 2
	for (int k = 0; k < kc; k++) {
		__m256 w[4];
#pragma GCC unroll 4
		for (int v = 0; v < V; v++)
			w[v] = _mm256_load_ps(P + 8 * v);
#pragma GCC unroll 6
		for (int r = 0; r < R; r++) {
			__m256 a = _mm256_broadcast_ss(xs + r);
#pragma GCC unroll 4
			for (int v = 0; v < V; v++)
				c[r][v] = _mm256_fmadd_ps(a, w[v], c[r][v]);
		}
		if (pf)
#pragma GCC unroll 2
			for (int l = 0; l < V / 2; l++)
				_mm_prefetch((const char *)(pf + 8 * V * k +
						16 * l), _MM_HINT_T1);
		xs += RMAX;
		P += WPACK_NR;
	}
#pragma GCC unroll 4
	for (int v = 0; v < V; v++)
		bv[v] = b && n[v] > 0 ? ldr(b + 8 * v, n[v]) : z;
#pragma GCC unroll 6
	for (int r = 0; r < R; r++) {
		float *cr = C + r * ldc;
#pragma GCC unroll 4
		for (int v = 0; v < V; v++) {
			if (n[v] <= 0)
				continue;
			__m256 o = _mm256_add_ps(c[r][v], first ? z :
						 ldr(cr + 8 * v, n[v]));
			if (b)
				o = _mm256_add_ps(o, bv[v]);
			if (relu)
				o = _mm256_max_ps(o, z);
			str(cr + 8 * v, n[v], o);
		}
	}
}

/*
 * Strips of 4 to 6 rows take a half-panel at a time (12 accumulators at
 * most), strips of 1 to 3 the whole panel: 4 to 12 chains of FMAs, where
 * a half would leave 2 to 6, too few to cover the FMA's latency on two
 * units (8 needed).  Every entry's chain along k is the same either way.
 */
void wpack_panel_avx2(const struct wpack_job *j)
{
	const float *next = j->P + (size_t)j->K * WPACK_NR;

	for (int k0 = 0; k0 < j->K; k0 += j->kc) {
		int kc = j->K - k0 < j->kc ? j->K - k0 : j->kc;
		int first = k0 == 0;
		int last = k0 + kc == j->K;
		int relu = last && j->relu;

		for (int h = 0; h < WPACK_NR && h < j->cols; h += 16) {
			const float *P = j->P + (size_t)k0 * WPACK_NR + h;
			const float *b = last && j->b ? j->b + h : NULL;
			int cols = j->cols - h;

			for (int i = 0; i < j->M; i += RMAX) {
				int R = j->M - i < RMAX ? j->M - i : RMAX;
				const float *xs = j->xs + (size_t)i * j->K +
						  (size_t)k0 * RMAX;
				float *C = j->C + i * j->ldc + h;
				/* the first strip prefetches: a half-panel's
				 * share, or the whole block */
				const float *pf = i ? NULL : next +
					(size_t)k0 * WPACK_NR +
					(R > 3 ? h * kc : 0);

				if (R <= 3 && h)	/* done whole */
					continue;
				switch (R) {
#define T(R, V) case R: tile(R, V, kc, xs, P, C, j->ldc, cols, \
				    first, b, relu, pf); break
				T(1, 4); T(2, 4); T(3, 4);
				T(4, 2); T(5, 2); T(6, 2);
#undef T
				}
			}
		}
	}
}
