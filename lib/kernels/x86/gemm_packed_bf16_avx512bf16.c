/*
 * gemm_packed_bf16_avx512bf16.c: the bf16 kernel of gemm_packed.h: tiles
 * of up to 12 rows by a panel's 32 columns, 24 accumulators of vdpbf16ps
 * (two multiply-adds per float lane at the rate of one float FMA), per
 * pair of k two loads of the panel and up to 12 broadcasts of x's pairs.
 * A lane holds one row's sum for one column: rows never share a register,
 * so a row's bits do not depend on the tile it falls in.
 */
#include <immintrin.h>

#include "kernels/gemm_packed.h"
#include "gemm_packed_avx512.h"

#define RMAX WPACK_RMAX_BF16
/* The first tile of rows prefetches the panel this far ahead, as the f32
 * kernel does (gemm_packed_avx512.c). */
#define PF_AHEAD 4096

static inline __attribute__((always_inline)) void
tile(int R, int kp, const uint32_t *xs, const uint32_t *P, float *C,
     long ldc, __mmask16 m0, __mmask16 m1, const float *b, int relu, int pf)
{
	__m512 c[RMAX][2];

#pragma GCC unroll 12
	for (int r = 0; r < R; r++)
		c[r][0] = c[r][1] = _mm512_setzero_ps();
	for (int p = 0; p < kp; p++) {
		__m512bh b0 = (__m512bh)_mm512_loadu_si512(P);
		__m512bh b1 = (__m512bh)_mm512_loadu_si512(P + 16);
		if (pf) {
			_mm_prefetch((const char *)P + PF_AHEAD, _MM_HINT_T0);
			_mm_prefetch((const char *)P + PF_AHEAD + 64,
				     _MM_HINT_T0);
		}
#pragma GCC unroll 12
		for (int r = 0; r < R; r++) {
			__m512bh a = (__m512bh)_mm512_set1_epi32((int)xs[r]);
			c[r][0] = _mm512_dpbf16_ps(c[r][0], a, b0);
			c[r][1] = _mm512_dpbf16_ps(c[r][1], a, b1);
		}
		xs += RMAX;
		P += WPACK_NR;
	}
	__m512 z = _mm512_setzero_ps();
	__m512 b0 = b ? _mm512_maskz_loadu_ps(m0, b) : z;
	__m512 b1 = b ? _mm512_maskz_loadu_ps(m1, b + 16) : z;
#pragma GCC unroll 12
	for (int r = 0; r < R; r++)
		wpack_row_out_512(C + r * ldc, c[r][0], c[r][1], b != NULL, b0,
				  b1, relu, m0, m1);
}

void wpack_panel_bf16_avx512bf16(const struct wpack_bf16_job *j)
{
	int c0 = j->cols < 16 ? j->cols : 16, c1 = j->cols - c0;
	__mmask16 m0 = (__mmask16)((1u << c0) - 1);
	__mmask16 m1 = (__mmask16)((1u << c1) - 1);

	for (int i = 0; i < j->M; i += RMAX) {
		const uint32_t *xs = j->xs + (size_t)i * j->kp;
		float *C = j->C + i * j->ldc;
		switch (j->M - i < RMAX ? j->M - i : RMAX) {
#define T(R) case R: \
	tile(R, j->kp, xs, j->P, C, j->ldc, m0, m1, j->b, j->relu, i == 0); \
	break
		T(1); T(2); T(3); T(4); T(5); T(6);
		T(7); T(8); T(9); T(10); T(11); T(12);
#undef T
		}
	}
}
