/*
 * diagonal.c: the normaliser of the diagonal prior and its derivative in
 * closed form; see diagonal.h.
 *
 * With s = j n / m and f = floor(s), the positions i <= f lie s - i
 * before the split and those above it i - s after, so with r =
 * exp(-lambda / n), d0 = s - f and d1 = f + 1 - s,
 *
 *	Z = exp(-lambda d0 / n) S0(f) + exp(-lambda d1 / n) S0(n - f),
 *	S0(K) = sum over k < K of r^k = (1 - r^K) / (1 - r),
 *
 * and sum of h exp(lambda h) = -1/n times
 *
 *	exp(-lambda d0 / n) (d0 S0(f) + S1(f)) + the same with d1, n - f,
 *	S1(K) = sum over k < K of k r^k
 *	      = r (1 - K r^(K-1) + (K - 1) r^K) / (1 - r)^2.
 *
 * When 1 - r is small the closed forms lose digits (S1 divides by its
 * square), and the sums are taken term by term instead: those are the
 * tiny tensions, where every term is near 1 anyway.
 */
#include <math.h>
#include "diagonal.h"

/* 1 - r below this: the series summed term by term. */
#define SERIES_DIRECT 1e-3

/* S0 and S1 of K terms of ratio r (1 - r = omr). */
static void series(int K, double r, double omr, double *s0, double *s1)
{
	if (K <= 0) {
		*s0 = *s1 = 0;
		return;
	}
	if (omr < SERIES_DIRECT) {
		double p = 1, a = 0, b = 0;

		for (int k = 0; k < K; k++, p *= r) {
			a += p;
			b += k * p;
		}
		*s0 = a;
		*s1 = b;
		return;
	}
	double rk1 = pow(r, K - 1), rk = rk1 * r;

	*s0 = (1 - rk) / omr;
	*s1 = r * (1 - K * rk1 + (K - 1) * rk) / (omr * omr);
}

/* The two series of position j: their first terms' factors and sums. */
static void halves(int j, int m, int n, double lambda, double e[2],
		   double d[2], double s0[2], double s1[2])
{
	double s = (double)j * n / m, r, omr;
	int f = (int)s;

	if (f > n)
		f = n;
	omr = -expm1(-lambda / n);
	r = 1 - omr;
	d[0] = s - f;
	d[1] = f + 1 - s;
	for (int k = 0; k < 2; k++)
		e[k] = exp(-lambda * d[k] / n);
	series(f, r, omr, &s0[0], &s1[0]);
	series(n - f, r, omr, &s0[1], &s1[1]);
}

void wa_diag_prior(int diagonal, double lambda, double p0, int j, int m,
		   int n, double *prior)
{
	double z;

	if (!diagonal) {
		for (int i = 0; i <= n; i++)
			prior[i] = 1.0 / (n + 1);
		return;
	}
	z = (1 - p0) / wa_diag_z(j, m, n, lambda);
	prior[0] = p0;
	for (int i = 1; i <= n; i++)
		prior[i] = z * exp(lambda * wa_diag_h(i, j, m, n));
}

double wa_diag_z(int j, int m, int n, double lambda)
{
	double e[2], d[2], s0[2], s1[2];

	halves(j, m, n, lambda, e, d, s0, s1);
	return e[0] * s0[0] + e[1] * s0[1];
}

double wa_diag_dlogz(int j, int m, int n, double lambda)
{
	double e[2], d[2], s0[2], s1[2];

	halves(j, m, n, lambda, e, d, s0, s1);
	return -(e[0] * (d[0] * s0[0] + s1[0]) + e[1] * (d[1] * s0[1] + s1[1])) /
	       n / (e[0] * s0[0] + e[1] * s0[1]);
}
