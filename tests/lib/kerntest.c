/*
 * kerntest.c: helpers of the kernel tests (kerntest.h).
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "kernels.h"
#include "kerntest.h"

static uint64_t state = 0x9e3779b97f4a7c15u;

void kt_seed(uint64_t seed)
{
	state = seed * 0x9e3779b97f4a7c15u + 1;
}

/* splitmix64 */
static uint64_t next(void)
{
	uint64_t z = (state += 0x9e3779b97f4a7c15u);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return z ^ (z >> 31);
}

double kt_uniform(double lo, double hi)
{
	return lo + (hi - lo) * (double)(next() >> 11) * 0x1p-53;
}

int kt_int(int lo, int hi)
{
	return lo + (int)(next() % (uint64_t)(hi - lo + 1));
}

float *kt_zeros(size_t n)
{
	float *p = calloc(n ? n : 1, sizeof(float));
	if (!p)
		abort();
	return p;
}

double *kt_dzeros(size_t n)
{
	double *p = calloc(n ? n : 1, sizeof(double));
	if (!p)
		abort();
	return p;
}

float *kt_rand(size_t n, double lo, double hi)
{
	float *p = kt_zeros(n);
	for (size_t i = 0; i < n; i++)
		p[i] = (float)kt_uniform(lo, hi);
	return p;
}

int kt_isas(int isa[3])
{
	int n = 0;
	for (int i = ISA_REFERENCE; i <= ISA_AVX512; i++)
		if (kern_set_isa(i) == i)
			isa[n++] = i;
	return n;
}

void kt_check(const char *what, const float *got, const double *want,
	      const double *tol, double tol1, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		double g = got[i], w = want[i], t = tol ? tol[i] : tol1;
		int ok;
		if (isnan(w))
			ok = isnan(g);
		else if (isinf(w))
			ok = g == w;
		else
			ok = fabs(g - w) <= t;
		if (!ok)
			ck_abort_msg("%s [%s]: at %zu got %.9g want %.9g "
				     "(tol %.3g)", what, kern_isa_name(), i, g,
				     w, t);
	}
}
