/*
 * test_gemm.c: sgemm against a double-precision product, for every
 * instruction set of the machine, the four transpositions, strides,
 * alpha/beta, and shapes from 1 up past the cache blocks.
 *
 * Bound: computed in float with any order of summation, an entry of
 * alpha op(A) op(B) + beta C is off by at most gamma(K + 2) times
 * |alpha| sum_k |a_ik||b_kj| + |beta||c_ij|, gamma(n) = n u / (1 - n u)
 * (Higham, Accuracy and Stability, 3.5); an FMA only tightens it.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "kernels.h"
#include "kerntest.h"
#include "run_suite.h"

static void one_case(int ta, int tb, int M, int N, int K, float alpha,
		     float beta)
{
	int lda = (ta ? M : K) + kt_int(0, 3);
	int ldb = (tb ? K : N) + kt_int(0, 3);
	int ldc = N + kt_int(0, 3);
	float *A = kt_rand((size_t)(ta ? K : M) * lda, -1, 1);
	float *B = kt_rand((size_t)(tb ? N : K) * ldb, -1, 1);
	float *C = kt_rand((size_t)M * ldc, -1, 1);
	double *want = kt_dzeros((size_t)M * ldc), *tol = kt_dzeros((size_t)M * ldc);
	double g = (K + 2) * KT_U / (1 - (K + 2) * KT_U);

	if (beta == 0)
		for (int i = 0; i < M * ldc; i++)
			C[i] = NAN;
	for (int i = 0; i < M; i++) {
		for (int j = 0; j < ldc; j++) {
			double s = 0, m = 0;
			for (int k = 0; k < K && j < N; k++) {
				double a = ta ? A[k * lda + i] : A[i * lda + k];
				double b = tb ? B[j * ldb + k] : B[k * ldb + j];
				s += a * b;
				m += fabs(a * b);
			}
			double c = C[i * ldc + j];
			if (j >= N) {   /* past N: untouched */
				want[i * ldc + j] = c;
				continue;
			}
			want[i * ldc + j] = alpha * s + (beta == 0 ? 0 : beta * c);
			tol[i * ldc + j] = g * (fabs(alpha) * m +
						(beta == 0 ? 0 : fabs(beta * c)));
		}
	}
	sgemm(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
	char what[96];
	snprintf(what, sizeof(what), "sgemm ta=%d tb=%d M=%d N=%d K=%d "
		 "alpha=%g beta=%g", ta, tb, M, N, K, alpha, beta);
	kt_check(what, C, want, tol, 0, (size_t)M * ldc);
	free(A);
	free(B);
	free(C);
	free(want);
	free(tol);
}

static const float alphas[] = { 1, -0.5f, 2.25f };
static const float betas[] = { 0, 1, 0.75f };

static void all_variants(int M, int N, int K)
{
	for (int ta = 0; ta < 2; ta++)
		for (int tb = 0; tb < 2; tb++)
			one_case(ta, tb, M, N, K, alphas[kt_int(0, 2)],
				 betas[kt_int(0, 2)]);
}

START_TEST(test_small_random)
{
	int isa[3], n = kt_isas(isa);
	kt_seed(1);
	for (int i = 0; i < n; i++) {
		kern_set_isa(isa[i]);
		for (int r = 0; r < 25; r++)
			all_variants(kt_int(1, 40), kt_int(1, 40),
				     kt_int(1, 40));
		all_variants(1, 1, 1);
		all_variants(1, 17, 33);
		all_variants(9, 1, 5);
	}
}
END_TEST

/* Shapes past the register and cache blocks, and decoder steps (small M
 * times a wide matrix), with one thread and with three. */
START_TEST(test_large)
{
	static const int shapes[][3] = {
		{ 129, 67, 520 }, { 300, 33, 17 }, { 47, 301, 260 },
		{ 1, 700, 300 }, { 5, 1030, 129 }, { 8, 96, 64 },
		{ 33, 1025, 31 },
	};
	int isa[3], n = kt_isas(isa);
	kt_seed(2);
	for (int t = 1; t <= 3; t += 2) {
		kern_set_threads(t);
		for (int i = 0; i < n; i++) {
			kern_set_isa(isa[i]);
			for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++)
				all_variants(shapes[s][0], shapes[s][1],
					     shapes[s][2]);
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

int main(void)
{
	Suite *s = suite_create("gemm");
	TCase *tc = tcase_create("sgemm");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_small_random);
	tcase_add_test(tc, test_large);
	tcase_add_test(tc, test_empty_k);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
