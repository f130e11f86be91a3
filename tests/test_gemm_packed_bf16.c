/*
 * test_gemm_packed_bf16.c: linear_packed on bf16 packs (gemm_packed.h)
 * against a double-precision product of the inputs rounded to bf16 by
 * tensor.h's f32_to_bf16, rows 1 to 40 (past the 12-row tiles), columns
 * off the panel width, odd K, on one thread and two; a row alone has the
 * bits it has in a batch; bf16 packs leave f32 packs' bits alone; the
 * rounding really happens; and the refusal where there is no bf16.
 *
 * Bound: a product of two bf16 is exact in float, so an entry is a float
 * sum of K exact products (vdpbf16ps rounds after each) plus the bias: K
 * + 1 roundings of relative error u = 2^-24, |err| <= gamma(K + 1) (sum_k
 * |x_ik w_jk| + |b_j|) (Higham, Accuracy and Stability, 3.1), x and w
 * rounded, all in [-1, 1], far from the bf16 denormals.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/errmsg.h"
#include "kernels/gemm_packed.h"
#include "kernels/kernels.h"
#include "kerntest.h"
#include "run_suite.h"
#include "stream/tensor.h"

static int have_bf16(void)
{
	return kern_isa() == ISA_AVX512 &&
	       __builtin_cpu_supports("avx512bf16");
}

static double bf(float x)
{
	return bf16_to_f32(f32_to_bf16(x));
}

static void one_case(int M, int N, int K, int with_b, int relu)
{
	float *W = kt_rand((size_t)N * K, -1, 1);
	float *x = kt_rand((size_t)M * K + 1, -1, 1);
	float *b = with_b ? kt_rand(N, -1, 1) : NULL;
	float *y = kt_rand((size_t)M * N, -1, 1);
	float *yf = kt_zeros((size_t)M * N), *yf2 = kt_zeros((size_t)M * N);
	float *row = kt_zeros(N);
	double *want = kt_dzeros((size_t)M * N);
	double *tol = kt_dzeros((size_t)M * N);
	double g = (K + 1) * KT_U / (1 - (K + 1) * KT_U);
	struct wpack w, wf;
	char what[96];

	snprintf(what, sizeof(what), "bf16 linear_packed M=%d N=%d K=%d b=%d "
		 "relu=%d", M, N, K, with_b, relu);
	ck_assert_int_eq(wpack_init(&wf, W, N, K, WPACK_F32), 0);
	ck_assert_int_eq(linear_packed(yf, x, M, &wf, b, relu), 0);
	ck_assert_int_eq(wpack_init(&w, W, N, K, WPACK_BF16), 0);
	ck_assert_int_eq(linear_packed(y, x, M, &w, b, relu), 0);
	for (int i = 0; i < M; i++)
		for (int j = 0; j < N; j++) {
			double s = b ? b[j] : 0, m = b ? fabs(b[j]) : 0;
			for (int k = 0; k < K; k++) {
				double p = bf(x[i * K + k]) * bf(W[j * K + k]);
				s += p;
				m += fabs(p);
			}
			want[i * N + j] = relu && s < 0 ? 0 : s;
			tol[i * N + j] = g * m;
		}
	kt_check(what, y, want, tol, 0, (size_t)M * N);
	/* every row alone, at its place and at the start */
	for (int i = 0; i < M; i++) {
		ck_assert_int_eq(linear_packed(row, x + (size_t)i * K, 1, &w, b,
					       relu), 0);
		ck_assert_msg(memcmp(row, y + (size_t)i * N,
				     sizeof(float) * N) == 0,
			      "%s: row %d alone has other bits", what, i);
	}
	/* the last rows as a batch of their own */
	int i0 = kt_int(0, M - 1);
	float *tail = kt_zeros((size_t)(M - i0) * N);
	ck_assert_int_eq(linear_packed(tail, x + (size_t)i0 * K, M - i0, &w, b,
				       relu), 0);
	ck_assert_msg(memcmp(tail, y + (size_t)i0 * N,
			     sizeof(float) * (M - i0) * N) == 0,
		      "%s: rows from %d as a batch have other bits", what, i0);
	/* an f32 pack of the same W: its bits as before */
	ck_assert_int_eq(linear_packed(yf2, x, M, &wf, b, relu), 0);
	ck_assert_msg(memcmp(yf, yf2, sizeof(float) * M * N) == 0,
		      "%s: f32 pack changed", what);
	wpack_free(&w);
	wpack_free(&wf);
	free(W);
	free(x);
	free(b);
	free(y);
	free(yf);
	free(yf2);
	free(row);
	free(tail);
	free(want);
	free(tol);
}

