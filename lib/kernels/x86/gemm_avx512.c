/*
 * gemm_avx512.c: the AVX-512 micro-kernel of sgemm (gemm.c), 8x32: 16
 * accumulators of 16 floats (enough independent chains to keep both FMA
 * pipes busy), two loads of B and eight broadcasts of A per step of k.
 * Eight rows, not more, so that small M (decoder batches) wastes little
 * on padding, and A packs by whole 8 x 8 transposes.
 */
#include <immintrin.h>

#include "kernels/kern_impl.h"

#define MR 8
#define NR 32

static void ukr_8x32(int kc, float alpha, const float *A, const float *B,
		      float *C, long ldc)
{
	__m512 c[MR][2];

#pragma GCC unroll 8
	for (int r = 0; r < MR; r++) {
		c[r][0] = c[r][1] = _mm512_setzero_ps();
		/* C is wanted only after the loop, but it may be far (a
		 * large C is in L3 or memory): fetch it now, all three lines
		 * a row may touch, instead of waiting for it then */
		_mm_prefetch((const char *)(C + r * ldc), _MM_HINT_T0);
		_mm_prefetch((const char *)(C + r * ldc + 16), _MM_HINT_T0);
		_mm_prefetch((const char *)(C + r * ldc + NR - 1), _MM_HINT_T0);
	}
#pragma GCC unroll 2
	for (int p = 0; p < kc; p++) {
		__m512 b0 = _mm512_loadu_ps(B), b1 = _mm512_loadu_ps(B + 16);
#pragma GCC unroll 8
		for (int r = 0; r < MR; r++) {
			__m512 a = _mm512_set1_ps(A[r]);
			c[r][0] = _mm512_fmadd_ps(a, b0, c[r][0]);
			c[r][1] = _mm512_fmadd_ps(a, b1, c[r][1]);
		}
		A += MR;
		B += NR;
	}
	__m512 al = _mm512_set1_ps(alpha);
#pragma GCC unroll 8
	for (int r = 0; r < MR; r++) {
		float *cr = C + r * ldc;
		_mm512_storeu_ps(cr, _mm512_fmadd_ps(al, c[r][0], _mm512_loadu_ps(cr)));
		_mm512_storeu_ps(cr + 16, _mm512_fmadd_ps(al, c[r][1],
							  _mm512_loadu_ps(cr + 16)));
	}
}

/*
 * The small-M tile (kern_impl.h) for B stored [N, K], a decoder step's
 * weights: one vector across 8 < ny <= 16 rows of C (masked: no cost),
 * the eight rows of B broadcast, eight independent chains (twice what
 * hides the latency at one 512-bit FMA a cycle).  Up to 8 rows, half of
 * the vector would idle: the AVX2 tile does those at the same rate.
 */
static void tile_16x8(int kc, float alpha, const float *const x[], int nx,
		      const float *y, long ys, int ny, float *C, long ldc)
{
	enum { R = GEMM_TR };
	__m512 acc[R];
	__mmask16 m = ny >= 16 ? 0xffff : (__mmask16)((1u << ny) - 1);

	if (ny <= 8) {
		gemm_tile_avx2(kc, alpha, x, nx, y, ys, ny, C, ldc);
		return;
	}
#pragma GCC unroll 8
	for (int r = 0; r < R; r++)
		acc[r] = _mm512_setzero_ps();
#pragma GCC unroll 4
	for (int k = 0; k < kc; k++) {
		__m512 yv = _mm512_maskz_loadu_ps(m, y + (long)k * ys);
#pragma GCC unroll 8
		for (int r = 0; r < R; r++)
			acc[r] = _mm512_fmadd_ps(_mm512_set1_ps(x[r][k]), yv,
						 acc[r]);
	}
	/* out of the registers by constant indices only */
	float t[R][16] __attribute__((aligned(64)));
#pragma GCC unroll 8
	for (int r = 0; r < R; r++)
		_mm512_store_ps(t[r], acc[r]);
	for (int l = 0; l < ny; l++)
		for (int r = 0; r < nx; r++)
			C[l * ldc + r] = __builtin_fmaf(alpha, t[r][l],
							C[l * ldc + r]);
}

/* KC: K of the models (512) in one pass over C; an A strip of 8 x 512
 * (16 KB) in L1; NC: a B panel of 512 x 256 (512 KB) in L2; MC: the A
 * block (4 MB) in L3. */
const struct gemm_ukr gemm_ukr_avx512 = {
	.mr = MR, .nr = NR, .mc = 2048, .kc = 512, .nc = 256,
	.kernel = ukr_8x32,
	.t8 = gemm_t8_avx2,
	.small_m = 64,
	.tile = tile_16x8,
	.rows = gemm_rows_avx2,
	.cols = gemm_cols_avx2,
};
