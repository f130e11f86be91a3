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

/*
 * sgemm(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc) on random
 * operands with random strides (C NaN when beta is 0) against a double
 * product, within gamma(n) (|alpha| sum_k |a_ik b_kj| + |beta c_ij|),
 * gamma(n) = n u / (1 - n u): n = K + 2 roundings in f32, n = 2K + 2 with
 * bf16 (the inputs rounded to bf16 as tensor.h's f32_to_bf16 first; the
 * derivations are test_gemm.c's and test_gemm_bf16.c's).  Entries past N
 * must be left as they were.  kt_sgemm_variants: the four transpositions,
 * alpha and beta drawn from a few.
 */
void kt_sgemm_case(int ta, int tb, int M, int N, int K, float alpha,
		   float beta, int bf16);
void kt_sgemm_variants(int M, int N, int K, int bf16);

#endif
