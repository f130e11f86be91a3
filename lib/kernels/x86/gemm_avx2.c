/*
 * gemm_avx2.c: the AVX2+FMA pieces of sgemm (gemm.c): a 6x16 register-
 * blocked micro-kernel (12 accumulators of 8, two loads of B and six
 * broadcasts of A per step of k), and the small-M kernels that stream B:
 * the tile (across i), rows and cols (across j, B stored [K, N] and
 * [N, K]).
 */
#include <immintrin.h>
#include <string.h>

#include "kernels/kern_impl.h"
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
	.cols = gemm_cols_avx2,
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
	const int nr = R / V;	/* outside the loops: UBSan's check of the
				   division would hide their unroll pragmas */
	__m256 acc[R][2];
	__m256i m[2] = { mask256(ny < 8 ? ny : 8),
			 mask256(ny < 8 ? 0 : ny - 8) };

#pragma GCC unroll 8
	for (int r = 0; r < nr; r++)
		acc[r][0] = acc[r][1] = _mm256_setzero_ps();
	for (long k = 0; k < kc; k++) {
		const float *yk = y + k * ys;
		__m256 yv[2];
		for (int v = 0; v < V; v++)
			yv[v] = full ? _mm256_loadu_ps(yk + 8 * v) :
				_mm256_maskload_ps(yk + 8 * v, m[v]);
#pragma GCC unroll 8
		for (int r = 0; r < nr; r++) {
			__m256 xb = _mm256_broadcast_ss(x[r] + k);
			for (int v = 0; v < V; v++)
				acc[r][v] = _mm256_fmadd_ps(xb, yv[v], acc[r][v]);
		}
	}
	/* out of the registers by constant indices only (a variable one
	 * would keep acc in memory through the loop above) */
	float t[R][16] __attribute__((aligned(32)));
#pragma GCC unroll 8
	for (int r = 0; r < nr; r++)
		for (int v = 0; v < V; v++)
			_mm256_store_ps(t[r] + 8 * v, acc[r][v]);
	for (int r = 0; r < nx && r < nr; r++)
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

/*
 * Four steps of k of eight rows of B (at p, row stride ldb), transposed:
 * out[q] holds the entries at k + q of rows 0..7.  Rows c and c + 4 are
 * loaded into the two halves of one register, so that the transpose needs
 * no lane crossing: two unpacks and two shuffles per output.
 */
static inline __attribute__((always_inline)) void
cols_t4(const float *p, long ldb, __m256 out[4])
{
	__m256 u[4];

#pragma GCC unroll 4
	for (int c = 0; c < 4; c++)
		u[c] = _mm256_loadu2_m128(p + (c + 4) * ldb, p + c * ldb);
	__m256 t0 = _mm256_unpacklo_ps(u[0], u[1]);
	__m256 t1 = _mm256_unpackhi_ps(u[0], u[1]);
	__m256 t2 = _mm256_unpacklo_ps(u[2], u[3]);
	__m256 t3 = _mm256_unpackhi_ps(u[2], u[3]);
	out[0] = _mm256_shuffle_ps(t0, t2, 0x44);
	out[1] = _mm256_shuffle_ps(t0, t2, 0xee);
	out[2] = _mm256_shuffle_ps(t1, t3, 0x44);
	out[3] = _mm256_shuffle_ps(t1, t3, 0xee);
}

/*
 * Four steps of k (k + 4 <= kc) of cols_block, on its block v of rows;
 * pf: if not 0, where to fetch a line in each of them (pf floats on).
 */
#define COLS_AHEAD 128

