/*
 * bench_transformer.c: the speed of the Transformer at the sizes of issue
 * 7, on one thread, in CPU time (the machine is shared), best of a few
 * runs:
 *   - small (d_model 256, 4 heads, ffn 1024, 3+3 layers, vocabularies of
 *     8000): training in target tokens per second on 32 pairs of 22-25
 *     tokens (dropout 0.1, label smoothing 0.1); greedy translation of 32
 *     sentences of 22-25 tokens, 25 steps, in output tokens per second
 *     (embed, encode and attend included, and again the decoding stage
 *     alone: what the decode program does from attend's memory);
 *   - base (d_model 512, 8 heads, ffn 2048, 6+6 layers, vocabularies of
 *     32000): the same translation, greedy and with beams of 4.
 * Each against the goal: 3 times PyTorch's figures on one core for
 * greedy, and CTranslate2's per thread (int8) for beam 4; and, where make
 * bench-torch has measured them on this machine (bench.h's bench_torch),
 * as a ratio to PyTorch's own figures for the same work.  The baseline of
 * the same run is sgemm alone: the matrix products of each (counted from
 * the shapes) at the rate sgemm reaches on [800, 256] x [256, 1024] would
 * take the time printed as "sgemm-bound".  As the programs do, a decoder
 * is kept from batch to batch, so that the first batch packs the weights
 * for the others: the best run is one of those.
 *
 * The profile line of a translation: a decoder step's time (the search's
 * time over its steps), and the share of it that a replay of the step's
 * matrix products and of its attention, with the same weights and shapes
 * and in the decoder's order, takes.  The replay has the step's average
 * number of rows: a sentence leaves the batch when it ends.  "other" is
 * the rest: layer norms, the log-softmax, the search.  The replay's best
 * of three runs finds its weights warmer than the step does: for the int8
 * model it understates the products (perf of the base model's steps: 68%
 * products, 17% attention; the replay: 58% and 14%).  Then the step's
 * rate, its products counted from the shapes (attention left out), as a
 * fraction of the FMA peak measured at the start (peak.h), and the same
 * for the replay's products alone.
 *
 * Where the CPU has AVX512_BF16, each translation again with the decoder's
 * products in bf16 (decode and beam --matmul bf16: arch.h's dec_opts),
 * against the f32 line of the same run, with its own profile.  And again
 * with the model's int8 export (train-step -x --dtype int8: every matrix
 * product of encoder and decoder in int8, gemm_packed.h), against f32 and
 * PyTorch's f32, whose multiples are the goals for int8; and the
 * int8 export with the decoder's keys and values in f16 (--kv f16).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kernels/attn_step.h"
#include "common/heap.h"
#include "bench.h"
#include "peak.h"
#include "base/errmsg.h"
#include "kernels/gemm_packed.h"
#include "kernels/kern_impl.h"
#include "kernels/kernels.h"
#include "models/model.h"
#include "run/search.h"
#include "models/transformer/transformer.h"

enum { B = 32, LEN = 25, STEPS = 25 };

struct size {
	const char *name;
	int V, D, F, H, L;
	const char *set[7];
};

static const struct size small = {
	"small", 8000, 256, 1024, 4, 3,
	{ "src_vocab=8000", "tgt_vocab=8000", "d_model=256", "heads=4",
	  "ffn=1024", "enc_layers=3", "dec_layers=3" },
};
static const struct size base = {
	"base", 32000, 512, 2048, 8, 6,
	{ "src_vocab=32000", "tgt_vocab=32000", "d_model=512", "heads=8",
	  "ffn=2048", "enc_layers=6", "dec_layers=6" },
};

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

/* Multiply-adds of the encoder over S source rows (with the keys and
 * values of the cross-attention), and of the decoder over T steps. */
static double enc_macs(const struct size *z, double S)
{
	double D = z->D, F = z->F;

	return S * z->L * (4.0 * D * D + 2.0 * D * F + 2.0 * D * D);
}

static double dec_macs(const struct size *z, double T)
{
	double D = z->D, F = z->F;

	return T * (z->L * (6.0 * D * D + 2.0 * D * F) + D * z->V);
}

