/*
 * bench_train_transformer.c: one training step of the Transformer of issue
 * 7 (d_model 256, 4 heads, ffn 1024, 3+3 layers, vocabularies of 8000,
 * dropout 0.1, label smoothing 0.1) on 32 pairs of 22-25 tokens, one
 * thread, in CPU time of the thread (the machine is shared): the forward
 * and backward pass (train_batch) and the update (zeroing the gradients,
 * their norm, Adam), best of the repetitions.
 *
 * The floating-point work is counted from the shapes of the padded batch
 * (800 rows a side, full attention matrices), as a framework computes it:
 * every product of the forward pass once, and twice in the backward pass
 * (the input's and the weights' gradients).  The output layer here sees
 * only the 750 rows with a reference, 1.7% less work than counted.
 * Its time at the FMA peak of the kernels in force, measured in the same
 * run (peak.h), bounds the speed; sgemm's own rate on [800, 256] x [256,
 * 1024], measured in the same run, is the baseline of the ratio, and
 * PyTorch's step on the same batch where make bench-torch has measured it
 * (bench.h's bench_torch: forward, backward and Adam).
 *
 *	bench_train_transformer [reps]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/heap.h"
#include "bench.h"
#include "peak.h"
#include "base/errmsg.h"
#include "kernels/kernels.h"
#include "models/model.h"
#include "run/optim.h"

enum { B = 32, LEN = 25, V = 8000, D = 256, F = 1024, L = 3 };

static void die(const char *what)
{
	fprintf(stderr, "bench_train_transformer: %s: %s\n", what, err_msg());
	exit(1);
}

/* Multiply-adds of the forward pass over S source and T target positions
 * of each of B sentences. */
static double fwd_macs(double S, double T)
{
	double N = B * S, M = B * T;
	double enc = L * (N * (4.0 * D * D + 2.0 * D * F) + 2 * N * S * D);
	double dec = L * (M * (6.0 * D * D + 2.0 * D * F) + N * 2.0 * D * D +
			  2 * M * T * D + 2 * M * S * D);

	return enc + dec + M * (double)D * V;
}

int main(int argc, char **argv)
{
	const char *set[] = {
		"src_vocab=8000", "tgt_vocab=8000", "d_model=256", "heads=4",
		"ffn=1024", "enc_layers=3", "dec_layers=3", "dropout=0.1",
		"label_smoothing=0.1",
	};
	int reps = argc > 1 ? atoi(argv[1]) : 5;
	struct batch_ids src, tgt;
	struct optim o;
	struct model *m;
	double flops, step = 1e30, upd = 1e30, rate, peak, nll;
	int ntok = 0;

	heap_keep_freed();	/* as the programs: common/heap.h */
	kern_set_threads(1);
	m = bench_training_model("transformer", set, 9);
	if (!m || optim_init(&o, m) < 0)
		die("model_load");
	bench_batch(&src, B, LEN, V, 1);
	bench_batch(&tgt, B, LEN, V, 2);
	for (int r = 0; r <= reps; r++) {
		double t0 = bench_cpu_now(), t1, t2;

		if (m->arch->train_batch(m, &src, &tgt, 1e-3f, 1, &nll, &ntok) < 0)
			die("train_batch");
		t1 = bench_cpu_now();
		optim_update(&o, m, clip_factor(&o, grad_norm(m->g, m->nw)));
		memset(m->g, 0, m->nw * sizeof *m->g);
		t2 = bench_cpu_now();
		if (r && t1 - t0 < step)	/* the first allocates */
			step = t1 - t0;
		if (r && t2 - t1 < upd)
			upd = t2 - t1;
	}
	rate = bench_sgemm_rate(B * LEN, F, D);
	peak = bench_fma_peak();
	flops = 6 * fwd_macs(LEN, LEN);
	printf("%d target tokens, %.1f GFLOP a padded step (%.1f MFLOP a token); "
	       "peak %.0f GFLOP/s bounds %.0f tok/s\n", ntok, flops * 1e-9,
	       flops / ntok * 1e-6, peak, ntok / (flops / (peak * 1e9)));
	printf("train_batch %.3f s CPU: %.0f tok/s, %.1f GFLOP/s\n", step,
	       ntok / step, flops / step * 1e-9);
	printf("update      %.3f s CPU: with it %.0f tok/s\n", upd,
	       ntok / (step + upd));
	printf("sgemm %.1f GFLOP/s alone: train_batch at %.2f "
	       "of it\n", 2 * rate * 1e-9, flops / step / (2 * rate));
	bench_torch_ratio("small.train", ntok / (step + upd));
	optim_free(&o);
	free(src.ids);
	free(src.len);
	free(tgt.ids);
	free(tgt.len);
	model_free(m);
	return 0;
}
