/*
 * bench_gemm_i8.c: the int8 products of gemm_packed.h against the f32
 * ones on the same packed weights, in the same run, on one thread, per
 * instruction set: y [M, N] = x [M, K] W^T + b for decoder steps (M = 1,
 * 4, 16, 64 rows) on the Transformer's matrices (d 256 and 512: the
 * attention's [d, d], the FFN's [4d, d] and [d, 4d], a vocabulary of
 * 8000).  The int8 time includes quantising and packing x, as a step
 * pays it.  Every int8 kernel this CPU can run (kern_i8_all) beside the
 * f32 kernel of its table: AVX2's vpmaddwd, its 7-bit vpmaddubsw and
 * AVX-VNNI's vpdpbusd with the AVX2 f32, AVX512_VNNI's and AVX-512BW's
 * 7-bit one with the AVX-512 f32.  Printed: f32
 * GFLOP/s and int8 GOP/s, each also as a fraction of its peak measured
 * in the same run (peak.h: the FMA's, the int8 instruction's), and their
 * ratio, the best
 * of five runs of at least 0.03 s each, the two taken in turns so that
 * the machine's load strikes both alike.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "peak.h"
#include "kernels/gemm_packed.h"
#include "kernels/kern_impl.h"
#include "kernels/kernels.h"

struct call {
	const struct wpack *w;
	const float *x, *b;
	float *y;
	int M;
};

static void run(const struct call *c)
{
	if (linear_packed(c->y, c->x, c->M, c->w, c->b, 0) < 0)
		abort();
}

static double once(const struct call *c)
{
	int n = 0;
	double t0 = bench_cpu_now(), t;

	do {
		run(c);
		n++;
	} while ((t = bench_cpu_now() - t0) < 0.03);
	return t / n;
}

static float *randv(size_t n)
{
	float *v = malloc(sizeof(float) * (n ? n : 1));

	for (size_t i = 0; i < n; i++)
		v[i] = (float)rand() / RAND_MAX * 2 - 1;
	return v;
}

/* The peaks of the f32 table and of the int8 kernel measured (peak.h). */
static double f32_peak, i8_peak;

static void shape(int M, int N, int K, const struct gemm_i8 *k)
{
	float *W = randv((size_t)N * K), *x = randv((size_t)M * K);
	float *b = randv(N), *y = randv((size_t)M * N);
	struct wpack wf, wq;
	double tf = INFINITY, tq = INFINITY;

	if (wpack_init(&wf, W, N, K, WPACK_F32) < 0 ||
	    wpack_init(&wq, W, N, K, WPACK_I8) < 0)
		abort();
	wq.i8 = k;	/* one panel layout for every int8 kernel */
	struct call cf = { &wf, x, b, y, M }, cq = { &wq, x, b, y, M };
	run(&cf);
	run(&cq);
	for (int r = 0; r < 5; r++) {
		double t = once(&cf);
		tf = t < tf ? t : tf;
		t = once(&cq);
		tq = t < tq ? t : tq;
	}
	double ops = 2.0 * M * N * K * 1e-9;
	printf("  [%2d,%4d] x [%4d,%4d]^T  f32 %6.1f GFLOP/s %.2f of its peak"
	       "  int8 %6.1f GOP/s %.2f of its peak  %.2f x f32\n", M, K, N,
	       K, ops / tf, ops / tf / f32_peak, ops / tq, ops / tq / i8_peak,
	       tf / tq);
	wpack_free(&wf);
	wpack_free(&wq);
	free(W);
	free(x);
	free(b);
	free(y);
}

int main(void)
{
	static const int rows[] = { 1, 4, 16, 64 };
	const struct gemm_i8 *k[KERN_I8_MAX];
	const char *name[KERN_I8_MAX];
	double load[3] = { 0 };
	int nk, max;

	kern_set_threads(1);
	max = kern_set_isa(ISA_AVX512);
	nk = kern_i8_all(k, name);
	getloadavg(load, 3);
	printf("load average %.2f; 1 thread; CPU time; instruction sets up "
	       "to %s\n", load[0], kern_isa_name());
	for (int u = 0; u < nk; u++) {
		int isa = strncmp(name[u], "avx512", 6) == 0 ? ISA_AVX512
							     : ISA_AVX2;
		if (kern_set_isa(isa) != isa || isa > max)
			continue;
		f32_peak = bench_fma_peak();
		i8_peak = bench_i8_peak(name[u]);
		printf("f32: %s, FMA peak %.1f GFLOP/s; int8: %s, peak %.1f "
		       "GOP/s (%.2fx)\n", kern_isa_name(), f32_peak, name[u],
		       i8_peak, i8_peak / f32_peak);
		for (int d = 256; d <= 512; d *= 2)
			for (size_t r = 0; r < sizeof rows / sizeof *rows; r++) {
				shape(rows[r], d, d, k[u]);
				shape(rows[r], 4 * d, d, k[u]);
				shape(rows[r], d, 4 * d, k[u]);
				shape(rows[r], 8000, d, k[u]);
			}
	}
	if (nk == 0)
		printf("no int8 kernels beside the reference loops\n");
	return 0;
}
