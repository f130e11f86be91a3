/*
 * test_window.c: the layers of attention by location (nn/window.h): the
 * diagonal's positions and weights by hand, the context by hand, Graves'
 * window against the paper's equations written out here in another order
 * (each Gaussian's parameters first, then the sums), and its backward pass
 * against finite differences of a loss over two steps, so that the
 * gradient carried through kappa from the later step is checked too.
 */
#include <check.h>
#include <math.h>
#include <string.h>

#include "base/rng.h"
#include "nn/window.h"
#include "run_suite.h"

START_TEST(diagonal_by_hand)
{
	static const int len[] = { 3, 1, 0 };
	float a[3 * 4];

	/* round half up, then clipped to len - 1 */
	ck_assert_int_eq(diagonal_position(0, 0.5, 4), 0);
	ck_assert_int_eq(diagonal_position(1, 0.5, 4), 1);
	ck_assert_int_eq(diagonal_position(2, 0.5, 4), 1);
	ck_assert_int_eq(diagonal_position(3, 0.5, 4), 2);
	ck_assert_int_eq(diagonal_position(2, 1.3, 9), 3);
	ck_assert_int_eq(diagonal_position(7, 1.0, 4), 3);
	diagonal_forward(a, 2, 0.8, len, 3, 4);	/* round(1.6) = 2 */
	static const float want[] = { 0, 0, 1, 0,  1, 0, 0, 0,  0, 0, 0, 0 };
	ck_assert(memcmp(a, want, sizeof want) == 0);
}
END_TEST

START_TEST(context_by_hand)
{
	static const int len[] = { 2, 3 };
	/* v [2, 3, 2]; a [2, 3]; the padded row of b 0 must not count */
	static const float v[] = { 1, 2,  3, 4,  100, 100,
				   -1, 0,  0, 2,  5, 1 };
	static const float a[] = { 0.5f, 0.25f, 7,  1, 2, 0.5f };
	static const float dctx[] = { 1, -1,  2, 1 };
	float ctx[4], da[6] = { 0 }, dv[12] = { 0 };

	context_forward(ctx, a, v, len, 2, 3, 2);
	ck_assert_float_eq(ctx[0], 0.5f * 1 + 0.25f * 3);
	ck_assert_float_eq(ctx[1], 0.5f * 2 + 0.25f * 4);
	ck_assert_float_eq(ctx[2], -1 + 0 + 2.5f);
	ck_assert_float_eq(ctx[3], 0 + 4 + 0.5f);
	context_backward(da, dv, dctx, a, v, len, 2, 3, 2);
	static const float wda[] = { -1, -1, 0,  -2, 2, 11 };
	for (int i = 0; i < 6; i++)
		ck_assert_float_eq(da[i], wda[i]);
	ck_assert_float_eq(dv[2], 0.25f);	/* a[0, 1] dctx[0][0] */
	ck_assert_float_eq(dv[3], -0.25f);
	ck_assert_float_eq(dv[4], 0);		/* padding */
	ck_assert_float_eq(dv[11], 0.5f);
}
END_TEST

enum { B = 2, S = 5, K = 3 };
static const int LEN[B] = { 5, 3 };

/* The equations, computed in double from p [B, 3K], kprev [B, K]. */
static void reference(double *phi, double *kappa, const float *p,
		      const float *kprev)
{
	for (int b = 0; b < B; b++) {
		double alpha[K], beta[K];

		for (int k = 0; k < K; k++) {
			alpha[k] = exp(p[b * 3 * K + k]);
			beta[k] = exp(p[b * 3 * K + K + k]);
			kappa[b * K + k] = kprev[b * K + k] +
					   exp(p[b * 3 * K + 2 * K + k]);
		}
		for (int u = 1; u <= S; u++) {
			double s = 0;

			for (int k = 0; u <= LEN[b] && k < K; k++) {
				double d = kappa[b * K + k] - u;
				s += alpha[k] * exp(-beta[k] * d * d);
			}
			phi[b * S + u - 1] = s;
		}
	}
}

static void random_fill(float *x, int n, double sd, struct rng *r)
{
	for (int i = 0; i < n; i++)
		x[i] = (float)(sd * rng_normal(r));
}

