/*
 * kerntest.h: helpers of the kernel tests: a seeded generator, the
 * instruction sets to loop over, and comparisons with an error bound.
 */
#ifndef ATTN_KERNTEST_H
#define ATTN_KERNTEST_H

#include <float.h>
#include <stddef.h>
#include <stdint.h>

/* The unit roundoff of float. */
#define KT_U ((double)FLT_EPSILON / 2)

void kt_seed(uint64_t seed);
/* Uniform in [lo, hi); an int in [lo, hi]. */
double kt_uniform(double lo, double hi);
int kt_int(int lo, int hi);
/* n floats uniform in [lo, hi), malloc'ed (never NULL: aborts). */
float *kt_rand(size_t n, double lo, double hi);
/* A zeroed array of n floats or doubles. */
float *kt_zeros(size_t n);
double *kt_dzeros(size_t n);

/* The instruction sets this machine has: fills isa[], returns how many. */
int kt_isas(int isa[3]);

/*
 * Fails the running Check test (naming what and the index) unless
 * |got[i] - want[i]| <= tol[i] (tol NULL: tol1 for every i) for i < n.
 * NaN passes only against NaN, inf only against the same inf.
 */
void kt_check(const char *what, const float *got, const double *want,
	      const double *tol, double tol1, size_t n);

#endif
