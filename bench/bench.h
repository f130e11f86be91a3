/*
 * bench.h: what the benchmarks share: a clock, and for the models' a
 * batch of random sentences and the rate of sgemm alone (the baseline of
 * their ratios).
 * A benchmark is one file (see the Makefile), hence static inline.
 */
#ifndef ATTN_BENCH_H
#define ATTN_BENCH_H

#include <stdlib.h>
#include <time.h>
#include "kernels.h"
#include "model.h"

/* Seconds on the monotonic clock. */
static inline double bench_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

/* B sentences of len - 3 .. len random ids 4 .. V-1 ending with </s>
 * (the same for the same seed). */
static inline void bench_batch(struct batch_ids *x, int B, int len, int V,
			       unsigned seed)
{
	x->B = B;
	x->S = len;
	x->ids = calloc((size_t)B * len, sizeof *x->ids);
	x->len = malloc(B * sizeof *x->len);
	srand(seed);
	for (int b = 0; b < B; b++) {
		x->len[b] = len - rand() % 4;
		for (int t = 0; t < x->len[b]; t++)
			x->ids[b * len + t] = t == x->len[b] - 1 ? 2 :
					      4 + rand() % (V - 4);
	}
}

/* sgemm's rate in multiply-adds per second on [M, K] x [N, K]^T. */
static inline double bench_sgemm_rate(int M, int N, int K)
{
	float *a = calloc((size_t)M * K, sizeof(float));
	float *b = calloc((size_t)N * K, sizeof(float));
	float *c = calloc((size_t)M * N, sizeof(float));
	int reps = 20;
	double t0;

	for (size_t i = 0; i < (size_t)M * K; i++)
		a[i] = (float)(i % 7) * 0.1f;
	for (size_t i = 0; i < (size_t)N * K; i++)
		b[i] = (float)(i % 5) * 0.1f;
	sgemm(0, 1, M, N, K, 1.0f, a, K, b, K, 0.0f, c, N);	/* warm up */
	t0 = bench_now();
	for (int r = 0; r < reps; r++)
		sgemm(0, 1, M, N, K, 1.0f, a, K, b, K, 0.0f, c, N);
	t0 = bench_now() - t0;
	free(a);
	free(b);
	free(c);
	return (double)M * N * K * reps / t0;
}

#endif
