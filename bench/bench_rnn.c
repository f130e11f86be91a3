/*
 * bench_rnn.c: the speed of the recurrent models at the sizes of issue 6
 * (emb, hidden, att 256, maxout 128, vocabularies of 8000) on the threads
 * of ATTN_THREADS (default: every core): training in target tokens per
 * second on a batch of about 1500 target tokens (64 pairs of 22-25
 * tokens), and greedy decoding of 64 sentences in output tokens per
 * second, each the best of a few runs, by the wall clock and by the
 * process's CPU time (the figure to trust on a busy machine; with one
 * thread the two agree on a quiet one).  The baseline of the same run is
 * sgemm alone: training's matrix products (counted from the shapes) at the
 * rate sgemm reaches on one of them, [1536, 256] x [256, 768], would take
 * the time printed as "sgemm-bound"; the ratio says how much of training
 * is spent elsewhere (attention, non-linearities, the loss, copies).
 *
 * Last, one decoder step at batch 1 with the paper's sizes (emb 620,
 * hidden 1000, att 1000, maxout 500) over a source of 30 positions: the
 * whole step of the step-wise decoder (attention, context, GRU, deep
 * output) with a target vocabulary of 100, so that the output layer is
 * left out, and the GRU's recurrent part alone (gru_step_forward); beside
 * it the LSTM's (lstm_step_forward, seq2seq's) at the same width, as a
 * ratio to the GRU's.  Last, the LSTM cell's kernels (lstm_cell_forward
 * and lstm_cell_backward) on a training step's rows, [64, 256], on every
 * instruction set the machine has, as ratios to the reference.
 *
 *   bench_rnn [rnnsearch|rnnencdec]      (default rnnsearch)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/heap.h"
#include "bench.h"
#include "base/errmsg.h"
#include "nn/gru.h"
#include "nn/lstm.h"
#include "kernels/kernels.h"
#include "models/model.h"

enum { B = 64, LEN = 25, STEPS = 30, V = 8000, REPS = 4 };

/* The best of REPS runs of fn, by the wall clock and by CPU time. */
struct best {
	double wall, cpu;
};

static int time_best(struct best *b, int (*fn)(void *), void *arg)
{
	b->wall = b->cpu = 1e30;
	for (int r = 0; r < REPS; r++) {
		double w = bench_now(), c = bench_cpu_now();

		if (fn(arg) < 0)
			return -1;
		w = bench_now() - w;
		c = bench_cpu_now() - c;
		if (w < b->wall)
			b->wall = w;
		if (c < b->cpu)
			b->cpu = c;
	}
	return 0;
}

struct train_run {
	struct model *m;
	const struct batch_ids *src, *tgt;
	int ntok;
};

static int train_once(void *arg)
{
	struct train_run *t = arg;
	double nll;

	return t->m->arch->train_batch(t->m, t->src, t->tgt, 1e-3f, 1, &nll,
				       &t->ntok) < 0 ? -1 : 0;
}

struct decode_run {
	struct model *m;
	const struct batch_ids *src;
	int nsent, steps, vocab;
};

/* Greedy decoding of the first nsent sentences for steps steps, from
 * their source ids through every stage. */
static int decode_once(void *arg)
{
	const struct decode_run *r = arg;
	struct model *m = r->m;
	struct frame f[B], *fp[B];
	float *logp = malloc((size_t)r->nsent * r->vocab * sizeof(float));
	int32_t prev[B];
	struct decoder *d;
	int rc = -1;

	memset(f, 0, sizeof f);
	for (int b = 0; b < r->nsent; b++) {
		uint64_t dim = r->src->len[b];
		struct tensor t;

		tensor_init_copy(&t, "src.ids", DT_I32, 1, &dim,
				 r->src->ids + b * r->src->S);
		frame_put(&f[b], &t);
		fp[b] = &f[b];
		prev[b] = 1;
	}
	if (!logp || m->arch->embed(m, fp, r->nsent) < 0 ||
	    m->arch->encode(m, fp, r->nsent) < 0 ||
	    m->arch->attend(m, fp, r->nsent) < 0 ||
	    !(d = m->arch->dec_new(m, NULL, fp, r->nsent, 1)))
		goto out;
	for (int i = 0; i < r->steps; i++) {
		if (m->arch->dec_step(d, r->nsent, prev, logp, NULL) < 0)
			goto out;
		for (int b = 0; b < r->nsent; b++) {
			const float *row = logp + (size_t)b * r->vocab;
			int best = 0;

			for (int v = 1; v < r->vocab; v++)
				if (row[v] > row[best])
					best = v;
			prev[b] = best;
		}
	}
	m->arch->dec_free(d);
	rc = 0;
out:
	for (int b = 0; b < r->nsent; b++)
		frame_free(&f[b]);
	free(logp);
	return rc;
}

