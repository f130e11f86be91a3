/*
 * test_ssru.c: the SSRU layer (nn/ssru.h) against its equations written
 * out here in double (Marian's src/rnn/cells.h, class SSRU: c_t = f_t
 * c_{t-1} + (1 - f_t) W x_t, f_t = sigmoid(Wf x_t + bf), y_t = relu(c_t),
 * c_0 = 0); the step of a decoder against the sequence; and the backward
 * pass against central differences of that double reference, every
 * entry of every input and parameter.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/rng.h"
#include "nn/ssru.h"
#include "run_suite.h"

enum { B = 2, T = 5, D = 4, N = B * T };

struct setup {
	float x[N * D], W[D * D], Wf[D * D], bf[D];
	struct ssru_w w;
};

static void setup(struct setup *s, uint64_t seed)
{
	struct rng r;
	int i;

	rng_seed(&r, seed);
	for (i = 0; i < N * D; i++)
		s->x[i] = (float)(2 * rng_uniform(&r) - 1);
	for (i = 0; i < D * D; i++) {
		s->W[i] = (float)rng_normal(&r);
		s->Wf[i] = (float)rng_normal(&r);
	}
	for (i = 0; i < D; i++)
		s->bf[i] = (float)(0.5 * rng_normal(&r));
	s->w = (struct ssru_w){ s->W, s->Wf, s->bf };
}

/* The reference in double: y [N, D] from x, W, Wf, bf (attn's [out, in]
 * layout: output j of row x is sum_k W[j, k] x[k]). */
static void reference(double *y, double *c, const double *x, const double *W,
		      const double *Wf, const double *bf)
{
	int b, t, j, k;

	for (b = 0; b < B; b++) {
		double prev[D] = { 0 };

		for (t = 0; t < T; t++) {
			const double *xr = x + (b * T + t) * D;
			double *yr = y + (b * T + t) * D;

			for (j = 0; j < D; j++) {
				double xw = 0, fp = bf[j], f;

				for (k = 0; k < D; k++) {
					xw += W[j * D + k] * xr[k];
					fp += Wf[j * D + k] * xr[k];
				}
				f = 1 / (1 + exp(-fp));
				prev[j] = f * prev[j] + (1 - f) * xw;
				yr[j] = prev[j] > 0 ? prev[j] : 0;
				if (c)
					c[(b * T + t) * D + j] = prev[j];
			}
		}
	}
}

static void widen(double *d, const float *f, int n)
{
	for (int i = 0; i < n; i++)
		d[i] = f[i];
}

START_TEST(forward_is_the_equations)
{
	struct setup s;
	float y[N * D], xw[N * D], f[N * D], c[N * D];
	struct ssru_acts a = { xw, f, c };
	double x[N * D], W[D * D], Wf[D * D], bf[D], yr[N * D], cr[N * D];
	int i, pos = 0, neg = 0;

	setup(&s, 1);
	widen(x, s.x, N * D);
	widen(W, s.W, D * D);
	widen(Wf, s.Wf, D * D);
	widen(bf, s.bf, D);
	reference(yr, cr, x, W, Wf, bf);
	ssru_forward(y, &a, s.x, &s.w, B, T, D);
	for (i = 0; i < N * D; i++) {
		ck_assert_msg(fabs(y[i] - yr[i]) < 1e-5, "y[%d] %g, want %g",
			      i, y[i], yr[i]);
		ck_assert_msg(fabs(c[i] - cr[i]) < 1e-5, "c[%d] %g, want %g",
			      i, c[i], cr[i]);
		pos += cr[i] > 0;
		neg += cr[i] < 0;
	}
	/* the check means something: cells of both signs (relu's two
	 * sides), and a recurrence that is not the input alone */
	ck_assert_int_gt(pos, 5);
	ck_assert_int_gt(neg, 5);
	ck_assert(fabs(cr[D] - cr[0]) > 1e-3);
	/* a gate of 1 keeps the cell: with bf huge, c stays at c_0 = 0 */
	for (i = 0; i < D; i++)
		s.bf[i] = 1e4f;
	ssru_forward(y, &a, s.x, &s.w, B, T, D);
	for (i = 0; i < N * D; i++)
		ck_assert(c[i] == 0 && y[i] == 0);
	/* a gate of 0 takes W x alone: c_t = W x_t */
	for (i = 0; i < D; i++)
		s.bf[i] = -1e4f;
	ssru_forward(y, &a, s.x, &s.w, B, T, D);
	for (i = 0; i < N * D; i++)
		ck_assert(c[i] == xw[i]);
}
END_TEST

/* A decoder's steps, rows b of the B sequences side by side, from a zero
 * state, give the sequence's rows. */
