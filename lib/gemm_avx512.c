/*
 * gemm_avx512.c: the AVX-512 micro-kernel of sgemm (gemm.c), 8x32: 16
 * accumulators of 16 floats (enough independent chains to keep both FMA
 * pipes busy), two loads of B and eight broadcasts of A per step of k.
 * Eight rows, not more, so that small M (decoder batches) wastes little
 * on padding, and A packs by whole 8 x 8 transposes.
 */
#include <immintrin.h>

#include "kern_impl.h"

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

/* KC: K of the models (512) in one pass over C; an A strip of 8 x 512
 * (16 KB) in L1; NC: a B panel of 512 x 256 (512 KB) in L2; MC: the A
 * block (4 MB) in L3. */
const struct gemm_ukr gemm_ukr_avx512 = {
	.mr = MR, .nr = NR, .mc = 2048, .kc = 512, .nc = 256,
	.kernel = ukr_8x32,
	.t8 = gemm_t8_avx2,
	.small_m = 8,
	.tile = gemm_tile_avx2,
	.rows = gemm_rows_avx2,
};