static struct model *make_model(const struct size *z, int with_grads)
{
	struct model *m = with_grads ?
		bench_training_model("transformer", z->set, 7) :
		model_create("transformer", z->set, 7, "", "");

	if (!m)
		die("model");
	return m;
}

/* m's int8 export, as train-step -x --dtype int8 writes it and decode
 * loads it: through a file, removed once loaded. */
static struct model *int8_model(const struct model *m)
{
	char path[] = "/tmp/bench_transformer.XXXXXX";
	int fd = mkstemp(path);
	struct model *q;

	if (fd < 0) {
		perror("bench_transformer: mkstemp");
		exit(1);
	}
	close(fd);
	if (model_export(m, path, DT_I8) < 0 ||
	    !(q = model_load(path, MODEL_LOAD_COPY, NULL))) {
		unlink(path);
		die("int8 export");
	}
	unlink(path);
	return q;
}

static double train_speed(struct model *m, const struct batch_ids *src,
			  const struct batch_ids *tgt, int reps)
{
	double nll, best = 0;
	int ntok = 0;

	/* one batch first: the workspace is then allocated */
	if (m->arch->train_batch(m, src, tgt, 1e-3f, 1, &nll, &ntok) < 0)
		die("train_batch");
	for (int r = 0; r < reps; r++) {
		double t0 = bench_cpu_now();
		if (m->arch->train_batch(m, src, tgt, 1e-3f, 1, &nll, &ntok) < 0)
			die("train_batch");
		double rate = ntok / (bench_cpu_now() - t0);
		best = rate > best ? rate : best;
	}
	return best;
}

struct run {
	double tok_s;		/* output tokens per CPU second, all stages */
	double step_s;		/* CPU seconds of a decoder step */
	double steps;		/* decoder steps per translation */
	double search;		/* the search's share of the time */
	double rows;		/* live rows of a step, on average */
};

/* Translates src (embed, encode, attend, search with beams of k, at most
 * STEPS ids) reps times; the best run. */
static struct run translate(const struct model *m,
			    const struct dec_opts *dec,
			    const struct batch_ids *src, int k, int reps)
{
	struct search_opts o;
	struct run best = { 0 };

	struct decoder *keep = NULL;

	search_opts_default(&o);
	o.k = k;
	o.len_a = 0;
	o.len_b = STEPS;
	o.dec = *dec;
	for (int r = 0; r < reps; r++) {
		struct frame fr[B], *fp[B];
		struct search_result res[B];
		int ntok = 0, steps = 0;

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
		double t0 = bench_cpu_now();
		if (m->arch->embed(m, fp, B) < 0 ||
		    m->arch->encode(m, fp, B) < 0 ||
		    m->arch->attend(m, fp, B) < 0)
			die("encode");
		/* as translate.c: the weights packed for the first batch
		 * serve the next ones */
		if (!keep && !(keep = m->arch->dec_new(m, dec, fp, 1, 1)))
			die("dec_new");
		double t1 = bench_cpu_now();
		if (search(m, fp, B, &o, res) < 0)
			die("search");
		double t2 = bench_cpu_now();
		for (int b = 0; b < B; b++) {
			ntok += res[b].hyp[0].len;
			steps = res[b].hyp[0].len > steps ?
				res[b].hyp[0].len : steps;
			search_result_free(&res[b]);
			frame_free(&fr[b]);
		}
		if (ntok / (t2 - t0) > best.tok_s) {
			best.tok_s = ntok / (t2 - t0);
			best.step_s = (t2 - t1) / steps;
			best.steps = steps;
			best.search = (t2 - t1) / (t2 - t0);
			/* a sentence's rows live until its best hypothesis
			 * ends (beams: about so) */
			best.rows = (double)k * ntok / steps;
		}
	}
	m->arch->dec_free(keep);
	return best;
}

/*
 * The replay of a decoder step of M rows at position t over sources of S
 * positions: *prod and *att get the CPU seconds of its matrix products
 * (packed as the decoder packs them, in bf16 with dec->bf16, int8 with
 * m->int8) and of its attention.
 */