START_TEST(steps_are_the_sequence)
{
	struct setup s;
	float y[N * D], xw[N * D], f[N * D], c[N * D];
	struct ssru_acts a = { xw, f, c };
	float st[B * D] = { 0 }, sy[B * D], sxw[B * D], sfp[B * D];
	int b, t, j, k;

	setup(&s, 2);
	ssru_forward(y, &a, s.x, &s.w, B, T, D);
	for (t = 0; t < T; t++) {
		for (b = 0; b < B; b++)
			for (j = 0; j < D; j++) {
				const float *xr = s.x + (b * T + t) * D;
				float u = 0, v = s.bf[j];

				for (k = 0; k < D; k++) {
					u += s.W[j * D + k] * xr[k];
					v += s.Wf[j * D + k] * xr[k];
				}
				sxw[b * D + j] = u;
				sfp[b * D + j] = v;
			}
		ssru_step_forward(sy, st, sxw, sfp, B, D);
		for (b = 0; b < B; b++)
			for (j = 0; j < D; j++) {
				int i = (b * T + t) * D + j;

				ck_assert(fabsf(sy[b * D + j] - y[i]) < 1e-6);
				ck_assert(fabsf(st[b * D + j] - c[i]) < 1e-6);
			}
	}
}
END_TEST

/* L = sum_i r_i y_i in double, at the reference. */
static double loss(const double *r, const double *x, const double *W,
		   const double *Wf, const double *bf)
{
	double y[N * D], l = 0;

	reference(y, NULL, x, W, Wf, bf);
	for (int i = 0; i < N * D; i++)
		l += r[i] * y[i];
	return l;
}

/* Every entry of arr (n of them) against the central difference. */
static int check_entries(const char *what, double *arr, const float *grad,
			 int n, const double *r, double *x, double *W,
			 double *Wf, double *bf)
{
	const double h = 1e-6;
	int i, bad = 0;

	for (i = 0; i < n; i++) {
		double v = arr[i], lp, lm, c;

		arr[i] = v + h;
		lp = loss(r, x, W, Wf, bf);
		arr[i] = v - h;
		lm = loss(r, x, W, Wf, bf);
		arr[i] = v;
		c = (lp - lm) / (2 * h);
		if (fabs(c - grad[i]) > 1e-4 + 1e-3 * fabs(c)) {
			fprintf(stderr, "%s[%d]: gradient %g, difference %g\n",
				what, i, grad[i], c);
			bad++;
		}
	}
	return bad;
}

START_TEST(backward_is_the_differences)
{
	struct setup s;
	float y[N * D], xw[N * D], f[N * D], c[N * D], dy[N * D];
	float dx[N * D], dW[D * D], dWf[D * D], dbf[D];
	float sxw[N * D], sfp[N * D];
	struct ssru_acts a = { xw, f, c };
	struct ssru_w dw = { dW, dWf, dbf };
	double x[N * D], W[D * D], Wf[D * D], bf[D], r[N * D];
	struct rng rg;
	int i, bad = 0, nz = 0;

	setup(&s, 3);
	rng_seed(&rg, 4);
	for (i = 0; i < N * D; i++) {
		dy[i] = (float)(2 * rng_uniform(&rg) - 1);
		r[i] = dy[i];
	}
	widen(x, s.x, N * D);
	widen(W, s.W, D * D);
	widen(Wf, s.Wf, D * D);
	widen(bf, s.bf, D);
	ssru_forward(y, &a, s.x, &s.w, B, T, D);
	/* the backward pass adds: start from a known offset */
	for (i = 0; i < N * D; i++)
		dx[i] = 1.0f;
	memset(dW, 0, sizeof dW);
	memset(dWf, 0, sizeof dWf);
	memset(dbf, 0, sizeof dbf);
	ssru_backward(dx, &dw, sxw, sfp, dy, s.x, &a, &s.w, B, T, D);
	for (i = 0; i < N * D; i++)
		dx[i] -= 1.0f;
	bad += check_entries("x", x, dx, N * D, r, x, W, Wf, bf);
	bad += check_entries("W", W, dW, D * D, r, x, W, Wf, bf);
	bad += check_entries("Wf", Wf, dWf, D * D, r, x, W, Wf, bf);
	bad += check_entries("bf", bf, dbf, D, r, x, W, Wf, bf);
	ck_assert_int_eq(bad, 0);
	for (i = 0; i < D * D; i++)
		nz += dWf[i] != 0;
	ck_assert_int_gt(nz, D);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("ssru");
	TCase *tc = tcase_create("ssru");

	tcase_add_test(tc, forward_is_the_equations);
	tcase_add_test(tc, steps_are_the_sequence);
	tcase_add_test(tc, backward_is_the_differences);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
