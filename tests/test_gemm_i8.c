/*
 * test_gemm_i8.c: the int8 products of gemm_packed.h.  quant_rows_i8 by
 * hand and within its bound; linear_packed on int8 packs, on every
 * instruction set this machine has (reference loops, AVX2's vpmaddwd,
 * AVX512_VNNI's vpdpbusd), one thread and two, rows 1 to 40, columns off
 * the panel width, K off the quads: every entry has the bits of the
 * definition computed here (the exact integer sum, then fma((float)acc,
 * sx ws, b)), so all instruction sets agree bit for bit and a row alone
 * has the bits it has in a batch; and the entry is within the derived
 * bound of the double product of x and the dequantised W:
 *
 *   x_k = sx qx_k + e_k, |e_k| <= sx (1/2 + 2^-16)  (the rounding to an
 *   integer, and x_k 127 / max computed in float: < 2^-16 of a step),
 *   so |sum_k x_k w_k - sx ws acc| <= sx (1/2 + 2^-16) sum_k |w_k|;
 *   then (float)acc, sx ws and the fma round: 3 u (|sx ws acc| + |b|),
 *   and sx itself (max / 127) and the pack's ws are what the kernels use.
 *
 * And the extremes that would saturate vpmaddubsw (x and w at +-127 over
 * long rows) give the exact sums.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/errmsg.h"
#include "kernels/gemm_packed.h"
#include "kernels/kern_impl.h"
#include "kernels/kernels.h"
#include "kerntest.h"
#include "run_suite.h"

START_TEST(test_quant_by_hand)
{
	/* max 1: steps of 1/127; 0.5 is 63.5 steps, to even 64 */
	const float x[3][4] = { { 0.5f, -1, 0.25f, 0 }, { 0, 0, 0, 0 },
				{ 1, NAN, 2, 3 } };
	const int8_t want[4] = { 64, -127, 32, 0 };
	int8_t q[12];
	float s[3];

	quant_rows_i8(q, s, &x[0][0], 3, 4, 4);
	ck_assert_mem_eq(q, want, 4);
	ck_assert_float_eq(s[0], 1.0f / 127);
	for (int k = 4; k < 12; k++)
		ck_assert_int_eq(q[k], 0);
	ck_assert_float_eq(s[1], 0);
	ck_assert(isnan(s[2]));
}
END_TEST

START_TEST(test_quant_bound)
{
	enum { R = 50, K = 301 };
	float *x, s[R];
	int8_t q[R * K];

	kt_seed(3);
	x = kt_rand((size_t)R * K, -3, 3);
	for (int i = 0; i < R; i++)	/* rows of many magnitudes */
		for (int k = 0; k < K; k++)
			x[i * K + k] *= ldexpf(1, i - 25);
	quant_rows_i8(q, s, x, R, K, K);
	for (int i = 0; i < R; i++) {
		float amax = 0;
		int top = 0;
		for (int k = 0; k < K; k++)
			amax = fmaxf(amax, fabsf(x[i * K + k]));
		ck_assert_float_eq(s[i], amax / 127);
		for (int k = 0; k < K; k++) {
			double e = fabs(x[i * K + k] - (double)s[i] *
					q[i * K + k]);
			ck_assert_msg(e <= s[i] * (0.5 + 0x1p-16),
				      "row %d k %d: error %g of step %g", i, k,
				      e, s[i]);
			ck_assert(q[i * K + k] >= -127);
			top |= abs(q[i * K + k]) == 127;
		}
		ck_assert(top);
	}
	free(x);
}
END_TEST