static inline __attribute__((always_inline)) void
cols_step(int MB, int v, const float *a, const float *b, long ldb, long k,
	  long pf, __m256 acc[][4])
{
	__m256 t[4];
	const float *p = b + 8 * v * ldb + k;

	/* one pointer per block of rows, not one per row (32 would not fit
	 * in the registers), and a's entries broadcast again for each block
	 * (16 kept from the last would not fit either) */
	__asm__("" : "+r"(p), "+r"(a));
	if (pf)
#pragma GCC unroll 8
		for (int c = 0; c < 8; c++)
			_mm_prefetch((const char *)(p + c * ldb + pf),
				     _MM_HINT_T1);
	cols_t4(p, ldb, t);
#pragma GCC unroll 4
	for (int q = 0; q < 4; q++)
#pragma GCC unroll 4
		for (int i = 0; i < MB; i++)
			acc[i][v] = _mm256_fmadd_ps(_mm256_broadcast_ss(a +
						    (k + q) * MB + i), t[q],
						    acc[i][v]);
}

/*
 * Round n of cols_block's skewed loop: block v of rows takes its k from
 * 16 (n - v) (all: every block has one), four steps of k of each block in
 * turn, so that JB chains run side by side.  The lines COLS_AHEAD floats
 * on are fetched, past the end of the rows in those of the next block
 * (next: if there is one).
 */
static inline __attribute__((always_inline)) void
cols_round(int MB, int JB, int all, const float *a, const float *b,
	   long ldb, long n, long nb, int kc, int next, __m256 acc[][4])
{
#pragma GCC unroll 4
	for (int s = 0; s < 16; s += 4)
#pragma GCC unroll 4
		for (int v = 0; v < JB; v++) {
			long kv = (n - v) * 16, pf = 0;
			if (!all && (kv < 0 || kv >= nb * 16))
				continue;
			if (s == 0 && kv + COLS_AHEAD < kc)
				pf = COLS_AHEAD;
			else if (s == 0 && next && kv + COLS_AHEAD < 2 * kc)
				pf = 8 * JB * ldb + COLS_AHEAD - kc;
			cols_step(MB, v, a, b, ldb, kv + s, pf, acc);
		}
}

/*
 * MB (constant) rows of C by 8 JB (constant) rows of B at b: acc across
 * j, one chain per row of C and block of 8 (MB JB chains, to hide the
 * FMA's latency), fed four steps of k at a time by the transpose.  Each
 * block of rows takes a whole cache line (16 steps) in turn: rows a power
 * of two apart share a few sets of L1, too few to hold a line of every
 * row.  More rows than the hardware prefetcher follows: each is fetched
 * COLS_AHEAD floats ahead.  a: op(A) packed [kc, MB].  next: whether
 * the next 8 JB rows of B exist.  C: nj columns.
 */
static inline __attribute__((always_inline)) void
cols_block(int MB, int JB, int kc, float alpha, const float *a,
	   const float *b, long ldb, int next, int nj, float *C, long ldc)
{
	__m256 acc[4][4];
	long k = 0;

#pragma GCC unroll 4
	for (int i = 0; i < MB; i++)
#pragma GCC unroll 4
		for (int v = 0; v < JB; v++)
			acc[i][v] = _mm256_setzero_ps();
	long nb = kc / 16, n = 0;
	for (; n < JB - 1; n++)
		cols_round(MB, JB, 0, a, b, ldb, n, nb, kc, next, acc);
	for (; n < nb; n++)
		cols_round(MB, JB, 1, a, b, ldb, n, nb, kc, next, acc);
	for (; n < nb + JB - 1; n++)
		cols_round(MB, JB, 0, a, b, ldb, n, nb, kc, next, acc);
	k = nb * 16;
	for (; k + 4 <= kc; k += 4)
#pragma GCC unroll 4
		for (int v = 0; v < JB; v++)
			cols_step(MB, v, a, b, ldb, k, 0, acc);
	for (; k < kc; k++)
#pragma GCC unroll 4
		for (int v = 0; v < JB; v++) {
			const float *x = b + 8 * v * ldb + k;
			__m256 bk = _mm256_setr_ps(x[0], x[ldb], x[2 * ldb],
						   x[3 * ldb], x[4 * ldb],
						   x[5 * ldb], x[6 * ldb],
						   x[7 * ldb]);
#pragma GCC unroll 4
			for (int i = 0; i < MB; i++)
				acc[i][v] = _mm256_fmadd_ps(_mm256_broadcast_ss(
						a + k * MB + i), bk, acc[i][v]);
		}
	__m256 al = _mm256_set1_ps(alpha);
#pragma GCC unroll 4
	for (int i = 0; i < MB; i++)
#pragma GCC unroll 4
		for (int v = 0; v < JB; v++) {
			float *c = C + i * ldc + 8 * v;
			long rem = nj - 8 * v;
			if (rem > 0)
				str(c, rem, _mm256_fmadd_ps(al, acc[i][v],
							    ldr(c, rem)));
		}
}