START_TEST(window_against_equations)
{
	float p[B * 3 * K], kprev[B * K], phi[B * S], kappa[B * K];
	double rphi[B * S], rkappa[B * K];
	struct rng r;

	rng_seed(&r, 3);
	random_fill(p, B * 3 * K, 0.7, &r);
	for (int i = 0; i < B * K; i++)
		kprev[i] = (float)(1 + 2 * rng_uniform(&r));
	window_forward(phi, kappa, p, kprev, LEN, B, S, K);
	reference(rphi, rkappa, p, kprev);
	for (int i = 0; i < B * K; i++)
		ck_assert_msg(fabs(kappa[i] - rkappa[i]) <= 1e-6 * rkappa[i],
			      "kappa[%d] %g, want %g", i, kappa[i], rkappa[i]);
	for (int i = 0; i < B * S; i++)
		ck_assert_msg(fabs(phi[i] - rphi[i]) <= 1e-5 * (1 + rphi[i]),
			      "phi[%d] %g, want %g", i, phi[i], rphi[i]);
	ck_assert_float_eq(phi[S + 3], 0);	/* padding */
	ck_assert_float_eq(phi[S + 4], 0);
}
END_TEST

/* The loss of two steps from kappa_0 = kp0: sum of c1 . phi_1 + c2 . phi_2
 * with p1, p2 the two steps' layer outputs. */
static double two_steps(const float *p1, const float *p2, const float *kp0,
			const float *c1, const float *c2)
{
	float phi[B * S], k1[B * K], k2[B * K];
	double loss = 0;

	window_forward(phi, k1, p1, kp0, LEN, B, S, K);
	for (int i = 0; i < B * S; i++)
		loss += (double)c1[i] * phi[i];
	window_forward(phi, k2, p2, k1, LEN, B, S, K);
	for (int i = 0; i < B * S; i++)
		loss += (double)c2[i] * phi[i];
	return loss;
}

/* Central differences with h = 1e-3 on values of order one: f32 rounding
 * of about 1e-7 / 1e-3 = 1e-4, truncation h^2 |f'''| / 6 smaller. */
START_TEST(window_backward_by_differences)
{
	float p[2][B * 3 * K], kp0[B * K], c[2][B * S];
	float phi[B * S], k1[B * K], k2[B * K];
	float dp[2][B * 3 * K], dkappa[B * K];
	struct rng r;
	double gmax = 0;

	rng_seed(&r, 9);
	random_fill(p[0], B * 3 * K, 0.5, &r);
	random_fill(p[1], B * 3 * K, 0.5, &r);
	random_fill(c[0], B * S, 1, &r);
	random_fill(c[1], B * S, 1, &r);
	for (int i = 0; i < B * K; i++)
		kp0[i] = (float)(2 * rng_uniform(&r));
	window_forward(phi, k1, p[0], kp0, LEN, B, S, K);
	window_forward(phi, k2, p[1], k1, LEN, B, S, K);
	memset(dp, 0, sizeof dp);
	memset(dkappa, 0, sizeof dkappa);
	window_backward(dp[1], dkappa, c[1], p[1], k2, LEN, B, S, K);
	window_backward(dp[0], dkappa, c[0], p[0], k1, LEN, B, S, K);
	for (int s = 0; s < 2; s++)
		for (int i = 0; i < B * 3 * K; i++) {
			float w = p[s][i], h = 1e-3f;
			double up, down, fd;

			p[s][i] = w + h;
			up = two_steps(p[0], p[1], kp0, c[0], c[1]);
			p[s][i] = w - h;
			down = two_steps(p[0], p[1], kp0, c[0], c[1]);
			p[s][i] = w;
			fd = (up - down) / (2 * h);
			ck_assert_msg(fabs(fd - dp[s][i]) <= 2e-3 +
				      0.01 * fabs(fd), "step %d dp[%d]: %g, "
				      "differences %g", s, i, dp[s][i], fd);
			if (fabs(fd) > gmax)
				gmax = fabs(fd);
		}
	ck_assert(gmax > 0.1);
	/* dkappa is now the gradient by kappa_0 */
	for (int i = 0; i < B * K; i++) {
		float w = kp0[i], h = 1e-3f;
		double up, down, fd;

		kp0[i] = w + h;
		up = two_steps(p[0], p[1], kp0, c[0], c[1]);
		kp0[i] = w - h;
		down = two_steps(p[0], p[1], kp0, c[0], c[1]);
		kp0[i] = w;
		fd = (up - down) / (2 * h);
		ck_assert_msg(fabs(fd - dkappa[i]) <= 2e-3 + 0.01 * fabs(fd),
			      "dkappa_0[%d]: %g, differences %g", i,
			      dkappa[i], fd);
	}
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("window");
	TCase *t = tcase_create("core");

	tcase_add_test(t, diagonal_by_hand);
	tcase_add_test(t, context_by_hand);
	tcase_add_test(t, window_against_equations);
	tcase_add_test(t, window_backward_by_differences);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	return run_suite(suite());
}
