/*
 * bench_transformer.c: the speed of the Transformer at the sizes of issue
 * 7 (d_model 256, 4 heads, ffn 1024, 3+3 layers, vocabularies of 8000) on
 * one thread: training in target tokens per second on 32 pairs of 22-25
 * tokens (dropout 0.1, label smoothing 0.1), and greedy decoding with the
 * cache of 32 sentences of 22-25 tokens, 25 steps, in output tokens per
 * second (embed, encode and attend included).  The baseline of the same
 * run is sgemm alone: the matrix products of each (counted from the
 * shapes) at the rate sgemm reaches on [800, 256] x [256, 1024] would take
 * the time printed as "sgemm-bound".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "err.h"
#include "kernels.h"
#include "model.h"

enum { B = 32, LEN = 25, STEPS = 25, V = 8000, D = 256, F = 1024, L = 3 };

static void die(const char *what)
{
	fprintf(stderr, "bench_transformer: %s: %s\n", what, err_msg());
	exit(1);
}

static int ntokens(const struct batch_ids *x)
{
	int n = 0;

	for (int b = 0; b < x->B; b++)
		n += x->len[b];
	return n;
}

/* Multiply-adds of the forward pass over S source and T target rows. */
static double fwd_macs(double S, double T)
{
	double enc = S * L * (4.0 * D * D + 2.0 * D * F);
	double dec = T * L * (6.0 * D * D + 2.0 * D * F) + S * L * 2.0 * D * D;

	return enc + dec + T * (double)D * V;
}

static double train_speed(struct model *m, const struct batch_ids *src,
			  const struct batch_ids *tgt, int reps)
{
	double nll, t0;
	int ntok = 0;

	/* one batch first: the workspace is then allocated */
	if (m->arch->train_batch(m, src, tgt, 1e-3f, &nll, &ntok) < 0)
		die("train_batch");
	t0 = bench_now();
	for (int r = 0; r < reps; r++)
		if (m->arch->train_batch(m, src, tgt, 1e-3f, &nll, &ntok) < 0)
			die("train_batch");
	return ntok * reps / (bench_now() - t0);
}

static double decode_speed(const struct model *m, const struct batch_ids *src,
			   int reps)
{
	struct frame fr[B], *fp[B];
	float *logp = malloc(sizeof(float) * B * V);
	double t0 = 0;

	for (int r = 0; r <= reps; r++) {
		int32_t prev[B];
		struct decoder *d;

		if (r == 1)
			t0 = bench_now();
		memset(fr, 0, sizeof fr);
		for (int b = 0; b < B; b++) {
			struct tensor t;
			uint64_t dim = src->len[b];

			fr[b].number = b;
			fp[b] = &fr[b];
			if (tensor_init_copy(&t, "src.ids", DT_I32, 1, &dim,
					     src->ids + b * LEN) < 0 ||
			    !frame_put(&fr[b], &t))
				die("frame");
		}
		if (m->arch->embed(m, fp, B) < 0 ||
		    m->arch->encode(m, fp, B) < 0 ||
		    m->arch->attend(m, fp, B) < 0)
			die("encode");
		d = m->arch->dec_new(m, fp, B, 1);
		if (!d)
			die("dec_new");
		for (int b = 0; b < B; b++)
			prev[b] = 1;
		for (int s = 0; s < STEPS; s++) {
			if (m->arch->dec_step(d, B, prev, logp, NULL) < 0)
				die("dec_step");
			for (int b = 0; b < B; b++) {
				int best = 0;

				for (int k = 1; k < V; k++)
					if (logp[b * V + k] > logp[b * V + best])
						best = k;
				prev[b] = best;
			}
		}
		m->arch->dec_free(d);
		for (int b = 0; b < B; b++)
			frame_free(&fr[b]);
	}
	free(logp);
	return (double)B * STEPS * reps / (bench_now() - t0);
}

int main(void)
{
	const char *set[] = {
		"src_vocab=8000", "tgt_vocab=8000", "d_model=256", "heads=4",
		"ffn=1024", "enc_layers=3", "dec_layers=3", "dropout=0.1",
		"label_smoothing=0.1",
	};
	char path[] = "/tmp/bench_transformer.XXXXXX";
	struct batch_ids src, tgt;
	struct model *m;
	double rate, train, dec, tt, ts;
	int fd;

	kern_set_threads(1);
	m = model_create("transformer", set, 9, "", "");
	if (!m)
		die("model_create");
	/* a model with gradients, as training loads it */
	fd = mkstemp(path);
	if (fd < 0 || model_save(m, path, NULL, 0) < 0)
		die("model_save");
	model_free(m);
	m = model_load(path, 1, NULL);
	unlink(path);
	if (!m)
		die("model_load");
	bench_batch(&src, B, LEN, V, 1);
	bench_batch(&tgt, B, LEN, V, 2);
	rate = bench_sgemm_rate(B * LEN, F, D);
	tt = ntokens(&tgt);
	ts = ntokens(&src);
	m->training = 1;
	train = train_speed(m, &src, &tgt, 3);
	m->training = 0;
	dec = decode_speed(m, &src, 2);
	printf("isa %s, 1 thread, sgemm %.1f GFLOP/s\n", kern_isa_name(),
	       2 * rate * 1e-9);
	printf("training  %7.0f target tok/s  sgemm-bound %7.0f  ratio %.2f"
	       "  (PyTorch 1660)\n", train,
	       tt / (3 * fwd_macs(ts, tt) / rate),
	       train / (tt / (3 * fwd_macs(ts, tt) / rate)));
	printf("greedy    %7.0f output tok/s  sgemm-bound %7.0f  ratio %.2f"
	       "  (PyTorch 2200)\n", dec,
	       B * STEPS / (fwd_macs(ts, 0) / rate + fwd_macs(0, B * STEPS)
			    / rate),
	       dec / (B * STEPS / (fwd_macs(ts, 0) / rate +
				   fwd_macs(0, B * STEPS) / rate)));
	free(src.ids);
	free(src.len);
	free(tgt.ids);
	free(tgt.len);
	model_free(m);
	return 0;
}
