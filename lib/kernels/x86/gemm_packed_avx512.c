/*
 * gemm_packed_avx512.c: the AVX-512 kernel of gemm_packed.h: tiles of up
 * to 12 rows by a panel's 32 columns, 24 accumulators (enough independent
 * chains to keep both FMA pipes busy), per step of k two loads of the
 * panel and up to 12 broadcasts of x; the first strip prefetches.
 */
#include <immintrin.h>

#include "kernels/gemm_packed.h"
#include "gemm_packed_avx512.h"

#define RMAX WPACK_RMAX_AVX512
/* The first strip of rows reads a block of the panel from memory (a
 * decoder step's weights have all passed since their last use), the
 * others from cache: it asks for the panel's bytes this far ahead of its
 * loads, as the int8 kernels do (gemm_i8_avx512vnni.c). */
#define PF_AHEAD 4096

static inline __attribute__((always_inline)) void
tile(int R, int kc, const float *xs, const float *P, float *C, long ldc,
     __mmask16 m0, __mmask16 m1, int first, const float *b, int relu,
     int pf)
{
	__m512 c[RMAX][2];

#pragma GCC unroll 12
	for (int r = 0; r < R; r++)
		c[r][0] = c[r][1] = _mm512_setzero_ps();
#pragma GCC unroll 2
	for (int k = 0; k < kc; k++) {
		__m512 b0 = _mm512_load_ps(P), b1 = _mm512_load_ps(P + 16);
		if (pf) {
			_mm_prefetch((const char *)P + PF_AHEAD, _MM_HINT_T0);
			_mm_prefetch((const char *)P + PF_AHEAD + 64,
				     _MM_HINT_T0);
		}
#pragma GCC unroll 12
		for (int r = 0; r < R; r++) {
			__m512 a = _mm512_set1_ps(xs[r]);
			c[r][0] = _mm512_fmadd_ps(a, b0, c[r][0]);
			c[r][1] = _mm512_fmadd_ps(a, b1, c[r][1]);
		}
		xs += RMAX;
		P += WPACK_NR;
	}
	__m512 z = _mm512_setzero_ps();
	__m512 b0 = b ? _mm512_maskz_loadu_ps(m0, b) : z;
	__m512 b1 = b ? _mm512_maskz_loadu_ps(m1, b + 16) : z;
#pragma GCC unroll 12
	for (int r = 0; r < R; r++) {
		float *cr = C + r * ldc;
		__m512 v0 = _mm512_add_ps(c[r][0], first ? z :
					  _mm512_maskz_loadu_ps(m0, cr));
		__m512 v1 = _mm512_add_ps(c[r][1], first ? z :
					  _mm512_maskz_loadu_ps(m1, cr + 16));
		wpack_row_out_512(cr, v0, v1, b != NULL, b0, b1, relu, m0, m1);
	}
}

void wpack_panel_avx512(const struct wpack_job *j)
{
	int c0 = j->cols < 16 ? j->cols : 16, c1 = j->cols - c0;
	__mmask16 m0 = (__mmask16)((1u << c0) - 1);
	__mmask16 m1 = (__mmask16)((1u << c1) - 1);

	for (int k0 = 0; k0 < j->K; k0 += j->kc) {
		int kc = j->K - k0 < j->kc ? j->K - k0 : j->kc;
		int first = k0 == 0;
		const float *b = k0 + kc == j->K ? j->b : NULL;
		int relu = k0 + kc == j->K && j->relu;
		const float *P = j->P + (size_t)k0 * WPACK_NR;

		for (int i = 0; i < j->M; i += RMAX) {
			const float *xs = j->xs + (size_t)i * j->K +
					  (size_t)k0 * RMAX;
			float *C = j->C + i * j->ldc;
			switch (j->M - i < RMAX ? j->M - i : RMAX) {
#define T(R) case R: tile(R, kc, xs, P, C, j->ldc, m0, m1, first, b, relu, i == 0); break
			T(1); T(2); T(3); T(4); T(5); T(6);
			T(7); T(8); T(9); T(10); T(11); T(12);
#undef T
			}
		}
	}
}
