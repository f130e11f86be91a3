/*
 * bench_rnn.c: the speed of the recurrent models at the sizes of issue 6
 * (emb, hidden, att 256, maxout 128, vocabularies of 8000) on one thread:
 * training in target tokens per second on a batch of about 1500 target
 * tokens (64 pairs of 22-25 tokens), and greedy decoding of 64 sentences
 * in output tokens per second.  The baseline of the same run is sgemm
 * alone: training's matrix products (counted from the shapes) at the rate
 * sgemm reaches on one of them, [1536, 256] x [256, 768], would take the
 * time printed as "sgemm-bound"; the ratio says how much of training is
 * spent elsewhere (attention, non-linearities, the loss, copies).
 *
 *   bench_rnn [rnnsearch|rnnencdec]      (default rnnsearch)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "err.h"
#include "kernels.h"
#include "model.h"

enum { B = 64, LEN = 25, STEPS = 30, V = 8000 };

static double train_speed(struct model *m, const struct batch_ids *src,
			  const struct batch_ids *tgt, int reps)
{
	double nll, t0;
	int ntok = 0;

	t0 = bench_now();
	for (int r = 0; r < reps; r++)
		if (m->arch->train_batch(m, src, tgt, 1e-3f, &nll, &ntok) < 0)
			return -1;
	return ntok * reps / (bench_now() - t0);
}

/* Greedy decoding of the batch's sentences for STEPS steps. */
static double decode_speed(struct model *m, const struct batch_ids *src)
{
	struct frame f[B], *fp[B];
	static float logp[B * V];
	int32_t prev[B];
	struct decoder *d;
	double t0 = bench_now();

	memset(f, 0, sizeof f);
	for (int b = 0; b < B; b++) {
		uint64_t dim = src->len[b];
		struct tensor t;

		tensor_init_copy(&t, "src.ids", DT_I32, 1, &dim,
				 src->ids + b * LEN);
		frame_put(&f[b], &t);
		fp[b] = &f[b];
		prev[b] = 1;
	}
	if (m->arch->embed(m, fp, B) < 0 || m->arch->encode(m, fp, B) < 0 ||
	    m->arch->attend(m, fp, B) < 0 ||
	    !(d = m->arch->dec_new(m, fp, B, 1)))
		return -1;
	for (int i = 0; i < STEPS; i++) {
		if (m->arch->dec_step(d, B, prev, logp, NULL) < 0)
			return -1;
		for (int b = 0; b < B; b++) {
			const float *row = logp + (size_t)b * V;
			int best = 0;

			for (int v = 1; v < V; v++)
				if (row[v] > row[best])
					best = v;
			prev[b] = best;
		}
	}
	m->arch->dec_free(d);
	for (int b = 0; b < B; b++)
		frame_free(&f[b]);
	return B * STEPS / (bench_now() - t0);
}

/* Multiply-adds x 2 of a training batch's matrix products: forward, and
 * twice that backward (the inputs' and the weights' gradients). */
static double train_flops(const struct model *m, int ntgt, int nsrc)
{
	int search = strcmp(m->arch->name, "rnnsearch") == 0;
	double n = 256, e = 256, na = search ? 256 : 0, l = 128;
	double dc = search ? 2 * n : n, dirs = search ? 2 : 1;
	double per_tgt = 2 * l * V + 2 * l * (n + e + dc) +
			 3 * n * (e + n + dc) + na * n;
	double per_src = dirs * 3 * n * (e + n) + na * dc;

	return 3 * 2 * (per_tgt * ntgt + per_src * nsrc);
}

int main(int argc, char **argv)
{
	const char *arch = argc > 1 ? argv[1] : "rnnsearch";
	const char *set[] = { "src_vocab=8000", "tgt_vocab=8000", "emb=256",
			      "hidden=256", "maxout=128", "att=256" };
	int search = strcmp(arch, "rnnsearch") == 0;
	struct model *m = model_create(arch, set, search ? 6 : 5, "", "");
	struct batch_ids src, tgt;
	double train, decode, rate, flops;
	int nsrc = 0, ntgt = 0;

	if (!m) {
		fprintf(stderr, "bench_rnn: %s\n", err_msg());
		return 1;
	}
	/* gradients, as model_load makes them for training */
	m->g = calloc(m->nw, sizeof(float));
	for (int i = 0; i < m->nparam; i++)
		m->param[i].g = m->g + (m->param[i].w - m->w);
	if (!m->g || m->arch->bind(m) < 0)
		return 1;
	bench_batch(&src, B, LEN, V, 1);
	bench_batch(&tgt, B, LEN, V, 2);
	for (int b = 0; b < B; b++) {
		nsrc += src.len[b];
		ntgt += tgt.len[b];
	}
	kern_set_threads(1);
	train_speed(m, &src, &tgt, 1);	/* warm up */
	train = train_speed(m, &src, &tgt, 3);
	decode = decode_speed(m, &src);
	if (train < 0 || decode < 0) {
		fprintf(stderr, "bench_rnn: %s\n", err_msg());
		return 1;
	}
	/* flop/s on a product of training's shapes */
	rate = 2 * bench_sgemm_rate(1536, 768, 256);
	flops = train_flops(m, ntgt, nsrc);
	printf("%s, %s kernels, 1 thread: training %.0f target tokens/s, "
	       "greedy decoding %.0f tokens/s\n", arch, kern_isa_name(), train,
	       decode);
	printf("%s: a batch takes %.3f s, sgemm-bound %.3f s (%.1f GFLOP at "
	       "%.1f GFLOP/s): %.2fx\n", arch, ntgt / train, flops / rate,
	       flops * 1e-9, rate * 1e-9, ntgt / train / (flops / rate));
	model_free(m);
	return 0;
}