START_TEST(test_shapes)
{
	static const int ns[] = { 1, 31, 33, 100, 300 };
	static const int ks[] = { 1, 2, 13, 300, 517, 1101 };

	kt_seed(11);
	for (int t = 1; t <= 2; t++) {
		kern_set_threads(t);
		for (int M = 1; M <= 40; M++)
			one_case(M, ns[kt_int(0, 4)], ks[kt_int(0, 5)],
				 kt_int(0, 1), kt_int(0, 1));
		one_case(40, 300, 517, 1, 1);
	}
}
END_TEST

/* 1 + 2^-9 is 1 in bf16: in x (then in W, the other 1), a sum of K
 * products is K, where an f32 pack gives K (1 + 2^-9). */
START_TEST(test_really_rounds)
{
	enum { M = 3, N = 5, K = 64 };
	float x[M * K], W[N * K], y[M * N];
	struct wpack w;

	for (int in_w = 0; in_w < 2; in_w++) {
		for (int i = 0; i < M * K; i++)
			x[i] = in_w ? 1 : 1 + 0x1p-9f;
		for (int i = 0; i < N * K; i++)
			W[i] = in_w ? 1 + 0x1p-9f : 1;
		for (int pack = WPACK_F32; pack <= WPACK_BF16; pack++) {
			ck_assert_int_eq(wpack_init(&w, W, N, K, pack), 0);
			ck_assert_int_eq(linear_packed(y, x, M, &w, NULL, 0),
					 0);
			for (int i = 0; i < M * N; i++)
				ck_assert_float_eq(y[i], pack == WPACK_BF16 ?
						   K : K * (1 + 0x1p-9f));
			wpack_free(&w);
		}
	}
}
END_TEST

/* Below the AVX-512 set, or on a CPU without AVX512_BF16: -1, a
 * message, no pack. */
START_TEST(test_refused)
{
	int isa[3], n = kt_isas(isa);
	float W[6] = { 1, 2, 3, 4, 5, 6 };
	struct wpack w;

	for (int i = 0; i < n; i++) {
		kern_set_isa(isa[i]);
		err_clear();
		int ok = have_bf16();
		ck_assert_int_eq(wpack_bf16_check(), ok ? 0 : -1);
		ck_assert_int_eq(wpack_init(&w, W, 2, 3, WPACK_BF16),
				 ok ? 0 : -1);
		if (ok) {
			ck_assert_ptr_nonnull(w.pb);
			wpack_free(&w);
		} else {
			ck_assert_ptr_null(w.pb);
			ck_assert_ptr_nonnull(strstr(err_msg(), "AVX512_BF16"));
		}
	}
	kern_set_isa(isa[n - 1]);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("gemm_packed_bf16");
	TCase *tc = tcase_create("linear_packed_bf16");
	int have;

	kern_set_isa(ISA_AVX512);
	have = have_bf16();
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_refused);
	if (have) {	/* else only the refusal can be tested */
		tcase_add_test(tc, test_shapes);
		tcase_add_test(tc, test_really_rounds);
	}
	suite_add_tcase(s, tc);
	return run_suite(s);
}
