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
 *
 * The 7-bit form (quant_rows_u7, the vpmaddubsw kernels of CPUs without
 * VNNI): its quantisation by hand and within s (1/2 + 2^-14); its kernels
 * give the bits of its own definition (the exact sum of (u - zp) wq, the
 * same float sequence), within the same bound as above with that step;
 * their integer sums alone (scales 1) equal the exact ones on rows 1 to
 * 70, odd K and columns off the tile; and the worst case of vpmaddubsw's
 * pairs, u = 127 against weights of 127 and -128 (2 127 128 = 32512 of
 * int16's 32767), and u = 0 and 127 side by side, stays exact.
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

/* The 7-bit form's definition: quant_rows_u7, exact sums of (u - zp)
 * wq, the one float sequence. */
static void definition_u7(float *y, const float *x, int M, const int8_t *wq,
			  const float *ws, int N, int K, const float *b,
			  int relu)
{
	uint8_t *u = malloc((size_t)M * K + 1);
	float *sx = malloc(sizeof(float) * M);
	int32_t *zp = malloc(sizeof(int32_t) * M);

	quant_rows_u7(u, sx, zp, x, M, K, K);
	for (int i = 0; i < M; i++)
		for (int j = 0; j < N; j++) {
			long long acc = 0;
			for (int k = 0; k < K; k++)
				acc += (u[(size_t)i * K + k] - zp[i]) *
				       wq[(size_t)j * K + k];
			float s = sx[i] * ws[j];
			float v = b ? fmaf((float)acc, s, b[j])
				    : (float)acc * s;
			y[(size_t)i * N + j] = relu && !(v > 0) ? 0 : v;
		}
	free(u);
	free(sx);
	free(zp);
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
	float *want7 = kt_zeros((size_t)M * N), *sx7 = kt_zeros(M);
	double *tol7 = kt_dzeros((size_t)M * N);
	uint8_t *u7 = malloc((size_t)M * K + 1);
	int32_t *zp7 = malloc(sizeof(int32_t) * M);
	struct wpack w;
	char what[96];

	quant_rows_i8(xq, sx, x, M, K, K);
	quant_rows_u7(u7, sx7, zp7, x, M, K, K);
	for (int v = 0; v < nisa; v++) {
		kern_set_isa(isa[v]);
		snprintf(what, sizeof(what), "int8 %s M=%d N=%d K=%d b=%d "
			 "relu=%d", kern_isa_name(), M, N, K, with_b, relu);
		ck_assert_int_eq(wpack_init(&w, W, N, K, WPACK_I8), 0);
		ck_assert(isa[v] == ISA_REFERENCE ? w.pq == NULL
						  : w.pq != NULL);
		if (v == 0) {
			definition(want, x, M, w.wq, w.ws, N, K, b, relu);
			definition_u7(want7, x, M, w.wq, w.ws, N, K, b, relu);
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
					tol7[at] = sx7[i] * (0.5 + 0x1p-14) *
						   sw + 3 * KT_U *
						   (fabs(want7[at]) +
						    (b ? 2 * fabs(b[j]) : 0));
				}
		}
		if (w.i8 && w.i8->xs_form == WPACK_XS_U7)	/* no VNNI */
			check_bits(what, &w, x, M, b, relu, y, want7, row, dw,
				   tol7);
		else
			check_bits(what, &w, x, M, b, relu, y, want, row, dw,
				   tol);
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
			if (k[u]->xs_form == WPACK_XS_U7)
				check_bits(what, &w, x, M, b, relu, y, want7,
					   row, dw, tol7);
			else
				check_bits(what, &w, x, M, b, relu, y, want,
					   row, dw, tol);
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
	free(want7);
	free(sx7);
	free(tol7);
	free(u7);
	free(zp7);
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
		/* rows of many strips, the last cut short, at a K
		 * whose strips pass L1 */
		one_case(101, 33, 4000, 1, 0);
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

START_TEST(test_quant_u7_by_hand)
{
	/* [-1, 1]: range 2, inv 63.5, zp = nearbyint(63.5) = 64; 1 gives
	 * 64 + 64 = 128, clamped to 127; -1 gives -64 + 64 = 0; 0.5 gives
	 * 31.75 -> 32, 96.  [0, 2] (one sign): zp 0, 1 -> 63.5 -> 64.
	 * [-4, 0]: zp 127, -1 -> -31.75 -> -32, 95. */
	const float x[5][4] = { { 1, -1, 0.5f, 0 }, { 0, 2, 1, 0.5f },
				{ -4, -1, 0, -2 }, { 0, 0, 0, 0 },
				{ 1, INFINITY, 2, 3 } };
	const uint8_t want[3][4] = { { 127, 0, 96, 64 }, { 0, 127, 64, 32 },
				     { 0, 95, 127, 63 } };
	const int32_t wzp[3] = { 64, 0, 127 };
	uint8_t u[20];
	float s[5];
	int32_t zp[5];

	quant_rows_u7(u, s, zp, &x[0][0], 5, 4, 4);
	for (int i = 0; i < 3; i++) {
		ck_assert_mem_eq(u + 4 * i, want[i], 4);
		ck_assert_int_eq(zp[i], wzp[i]);
	}
	ck_assert_float_eq(s[0], (float)(2.0 / 127));
	ck_assert_float_eq(s[1], (float)(2.0 / 127));
	ck_assert_float_eq(s[2], (float)(4.0 / 127));
	for (int k = 12; k < 20; k++)
		ck_assert_int_eq(u[k], 0);
	ck_assert_float_eq(s[3], 0);
	ck_assert_int_eq(zp[3] | zp[4], 0);
	ck_assert(isnan(s[4]));
}
END_TEST

START_TEST(test_quant_u7_bound)
{
	enum { R = 60, K = 301 };
	float *x, s[R];
	int32_t zp[R];
	uint8_t u[R * K];

	kt_seed(5);
	x = kt_rand((size_t)R * K, -3, 3);
	for (int i = 0; i < R; i++)	/* many magnitudes; some of one sign,
					   some lopsided */
		for (int k = 0; k < K; k++) {
			float *v = &x[i * K + k];
			*v *= ldexpf(1, i % 50 - 25);
			if (i % 4 == 1)
				*v = fabsf(*v);
			else if (i % 4 == 2)
				*v = -fabsf(*v);
			else if (i % 4 == 3 && *v < 0)
				*v *= 0.1f;
		}
	quant_rows_u7(u, s, zp, x, R, K, K);
	for (int i = 0; i < R; i++) {
		float mn = 0, mx = 0;
		int lo = 0, hi = 0;
		for (int k = 0; k < K; k++) {
			mn = fminf(mn, x[i * K + k]);
			mx = fmaxf(mx, x[i * K + k]);
		}
		ck_assert_float_eq(s[i], (float)(((double)mx - mn) / 127));
		ck_assert(zp[i] >= 0 && zp[i] <= 127);
		for (int k = 0; k < K; k++) {
			int q = u[i * K + k];
			double e = fabs(x[i * K + k] - (double)s[i] *
					(q - zp[i]));
			ck_assert_msg(e <= s[i] * (0.5 + 0x1p-14),
				      "row %d k %d: error %g of step %g", i, k,
				      e, s[i]);
			ck_assert(q <= 127);
			lo |= q == 0;
			hi |= q == 127;
		}
		ck_assert(lo || zp[i] == 0);
		ck_assert(hi || zp[i] == 127);
	}
	free(x);
}
END_TEST

/*
 * A 7-bit kernel's integer sums: x quantised by the kernel's own code,
 * then its panels run with scales 1 and no bias, so y = (float)acc,
 * exact below 2^24; against the sums of quant_rows_u7's u and zp.
 */
static void u7_sums(const struct gemm_i8 *k, const struct wpack *w,
		    const float *x, int M, const char *what)
{
	int N = w->N, K = w->K, kq = (K + 3) / 4, rmax = k->rmax;
	int np = (N + WPACK_NR - 1) / WPACK_NR;
	size_t mr = (size_t)(M + rmax - 1) / rmax * rmax;
	uint8_t *xs = malloc(mr * kq * 4), *u = malloc((size_t)M * K + 1);
	float *sx = kt_zeros(M), *s1 = kt_zeros(M), *y = kt_zeros((size_t)M *
								  N);
	float *ones = kt_zeros((size_t)np * WPACK_NR);
	int32_t *zx = malloc(sizeof(int32_t) * M), *zp = malloc(4 * M);
	struct wpack_i8_job j = { .M = M, .kq = kq, .xs = xs, .sx = s1,
				  .zx = zx, .ldc = N };

	k->quant_u7(xs, sx, zx, x, M, K, kq, rmax);
	quant_rows_u7(u, s1, zp, x, M, K, K);
	ck_assert_mem_eq(zx, zp, sizeof(int32_t) * M);
	ck_assert_mem_eq(sx, s1, sizeof(float) * M);
	for (int i = 0; i < M; i++)
		s1[i] = 1;
	for (int c = 0; c < np * WPACK_NR; c++)
		ones[c] = 1;
	for (int q = 0; q < np; q++) {
		j.cols = N - q * WPACK_NR < WPACK_NR ? N - q * WPACK_NR
						     : WPACK_NR;
		j.P = w->pq + (size_t)q * kq * WPACK_NR * 4;
		j.qsum = w->qsum + q * WPACK_NR;
		j.ws = ones;
		j.C = y + q * WPACK_NR;
		k->panel(&j);
	}
	for (int i = 0; i < M; i++)
		for (int c = 0; c < N; c++) {
			long long acc = 0;
			for (int t = 0; t < K; t++)
				acc += (u[(size_t)i * K + t] - zp[i]) *
				       w->wq[(size_t)c * K + t];
			ck_assert(llabs(acc) < (1 << 24));
			ck_assert_msg(y[(size_t)i * N + c] == (float)acc,
				      "%s M=%d N=%d K=%d: [%d, %d] sums to "
				      "%.0f, not %lld", what, M, N, K, i, c,
				      y[(size_t)i * N + c], acc);
		}
	free(xs);
	free(u);
	free(sx);
	free(s1);
	free(y);
	free(ones);
	free(zx);
	free(zp);
}

/* Every 7-bit kernel of this CPU: the kernels' quantisation and integer
 * sums on rows 1 to 70, odd K, columns off the 16- and 32-column tiles. */
START_TEST(test_u7_sums)
{
	static const int ns[] = { 1, 7, 15, 17, 31, 33, 47, 100 };
	static const int ks[] = { 1, 3, 5, 13, 63, 301, 517, 1101 };
	const struct gemm_i8 *k[KERN_I8_MAX];
	const char *kname[KERN_I8_MAX];
	int nk, any = 0;

	kern_set_isa(ISA_AVX512);
	nk = kern_i8_all(k, kname);
	kt_seed(23);
	for (int M = 1; M <= 70; M++) {
		int N = ns[kt_int(0, 7)], K = ks[kt_int(0, 7)];
		float *W = kt_rand((size_t)N * K, -1, 1);
		float *x = kt_rand((size_t)M * K, -2, 2);
		struct wpack w;
		if (M % 3 == 0)	/* rows of one sign: zero points 0, 127 */
			for (int t = 0; t < M * K; t++)
				x[t] = (t / K) % 2 ? fabsf(x[t]) : -fabsf(x[t]);
		ck_assert_int_eq(wpack_init(&w, W, N, K, WPACK_I8), 0);
		for (int u = 0; u < nk; u++)
			if (k[u]->xs_form == WPACK_XS_U7) {
				u7_sums(k[u], &w, x, M, kname[u]);
				any = 1;
			}
		wpack_free(&w);
		free(W);
		free(x);
	}
	if (!any)
		printf("test_u7_sums: no 7-bit kernels on this CPU\n");
}
END_TEST

/* vpmaddubsw's worst pairs: u = 127 (x at its row's maximum, zero point
 * 0) against weights 127 and -128 over K = 1023 (K 127 128 < 2^24), and
 * rows of u 0 and 127 in turns (zero point 64 or 127) against weights
 * alternating in sign: every pair 2 127 127 or 2 127 128 in size. */
START_TEST(test_u7_extremes)
{
	enum { M = 7, N = 37, K = 1023 };
	static int8_t wq[N * K];
	static float ws[N], x[M * K];
	const struct gemm_i8 *k[KERN_I8_MAX];
	const char *kname[KERN_I8_MAX];
	struct wpack w;
	int nk;

	for (int j = 0; j < N; j++) {
		ws[j] = 1;
		for (int t = 0; t < K; t++)
			wq[j * K + t] = (int8_t)(j % 3 == 0 ? 127 :
						 j % 3 == 1 ? -128 :
						 t % 2 ? 127 : -128);
	}
	for (int i = 0; i < M; i++)
		for (int t = 0; t < K; t++)
			x[i * K + t] = i == 0 ? 1 : i == 1 ? 3 * (t % 2)
				     : i == 2 ? (t % 2 ? 1 : -1)
				     : i == 3 ? -(float)(t % 2)
				     : i == 4 ? 0.5f : i == 5 ? -1 : 2;
	kern_set_isa(ISA_AVX512);
	nk = kern_i8_all(k, kname);
	ck_assert_int_eq(wpack_init_i8(&w, wq, ws, N, K), 0);
	for (int u = 0; u < nk; u++)
		if (k[u]->xs_form == WPACK_XS_U7 && w.pq)
			u7_sums(k[u], &w, x, M, kname[u]);
	wpack_free(&w);
}
END_TEST

/* i8_row_sum against a loop, every length to 2,100 (the rounds of 128
 * words, the tail), bytes random and at -128, -127 and 127 throughout
 * (each 16-bit lane's bound), from every alignment. */
START_TEST(test_row_sum)
{
	static int8_t r[2100 + 8];
	const int8_t fill[] = { -128, -127, 127 };

	srand(5);
	for (int kind = 0; kind < 4; kind++)
		for (int off = 0; off < 8; off += kind == 0 ? 1 : 7)
			for (int n = 0; n <= 2100; n += n < 40 ? 1 : 13) {
				int32_t want = 0;

				for (int k = 0; k < n; k++) {
					r[off + k] = kind < 3 ? fill[kind] :
						     (int8_t)(rand() % 256 - 128);
					want += r[off + k];
				}
				ck_assert_msg(i8_row_sum(r + off, n) == want,
					      "kind %d, n %d, offset %d", kind,
					      n, off);
			}
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
	tcase_add_test(tc, test_quant_u7_by_hand);
	tcase_add_test(tc, test_quant_u7_bound);
	tcase_add_test(tc, test_u7_sums);
	tcase_add_test(tc, test_u7_extremes);
	tcase_add_test(tc, test_row_sum);
	tcase_add_test(tc, test_refused);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