/* The definition: quantised x, exact sums, the one float sequence. */
static void definition(float *y, const float *x, int M, const int8_t *wq,
		       const float *ws, int N, int K, const float *b,
		       int relu)
{
	int8_t *xq = malloc((size_t)M * K + 1);
	float *sx = malloc(sizeof(float) * M);

	quant_rows_i8(xq, sx, x, M, K, K);
	for (int i = 0; i < M; i++)
		for (int j = 0; j < N; j++) {
			long long acc = 0;
			for (int k = 0; k < K; k++)
				acc += xq[(size_t)i * K + k] *
				       wq[(size_t)j * K + k];
			float s = sx[i] * ws[j];
			float v = b ? fmaf((float)acc, s, b[j])
				    : (float)acc * s;
			y[(size_t)i * N + j] = relu && !(v > 0) ? 0 : v;
		}
	free(xq);
	free(sx);
}

/* linear_packed on w: within tol of dw, the bits of want; a row alone
 * and the last rows as a batch too. */
static void check_bits(const char *what, const struct wpack *w,
		       const float *x, int M, const float *b, int relu,
		       float *y, const float *want, float *row,
		       const double *dw, const double *tol)
{
	int N = w->N, K = w->K;

	ck_assert_int_eq(linear_packed(y, x, M, w, b, relu), 0);
	kt_check(what, y, dw, tol, 0, (size_t)M * N);
	for (size_t i = 0; i < (size_t)M * N; i++)
		ck_assert_msg(memcmp(&y[i], &want[i], 4) == 0,
			      "%s: entry %zu is %a, the definition %a", what,
			      i, y[i], want[i]);
	int i0 = kt_int(0, M - 1);
	ck_assert_int_eq(linear_packed(row, x + (size_t)i0 * K, 1, w, b,
				       relu), 0);
	ck_assert_msg(memcmp(row, want + (size_t)i0 * N,
			     sizeof(float) * N) == 0,
		      "%s: row %d alone has other bits", what, i0);
	ck_assert_int_eq(linear_packed(y, x + (size_t)i0 * K, M - i0, w, b,
				       relu), 0);
	ck_assert_msg(memcmp(y, want + (size_t)i0 * N,
			     sizeof(float) * (M - i0) * N) == 0,
		      "%s: rows from %d have other bits", what, i0);
}

static void one_case(int M, int N, int K, int with_b, int relu)
{
	int isa[3], nisa = kt_isas(isa);
	float *W = kt_rand((size_t)N * K, -1, 1);
	float *x = kt_rand((size_t)M * K + 1, -2, 2);
	float *b = with_b ? kt_rand(N, -1, 1) : NULL;
	float *y = kt_zeros((size_t)M * N), *want = kt_zeros((size_t)M * N);
	float *row = kt_zeros(N), *sx = kt_zeros(M);
	int8_t *xq = malloc((size_t)M * K + 1);
	double *dw = kt_dzeros((size_t)M * N), *tol = kt_dzeros((size_t)M * N);
	struct wpack w;
	char what[96];

	quant_rows_i8(xq, sx, x, M, K, K);
	for (int v = 0; v < nisa; v++) {
		kern_set_isa(isa[v]);
		snprintf(what, sizeof(what), "int8 %s M=%d N=%d K=%d b=%d "
			 "relu=%d", kern_isa_name(), M, N, K, with_b, relu);
		ck_assert_int_eq(wpack_init(&w, W, N, K, WPACK_I8), 0);
		ck_assert(isa[v] == ISA_REFERENCE ? w.pq == NULL
						  : w.pq != NULL);
		if (v == 0) {
			definition(want, x, M, w.wq, w.ws, N, K, b, relu);
			for (int i = 0; i < M; i++)
				for (int j = 0; j < N; j++) {
					double s = b ? b[j] : 0, sw = 0;
					for (int k = 0; k < K; k++) {
						double wd = (double)w.wq[
							(size_t)j * K + k] *
							w.ws[j];
						s += x[i * K + k] * wd;
						sw += fabs(wd);
					}
					size_t at = (size_t)i * N + j;
					dw[at] = relu && s < 0 ? 0 : s;
					tol[at] = sx[i] * (0.5 + 0x1p-16) *
						  sw + 3 * KT_U *
						  (fabs(want[at]) +
						   (b ? 2 * fabs(b[j]) : 0));
				}
		}
		check_bits(what, &w, x, M, b, relu, y, want, row, dw, tol);
		if (isa[v] == ISA_REFERENCE) {
			wpack_free(&w);
			continue;
		}
		/* every int8 kernel of this CPU on the same pack */
		const struct gemm_i8 *k[KERN_I8_MAX];
		const char *kname[KERN_I8_MAX];
		int nk = kern_i8_all(k, kname);
		for (int u = 0; u < nk; u++) {
			w.i8 = k[u];
			snprintf(what, sizeof(what), "int8 %s M=%d N=%d K=%d "
				 "b=%d relu=%d", kname[u], M, N, K, with_b,
				 relu);
			check_bits(what, &w, x, M, b, relu, y, want, row, dw,
				   tol);
		}
		wpack_free(&w);
	}
	free(W);
	free(x);
	free(b);
	free(y);
	free(want);
	free(row);
	free(sx);
	free(xq);
	free(dw);
	free(tol);
}

