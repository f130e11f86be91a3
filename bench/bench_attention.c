/*
 * bench_attention.c: a training step of the fused attention, forward and
 * backward with dropout 0.1 on the weights (as the Transformer trains),
 * against the same step unfused: per (batch item, head) the scores by
 * sgemm, softmax_rows, the dropout mask (attn_dropout_keep's, made before
 * timing) applied in memory, P V by sgemm, and the backward pass by
 * sgemm and softmax_backward.  8 heads of 64, batch 32, T = S = 16..512,
 * every instruction set of the machine, one thread, CPU time, best of
 * five runs of each taken in turns.  GFLOP/s count 12 B H T S dk: the
 * two products of the forward pass and the four of the backward (not the
 * scores the fused kernel computes again).  Also without dropout, and
 * causal (the decoder's self-attention: the unfused step masks the
 * scores and still does the whole products; the count is the same).
 *
 *   bench_attention [quick]   (quick: T = 16, 128 and 512 only)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "kernels/kernels.h"

enum { B = 32, H = 8, DK = 64 };

static float *randv(size_t n)
{
	float *p = malloc(n * sizeof(float));

	if (!p) {
		perror("bench_attention");
		exit(1);
	}
	for (size_t i = 0; i < n; i++)
		p[i] = (float)rand() / RAND_MAX - 0.5f;
	return p;
}

struct step {
	struct attn_args a;
	float *dout, *dq, *dk, *dv;
	float *z;               /* unfused: the dropout factors [B, H, T, S] */
	float *p, *pd, *g, *ds; /* unfused: [T, S] each */
};

static void fused(struct step *c)
{
	attention_forward(&c->a);
	attention_backward(&c->a, c->dout, c->dq, c->dk, c->dv);
}

/* One (b, h) of the unfused step, the layout of struct attn_args. */
static void unfused_head(struct step *c, int b, int h)
{
	const struct attn_args *a = &c->a;
	int T = a->T, S = a->S, n = a->dk;
	long qo = b * a->q_bs + h * n, ko = b * a->kv_bs + h * n;
	long oo = b * a->o_bs + h * n, np = (long)T * S;
	const float *z = c->z + ((long)b * a->H + h) * np;
	int lq = (int)a->q_rs, lk = (int)a->kv_rs, lo = (int)a->o_rs;

	sgemm(0, 1, T, S, n, a->scale, a->q + qo, lq, a->k + ko, lk, 0, c->p, S);
	for (int t = 0; a->causal && t < T; t++)
		for (int j = t + 1; j < S; j++)
			c->p[(long)t * S + j] = -INFINITY;
	softmax_rows(c->p, c->p, T, S);
	for (long i = 0; i < np; i++)
		c->pd[i] = c->p[i] * z[i];
	sgemm(0, 0, T, n, S, 1, c->pd, S, a->v + ko, lk, 0, a->out + oo, lo);
	/* dPd = dout V^T, dV += Pd^T dout, dS = softmax' (dPd z), dQ, dK */
	sgemm(0, 1, T, S, n, 1, c->dout + oo, lo, a->v + ko, lk, 0, c->g, S);
	sgemm(1, 0, S, n, T, 1, c->pd, S, c->dout + oo, lo, 1, c->dv + ko, lk);
	for (long i = 0; i < np; i++)
		c->g[i] *= z[i];
	memset(c->ds, 0, sizeof(float) * np);
	softmax_backward(c->ds, c->g, c->p, T, S);
	sgemm(0, 0, T, n, S, a->scale, c->ds, S, a->k + ko, lk, 1, c->dq + qo, lq);
	sgemm(1, 0, S, n, T, a->scale, c->ds, S, a->q + qo, lq, 1, c->dk + ko, lk);
}

static void unfused(struct step *c)
{
	for (int b = 0; b < c->a.B; b++)
		for (int h = 0; h < c->a.H; h++)
			unfused_head(c, b, h);
}

/* Seconds per call of fn(c) over a run of at least 0.05 s. */
static double run_once(void (*fn)(struct step *), struct step *c)
{
	int n = 0;
	double t0 = bench_cpu_now(), t;

	do {
		fn(c);
		n++;
	} while ((t = bench_cpu_now() - t0) < 0.05);
	return t / n;
}

static void bench(int L, float dropout, int causal)
{
	size_t n = (size_t)B * L * H * DK, np = (size_t)B * H * L * L;
	long rs = H * DK, bs = (long)L * rs;
	struct step c = { .a = {
		.B = B, .H = H, .T = L, .S = L, .dk = DK,
		.scale = 1 / sqrtf(DK),
		.q = randv(n), .q_bs = bs, .q_rs = rs,
		.k = randv(n), .v = randv(n), .kv_bs = bs, .kv_rs = rs,
		.out = randv(n), .o_bs = bs, .o_rs = rs,
		.lse = randv((size_t)B * H * L),
		.causal = causal, .dropout = dropout, .seed = 1,
	} };
	c.dout = randv(n);
	c.dq = randv(n);
	c.dk = randv(n);
	c.dv = randv(n);
	c.z = randv(np);
	for (int b = 0; b < B; b++)
		for (int h = 0; h < H; h++)
			for (int t = 0; t < L; t++)
				for (int j = 0; j < L; j++)
					c.z[(((size_t)b * H + h) * L + t) * L + j] =
						attn_dropout_keep(&c.a, b, h, t, j) /
						(1 - dropout);
	c.p = randv((size_t)L * L);
	c.pd = randv((size_t)L * L);
	c.g = randv((size_t)L * L);
	c.ds = randv((size_t)L * L);

	double tf = INFINITY, tu = INFINITY;
	fused(&c);                      /* warm up: scratch, caches */
	unfused(&c);
	for (int r = 0; r < 5; r++) {
		double t = run_once(fused, &c);
		tf = t < tf ? t : tf;
		t = run_once(unfused, &c);
		tu = t < tu ? t : tu;
	}
	double flops = 12.0 * B * H * L * L * DK;
	printf("  training step B=%d H=%d dk=%d T=S=%3d dropout %.1f%s: fused "
	       "%6.1f GFLOP/s, unfused %6.1f, fused/unfused %.2f\n", B, H, DK,
	       L, dropout, causal ? " causal" : "", flops / tf * 1e-9,
	       flops / tu * 1e-9, tu / tf);
	free((void *)c.a.q);
	free((void *)c.a.k);
	free((void *)c.a.v);
	free(c.a.out);
	free(c.a.lse);
	free(c.dout);
	free(c.dq);
	free(c.dk);
	free(c.dv);
	free(c.z);
	free(c.p);
	free(c.pd);
	free(c.g);
	free(c.ds);
}

int main(int argc, char **argv)
{
	int quick = argc > 1 && strcmp(argv[1], "quick") == 0;
	int max = kern_set_isa(ISA_AVX512);
	double load[3] = { 0 };

	getloadavg(load, 3);
	kern_set_threads(1);
	printf("load average %.2f; 1 thread; CPU time\n", load[0]);
	for (int isa = ISA_AVX2 <= max ? ISA_AVX2 : max; isa <= max; isa++) {
		kern_set_isa(isa);
		printf("%s:\n", kern_isa_name());
		for (int L = 16; L <= 512; L *= quick && L == 16 ? 8 : quick ? 4 : 2) {
			bench(L, 0.1f, 0);
			bench(L, 0, 0);
			bench(L, 0.1f, 1);
		}
	}
	return 0;
}