static void replay_step(const struct model *m, const struct dec_opts *dec,
			int M, int S, int t, double *prod, double *att)
{
	const struct tf_net *n = m->net;
	int L = n->dec_layers, d = n->d, reps = 3;
	struct wpack *w = calloc((size_t)8 * L + 1, sizeof *w);
	size_t kv = (size_t)M * (S > t ? S : t) * d;
	float *x = calloc((size_t)M * (d > n->ffn ? d : n->ffn), sizeof(float));
	float *y = calloc((size_t)M * n->tgt_vocab, sizeof(float));
	float *mem = calloc(4 * kv * L, sizeof(float));
	const void **kp = malloc(sizeof(*kp) * M), **vp = malloc(sizeof(*vp) * M);
	int *ns = malloc(sizeof(int) * M), *nt = malloc(sizeof(int) * M);
	int pack = m->int8 ? WPACK_I8 : dec->bf16 ? WPACK_BF16 : WPACK_F32;

	if (!w || !x || !y || !mem || !kp || !vp || !ns || !nt)
		die("replay");
	for (int l = 0; l < L; l++) {
		const struct tf_dec_layer *dl = &n->w.dec[l];
		const float *W[8] = { dl->self.qW, dl->self.kW, dl->self.vW,
				      dl->self.oW, dl->cross.qW, dl->cross.oW,
				      dl->ffn.W1, dl->ffn.W2 };
		for (int i = 0; i < 8; i++)
			if (wpack_init(&w[8 * l + i], W[i], i == 6 ? n->ffn : d,
				       i == 7 ? n->ffn : d, pack) < 0)
				die("wpack_init");
	}
	if (wpack_init(&w[8 * L], n->w.out_W, n->tgt_vocab, d, pack) < 0)
		die("wpack_init");
	for (size_t i = 0; i < 4 * kv * L; i++)
		mem[i] = (float)((i * 7919) % 1000) * 1e-3f;
	for (int i = 0; i < M; i++) {
		ns[i] = S;
		nt[i] = t;
	}
	*prod = *att = 1e9;
	for (int r = 0; r < reps; r++) {
		double p = 0, a = 0, t0;
		for (int l = 0; l < L; l++) {
			const float *self = mem + 4 * kv * l, *cross = self + 2 * kv;
			struct attn_step as = {
				.rows = M, .H = n->heads, .dk = n->dk,
				.scale = 0.125f, .q = x, .qs = d, .k = kp,
				.v = vp, .ks = d, .vs = d, .out = y, .os = d,
			};
			t0 = bench_cpu_now();
			for (int i = 0; i < 4; i++)
				linear_packed(y, x, M, &w[8 * l + i], NULL, 0);
			p += bench_cpu_now() - t0;
			for (int i = 0; i < M; i++) {
				kp[i] = self + (size_t)i * t * d;
				vp[i] = self + kv + (size_t)i * t * d;
			}
			as.n = nt;
			t0 = bench_cpu_now();
			attn_step(&as);
			a += bench_cpu_now() - t0;
			t0 = bench_cpu_now();
			linear_packed(y, x, M, &w[8 * l + 4], NULL, 0);
			linear_packed(y, x, M, &w[8 * l + 5], NULL, 0);
			p += bench_cpu_now() - t0;
			for (int i = 0; i < M; i++) {
				/* the rows of a sentence share its memory */
				kp[i] = cross + (size_t)(i * B / M) * S * d;
				vp[i] = cross + kv + (size_t)(i * B / M) * S * d;
			}
			as.n = ns;
			t0 = bench_cpu_now();
			attn_step(&as);
			a += bench_cpu_now() - t0;
			t0 = bench_cpu_now();
			linear_packed(y, x, M, &w[8 * l + 6], NULL, 1);
			linear_packed(y, x, M, &w[8 * l + 7], NULL, 0);
			p += bench_cpu_now() - t0;
		}
		t0 = bench_cpu_now();
		linear_packed(y, x, M, &w[8 * L], NULL, 0);
		p += bench_cpu_now() - t0;
		*prod = p < *prod ? p : *prod;
		*att = a < *att ? a : *att;
	}
	for (int i = 0; i <= 8 * L; i++)
		wpack_free(&w[i]);
	free(w);
	free(x);
	free(y);
	free(mem);
	free(kp);
	free(vp);
	free(ns);
	free(nt);
}

