/*
 * gemm_avx2.c: the AVX2+FMA pieces of sgemm (gemm.c): a 6x16 register-
 * blocked micro-kernel (12 accumulators of 8, two loads of B and six
 * broadcasts of A per step of k), and the small-M tile that streams B.
 */
#include <immintrin.h>
#include <string.h>

#include "kern_impl.h"
#include "vmath_avx2.h"

#define MR 6
#define NR 16

static void ukr_6x16(int kc, float alpha, const float *A, const float *B,
		     float *C, long ldc)
{
	__m256 c[MR][2];

#pragma GCC unroll 6
	for (int r = 0; r < MR; r++) {
		c[r][0] = c[r][1] = _mm256_setzero_ps();
		/* C is wanted only after the loop, but it may be far (a
		 * large C is in L3 or memory): fetch it now, both lines a
		 * row may touch, instead of waiting for it then */
		_mm_prefetch((const char *)(C + r * ldc), _MM_HINT_T0);
		_mm_prefetch((const char *)(C + r * ldc + NR - 1), _MM_HINT_T0);
	}
#pragma GCC unroll 4
	for (int p = 0; p < kc; p++) {
		__m256 b0 = _mm256_loadu_ps(B), b1 = _mm256_loadu_ps(B + 8);
#pragma GCC unroll 6
		for (int r = 0; r < MR; r++) {
			__m256 a = _mm256_broadcast_ss(A + r);
			c[r][0] = _mm256_fmadd_ps(a, b0, c[r][0]);
			c[r][1] = _mm256_fmadd_ps(a, b1, c[r][1]);
		}
		A += MR;
		B += NR;
	}
	__m256 al = _mm256_set1_ps(alpha);
#pragma GCC unroll 6
	for (int r = 0; r < MR; r++) {
		float *cr = C + r * ldc;
		_mm256_storeu_ps(cr, _mm256_fmadd_ps(al, c[r][0], _mm256_loadu_ps(cr)));
		_mm256_storeu_ps(cr + 8, _mm256_fmadd_ps(al, c[r][1],
							 _mm256_loadu_ps(cr + 8)));
	}
}

/* The 8 x 8 transpose of packing (kern_impl.h): unpacks, then shuffles,
 * then 128-bit lane permutes, all in registers. */
void gemm_t8_avx2(const float *const rows[8], long p, float *out, long os)
{
	__m256 r0 = _mm256_loadu_ps(rows[0] + p), r1 = _mm256_loadu_ps(rows[1] + p);
	__m256 r2 = _mm256_loadu_ps(rows[2] + p), r3 = _mm256_loadu_ps(rows[3] + p);
	__m256 r4 = _mm256_loadu_ps(rows[4] + p), r5 = _mm256_loadu_ps(rows[5] + p);
	__m256 r6 = _mm256_loadu_ps(rows[6] + p), r7 = _mm256_loadu_ps(rows[7] + p);
	__m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1);
	__m256 t2 = _mm256_unpacklo_ps(r2, r3), t3 = _mm256_unpackhi_ps(r2, r3);
	__m256 t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5);
	__m256 t6 = _mm256_unpacklo_ps(r6, r7), t7 = _mm256_unpackhi_ps(r6, r7);
	r0 = _mm256_shuffle_ps(t0, t2, 0x44);
	r1 = _mm256_shuffle_ps(t0, t2, 0xee);
	r2 = _mm256_shuffle_ps(t1, t3, 0x44);
	r3 = _mm256_shuffle_ps(t1, t3, 0xee);
	r4 = _mm256_shuffle_ps(t4, t6, 0x44);
	r5 = _mm256_shuffle_ps(t4, t6, 0xee);
	r6 = _mm256_shuffle_ps(t5, t7, 0x44);
	r7 = _mm256_shuffle_ps(t5, t7, 0xee);
	_mm256_storeu_ps(out, _mm256_permute2f128_ps(r0, r4, 0x20));
	_mm256_storeu_ps(out + os, _mm256_permute2f128_ps(r1, r5, 0x20));
	_mm256_storeu_ps(out + 2 * os, _mm256_permute2f128_ps(r2, r6, 0x20));
	_mm256_storeu_ps(out + 3 * os, _mm256_permute2f128_ps(r3, r7, 0x20));
	_mm256_storeu_ps(out + 4 * os, _mm256_permute2f128_ps(r0, r4, 0x31));
	_mm256_storeu_ps(out + 5 * os, _mm256_permute2f128_ps(r1, r5, 0x31));
	_mm256_storeu_ps(out + 6 * os, _mm256_permute2f128_ps(r2, r6, 0x31));
	_mm256_storeu_ps(out + 7 * os, _mm256_permute2f128_ps(r3, r7, 0x31));
}

/* KC: K of the models (512) in one pass over C; an A strip of 6 x 512
 * (12 KB) in L1; NC: a B panel of 512 x 256 (512 KB) in L2; MC: the A
 * block (4 MB) in L3. */
const struct gemm_ukr gemm_ukr_avx2 = {
	.mr = MR, .nr = NR, .mc = 2046, .kc = 512, .nc = 256,
	.kernel = ukr_6x16,
	.t8 = gemm_t8_avx2,
	.small_m = 16,
	.tile = gemm_tile_avx2,
	.rows = gemm_rows_avx2,
};

