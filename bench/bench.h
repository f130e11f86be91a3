/*
 * bench.h: what the benchmarks share: a clock, and for the models' a
 * batch of random sentences and the rate of sgemm alone (the baseline of
 * their ratios).
 * A benchmark is one file (see the Makefile), hence static inline.
 */
#ifndef ATTN_BENCH_H
#define ATTN_BENCH_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "kernels/kernels.h"
#include "models/model.h"

/* Seconds on the monotonic clock. */
static inline double bench_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

/* Seconds of CPU time of the process, every thread: on a shared machine,
 * time spent waiting for a core is not the program's cost. */
static inline double bench_cpu_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

/* The clock rates are measured by: CPU time with one thread, the wall
 * clock with more (CPU time would count every thread). */
static inline double bench_clock(void)
{
	return kern_threads() == 1 ? bench_cpu_now() : bench_now();
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

/* A fresh model of arch with n settings, with gradients as training loads
 * it (saved and loaded again, as train-step does); NULL on error
 * (err_msg()). */
static inline struct model *bench_training_model(const char *arch,
						 const char *const *set, int n)
{
	char path[] = "/tmp/attn-bench.XXXXXX";
	struct model *m = model_create(arch, set, n, "", "");
	int fd;

	if (!m)
		return NULL;
	fd = mkstemp(path);
	if (fd < 0 || model_save(m, path, NULL, 0) < 0) {
		if (fd >= 0) {
			close(fd);
			unlink(path);
		}
		model_free(m);
		return NULL;
	}
	close(fd);
	model_free(m);
	m = model_load(path, MODEL_LOAD_TRAIN, NULL);
	unlink(path);
	return m;
}

/* sgemm's rate in multiply-adds per second on [M, K] x [N, K]^T, the best
 * of ten products by bench_clock(); 0 when out of memory. */
static inline double bench_sgemm_rate(int M, int N, int K)
{
	float *a = calloc((size_t)M * K, sizeof(float));
	float *b = calloc((size_t)N * K, sizeof(float));
	float *c = calloc((size_t)M * N, sizeof(float));
	double best = 1e30;

	if (!a || !b || !c) {
		free(a);
		free(b);
		free(c);
		return 0;
	}
	for (size_t i = 0; i < (size_t)M * K; i++)
		a[i] = (float)(i % 7) * 0.1f;
	for (size_t i = 0; i < (size_t)N * K; i++)
		b[i] = (float)(i % 5) * 0.1f;
	sgemm(0, 1, M, N, K, 1.0f, a, K, b, K, 0.0f, c, N);	/* warm up */
	for (int r = 0; r < 10; r++) {
		double t0 = bench_clock();
		sgemm(0, 1, M, N, K, 1.0f, a, K, b, K, 0.0f, c, N);
		t0 = bench_clock() - t0;
		best = t0 < best ? t0 : best;
	}
	free(a);
	free(b);
	free(c);
	return (double)M * N * K / best;
}

/*
 * PyTorch's best rate for the workload name, as bench/torch/bench_torch.py
 * wrote it to the file ATTN_BENCH_TORCH ("name best median" lines, after
 * '#' comments): the same model and work, measured on this machine by
 * make bench-torch.  0 when there is no such file or line.
 */
static inline double bench_torch(const char *name)
{
	const char *path = getenv("ATTN_BENCH_TORCH");
	char line[256], key[128];
	double best, rate = 0;
	FILE *f;

	if (!path || !(f = fopen(path, "r")))
		return 0;
	while (fgets(line, sizeof line, f))
		if (line[0] != '#' &&
		    sscanf(line, "%127s %lf", key, &best) == 2 &&
		    strcmp(key, name) == 0)
			rate = best;
	fclose(f);
	return rate;
}

/* Prints ours, a rate of the workload name, as a ratio to PyTorch's
 * (bench_torch), or that PyTorch's is absent; the line says label. */
static inline void bench_torch_ratio_as(const char *label, const char *name,
					double ours)
{
	double t = bench_torch(name);

	if (t > 0)
		printf("       %-18s %.2fx PyTorch (its %.0f tok/s, this "
		       "machine, 1 thread, f32)\n", label, ours / t, t);
	else
		printf("       %-18s PyTorch's figure absent (make "
		       "bench-torch)\n", label);
}

static inline void bench_torch_ratio(const char *name, double ours)
{
	bench_torch_ratio_as(name, name, ours);
}

#endif