/* The FMA peak of the kernels in force, GFLOP/s, and the int8 one,
 * GOP/s (peak.h). */
static double fma_peak, int8_peak;

/* The int8 peak of the int8 kernel in force (peak.h), GOP/s; 0 with
 * the reference. */
static double i8_peak(void)
{
	const struct gemm_i8 *k[KERN_I8_MAX];
	const char *name[KERN_I8_MAX];
	int n = kern_i8_all(k, name);

	for (int i = 0; i < n; i++)
		if (k[i] == kern_i8())
			return bench_i8_peak(name[i]);
	return 0;
}

/* peak: of the step's products (the FMA's; int8's for an int8 model) */
static void profile(const struct model *m, const struct dec_opts *dec,
		    const struct size *z, const struct run *r, double peak,
		    const char *peak_name)
{
	double prod, att, g = 2 * dec_macs(z, r->rows) / r->step_s * 1e-9;

	replay_step(m, dec, (int)(r->rows + 0.5), LEN - 2,
		    (int)(r->steps / 2) + 1, &prod, &att);
	printf("       profile: a step %.2f ms: matrix products %2.0f%%, "
	       "attention %2.0f%%, other %2.0f%%; the search %2.0f%% of the "
	       "time\n", r->step_s * 1e3, 100 * prod / r->step_s,
	       100 * att / r->step_s, 100 * (1 - (prod + att) / r->step_s),
	       100 * r->search);
	/* the step's products counted from the shapes, against the peak */
	printf("       a step %.1f GFLOP/s: %.2f of the %s peak's bound; "
	       "its products alone %.2f\n", g, g / peak, peak_name,
	       g * r->step_s / prod / peak);
}

static void report(const char *what, struct model *m, struct model *m8,
		   const struct size *z, const struct batch_ids *src, int k,
		   double rate, int reps, double goal, const char *against)
{
	const struct dec_opts f32 = { 0 };
	struct run r = translate(m, &f32, src, k, reps);
	char key[64];
	double ts = ntokens(src);
	double bound = B * STEPS / ((enc_macs(z, ts) + k * dec_macs(z, B * STEPS))
				    / rate);

	printf("%-6s %-9s %7.0f output tok/s  sgemm-bound %7.0f  ratio %.2f"
	       "  goal %4.0f: %.2f of it (%s)\n", z->name, what, r.tok_s,
	       bound, r.tok_s / bound, goal, r.tok_s / goal, against);
	/* the decode program's share: from the memory attend wrote */
	printf("%-6s %-9s %7.0f output tok/s  the decoding stage alone  "
	       "goal %4.0f: %.2f of it\n", "", "", r.tok_s / r.search, goal,
	       r.tok_s / r.search / goal);
	/* bench_torch.py's names: small.greedy, base.beam4 (.decode) */
	snprintf(key, sizeof key, "%s.%s%.0d", z->name, k > 1 ? "beam" :
		 "greedy", k > 1 ? k : 0);
	bench_torch_ratio(key, r.tok_s);
	strcat(key, ".decode");
	bench_torch_ratio(key, r.tok_s / r.search);
	profile(m, &f32, z, &r, fma_peak, "FMA");
	/* the int8 export */
	struct run q = translate(m8, &f32, src, k, reps);
	char label[80];
	printf("       int8, f32 kv %7.0f output tok/s  %.2fx f32; the "
	       "decoding stage %7.0f, %.2fx f32\n", q.tok_s, q.tok_s / r.tok_s,
	       q.tok_s / q.search, q.tok_s / q.search / (r.tok_s / r.search));
	snprintf(label, sizeof label, "int8 %s", key);
	bench_torch_ratio_as(label, key, q.tok_s / q.search);
	/* and with its attention's keys and values in f16: decode's and
	 * beam's default for an int8 export, so the one profiled */
	const struct dec_opts kv16 = { .kv_f16 = 1 };
	struct run q16 = translate(m8, &kv16, src, k, reps);
	printf("       int8, f16 kv %7.0f output tok/s  %.2fx int8 f32 kv; "
	       "the decoding stage %7.0f, %.2fx (the default)\n", q16.tok_s,
	       q16.tok_s / q.tok_s, q16.tok_s / q16.search,
	       q16.tok_s / q16.search / (q.tok_s / q.search));
	snprintf(label, sizeof label, "int8 f16kv %s", key);
	bench_torch_ratio_as(label, key, q16.tok_s / q16.search);
	if (int8_peak > 0)
		profile(m8, &kv16, z, &q16, int8_peak, "int8");
	key[strlen(key) - strlen(".decode")] = 0;
	snprintf(label, sizeof label, "int8 %s", key);
	bench_torch_ratio_as(label, key, q.tok_s);
	snprintf(label, sizeof label, "int8 f16kv %s", key);
	bench_torch_ratio_as(label, key, q16.tok_s);
	/* --matmul bf16, where the CPU has it */
	if (wpack_bf16_check() < 0)
		return;
	const struct dec_opts bf16 = { .bf16 = 1 };
	struct run h = translate(m, &bf16, src, k, reps);
	printf("       bf16 decoder %7.0f output tok/s  %.2fx f32  goal %4.0f: "
	       "%.2f of it\n", h.tok_s, h.tok_s / r.tok_s, goal,
	       h.tok_s / goal);
	printf("       bf16 decoder %7.0f output tok/s  the decoding stage "
	       "alone  %.2fx f32\n", h.tok_s / h.search,
	       h.tok_s / h.search / (r.tok_s / r.search));
	profile(m, &bf16, z, &h, fma_peak, "FMA");
}