/*
 * The small-M tile (kern_impl.h): V vectors of y times 8 / V rows of x
 * broadcast (eight independent chains of FMAs, enough to hide their
 * latency), accumulated along k in registers; full (ny == 8 V) a constant
 * at each call, so that the loop has no test for the masks.  Beyond 16
 * rows of C (small_m), eight chains at two FMAs a cycle are too few to
 * beat packing B.
 */
static inline __attribute__((always_inline)) void
tile(int V, int full, int kc, float alpha, const float *const x[], int nx,
     const float *y, long ys, int ny, float *C, long ldc)
{
	enum { R = 8 };
	__m256 acc[R][2];
	__m256i m[2] = { mask256(ny < 8 ? ny : 8),
			 mask256(ny < 8 ? 0 : ny - 8) };

#pragma GCC unroll 8
	for (int r = 0; r < R / V; r++)
		acc[r][0] = acc[r][1] = _mm256_setzero_ps();
	for (long k = 0; k < kc; k++) {
		const float *yk = y + k * ys;
		__m256 yv[2];
		for (int v = 0; v < V; v++)
			yv[v] = full ? _mm256_loadu_ps(yk + 8 * v) :
				_mm256_maskload_ps(yk + 8 * v, m[v]);
#pragma GCC unroll 8
		for (int r = 0; r < R / V; r++) {
			__m256 xb = _mm256_broadcast_ss(x[r] + k);
			for (int v = 0; v < V; v++)
				acc[r][v] = _mm256_fmadd_ps(xb, yv[v], acc[r][v]);
		}
	}
	/* out of the registers by constant indices only (a variable one
	 * would keep acc in memory through the loop above) */
	float t[R][16] __attribute__((aligned(32)));
#pragma GCC unroll 8
	for (int r = 0; r < R / V; r++)
		for (int v = 0; v < V; v++)
			_mm256_store_ps(t[r] + 8 * v, acc[r][v]);
	for (int r = 0; r < nx && r < R / V; r++)
		for (int l = 0; l < ny; l++)
			C[l * ldc + r] = __builtin_fmaf(alpha, t[r][l],
							C[l * ldc + r]);
}

void gemm_tile_avx2(int kc, float alpha, const float *const x[],
		    int nx, const float *y, long ys, int ny, float *C, long ldc)
{
	if (ny <= 8) {
		if (ny == 8)
			tile(1, 1, kc, alpha, x, nx, y, ys, ny, C, ldc);
		else
			tile(1, 0, kc, alpha, x, nx, y, ys, ny, C, ldc);
		return;
	}
	for (int r = 0; r < nx; r += 4)
		if (ny == 16)
			tile(2, 1, kc, alpha, x + r, nx - r, y, ys, ny, C + r, ldc);
		else
			tile(2, 0, kc, alpha, x + r, nx - r, y, ys, ny, C + r, ldc);
}

/*
 * The small-M kernel for B stored [K, N] (kern_impl.h): rows of B scaled
 * by entries of A and added into acc, GEMM_NB columns at a time, four rows
 * of B per pass over acc; acc stays in L1 while B streams along its rows
 * (a tile would walk down columns of B, a page per row).
 */
void gemm_rows_avx2(int M, int N, int kc, float alpha, const float *A,
		    long ars, long acs, const float *B, long ldb, float *C,
		    long ldc, float *acc)
{
	for (int j0 = 0; j0 < N; j0 += GEMM_NB) {
		long nb = N - j0 < GEMM_NB ? N - j0 : GEMM_NB;
		memset(acc, 0, sizeof(float) * M * GEMM_NB);
		int k = 0;
		for (; k + 4 <= kc; k += 4) {
			const float *b = B + k * ldb + j0;
			for (int i = 0; i < M; i++) {
				const float *a = A + i * ars + k * acs;
				__m256 w0 = _mm256_set1_ps(a[0]);
				__m256 w1 = _mm256_set1_ps(a[acs]);
				__m256 w2 = _mm256_set1_ps(a[2 * acs]);
				__m256 w3 = _mm256_set1_ps(a[3 * acs]);
				float *c = acc + i * GEMM_NB;
				FOR_LANES(j, nb, rem) {
					__m256 v = ldr(c + j, rem);
					v = _mm256_fmadd_ps(w0, ldr(b + j, rem), v);
					v = _mm256_fmadd_ps(w1, ldr(b + ldb + j, rem), v);
					v = _mm256_fmadd_ps(w2, ldr(b + 2 * ldb + j, rem), v);
					v = _mm256_fmadd_ps(w3, ldr(b + 3 * ldb + j, rem), v);
					str(c + j, rem, v);
				}
			}
		}
		for (; k < kc; k++)
			for (int i = 0; i < M; i++) {
				__m256 w = _mm256_set1_ps(A[i * ars + k * acs]);
				const float *b = B + k * ldb + j0;
				float *c = acc + i * GEMM_NB;
				FOR_LANES(j, nb, rem)
					str(c + j, rem, _mm256_fmadd_ps(w,
						ldr(b + j, rem), ldr(c + j, rem)));
			}
		__m256 al = _mm256_set1_ps(alpha);
		for (int i = 0; i < M; i++) {
			float *c = C + i * ldc + j0;
			const float *s = acc + i * GEMM_NB;
			FOR_LANES(j, nb, rem)
				str(c + j, rem, _mm256_fmadd_ps(al, ldr(s + j, rem),
								ldr(c + j, rem)));
		}
	}
}