/* Multiply-adds x 2 of a training batch's matrix products: forward, and
 * twice that backward (the inputs' and the weights' gradients). */
static double train_flops(const struct model *m, int ntgt, int nsrc)
{
	int search = strcmp(m->arch->name, "rnnsearch") == 0;
	double n = 256, e = 256, na = search ? 256 : 0, l = 128;
	double dc = search ? 2 * n : n, dirs = search ? 2 : 1;
	double per_tgt = l * V + 2 * l * (n + e + dc) +
			 3 * n * (e + n + dc) + na * n;
	double per_src = dirs * 3 * n * (e + n) + na * dc;

	return 3 * 2 * (per_tgt * ntgt + per_src * nsrc);
}

/* Small random parameters without the paper's orthogonal U, whose
 * Gram-Schmidt would take seconds at hidden 1000: speed only. */
static void quick_init(struct model *m)
{
	uint32_t x = 12345;

	for (size_t i = 0; i < m->nw; i++) {
		x = x * 1664525u + 1013904223u;
		m->w[i] = ((float)(x >> 8) / (1 << 24) - 0.5f) * 0.02f;
	}
}

struct gru_run {
	float *h, *hnew, *pre, *zr, *rh, *hh;
	const float *U;
	int n, reps;
};

static int gru_steps(void *arg)
{
	const struct gru_run *g = arg;

	for (int r = 0; r < g->reps; r++)
		gru_step_forward(g->hnew, g->pre, g->zr, g->rh, g->hh, g->h,
				 g->U, 1, g->n);
	return 0;
}

struct lstm_run {
	float *h, *c, *hnew, *cnew, *pre, *act, *dh, *dc, *dpre;
	const float *U;
	int B, n, reps;
};

static int lstm_steps(void *arg)
{
	const struct lstm_run *l = arg;

	for (int r = 0; r < l->reps; r++)
		lstm_step_forward(l->hnew, l->cnew, l->act, l->pre, l->h, l->c,
				  l->U, l->B, l->n);
	return 0;
}

static int lstm_cells(void *arg)
{
	const struct lstm_run *l = arg;

	for (int r = 0; r < l->reps; r++)
		lstm_cell_forward(l->act, l->cnew, l->hnew, l->pre, l->c, l->B,
				  l->n);
	return 0;
}

static int lstm_cells_back(void *arg)
{
	const struct lstm_run *l = arg;

	for (int r = 0; r < l->reps; r++)
		lstm_cell_backward(l->dpre, l->dc, l->dh, l->dh, l->act, l->c,
				   l->cnew, l->B, l->n);
	return 0;
}

/* Room for an LSTM step of B rows of width n (U [4n, n] random). */
static float *lstm_room(struct lstm_run *l, int B, int n, int reps)
{
	size_t bn = (size_t)B * n;
	float *mem = malloc((19 * bn + (size_t)4 * n * n) * sizeof(float));

	if (!mem)
		return NULL;
	for (size_t i = 0; i < 19 * bn + (size_t)4 * n * n; i++)
		mem[i] = (float)((i * 2654435761u) % 2001) / 1000.0f - 1.0f;
	*l = (struct lstm_run){ mem, mem + bn, mem + 2 * bn, mem + 3 * bn,
				mem + 4 * bn, mem + 8 * bn, mem + 12 * bn,
				mem + 13 * bn, mem + 14 * bn, mem + 19 * bn,
				B, n, reps };
	return mem;
}