int main(void)
{
	struct batch_ids src, tgt, bsrc;
	struct model *m, *m8;
	double rate, train, tt, ts;

	heap_keep_freed();	/* as the programs: common/heap.h */
	kern_set_threads(1);
	m = make_model(&small, 1);
	bench_batch(&src, B, LEN, small.V, 1);
	bench_batch(&tgt, B, LEN, small.V, 2);
	rate = bench_sgemm_rate(B * LEN, small.F, small.D);
	tt = ntokens(&tgt);
	ts = ntokens(&src);
	train = train_speed(m, &src, &tgt, 3);
	fma_peak = bench_fma_peak();
	int8_peak = i8_peak();
	printf("isa %s, 1 thread, CPU time, sgemm %.1f GFLOP/s, FMA peak "
	       "%.1f GFLOP/s, int8 peak %.1f GOP/s\n", kern_isa_name(),
	       2 * rate * 1e-9, fma_peak, int8_peak);
	double tbound = tt / (3 * (enc_macs(&small, ts) + dec_macs(&small, tt))
			      / rate);
	printf("small  training  %7.0f target tok/s  sgemm-bound %7.0f  "
	       "ratio %.2f\n", train, tbound, train / tbound);
	/* PyTorch's step has the update: bench_train_transformer's too */
	/* train-step --matmul bf16, where the CPU has it */
	if (kern_set_matmul(KERN_MATMUL_BF16) == 0) {
		double r16 = bench_sgemm_rate(B * LEN, small.F, small.D);
		double t16 = train_speed(m, &src, &tgt, 3);
		kern_set_matmul(KERN_MATMUL_F32);
		printf("       bf16 products %7.0f target tok/s  sgemm %.1f "
		       "GFLOP/s  %.2fx f32\n", t16, 2 * r16 * 1e-9,
		       t16 / train);
	}
	m8 = int8_model(m);
	report("greedy", m, m8, &small, &src, 1, rate, 4, 3 * 2200,
	       "3x PyTorch 2200");
	model_free(m8);
	model_free(m);

	m = make_model(&base, 0);
	m8 = int8_model(m);
	bench_batch(&bsrc, B, LEN, base.V, 1);
	report("greedy", m, m8, &base, &bsrc, 1, rate, 3, 3 * 360,
	       "3x PyTorch 360");
	report("beam 4", m, m8, &base, &bsrc, 4, rate, 2, 215,
	       "CTranslate2 int8, per thread");
	model_free(m8);
	model_free(m);
	free(src.ids);
	free(src.len);
	free(tgt.ids);
	free(tgt.len);
	free(bsrc.ids);
	free(bsrc.len);
	return 0;
}
