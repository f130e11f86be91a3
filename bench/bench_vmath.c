/*
 * bench_vmath.c: measures the error of vexp, vtanh and vsigmoid for every
 * instruction set of the machine against the double-precision libm result,
 * over every STEP-th float of each range (STEP 1: exhaustive), and their
 * speed.  The figures documented in doc/kernels.md come from this program.
 *
 *   bench_vmath [step [isa]]   (step 64 by default; isa: reference, avx2
 *                              or avx512 alone, else every one)
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernels/kernels.h"

#define CHUNK 65536

static double sigmoid_d(double x) { return 1 / (1 + exp(-x)); }

/* The spacing of floats at |y| (subnormal spacing below FLT_MIN). */
static double ulp_of(double y)
{
	y = fabs(y);
	if (y < FLT_MIN)
		return 0x1p-149;
	int e;
	frexp(y, &e);
	return ldexp(1, e - 24);
}

static uint32_t bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static float from_bits(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

struct fn {
	const char *name;
	void (*f)(float *, const float *, size_t);
	double (*ref)(double);
	float lo, hi;
};

/* Every step-th float of [lo, hi], walked by bit pattern on each side of
 * zero. */
static void measure(const struct fn *fn, uint32_t step)
{
	static float x[CHUNK], y[CHUNK];
	double max_ulp = 0, max_rel = 0, at_ulp = 0, at_rel = 0;
	long count = 0;

	for (int side = 0; side < 2; side++) {
		float a = side ? 0.0f : -0.0f;
		float b = side ? fn->hi : fn->lo;
		if (side ? b <= 0 : b >= 0)
			continue;
		uint32_t u0 = bits(a), u1 = bits(b);
		for (uint64_t u = u0; u <= u1;) {
			int n = 0;
			for (; n < CHUNK && u <= u1; n++, u += step)
				x[n] = from_bits((uint32_t)u);
			fn->f(y, x, n);
			for (int i = 0; i < n; i++) {
				double r = fn->ref(x[i]);
				if (fabs(r) > FLT_MAX)
					r = copysign(INFINITY, r);
				if (isinf(r)) {
					if (y[i] != r)
						max_ulp = INFINITY;
					continue;
				}
				double e = fabs(y[i] - r);
				if (e / ulp_of(r) > max_ulp) {
					max_ulp = e / ulp_of(r);
					at_ulp = x[i];
				}
				if (fabs(r) >= FLT_MIN && e / fabs(r) > max_rel) {
					max_rel = e / fabs(r);
					at_rel = x[i];
				}
			}
			count += n;
		}
	}
	printf("  %-9s [%g, %g], %ld points: max %.2f ulp (x = %.9g), "
	       "max relative %.3g = %.2f u (x = %.9g)\n", fn->name, fn->lo,
	       fn->hi, count, max_ulp, at_ulp, max_rel,
	       max_rel / (FLT_EPSILON / 2), at_rel);
}

static void speed(const struct fn *fn)
{
	size_t n = 4096;
	float *x = malloc(n * sizeof(float)), *y = malloc(n * sizeof(float));
	for (size_t i = 0; i < n; i++)
		x[i] = fn->lo + (fn->hi - fn->lo) * (float)i / n;
	double best = INFINITY;
	for (int r = 0; r < 5; r++) {
		double t = now();
		for (int k = 0; k < 200; k++)
			fn->f(y, x, n);
		t = (now() - t) / (200.0 * n);
		if (t < best)
			best = t;
	}
	printf("  %-9s %.2f ns per element\n", fn->name, best * 1e9);
	free(x);
	free(y);
}

int main(int argc, char **argv)
{
	uint32_t step = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 10) : 64;
	const char *only = argc > 2 ? argv[2] : NULL;
	const struct fn fns[] = {
		{ "vexp", vexp, exp, -104, 89 },
		{ "vtanh", vtanh, tanh, -10, 10 },
		{ "vsigmoid", vsigmoid, sigmoid_d, -104, 89 },
	};
	if (step < 1)
		step = 1;
	kern_set_threads(1);
	for (int isa = ISA_REFERENCE; isa <= ISA_AVX512; isa++) {
		if (kern_set_isa(isa) != isa)
			break;
		if (only && strcmp(only, kern_isa_name()) != 0)
			continue;
		printf("%s, every %u-th float:\n", kern_isa_name(), step);
		for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++)
			measure(&fns[i], step);
		for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++)
			speed(&fns[i]);
	}
	return 0;
}