/* The LSTM cell's kernels per instruction set, as ratios to the
 * reference's time (CPU time: the figure to trust on a busy machine). */
static int lstm_kernels(void)
{
	struct lstm_run l;
	float *mem = lstm_room(&l, B, 256, 200);
	int isa0 = kern_isa();
	double ref[2] = { 0, 0 };

	if (!mem)
		return -1;
	for (int isa = ISA_REFERENCE; isa <= ISA_AVX512; isa++) {
		struct best f, b;

		if (kern_set_isa(isa) != isa)
			continue;
		time_best(&f, lstm_cells, &l);
		time_best(&b, lstm_cells_back, &l);
		if (isa == ISA_REFERENCE) {
			ref[0] = f.cpu;
			ref[1] = b.cpu;
		}
		printf("lstm cell [%d, %d], %s kernels: forward %.1f us "
		       "(%.2fx the reference), backward %.1f us (%.2fx)\n", B,
		       256, kern_isa_name(), f.cpu / l.reps * 1e6,
		       ref[0] / f.cpu, b.cpu / l.reps * 1e6, ref[1] / b.cpu);
	}
	kern_set_isa(isa0);
	free(mem);
	return 0;
}

/* One decoder step at batch 1 with the paper's sizes, in seconds of wall
 * clock and of CPU time ([0], [1]): the decoder's whole step (tgt_vocab
 * 100) and the GRU's recurrent part. */
static int paper_step(const char *arch, double *step, double *gru,
		      double *lstm)
{
	static struct arch fast;
	const char *set[] = { "src_vocab=100", "tgt_vocab=100", "emb=620",
			      "hidden=1000", "maxout=500", "att=1000" };
	struct batch_ids src;
	struct model *m;
	struct best t;
	int n = 1000, reps = 20, rc = -1;

	fast = *arch_find(arch);
	fast.name = strcmp(arch, "rnnsearch") ? "rnnencdec-fast" :
		    "rnnsearch-fast";
	fast.init = quick_init;
	if (!arch_find(fast.name) && arch_register(&fast) < 0)
		return -1;
	m = model_create(fast.name, set, strcmp(arch, "rnnsearch") ? 5 : 6,
			 "", "");
	if (!m)
		return -1;
	bench_batch(&src, 1, 30, 100, 3);
	/* 1 and reps + 1 steps: the difference is reps steps */
	struct decode_run one = { m, &src, 1, 1, 100 };
	struct decode_run many = { m, &src, 1, reps + 1, 100 };
	struct best t1;
	if (time_best(&t1, decode_once, &one) < 0 ||
	    time_best(&t, decode_once, &many) < 0)
		goto out;
	step[0] = (t.wall - t1.wall) / reps;
	step[1] = (t.cpu - t1.cpu) / reps;

	float *mem = calloc((size_t)9 * n, sizeof(float));
	struct gru_run g = { mem, mem + n, mem + 2 * n, mem + 5 * n,
			     mem + 7 * n, mem + 8 * n,
			     ((struct param *)model_param(m, "dec.U"))->w, n,
			     reps };
	if (!mem)
		goto out;
	time_best(&t, gru_steps, &g);
	gru[0] = t.wall / reps;
	gru[1] = t.cpu / reps;
	free(mem);
	struct lstm_run l;
	if (!(mem = lstm_room(&l, 1, n, reps)))
		goto out;
	time_best(&t, lstm_steps, &l);
	lstm[0] = t.wall / reps;
	lstm[1] = t.cpu / reps;
	free(mem);
	rc = 0;
out:
	free(src.ids);
	free(src.len);
	model_free(m);
	return rc;
}

