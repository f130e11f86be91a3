/*
 * gemm_avx2.c: the AVX2+FMA pieces of sgemm (gemm.c): a 6x16 register-
 * blocked micro-kernel (12 accumulators of 8, two loads of B and six
 * broadcasts of A per step of k), and the small-M kernels that stream B.
 */
#include <immintrin.h>

#include "kern_impl.h"
#include "vmath_avx2.h"

#define MR 6
#define NR 16

static void ukr_6x16(int kc, float alpha, const float *A, const float *B,
		     float *C, long ldc)
{
	__m256 c[MR][2];

#pragma GCC unroll 6
	for (int r = 0; r < MR; r++)
		c[r][0] = c[r][1] = _mm256_setzero_ps();
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

/* MC: an A panel of 144 x 256 (144 KB) stays in L2; KC: a B sliver of
 * 256 x 16 (16 KB) in L1; NC: the B panel (4 MB) in L3. */
const struct gemm_ukr gemm_ukr_avx2 = {
	.mr = MR, .nr = NR, .mc = 144, .kc = 256, .nc = 4096,
	.kernel = ukr_6x16,
	.t8 = gemm_t8_avx2,
};

static float hsum(__m256 v)
{
	__m128 s = _mm_add_ps(_mm256_castps256_ps128(v),
			      _mm256_extractf128_ps(v, 1));
	s = _mm_add_ps(s, _mm_movehl_ps(s, s));
	s = _mm_add_ss(s, _mm_movehdup_ps(s));
	return _mm_cvtss_f32(s);
}

/*
 * C [M, N] += alpha A B^T, B [N, K]: dot products along K, four rows of A
 * by three rows of B at a time, so that each row of B is read from memory
 * once per four rows of A.
 */
#define RA 4
#define RB 3
void gemm_small_nt_avx2(int M, int N, int K, float alpha, const float *A,
			long lda, const float *B, long ldb, float *C, long ldc)
{
	for (int i0 = 0; i0 < M; i0 += RA) {
		int ra = M - i0 < RA ? M - i0 : RA;
		const float *a[RA];
		for (int r = 0; r < RA; r++)
			a[r] = A + (i0 + (r < ra ? r : 0)) * lda;
		for (int j0 = 0; j0 < N; j0 += RB) {
			int rb = N - j0 < RB ? N - j0 : RB;
			const float *b[RB];
			for (int s = 0; s < RB; s++)
				b[s] = B + (j0 + (s < rb ? s : 0)) * ldb;
			__m256 acc[RA][RB];
			float tail[RA][RB] = { { 0 } };
#pragma GCC unroll 4
			for (int r = 0; r < RA; r++)
#pragma GCC unroll 3
				for (int s = 0; s < RB; s++)
					acc[r][s] = _mm256_setzero_ps();
			int k = 0;
			for (; k + 8 <= K; k += 8) {
				__m256 bv[RB];
#pragma GCC unroll 3
				for (int s = 0; s < RB; s++)
					bv[s] = _mm256_loadu_ps(b[s] + k);
#pragma GCC unroll 4
				for (int r = 0; r < RA; r++) {
					__m256 av = _mm256_loadu_ps(a[r] + k);
#pragma GCC unroll 3
					for (int s = 0; s < RB; s++)
						acc[r][s] = _mm256_fmadd_ps(av, bv[s], acc[r][s]);
				}
			}
			for (; k < K; k++)
				for (int r = 0; r < RA; r++)
					for (int s = 0; s < RB; s++)
						tail[r][s] += a[r][k] * b[s][k];
			for (int r = 0; r < ra; r++)
				for (int s = 0; s < rb; s++)
					C[(i0 + r) * ldc + j0 + s] +=
						alpha * (hsum(acc[r][s]) + tail[r][s]);
		}
	}
}

/*
 * C [M, N] += alpha A B, B [K, N]: four rows of B at a time, scaled by
 * four entries of a row of A and added into that row of C, by blocks of NB
 * columns: the blocks of C (at most 8 x NB) and of the four rows of B stay
 * in L1 while B streams through once, along its rows.
 */
#define NB 512
void gemm_small_nn_avx2(int M, int N, int K, float alpha, const float *A,
			long lda, const float *B, long ldb, float *C, long ldc)
{
	for (int j0 = 0; j0 < N; j0 += NB) {
		long nb = N - j0 < NB ? N - j0 : NB;
		for (int k0 = 0; k0 < K; k0 += 4) {
			const float *b[4];
			for (int u = 0; u < 4; u++)
				b[u] = B + (k0 + u < K ? k0 + u : k0) * ldb + j0;
			for (int i = 0; i < M; i++) {
				__m256 w[4];
				for (int u = 0; u < 4; u++)
					w[u] = _mm256_set1_ps(k0 + u < K ?
						alpha * A[i * lda + k0 + u] : 0);
				float *c = C + i * ldc + j0;
				FOR_LANES(j, nb, rem) {
					__m256 v = ldr(c + j, rem);
					v = _mm256_fmadd_ps(w[0], ldr(b[0] + j, rem), v);
					v = _mm256_fmadd_ps(w[1], ldr(b[1] + j, rem), v);
					v = _mm256_fmadd_ps(w[2], ldr(b[2] + j, rem), v);
					v = _mm256_fmadd_ps(w[3], ldr(b[3] + j, rem), v);
					str(c + j, rem, v);
				}
			}
		}
	}
}
