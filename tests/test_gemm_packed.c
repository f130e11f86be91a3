/*
 * test_gemm_packed.c: linear_packed against a double-precision product
 * (within Higham's bound, as test_gemm) and, bit for bit, against sgemm
 * followed by bias_forward and relu_forward, for every instruction set,
 * one and two threads, rows from 1 past the kernels' strips, columns off
 * the panel width and K past the cache block; and a row computed alone
 * has the bits it has among many.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/gemm_packed.h"
#include "kernels/kernels.h"
#include "kerntest.h"
#include "run_suite.h"

static void one_case(int M, int N, int K, int with_b, int relu)
{
	float *W = kt_rand((size_t)N * K, -1, 1);
	float *x = kt_rand((size_t)M * K + 1, -1, 1);
	float *b = with_b ? kt_rand(N, -1, 1) : NULL;
	float *y = kt_rand((size_t)M * N, -1, 1);
	float *ref = kt_zeros((size_t)M * N);
	float *row = kt_zeros(N);
	double *want = kt_dzeros((size_t)M * N), *tol = kt_dzeros((size_t)M * N);
	double g = (K + 2) * KT_U / (1 - (K + 2) * KT_U);
	struct wpack w;
	char what[96];

	snprintf(what, sizeof(what), "linear_packed M=%d N=%d K=%d b=%d relu=%d",
		 M, N, K, with_b, relu);
	ck_assert_int_eq(wpack_init(&w, W, N, K, 1), 0);
	linear_packed(y, x, M, &w, b, relu);
	for (int i = 0; i < M; i++)
		for (int j = 0; j < N; j++) {
			double s = b ? b[j] : 0, m = b ? fabs(b[j]) : 0;
			for (int k = 0; k < K; k++) {
				s += (double)x[i * K + k] * W[j * K + k];
				m += fabs((double)x[i * K + k] * W[j * K + k]);
			}
			want[i * N + j] = relu && s < 0 ? 0 : s;
			tol[i * N + j] = g * m;
		}
	kt_check(what, y, want, tol, 0, (size_t)M * N);
	sgemm(0, 1, M, N, K, 1.0f, x, K, W, K, 0.0f, ref, N);
	if (b)
		bias_forward(ref, b, M, N);
	if (relu)
		relu_forward(ref, ref, (size_t)M * N);
	ck_assert_msg(memcmp(y, ref, sizeof(float) * M * N) == 0,
		      "%s: other bits than sgemm", what);
	int i = kt_int(0, M - 1);
	linear_packed(row, x + (size_t)i * K, 1, &w, b, relu);
	ck_assert_msg(memcmp(row, y + (size_t)i * N, sizeof(float) * N) == 0,
		      "%s: row %d alone has other bits", what, i);
	wpack_free(&w);
	free(W);
	free(x);
	free(b);
	free(y);
	free(ref);
	free(row);
	free(want);
	free(tol);
}

START_TEST(test_shapes)
{
	static const int ns[] = { 1, 31, 33, 100, 300 };
	static const int ks[] = { 1, 13, 300, 517, 1100 };
	int isa[3], n = kt_isas(isa);

	kt_seed(7);
	for (int t = 1; t <= 2; t++) {
		kern_set_threads(t);
		for (int i = 0; i < n; i++) {
			kern_set_isa(isa[i]);
			for (int M = 1; M <= 26; M += kt_int(1, 3))
				one_case(M, ns[kt_int(0, 4)], ks[kt_int(0, 4)],
					 kt_int(0, 1), kt_int(0, 1));
			one_case(130, 300, 517, 1, 1);
			one_case(40, 33, 1100, 0, 0);
		}
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("gemm_packed");
	TCase *tc = tcase_create("linear_packed");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_shapes);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