int main(int argc, char **argv)
{
	const char *arch = argc > 1 ? argv[1] : "rnnsearch";
	const char *set[] = { "src_vocab=8000", "tgt_vocab=8000", "emb=256",
			      "hidden=256", "maxout=128", "att=256" };
	int search = strcmp(arch, "rnnsearch") == 0;
	struct model *m;
	struct batch_ids src, tgt;
	struct best train, decode;
	double rate, flops, step[2], gru[2], lstm[2];
	int nsrc = 0, ntgt = 0;

	heap_keep_freed();	/* as the programs: common/heap.h */
	if (strcmp(arch, "rnnsearch") && strcmp(arch, "rnnencdec")) {
		fprintf(stderr, "bench_rnn: %s: not rnnsearch or rnnencdec\n",
			arch);
		return 2;
	}
	m = bench_training_model(arch, set, search ? 6 : 5);
	if (!m) {
		fprintf(stderr, "bench_rnn: %s\n", err_msg());
		return 1;
	}
	bench_batch(&src, B, LEN, V, 1);
	bench_batch(&tgt, B, LEN, V, 2);
	for (int b = 0; b < B; b++) {
		nsrc += src.len[b];
		ntgt += tgt.len[b];
	}
	struct train_run tr = { m, &src, &tgt, 0 };
	struct decode_run dr = { m, &src, B, STEPS, V };
	if (train_once(&tr) < 0 ||	/* warm up */
	    time_best(&train, train_once, &tr) < 0 ||
	    time_best(&decode, decode_once, &dr) < 0 ||
	    paper_step(arch, step, gru, lstm) < 0) {
		fprintf(stderr, "bench_rnn: %s\n", err_msg());
		return 1;
	}
	/* flop/s on a product of training's shapes */
	rate = 2 * bench_sgemm_rate(1536, 768, 256);
	flops = train_flops(m, ntgt, nsrc);
	printf("%s, %s kernels, %d thread%s: training %.0f target tokens/s "
	       "(%.0f per CPU second), greedy decoding %.0f tokens/s (%.0f per "
	       "CPU second)\n", arch, kern_isa_name(), kern_threads(),
	       kern_threads() > 1 ? "s" : "", ntgt / train.wall,
	       ntgt / train.cpu, B * STEPS / decode.wall,
	       B * STEPS / decode.cpu);
	printf("%s: a batch takes %.3f s, sgemm-bound %.3f s (%.1f GFLOP at "
	       "%.1f GFLOP/s): %.2fx\n", arch, train.wall, flops / rate,
	       flops * 1e-9, rate * 1e-9, train.wall / (flops / rate));
	printf("%s, paper's sizes, batch 1: a decoder step without the output "
	       "layer %.2f ms (%.2f ms of CPU), the GRU's recurrent part "
	       "%.2f ms (%.2f)\n", arch, step[0] * 1e3, step[1] * 1e3,
	       gru[0] * 1e3, gru[1] * 1e3);
	printf("%s, paper's sizes, batch 1: the LSTM's recurrent part "
	       "(hidden 1000) %.2f ms (%.2f ms of CPU): %.2fx the GRU's "
	       "(U 4n x n to 3n x n: 1.33x the products)\n", arch,
	       lstm[0] * 1e3, lstm[1] * 1e3, lstm[1] / gru[1]);
	if (lstm_kernels() < 0) {
		fprintf(stderr, "bench_rnn: out of memory\n");
		return 1;
	}
	/* train-step --matmul bf16, where the CPU has it */
	struct best t16;
	if (kern_set_matmul(KERN_MATMUL_BF16) == 0) {
		if (time_best(&t16, train_once, &tr) < 0) {
			fprintf(stderr, "bench_rnn: %s\n", err_msg());
			return 1;
		}
		kern_set_matmul(KERN_MATMUL_F32);
		printf("%s: training with bf16 products %.0f target tokens/s "
		       "(%.0f per CPU second): %.2fx f32\n", arch,
		       ntgt / t16.wall, ntgt / t16.cpu, train.cpu / t16.cpu);
	}
	model_free(m);
	return 0;
}
