/*
 * bench_kernels.c: speed of the kernels against the machine's own FMA peak
 * measured in the same run, for every instruction set of the machine, on
 * one thread and on all of them:
 *   - peak: independent FMAs in registers (AVX2 and AVX-512), and with
 *     AVX512_BF16 the bf16 dot products of vdpbf16ps;
 *   - sgemm: 512^3 and the shapes of a translation model (rows = batch x
 *     length in {64, 512, 4096} times 512x512, 512x2048, 2048x512 and a
 *     512 x 8000 vocabulary; weights stored [out, in] as the models do),
 *     decoder steps ([B, 1000] x [3000, 1000]^T), and few rows (M = 1 to
 *     8) in every transposition, B in L2 and from memory;
 *   - with AVX512_BF16, sgemm in bf16 precision (kern_set_matmul) on the
 *     model's shapes, against the bf16 peak and f32 sgemm just before;
 *   - fused attention (8 heads of 64, batch 32, lengths 16..512) against
 *     an unfused matmul-softmax-matmul built from the same sgemm;
 *   - additive attention, one step at B=32, S=50, na=1000, dv=2000.
 * Times: CPU time with one thread, wall clock with more; best of five runs
 * of at least 0.05 s each (fused and unfused attention in turns).  The
 * machine may be shared: read the ratios to the peak, which is measured
 * before each group of figures, and the load average printed first.
 *
 *   bench_kernels [quick]   (quick: fewer shapes)
 */
#include <immintrin.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernels/kernels.h"
#include "peak.h"

/*
 * One thread: the process's CPU time, which a shared machine disturbs far
 * less than the wall clock (time given to other processes is not counted);
 * more threads: the wall clock.
 */
