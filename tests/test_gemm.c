/*
 * test_gemm.c: sgemm against a double-precision product, for every
 * instruction set of the machine, the four transpositions, strides,
 * alpha/beta, and shapes from 1 up past the cache blocks.
 *
 * Bound: computed in float with any order of summation, an entry of
 * alpha op(A) op(B) + beta C is off by at most gamma(K + 2) times
 * |alpha| sum_k |a_ik||b_kj| + |beta||c_ij|, gamma(n) = n u / (1 - n u)
 * (Higham, Accuracy and Stability, 3.5); an FMA only tightens it.
 *
 * And batch independence: an entry of C has the same bits whether it is
 * computed with all of C, alone, or in any block of rows and columns.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/kernels.h"
#include "kerntest.h"
#include "run_suite.h"


START_TEST(test_small_random)
{
	int isa[3], n = kt_isas(isa);
	kt_seed(1);
	for (int i = 0; i < n; i++) {
		kern_set_isa(isa[i]);
		for (int r = 0; r < 25; r++)
			kt_sgemm_variants(kt_int(1, 40), kt_int(1, 40),
					  kt_int(1, 40), 0);
		kt_sgemm_variants(1, 1, 1, 0);
		kt_sgemm_variants(1, 17, 33, 0);
		kt_sgemm_variants(9, 1, 5, 0);
	}
}
END_TEST

/* Shapes past the register and cache blocks (MC 2046 and 2048, KC 512, NC
 * 256), and decoder steps (small M times a wide matrix), with one thread
 * and with three. */
START_TEST(test_large)
{
	static const int shapes[][3] = {
		{ 129, 67, 520 }, { 300, 33, 17 }, { 47, 301, 260 },
		{ 1, 700, 300 }, { 5, 1030, 129 }, { 8, 96, 64 },
		{ 33, 1025, 31 }, { 2100, 37, 9 }, { 2, 77, 36 },
		{ 3, 41, 1000 }, { 4, 100, 19 },
	};
	int isa[3], n = kt_isas(isa);
	kt_seed(2);
	for (int t = 1; t <= 3; t += 2) {
		kern_set_threads(t);
		for (int i = 0; i < n; i++) {
			kern_set_isa(isa[i]);
			for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++)
				kt_sgemm_variants(shapes[s][0], shapes[s][1],
						  shapes[s][2], 0);
		}
	}
}
END_TEST

/* K = 0 leaves beta C; beta = 0 then clears NaN. */
START_TEST(test_empty_k)
{
	int isa[3], n = kt_isas(isa);
	for (int i = 0; i < n; i++) {
		kern_set_isa(isa[i]);
		float C[6] = { 1, 2, 3, 4, 5, NAN }, A[1] = { 7 }, B[1] = { 7 };
		double want[6] = { 0.5, 1, 1.5, 2, 2.5, NAN };
		sgemm(0, 0, 2, 3, 0, 1, A, 1, B, 3, 0.5f, C, 3);
		kt_check("K=0 beta=0.5", C, want, NULL, 0, 6);
		double zero[6] = { 0 };
		sgemm(1, 1, 2, 3, 0, 1, A, 2, B, 1, 0, C, 3);
		kt_check("K=0 beta=0", C, zero, NULL, 0, 6);
	}
}
END_TEST

/* C [m, n] of the product, the block at rows i0, columns j0 of the whole
 * problem (ta, tb, lda, ldb, ldc of the whole), from c0. */
static void block_product(int ta, int tb, int i0, int m, int j0, int n, int K,
			  float alpha, const float *A, int lda, const float *B,
			  int ldb, float beta, const float *C0, float *C,
			  int ldc)
{
	const float *a = ta ? A + i0 : A + (long)i0 * lda;
	const float *b = tb ? B + (long)j0 * ldb : B + j0;

	for (int i = 0; i < m; i++)
		memcpy(C + (long)i * ldc, C0 + (long)(i0 + i) * ldc + j0,
		       sizeof(float) * n);
	sgemm(ta, tb, m, n, K, alpha, a, lda, b, ldb, beta, C, ldc);
}

static const float alphas[] = { 1, -0.5f, 2.25f };
static const float betas[] = { 0, 1, 0.75f };

static void same_bits(int ta, int tb, int M, int N, int K, float alpha,
		      float beta)
{
	int lda = ta ? M : K, ldb = tb ? K : N, ldc = N;
	float *A = kt_rand((size_t)(ta ? K : M) * lda, -1, 1);
	float *B = kt_rand((size_t)(tb ? N : K) * ldb, -1, 1);
	float *C0 = kt_rand((size_t)M * ldc, -1, 1);
	float *C = kt_zeros((size_t)M * ldc), *D = kt_zeros((size_t)M * ldc);
	char what[128];

	block_product(ta, tb, 0, M, 0, N, K, alpha, A, lda, B, ldb, beta, C0,
		      C, ldc);
	for (int r = 0; r < M + 20; r++) {
		/* each row alone, then blocks of 1 to 8 rows (the few-row
		 * kernels), then blocks of rows and columns */
		int few = r - M + 1 <= 8 ? r - M + 1 : 0;
		int i0 = r < M ? r : kt_int(0, M - (few ? few : 1));
		int m = r < M ? 1 : few ? few : kt_int(1, M - i0);
		int j0 = r < M ? 0 : kt_int(0, N - 1);
		int n = r < M ? N : kt_int(1, N - j0);
		block_product(ta, tb, i0, m, j0, n, K, alpha, A, lda, B, ldb,
			      beta, C0, D, ldc);
		for (int i = 0; i < m; i++) {
			snprintf(what, sizeof(what), "%s: ta=%d tb=%d M=%d "
				 "N=%d K=%d, rows %d+%d cols %d+%d, row %d",
				 kern_isa_name(), ta, tb, M, N, K, i0, m, j0, n,
				 i0 + i);
			ck_assert_msg(memcmp(D + (long)i * ldc,
					     C + (long)(i0 + i) * ldc + j0,
					     sizeof(float) * n) == 0,
				      "%s: other bits than all at once", what);
		}
	}
	free(A);
	free(B);
	free(C0);
	free(C);
	free(D);
}

/* Ks past the cache block (KC 512) and off the vector width and a cache
 * line (16); Ns past the few-row kernels' blocks of rows of B (up to 64)
 * and off them; the shapes are large enough to be split over two threads;
 * and rows past MC. */
START_TEST(test_batch_independent)
{
	static const int ks[] = { 1, 13, 100, 301, 517 };
	int isa[3], n = kt_isas(isa);
	kt_seed(3);
	for (int t = 1; t <= 2; t++) {
		kern_set_threads(t);
		for (int i = 0; i < n; i++) {
			kern_set_isa(isa[i]);
			for (size_t k = 0; k < sizeof(ks) / sizeof(ks[0]); k++)
				for (int ta = 0; ta < 2; ta++)
					for (int tb = 0; tb < 2; tb++)
						same_bits(ta, tb, kt_int(20, 40),
							  kt_int(30, 110), ks[k],
							  alphas[kt_int(0, 2)],
							  betas[kt_int(0, 2)]);
			same_bits(0, 1, 2100, 35, 21, 1, 0);
		}
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("gemm");
	TCase *tc = tcase_create("sgemm");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_small_random);
	tcase_add_test(tc, test_large);
	tcase_add_test(tc, test_empty_k);
	tcase_add_test(tc, test_batch_independent);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