/* cols_block for MB rows (1 to 4), JB as large as the registers allow. */
static void cols_rows(int MB, int wide, int kc, float alpha, const float *a,
		      const float *b, long ldb, int next, int nj, float *C,
		      long ldc)
{
	switch (MB * 2 + wide) {
	case 3:
		cols_block(1, 4, kc, alpha, a, b, ldb, next, nj, C, ldc);
		break;
	case 5:
		cols_block(2, 2, kc, alpha, a, b, ldb, next, nj, C, ldc);
		break;
	case 7:
		cols_block(3, 2, kc, alpha, a, b, ldb, next, nj, C, ldc);
		break;
	case 9:
		cols_block(4, 2, kc, alpha, a, b, ldb, next, nj, C, ldc);
		break;
	case 2:
		cols_block(1, 1, kc, alpha, a, b, ldb, next, nj, C, ldc);
		break;
	case 4:
		cols_block(2, 1, kc, alpha, a, b, ldb, next, nj, C, ldc);
		break;
	case 6:
		cols_block(3, 1, kc, alpha, a, b, ldb, next, nj, C, ldc);
		break;
	default:
		cols_block(4, 1, kc, alpha, a, b, ldb, next, nj, C, ldc);
	}
}

/*
 * The small-M kernel for B stored [N, K] (kern_impl.h), vectorised across
 * j: blocks of up to 4 rows of C (op(A) packed into acc), each over wide
 * blocks of rows of B, then blocks of 8, then the last few rows copied
 * into acc as a block of 8 (rows past N: zeros, not stored).
 */
void gemm_cols_avx2(int M, int N, int kc, float alpha, const float *A,
		    long ars, long acs, const float *B, long ldb, float *C,
		    long ldc, float *acc)
{
	float *e = acc + (size_t)4 * kc;

	for (int i0 = 0; i0 < M; i0 += 4) {
		int mb = M - i0 < 4 ? M - i0 : 4;
		int jw = mb == 1 ? 32 : 16, j0 = 0;
		float *c = C + (long)i0 * ldc;
		for (int k = 0; k < kc; k++)
			for (int i = 0; i < mb; i++)
				acc[k * mb + i] = A[(i0 + i) * ars + k * acs];
		for (; j0 + jw <= N; j0 += jw) {
			const float *b = B + j0 * ldb;
			cols_rows(mb, 1, kc, alpha, acc, b, ldb,
				  j0 + 2 * jw <= N, jw, c + j0, ldc);
		}
		for (; j0 + 8 <= N; j0 += 8)
			cols_rows(mb, 0, kc, alpha, acc, B + j0 * ldb, ldb,
				  j0 + 16 <= N, 8, c + j0, ldc);
		if (j0 == N)
			continue;
		memset(e, 0, sizeof(float) * 8 * kc);
		for (int j = j0; j < N; j++)
			memcpy(e + (size_t)(j - j0) * kc, B + j * ldb,
			       sizeof(float) * kc);
		cols_rows(mb, 0, kc, alpha, acc, e, kc, 0, N - j0, c + j0, ldc);
	}
}