static double now(void)
{
	struct timespec t;
	clock_gettime(kern_threads() == 1 ? CLOCK_PROCESS_CPUTIME_ID :
		      CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

/* Seconds per call of fn(ctx) over a run of at least 0.05 s. */
static double run_once(void (*fn)(void *), void *ctx)
{
	int n = 0;
	double t0 = now(), t;
	do {
		fn(ctx);
		n++;
	} while ((t = now() - t0) < 0.05);
	return t / n;
}

/*
 * The best of five runs of each of fn1 and fn2 (fn2 may be NULL), taken
 * in turns, so that a change in the machine's load strikes both alike.
 */
static void timeit2(void (*fn1)(void *), void *c1, double *t1,
		    void (*fn2)(void *), void *c2, double *t2)
{
	fn1(c1);                        /* warm up: pool, scratch, caches */
	if (fn2)
		fn2(c2);
	*t1 = INFINITY;
	if (t2)
		*t2 = INFINITY;
	for (int r = 0; r < 5; r++) {
		double t = run_once(fn1, c1);
		*t1 = t < *t1 ? t : *t1;
		if (fn2) {
			t = run_once(fn2, c2);
			*t2 = t < *t2 ? t : *t2;
		}
	}
}

static double timeit(void (*fn)(void *), void *ctx)
{
	double t;
	timeit2(fn, ctx, &t, NULL, NULL, NULL);
	return t;
}

static float *randv(size_t n)
{
	float *p = malloc(n * sizeof(float));
	if (!p) {
		perror("bench_kernels");
		exit(1);
	}
	for (size_t i = 0; i < n; i++)
		p[i] = (float)rand() / RAND_MAX - 0.5f;
	return p;
}

/* ---- peak --------------------------------------------------------------- */

/* peak.h's loop with vdpbf16ps: c += two products of bf16 pairs a b per lane
 * (4 flops); c grows by 2e-6 an iteration. */
__attribute__((target("avx512f,avx512bf16")))
static float dpbf16_loop(long n)
{
	__m512 c[12];
	__m512bh a = _mm512_cvtne2ps_pbh(_mm512_set1_ps(0.001f),
					 _mm512_set1_ps(0.001f));
	for (int i = 0; i < 12; i++)
		c[i] = _mm512_set1_ps((float)i);
	for (long k = 0; k < n; k++)
#pragma GCC unroll 12
		for (int i = 0; i < 12; i++)
			c[i] = _mm512_dpbf16_ps(c[i], a, a);
	for (int i = 1; i < 12; i++)
		c[0] = _mm512_add_ps(c[0], c[i]);
	return _mm512_reduce_add_ps(c[0]);
}

/* The kinds of peak: an instruction set's FMA, or bf16 dot products. */
enum { PEAK_BF16 = ISA_AVX512 + 1 };

static volatile float sink;

static void peak_task(void *ctx, int64_t lo, int64_t hi)
{
	int kind = *(int *)ctx;
	for (int64_t i = lo; i < hi; i++)
		sink = kind == PEAK_BF16 ? dpbf16_loop(PEAK_ITERS) :
		       kind == ISA_AVX512 ? fma_loop_avx512(PEAK_ITERS) :
					    fma_loop_avx2(PEAK_ITERS);
}

static void peak_run(void *ctx)
{
	kern_parallel_for(kern_threads(), 1, peak_task, ctx);
}

/* GFLOP/s of the loop of that kind on every thread in use. */
static double peak(int kind)
{
	double flops = kind == PEAK_BF16 ? 16 * 4 : kind == ISA_AVX512 ?
		       16 * 2 : 8 * 2;
	double t = timeit(peak_run, &kind);
	return kern_threads() * PEAK_ITERS * 12.0 * flops / t * 1e-9;
}

/* ---- sgemm -------------------------------------------------------------- */

/* C [M, N] = op(A) op(B); copies of B taken in turn (copies > 1: more
 * than the last-level cache, so that B comes from memory). */
struct gemm_case {
	int ta, tb, M, N, K, copies, turn;
	float *A, *B, *C;
};

static void gemm_run(void *ctx)
{
	struct gemm_case *g = ctx;
	const float *B = g->B + (size_t)g->turn * g->N * g->K;

	g->turn = (g->turn + 1) % g->copies;
	sgemm(g->ta, g->tb, g->M, g->N, g->K, 1, g->A, g->ta ? g->M : g->K,
	      B, g->tb ? g->K : g->N, 0, g->C, g->N);
}

static double gemm_gflops_of(int ta, int tb, int M, int N, int K, int copies)
{
	struct gemm_case g = { ta, tb, M, N, K, copies, 0,
			       randv((size_t)M * K),
			       randv((size_t)N * K * copies),
			       randv((size_t)M * N) };
	double t = timeit(gemm_run, &g);
	free(g.A);
	free(g.B);
	free(g.C);
	return 2.0 * M * N * K / t * 1e-9;
}

/* C = A W^T, W [N, K] as a model's Linear */
static double gemm_gflops(int M, int N, int K)
{
	return gemm_gflops_of(0, 1, M, N, K, 1);
}

/*
 * Few rows (decoder steps at batch 1 and small beams), every transposition
 * (ta, tb: op(A) = A^T, op(B) = B^T), B in L2 ([768, 256]) and from memory
 * ([3000, 1000] in turns of 8 copies, 96 MB).
 */
static void bench_few_rows(int quick)
{
	static const int shapes[][3] = { { 768, 256, 1 }, { 3000, 1000, 8 } };

	for (int s = 0; s < 2; s++) {
		int N = shapes[s][0], K = shapes[s][1], copies = shapes[s][2];
		for (int v = 0; v < 4; v++) {
			if (quick && v != 1)
				continue;
			printf("  few rows ta=%d tb=%d B [%d,%d] %s: M = 1, 2, "
			       "4, 8:", v >> 1, v & 1, v & 1 ? N : K,
			       v & 1 ? K : N, copies > 1 ? "memory" : "L2   ");
			for (int M = 1; M <= 8; M *= 2)
				printf(" %5.1f", gemm_gflops_of(v >> 1, v & 1,
						M, N, K, copies));
			printf(" GFLOP/s\n");
		}
	}
}

/* Prints bf16 sgemm's rate on a shape beside f32's, g. */
static void bench_bf16(int M, int N, int K, double g, double pkbf)
{
	kern_set_matmul(KERN_MATMUL_BF16);
	double b = gemm_gflops(M, N, K);
	kern_set_matmul(KERN_MATMUL_F32);
	printf("  bf16  [%4d,%4d] x [%4d,%4d]^T %7.1f GFLOP/s  %.2f of bf16 "
	       "peak, %.2f x f32\n", M, K, N, K, b, b / pkbf, b / g);
}

/* pkbf: the bf16 peak, 0 without bf16 sgemm. */
static void bench_gemm(int quick, double pk, double pkbf)
{
	static const int rows[] = { 64, 512, 4096 };
	static const int kn[][2] = { { 512, 512 }, { 512, 2048 },
				     { 2048, 512 }, { 512, 8000 } };
	double g = gemm_gflops(512, 512, 512);
	printf("  sgemm 512x512x512                %7.1f GFLOP/s  %.2f of peak\n",
	       g, g / pk);
	if (kern_isa() == ISA_REFERENCE)
		return;
	for (int r = 0; r < 3; r++)
		for (int s = 0; s < 4; s++) {
			if (quick && (r != 1 || s == 3))
				continue;
			int M = rows[r], K = kn[s][0], N = kn[s][1];
			g = gemm_gflops(M, N, K);
			printf("  sgemm [%4d,%4d] x [%4d,%4d]^T %7.1f GFLOP/s  "
			       "%.2f of peak\n", M, K, N, K, g, g / pk);
			if (pkbf)
				bench_bf16(M, N, K, g, pkbf);
		}
	for (int B = 1; B <= 64; B *= quick ? 64 : 4) {
		g = gemm_gflops(B, 3000, 1000);
		printf("  decoder step [%2d,1000] x [3000,1000]^T  %7.1f "
		       "GFLOP/s  %.2f of peak\n", B, g, g / pk);
	}
	bench_few_rows(quick);
}

/* ---- attention ---------------------------------------------------------- */

struct attn_case {
	struct attn_args a;
	float *scores;          /* unfused: [threads][T, S] */
};

static void fused_run(void *ctx)
{
	attention_forward(&((struct attn_case *)ctx)->a);
}

static void unfused_task(void *ctx, int64_t lo, int64_t hi)
{
	struct attn_case *c = ctx;
	const struct attn_args *a = &c->a;
	float *s = malloc(sizeof(float) * a->T * a->S);
	if (!s)
		abort();
	for (int64_t i = lo; i < hi; i++) {
		int b = (int)(i / a->H), h = (int)(i % a->H);
		long qo = b * a->q_bs + h * a->dk, ko = b * a->kv_bs + h * a->dk;
		sgemm(0, 1, a->T, a->S, a->dk, a->scale, a->q + qo, (int)a->q_rs,
		      a->k + ko, (int)a->kv_rs, 0, s, a->S);
		softmax_rows(s, s, a->T, a->S);
		sgemm(0, 0, a->T, a->dk, a->S, 1, s, a->S, a->v + ko,
		      (int)a->kv_rs, 0, a->out + b * a->o_bs + h * a->dk,
		      (int)a->o_rs);
	}
	free(s);
}

static void unfused_run(void *ctx)
{
	struct attn_case *c = ctx;
	kern_parallel_for((int64_t)c->a.B * c->a.H, 1, unfused_task, c);
}

static void bench_attention(int quick, double pk)
{
	const int B = 32, H = 8, dk = 64;
	for (int L = 16; L <= 512; L *= quick ? 8 : 2) {
		size_t n = (size_t)B * L * H * dk;
		struct attn_case c = { .a = {
			.B = B, .H = H, .T = L, .S = L, .dk = dk,
			.scale = 1 / sqrtf(dk),
			.q = randv(n), .q_bs = (long)L * H * dk, .q_rs = H * dk,
			.k = randv(n), .v = randv(n),
			.kv_bs = (long)L * H * dk, .kv_rs = H * dk,
			.out = randv(n), .o_bs = (long)L * H * dk, .o_rs = H * dk,
		} };
		double flops = 4.0 * B * H * L * L * dk;
		double tf, tu;
		timeit2(fused_run, &c, &tf, unfused_run, &c, &tu);
		printf("  attention B=%d H=%d dk=%d T=S=%3d: fused %6.1f GFLOP/s "
		       "(%.2f of peak), unfused %6.1f, fused/unfused %.2f\n",
		       B, H, dk, L, flops / tf * 1e-9, flops / tf * 1e-9 / pk,
		       flops / tu * 1e-9, tu / tf);
		free((void *)c.a.q);
		free((void *)c.a.k);
		free((void *)c.a.v);
		free(c.a.out);
	}
}

/* ---- additive attention -------------------------------------------------- */

struct add_case {
	int B, S, na, dv;
	float *ctx, *a, *wq, *keys, *va, *ann, *dctx, *dwq, *dkeys, *dva, *dann;
};

static void add_fwd(void *p)
{
	struct add_case *c = p;
	additive_attention_forward(c->ctx, c->a, c->wq, c->keys, c->va, c->ann,
				   NULL, c->B, c->S, c->na, c->dv);
}

static void add_bwd(void *p)
{
	struct add_case *c = p;
	additive_attention_backward(c->dwq, c->dkeys, c->dva, c->dann, c->dctx,
				    c->a, c->wq, c->keys, c->va, c->ann, NULL,
				    c->B, c->S, c->na, c->dv);
}

static void bench_additive(void)
{
	struct add_case c = { .B = 32, .S = 50, .na = 1000, .dv = 2000 };
	size_t bs = (size_t)c.B * c.S;
	c.ctx = randv((size_t)c.B * c.dv);
	c.a = randv(bs);
	c.wq = randv((size_t)c.B * c.na);
	c.keys = randv(bs * c.na);
	c.va = randv(c.na);
	c.ann = randv(bs * c.dv);
	c.dctx = randv((size_t)c.B * c.dv);
	c.dwq = randv((size_t)c.B * c.na);
	c.dkeys = randv(bs * c.na);
	c.dva = randv(c.na);
	c.dann = randv(bs * c.dv);
	add_fwd(&c);
	double tf = timeit(add_fwd, &c), tb = timeit(add_bwd, &c);
	printf("  additive attention B=32 S=50 na=1000 dv=2000: forward "
	       "%.3f ms, backward %.3f ms\n", tf * 1e3, tb * 1e3);
	float *all[] = { c.ctx, c.a, c.wq, c.keys, c.va, c.ann, c.dctx,
			 c.dwq, c.dkeys, c.dva, c.dann };
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		free(all[i]);
}

int main(int argc, char **argv)
{
	int quick = argc > 1 && strcmp(argv[1], "quick") == 0;
	int nt = kern_threads(), max = kern_set_isa(ISA_AVX512);
	double load[3] = { 0 };

	getloadavg(load, 3);
	printf("load average %.2f; %d threads; instruction sets up to %s\n",
	       load[0], nt, kern_isa_name());
	for (int isa = ISA_REFERENCE; isa <= max; isa++) {
		kern_set_isa(isa);
		for (int t = 1; t <= nt; t = t == nt ? nt + 1 : nt) {
			kern_set_threads(t);
			/* the reference against the AVX2 peak, if there is one */
			double pk = max >= ISA_AVX2 ? peak(isa == ISA_AVX512 ?
						      ISA_AVX512 : ISA_AVX2) : 0;
			printf("%s, %d thread%s: FMA peak %.1f GFLOP/s\n",
			       kern_isa_name(), t, t > 1 ? "s" : "", pk);
			double pkbf = 0;
			if (kern_set_matmul(KERN_MATMUL_BF16) == 0) {
				kern_set_matmul(KERN_MATMUL_F32);
				pkbf = peak(PEAK_BF16);
				printf("%s, %d thread%s: bf16 dot product peak "
				       "%.1f GFLOP/s\n", kern_isa_name(), t,
				       t > 1 ? "s" : "", pkbf);
			}
			bench_gemm(quick || isa == ISA_REFERENCE, pk, pkbf);
			if (isa == ISA_REFERENCE && t > 1)
				continue;
			bench_attention(quick || isa == ISA_REFERENCE, pk);
			bench_additive();
		}
	}
	return 0;
}