START_TEST(test_shapes)
{
	static const int ns[] = { 1, 7, 31, 33, 100, 300 };
	static const int ks[] = { 1, 2, 3, 13, 300, 517, 1101 };

	kt_seed(17);
	for (int t = 1; t <= 2; t++) {
		kern_set_threads(t);
		for (int M = 1; M <= 40; M++)
			one_case(M, ns[kt_int(0, 5)], ks[kt_int(0, 6)],
				 kt_int(0, 1), kt_int(0, 1));
		one_case(40, 300, 517, 1, 1);
	}
}
END_TEST

/* x and W at +-1 (+-127 quantised) over K = 4096: every pair of products
 * 2 127 127, past int16, the sums exact: y = K (or -K) within the float
 * roundings of the scales. */
START_TEST(test_extremes)
{
	enum { M = 3, N = 40, K = 4096 };
	int isa[3], nisa = kt_isas(isa);
	float *x = kt_zeros(M * K), *W = kt_zeros(N * K), y[M * N];
	struct wpack w;

	for (int i = 0; i < M * K; i++)
		x[i] = i / K == 1 ? -1 : 1;
	for (int i = 0; i < N * K; i++)
		W[i] = i / K % 2 ? -1 : 1;
	const struct gemm_i8 *k[KERN_I8_MAX];
	const char *kname[KERN_I8_MAX];
	int nk = kern_i8_all(k, kname);

	for (int v = 0; v < nisa + nk; v++) {
		kern_set_isa(v < nisa ? isa[v] : isa[nisa - 1]);
		ck_assert_int_eq(wpack_init(&w, W, N, K, WPACK_I8), 0);
		if (v >= nisa)
			w.i8 = k[v - nisa];
		const char *what = v < nisa ? kern_isa_name() : kname[v - nisa];
		ck_assert_int_eq(linear_packed(y, x, M, &w, NULL, 0), 0);
		for (int i = 0; i < M; i++)
			for (int j = 0; j < N; j++) {
				double want = (i == 1 ? -1 : 1) *
					      (j % 2 ? -1 : 1) * (double)K;
				ck_assert_msg(fabs(y[i * N + j] - want) <=
					      4 * KT_U * K, "%s: [%d, %d] "
					      "%g, not %g", what, i, j,
					      y[i * N + j], want);
			}
		wpack_free(&w);
	}
	free(x);
	free(W);
}
END_TEST

START_TEST(test_refused)
{
	float W[4] = { 0 };
	struct wpack w;

	err_clear();
	ck_assert_int_eq(wpack_init_i8(&w, (const int8_t *)W, (const float *)W,
				       1, WPACK_I8_KMAX + 1), -1);
	ck_assert_ptr_nonnull(strstr(err_msg(), "int32"));
	ck_assert_ptr_null(w.pq);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("gemm_i8");
	TCase *tc = tcase_create("gemm_i8");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_quant_by_hand);
	tcase_add_test(tc, test_quant_bound);
	tcase_add_test(tc, test_shapes);
	tcase_add_test(tc, test_extremes);
	tcase_add_test(tc, test_refused);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
