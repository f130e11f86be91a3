/*
 * test_seq2seq.c: the seq2seq model (doc/MODELS.md): the stages and the
 * decoder against the equations computed in double, reversed and not,
 * every parameter's gradient against finite differences (with dropout
 * too, its masks drawn again from the same generator state), scoring
 * through the step-wise decoder against training, padding and batching
 * that never change a result, threads that never change a bit,
 * hypotheses duplicated by dec_select, the initialisation, the parameter
 * table, and refusals.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/errmsg.h"
#include "base/rng.h"
#include "kernels/kernels.h"
#include "models/model.h"
#include "nn/lstm.h"
#include "run_suite.h"

/* ---- helpers ------------------------------------------------------------- */

enum { VS = 11, VT = 13, M = 5, N = 4 };

/*
 * A small model (emb 5, hidden 4, 2 layers unless extra says otherwise),
 * every parameter from N(0, 0.5^2): far from the paper's small start, so
 * that every path carries a gradient finite differences can see and the
 * outputs are far from uniform.  extra: settings separated by spaces.
 */
static struct model *make_model(const char *extra)
{
	const char *set[10] = { "src_vocab=11", "tgt_vocab=13", "emb=5",
				"hidden=4" };
	char more[128];
	int k = 4;
	struct model *m;
	struct rng r;

	snprintf(more, sizeof more, "%s", extra ? extra : "");
	for (char *t = strtok(more, " "); t && k < 10; t = strtok(NULL, " "))
		set[k++] = t;
	m = model_create("seq2seq", set, k, "", "");
	ck_assert_msg(m != NULL, "%s", err_msg());
	rng_seed(&r, 7);
	for (size_t j = 0; j < m->nw; j++)
		m->w[j] = (float)(0.5 * rng_normal(&r));
	return m;
}

static void grads_on(struct model *m)
{
	m->g = calloc(m->nw, sizeof(float));
	ck_assert_ptr_nonnull(m->g);
	for (int i = 0; i < m->nparam; i++)
		m->param[i].g = m->g + (m->param[i].w - m->w);
	ck_assert_int_eq(m->arch->bind(m), 0);
}

struct batch {
	struct batch_ids b;
	int32_t ids[64];
	int len[8];
};

/* Sentences of the given lengths, random ids >= 3 ending with </s>. */
static void make_batch(struct batch *x, int B, const int *len, int V,
		       uint64_t seed)
{
	struct rng r;

	rng_seed(&r, seed);
	memset(x, 0, sizeof *x);
	x->b.B = B;
	for (int b = 0; b < B; b++)
		if (len[b] > x->b.S)
			x->b.S = len[b];
	ck_assert_int_le(B * x->b.S, 64);
	for (int b = 0; b < B; b++) {
		x->len[b] = len[b];
		for (int t = 0; t < len[b]; t++)
			x->ids[b * x->b.S + t] = t == len[b] - 1 ? 2 :
				3 + (int32_t)rng_below(&r, V - 3);
	}
	x->b.ids = x->ids;
	x->b.len = x->len;
}

static void one_sentence(struct batch *one, const struct batch *x, int b,
			 int len)
{
	memset(one, 0, sizeof *one);
	one->b.B = 1;
	one->b.S = len;
	one->len[0] = len;
	memcpy(one->ids, x->ids + b * x->b.S, len * sizeof(int32_t));
	one->b.ids = one->ids;
	one->b.len = one->len;
}

/* With fixed set, every call starts from the generator state fixed: the
 * same dropout masks each time. */
static struct rng fixed;
static int fixed_set;

static double train(struct model *m, const struct batch *src,
		    const struct batch *tgt, float scale, double *nll)
{
	int ntok;
	double loss;

	if (fixed_set)
		m->rng = fixed;
	loss = m->arch->train_batch(m, &src->b, &tgt->b, scale, nll, &ntok);
	ck_assert_msg(loss >= 0, "%s", err_msg());
	return loss;
}

static struct frame *pipeline(const struct model *m, const struct batch *x)
{
	struct frame *f = calloc(x->b.B, sizeof *f);
	struct frame *fp[8];

	for (int b = 0; b < x->b.B; b++) {
		uint64_t dim = x->len[b];
		struct tensor t;

		f[b].number = b;
		ck_assert_int_eq(tensor_init_copy(&t, "src.ids", DT_I32, 1,
						  &dim, x->ids + b * x->b.S),
				 0);
		ck_assert_ptr_nonnull(frame_put(&f[b], &t));
		fp[b] = &f[b];
	}
	ck_assert_msg(m->arch->embed(m, fp, x->b.B) == 0, "%s", err_msg());
	ck_assert_msg(m->arch->encode(m, fp, x->b.B) == 0, "%s", err_msg());
	ck_assert_msg(m->arch->attend(m, fp, x->b.B) == 0, "%s", err_msg());
	return f;
}

static void free_frames(struct frame *f, int n)
{
	for (int i = 0; i < n; i++)
		frame_free(&f[i]);
	free(f);
}

static void assert_close(const float *a, const float *b, size_t n,
			 double tol, const char *what)
{
	for (size_t i = 0; i < n; i++) {
		double scale = fabs(a[i]) > 1 ? fabs(a[i]) : 1;
		ck_assert_msg(fabs(a[i] - b[i]) <= tol * scale,
			      "%s[%zu]: %.9g vs %.9g", what, i, a[i], b[i]);
	}
}

static void assert_records_close(const struct frame *a, const struct frame *b,
				 const char *name, double tol)
{
	const struct tensor *x = frame_find(a, name), *y = frame_find(b, name);

	ck_assert_ptr_nonnull(x);
	ck_assert_ptr_nonnull(y);
	ck_assert_int_eq(x->rank, y->rank);
	ck_assert_uint_eq(x->dim[0], y->dim[0]);
	assert_close(x->data, y->data, x->nbytes / sizeof(float), tol, name);
}

/* ---- the equations of doc/MODELS.md, in double --------------------------- */

static const float *W_(const struct model *m, const char *fmt, int l)
{
	char name[64];
	const struct param *p;

	snprintf(name, sizeof name, fmt, l);
	p = model_param(m, name);
	ck_assert_msg(p != NULL, "no %s", name);
	return p->w;
}

static double sig(double x)
{
	return 1 / (1 + exp(-x));
}

/* One LSTM step of layer side.l (side "enc" or "dec"): h, c [N] from
 * input x [in]; gates i, f, g, o. */
static void ref_step(const struct model *m, const char *side, int l,
		     const double *x, int in, double *h, double *c)
{
	char fmt[32];
	double pre[4 * N], hn[N];

	snprintf(fmt, sizeof fmt, "%s.%%d.W", side);
	const float *W = W_(m, fmt, l);
	snprintf(fmt, sizeof fmt, "%s.%%d.U", side);
	const float *U = W_(m, fmt, l);
	snprintf(fmt, sizeof fmt, "%s.%%d.b", side);
	const float *b = W_(m, fmt, l);
	for (int r = 0; r < 4 * N; r++) {
		pre[r] = b[r];
		for (int k = 0; k < in; k++)
			pre[r] += (double)W[r * in + k] * x[k];
		for (int k = 0; k < N; k++)
			pre[r] += (double)U[r * N + k] * h[k];
	}
	for (int k = 0; k < N; k++) {
		double i = sig(pre[k]), f = sig(pre[N + k]);
		double g = tanh(pre[2 * N + k]), o = sig(pre[3 * N + k]);
		c[k] = f * c[k] + i * g;
		hn[k] = o * tanh(c[k]);
	}
	memcpy(h, hn, sizeof hn);
}

/*
 * The model's equations: the source read in order ids[S-2], ..., ids[0],
 * ids[S-1] with reverse (else as it is) through the encoder's L layers
 * from zero states; top [S, N] the top layer's state after each source
 * position (in source order); h, c [L, N] the last ones; then the
 * decoder from them, fed <s>, tgt[0], ...: logp [T, VT].
 */
static void ref_model(const struct model *m, const int32_t *src, int S,
		      const int32_t *tgt, int T, double *top, double *h,
		      double *c, double *logp)
{
	long L, rev;
	const float *se = W_(m, "src.emb", 0), *te = W_(m, "tgt.emb", 0);
	const float *oW = W_(m, "out.W", 0), *ob = W_(m, "out.b", 0);
	double x[8][M > N ? M : N], hd[16 * N], cd[16 * N];

	ck_assert_int_eq(config_int(&m->cfg, "layers", &L), 0);
	ck_assert_int_eq(config_int(&m->cfg, "reverse", &rev), 0);
	memset(h, 0, L * N * sizeof *h);
	memset(c, 0, L * N * sizeof *c);
	for (int t = 0; t < S; t++) {
		int j = rev && t < S - 1 ? S - 2 - t : t;
		double in[M];

		for (int k = 0; k < M; k++)
			in[k] = se[src[j] * M + k];
		for (int l = 0; l < L; l++) {
			ref_step(m, "enc", l, l ? h + (l - 1) * N : in,
				 l ? N : M, h + l * N, c + l * N);
		}
		memcpy(top + j * N, h + (L - 1) * N, N * sizeof *h);
	}
	(void)x;
	memcpy(hd, h, L * N * sizeof *h);
	memcpy(cd, c, L * N * sizeof *c);
	for (int i = 0; i < T; i++) {
		int prev = i ? tgt[i - 1] : 1;
		double in[M], z[VT], mx = -1e300, sum = 0;

		for (int k = 0; k < M; k++)
			in[k] = te[prev * M + k];
		for (int l = 0; l < L; l++)
			ref_step(m, "dec", l, l ? hd + (l - 1) * N : in,
				 l ? N : M, hd + l * N, cd + l * N);
		for (int v = 0; v < VT; v++) {
			z[v] = ob[v];
			for (int k = 0; k < N; k++)
				z[v] += (double)oW[v * N + k] *
					hd[(L - 1) * N + k];
			if (z[v] > mx)
				mx = z[v];
		}
		for (int v = 0; v < VT; v++)
			sum += exp(z[v] - mx);
		for (int v = 0; v < VT; v++)
			logp[i * VT + v] = z[v] - mx - log(sum);
	}
}

/*
 * Three sentences through the stages at once and the decoder fed a
 * target: enc.out, att.h, att.c and every step's log-probabilities
 * against the equations in double, to f32 rounding (1e-5).  Reading the
 * source the other way changes every one of them.
 */
static void equations_case(const char *extra)
{
	static const int slen[] = { 5, 2, 4 }, tlen[] = { 4, 4, 4 };
	struct model *m = make_model(extra);
	struct batch src, tgt;
	long L;

	ck_assert_int_eq(config_int(&m->cfg, "layers", &L), 0);
	make_batch(&src, 3, slen, VS, 1);
	make_batch(&tgt, 3, tlen, VT, 2);
	struct frame *f = pipeline(m, &src);
	struct frame *fp[3] = { &f[0], &f[1], &f[2] };
	struct decoder *d = m->arch->dec_new(m, fp, 3, 1);
	double top[8 * N], h[16 * N], c[16 * N], lp[3][4 * VT];
	float logp[3 * VT];
	int32_t prev[3] = { 1, 1, 1 };

	ck_assert_msg(d != NULL, "%s", err_msg());
	for (int b = 0; b < 3; b++) {
		const struct tensor *t;
		ref_model(m, src.ids + b * src.b.S, slen[b],
			  tgt.ids + b * tgt.b.S, 4, top, h, c, lp[b]);
		t = frame_find(&f[b], "enc.out");
		ck_assert_int_eq(t->rank, 2);
		ck_assert_uint_eq(t->dim[0], slen[b]);
		ck_assert_uint_eq(t->dim[1], N);
		for (int i = 0; i < slen[b] * N; i++)
			ck_assert_msg(fabs(((float *)t->data)[i] - top[i]) <=
				      1e-5, "enc.out[%d]", i);
		for (int k = 0; k < 2; k++) {
			t = frame_find(&f[b], k ? "att.c" : "att.h");
			ck_assert_ptr_nonnull(t);
			ck_assert_int_eq(t->rank, 1);
			ck_assert_uint_eq(t->dim[0], L * N);
			for (int i = 0; i < L * N; i++)
				ck_assert_msg(fabs(((float *)t->data)[i] -
						   (k ? c : h)[i]) <= 1e-5,
					      "%s[%d]", t->name, i);
		}
	}
	for (int i = 0; i < 4; i++) {
		ck_assert_int_eq(m->arch->dec_step(d, 3, prev, logp, NULL), 0);
		for (int b = 0; b < 3; b++) {
			for (int v = 0; v < VT; v++) {
				double got = logp[b * VT + v];
				double want = lp[b][i * VT + v];
				ck_assert_msg(fabs(got - want) <= 1e-5,
					      "%s: step %d sentence %d "
					      "logp[%d] %.7g, want %.7g",
					      extra, i, b, v, got, want);
			}
			prev[b] = tgt.ids[b * tgt.b.S + i];
		}
	}
	m->arch->dec_free(d);
	free_frames(f, 3);
	model_free(m);
}

START_TEST(equations)
{
	equations_case("reverse=1");
	equations_case("reverse=0");
	equations_case("layers=1");
	equations_case("layers=3");
}
END_TEST

/* The source's order matters: the same model reading it the other way
 * gives other states. */
START_TEST(reverse_changes_the_reading)
{
	static const int slen[] = { 4 };
	struct model *a = make_model("reverse=1"), *b = make_model("reverse=0");
	struct batch src;

	make_batch(&src, 1, slen, VS, 3);
	struct frame *fa = pipeline(a, &src), *fb = pipeline(b, &src);
	const struct tensor *ha = frame_find(fa, "att.h");
	const struct tensor *hb = frame_find(fb, "att.h");
	double diff = 0;
	for (int i = 0; i < 2 * N; i++)
		diff += fabs(((float *)ha->data)[i] - ((float *)hb->data)[i]);
	ck_assert_msg(diff > 1e-2, "att.h the same both ways: %g", diff);
	free_frames(fa, 1);
	free_frames(fb, 1);
	model_free(a);
	model_free(b);
}
END_TEST

/* ---- gradients ----------------------------------------------------------- */

static double central(struct model *m, struct param *p, size_t e, float h,
		      const struct batch *src, const struct batch *tgt)
{
	float w = p->w[e];
	double up, down, nll;

	p->w[e] = w + h;
	up = train(m, src, tgt, 1.0f, &nll);
	p->w[e] = w - h;
	down = train(m, src, tgt, 1.0f, &nll);
	p->w[e] = w;
	return (up - down) / (2 * h);
}

/*
 * Central differences in f32 of a loss summing about ten token losses
 * (test_rnnsearch.c's reasoning): h = 1e-2 leaves them within 1e-4 of
 * the true gradient; an entry that fails is tried at h = 1e-3 (no kinks
 * here, but a large third derivative).  Every tensor is checked, 12
 * entries of a large one at random, and at least one of them must be
 * 1e-3 or more or the check proves nothing.
 */
static void check_gradients(struct model *m, const struct batch *src,
			    const struct batch *tgt)
{
	float *g0 = malloc(m->nw * sizeof(float));
	struct rng r;
	double nll;

	grads_on(m);
	train(m, src, tgt, 1.0f, &nll);
	memcpy(g0, m->g, m->nw * sizeof(float));
	rng_seed(&r, 11);
	for (int i = 0; i < m->nparam; i++) {
		struct param *p = &m->param[i];
		size_t k = p->n <= 12 ? p->n : 12;
		double gmax = 0;

		for (size_t j = 0; j < k; j++) {
			size_t e = p->n <= 12 ? j : rng_below(&r, p->n);
			double an = g0[(p->g - m->g) + e];
			double fd = central(m, p, e, 1e-2f, src, tgt);

			if (fabs(fd - an) > 1e-4 + 0.01 * fabs(an))
				fd = central(m, p, e, 1e-3f, src, tgt);
			ck_assert_msg(fabs(fd - an) <= 1e-4 + 0.01 * fabs(an),
				      "%s[%zu]: analytic %.6g, finite "
				      "differences %.6g", p->name, e, an, fd);
			if (fabs(an) > gmax)
				gmax = fabs(an);
		}
		ck_assert_msg(gmax >= 1e-3, "%s: gradient %g", p->name, gmax);
	}
	free(g0);
}

/* Sources of 4, 2 and 3 ids, targets of 3, 5 and 1: padding both sides. */
static void grad_case(const char *extra, int dropout)
{
	static const int slen[] = { 4, 2, 3 }, tlen[] = { 3, 5, 1 };
	struct model *m = make_model(extra);
	struct batch src, tgt;

	make_batch(&src, 3, slen, VS, 1);
	make_batch(&tgt, 3, tlen, VT, 2);
	m->training = dropout;
	fixed_set = dropout;
	rng_seed(&fixed, 99);
	check_gradients(m, &src, &tgt);
	fixed_set = 0;
	model_free(m);
}

START_TEST(gradients)
{
	grad_case(NULL, 0);
	grad_case("reverse=0 layers=1", 0);
	grad_case("layers=3 label_smoothing=0.1", 0);
}
END_TEST

/* With dropout on, its masks the same in every evaluation: the gradient
 * of that network.  And the masks do drop: the loss differs from the
 * network's without. */
START_TEST(gradients_dropout)
{
	static const int slen[] = { 4, 2, 3 }, tlen[] = { 3, 5, 1 };
	struct model *m = make_model("dropout=0.3");
	struct batch src, tgt;
	double on, off, nll;

	grad_case("dropout=0.3", 1);
	make_batch(&src, 3, slen, VS, 1);
	make_batch(&tgt, 3, tlen, VT, 2);
	grads_on(m);
	off = train(m, &src, &tgt, 1.0f, &nll);
	m->training = 1;
	on = train(m, &src, &tgt, 1.0f, &nll);
	ck_assert_msg(fabs(on - off) > 1e-3, "dropout changed nothing");
	m->training = 0;
	ck_assert(train(m, &src, &tgt, 1.0f, &nll) == off);
	model_free(m);
}
END_TEST

/*
 * The LSTM layer forces the states and cells at padding to zero, so a
 * gradient put there flows nowhere: the layer's gradients are those of
 * the same gradients with the padding's zeroed, bit for bit.
 */
START_TEST(lstm_padding_backward)
{
	enum { S = 3, B = 2, IN = 2, H = 3 };
	static const int len[B] = { 3, 1 };
	float x[S * B * IN], W[4 * H * IN], U[4 * H * H], b[4 * H];
	float hs[(S + 1) * B * H] = { 0 }, cs[(S + 1) * B * H] = { 0 };
	float act[S * B * 4 * H], dpre[S * B * 4 * H];
	float dh[2][(S + 1) * B * H], dc[2][(S + 1) * B * H];
	float dx[2][S * B * IN], dW[2][4 * H * IN], dU[2][4 * H * H];
	float db[2][4 * H];
	struct rng r;

	rng_seed(&r, 4);
#define FILL(a) for (size_t i = 0; i < sizeof a / sizeof a[0]; i++) \
		a[i] = (float)rng_normal(&r)
	FILL(x);
	FILL(W);
	FILL(U);
	FILL(b);
	FILL(dh[0]);
	FILL(dc[0]);
#undef FILL
	lstm_forward(hs, cs, act, x, W, U, b, len, S, B, IN, H);
	memcpy(dh[1], dh[0], sizeof dh[0]);
	memcpy(dc[1], dc[0], sizeof dc[0]);
	for (int t = 0; t < S; t++)
		for (int k = 0; k < B; k++)
			if (t >= len[k])
				for (int j = 0; j < H; j++) {
					ck_assert(hs[((t + 1) * B + k) * H + j]
						  == 0);
					dh[1][((t + 1) * B + k) * H + j] = 0;
					dc[1][((t + 1) * B + k) * H + j] = 0;
				}
	memset(dx, 0, sizeof dx);
	memset(dW, 0, sizeof dW);
	memset(dU, 0, sizeof dU);
	memset(db, 0, sizeof db);
	for (int v = 0; v < 2; v++)
		lstm_backward(dx[v], dW[v], dU[v], db[v], dh[v], dc[v], dpre,
			      hs, cs, act, x, W, U, len, S, B, IN, H);
	ck_assert(memcmp(dx[0], dx[1], sizeof dx[0]) == 0);
	ck_assert(memcmp(dW[0], dW[1], sizeof dW[0]) == 0);
	ck_assert(memcmp(dU[0], dU[1], sizeof dU[0]) == 0);
	ck_assert(memcmp(db[0], db[1], sizeof db[0]) == 0);
	/* the initial state's and cell's gradients too */
	ck_assert(memcmp(dh[0], dh[1], B * H * sizeof(float)) == 0);
	ck_assert(memcmp(dc[0], dc[1], B * H * sizeof(float)) == 0);
}
END_TEST

/* ---- decoding agrees with training --------------------------------------- */

/*
 * Each sentence's reference scored through dec_step against train_batch
 * on the prefixes of the reference (the loss of prefix k+1 minus that of
 * prefix k is token k's), to f32 rounding.
 */
START_TEST(decoder_scores_as_training)
{
	static const int slen[] = { 4, 2, 5 }, tlen[] = { 3, 6, 2 };
	struct model *m = make_model(NULL);
	struct batch src, tgt, s1, t1;
	struct frame *f, *fp[3];
	struct decoder *d;
	float logp[3 * VT];
	int32_t prev[3] = { 1, 1, 1 };
	double total = 0, nll, pre[3][8];

	make_batch(&src, 3, slen, VS, 5);
	make_batch(&tgt, 3, tlen, VT, 6);
	grads_on(m);
	f = pipeline(m, &src);
	for (int b = 0; b < 3; b++)
		fp[b] = &f[b];
	d = m->arch->dec_new(m, fp, 3, 1);
	ck_assert_msg(d != NULL, "%s", err_msg());
	for (int b = 0; b < 3; b++) {
		pre[b][0] = 0;
		one_sentence(&s1, &src, b, slen[b]);
		for (int k = 1; k <= tlen[b]; k++) {
			one_sentence(&t1, &tgt, b, k);
			train(m, &s1, &t1, 1.0f, &nll);
			pre[b][k] = nll;
		}
	}
	for (int i = 0; i < 6; i++) {
		ck_assert_int_eq(m->arch->dec_step(d, 3, prev, logp, NULL), 0);
		for (int b = 0; b < 3; b++) {
			if (i >= tlen[b]) {
				prev[b] = 0;
				continue;
			}
			int32_t y = tgt.ids[b * tgt.b.S + i];
			double token = pre[b][i + 1] - pre[b][i];
			double got = -logp[b * VT + y];
			ck_assert_msg(fabs(got - token) <= 1e-5 *
				      (1 + fabs(token)), "sentence %d token "
				      "%d: decoder %.7g, training %.7g", b, i,
				      got, token);
			total -= logp[b * VT + y];
			prev[b] = y;
		}
	}
	train(m, &src, &tgt, 1.0f, &nll);
	ck_assert_msg(fabs(nll - total) <= 1e-5 * total, "batch nll %.7g, "
		      "decoder %.7g", nll, total);
	m->arch->dec_free(d);
	free_frames(f, 3);
	model_free(m);
}
END_TEST

/* ---- padding and batching never change a result -------------------------- */

/*
 * A sentence alone and in a batch with longer ones: the stages' records
 * and the decoder's log-probabilities, to a few f32 ulps (sgemm may block
 * another number of rows otherwise); and with the reference kernels,
 * whose rounding does not depend on the rows, bit for bit.  The
 * attention weights are zero.
 */
static void padding_case(int exact)
{
	static const int slen[] = { 6, 2, 4 };
	struct model *m = make_model(NULL);
	struct batch src, one;
	double tol = exact ? 0 : 1e-6;

	make_batch(&src, 3, slen, VS, 8);
	struct frame *all = pipeline(m, &src);
	for (int b = 0; b < 3; b++) {
		one_sentence(&one, &src, b, slen[b]);
		struct frame *f = pipeline(m, &one);
		struct frame *pa[3] = { &all[0], &all[1], &all[2] };
		struct decoder *da, *d1;
		float la[3 * VT], l1[VT], wa[3 * 6], w1[6];
		int32_t prev[3] = { 1, 1, 1 };

		assert_records_close(&all[b], f, "enc.out", tol);
		assert_records_close(&all[b], f, "att.h", tol);
		assert_records_close(&all[b], f, "att.c", tol);
		da = m->arch->dec_new(m, pa, 3, 1);
		d1 = m->arch->dec_new(m, &f, 1, 1);
		ck_assert_ptr_nonnull(da);
		ck_assert_ptr_nonnull(d1);
		ck_assert_int_eq(m->arch->dec_srclen(da, b), slen[b]);
		for (int i = 0; i < 4; i++) {
			memset(wa, 0xff, sizeof wa);
			ck_assert_int_eq(m->arch->dec_step(da, 3, prev, la, wa),
					 0);
			ck_assert_int_eq(m->arch->dec_step(d1, 1, prev + b, l1,
							   w1), 0);
			assert_close(la + b * VT, l1, VT, tol, "logp");
			for (int j = 0; j < 3 * 6; j++)
				ck_assert(wa[j] == 0);
			for (int k = 0; k < 3; k++)
				prev[k] = 3 + (i * 5 + k) % (VT - 3);
		}
		m->arch->dec_free(da);
		m->arch->dec_free(d1);
		free_frames(f, 1);
	}
	free_frames(all, 3);
	model_free(m);
}

START_TEST(padding)
{
	int isa = kern_isa();

	padding_case(0);
	kern_set_isa(ISA_REFERENCE);
	padding_case(1);
	kern_set_isa(isa);
}
END_TEST

/* Training: the batch's loss and gradients are the sums of its
 * sentences'. */
START_TEST(padding_in_training)
{
	static const int slen[] = { 4, 2, 3 }, tlen[] = { 3, 5, 1 };
	struct model *m = make_model("label_smoothing=0.1");
	struct batch src, tgt, s1, t1;
	double loss, sum = 0, nll;
	float *gb;

	make_batch(&src, 3, slen, VS, 9);
	make_batch(&tgt, 3, tlen, VT, 10);
	grads_on(m);
	loss = train(m, &src, &tgt, 1.0f, &nll);
	gb = malloc(m->nw * sizeof(float));
	memcpy(gb, m->g, m->nw * sizeof(float));
	memset(m->g, 0, m->nw * sizeof(float));
	for (int b = 0; b < 3; b++) {
		one_sentence(&s1, &src, b, slen[b]);
		one_sentence(&t1, &tgt, b, tlen[b]);
		sum += train(m, &s1, &t1, 1.0f, &nll);
	}
	ck_assert_msg(fabs(loss - sum) <= 1e-5 * sum, "%.8g vs %.8g", loss,
		      sum);
	assert_close(gb, m->g, m->nw, 1e-5, "gradient");
	free(gb);
	model_free(m);
}
END_TEST

/* The loss and every gradient have the same bits on 1, 2 and 3 threads,
 * with dropout too. */
START_TEST(threads)
{
	static const int slen[] = { 4, 2, 3, 5 }, tlen[] = { 3, 5, 1, 4 };
	struct model *m = make_model("dropout=0.2");
	struct batch src, tgt;
	float *want = malloc(m->nw * sizeof(float));
	int threads = kern_threads();
	double loss1 = 0, nll;

	make_batch(&src, 4, slen, VS, 11);
	make_batch(&tgt, 4, tlen, VT, 12);
	grads_on(m);
	m->training = 1;
	fixed_set = 1;
	rng_seed(&fixed, 5);
	for (int nt = 1; nt <= 3; nt++) {
		kern_set_threads(nt);
		memset(m->g, 0, m->nw * sizeof(float));
		double loss = train(m, &src, &tgt, 1.0f, &nll);
		if (nt == 1) {
			loss1 = loss;
			memcpy(want, m->g, m->nw * sizeof(float));
			continue;
		}
		ck_assert_msg(loss == loss1, "loss %.17g on %d threads, %.17g "
			      "on 1", loss, nt, loss1);
		ck_assert_msg(memcmp(m->g, want, m->nw * sizeof(float)) == 0,
			      "gradients on %d threads differ from 1", nt);
	}
	fixed_set = 0;
	kern_set_threads(threads);
	free(want);
	model_free(m);
}
END_TEST

/* Hypotheses 1, 2 and 4 continue sentence 0's, 0 and 3 sentence 1's:
 * fed the same tokens, they give what a decoder that never selected
 * gives. */
START_TEST(select_duplicates)
{
	static const int slen[] = { 3, 5 };
	static const int parent[5] = { 1, 0, 0, 1, 0 };
	struct model *m = make_model("layers=3");
	struct batch src;
	int32_t prev[5] = { 1, 1 }, rprev[2] = { 1, 1 };
	float lp[5 * VT], rl[2 * VT];

	make_batch(&src, 2, slen, VS, 12);
	struct frame *f = pipeline(m, &src);
	struct frame *fp[2] = { &f[0], &f[1] };
	struct decoder *d = m->arch->dec_new(m, fp, 2, 3);
	struct decoder *ref = m->arch->dec_new(m, fp, 2, 1);

	ck_assert_int_eq(m->arch->dec_step(d, 2, prev, lp, NULL), 0);
	ck_assert_int_eq(m->arch->dec_step(ref, 2, rprev, rl, NULL), 0);
	ck_assert_int_eq(m->arch->dec_select(d, 5, parent), 0);
	for (int i = 0; i < 5; i++)
		ck_assert_int_eq(m->arch->dec_sentence(d, i), parent[i]);
	for (int step = 0; step < 3; step++) {
		rprev[0] = 4 + step;
		rprev[1] = 7 + step;
		for (int i = 0; i < 5; i++)
			prev[i] = rprev[parent[i]];
		ck_assert_int_eq(m->arch->dec_step(d, 5, prev, lp, NULL), 0);
		ck_assert_int_eq(m->arch->dec_step(ref, 2, rprev, rl, NULL), 0);
		for (int i = 0; i < 5; i++)
			assert_close(lp + i * VT, rl + parent[i] * VT, VT, 1e-6,
				     "continuation");
	}
	static const int bad[1] = { 5 };
	ck_assert_int_eq(m->arch->dec_select(d, 1, bad), -1);
	m->arch->dec_free(d);
	m->arch->dec_free(ref);
	free_frames(f, 2);
	model_free(m);
}
END_TEST

/* ---- initialisation and the parameter table ------------------------------ */

/* The paper's U(-0.08, 0.08) for every matrix (sample deviation within
 * 10% of 0.08 / sqrt 3 over at least 400 entries), biases 0 but the
 * forget gate's rows n .. 2n-1, 1. */
START_TEST(initialisation)
{
	const char *set[] = { "src_vocab=100", "tgt_vocab=120", "emb=20",
			      "hidden=24", "layers=2" };
	struct model *m = model_create("seq2seq", set, 5, "", "");

	ck_assert_msg(m != NULL, "%s", err_msg());
	for (int i = 0; i < m->nparam; i++) {
		const struct param *p = &m->param[i];
		double s = 0;

		if (p->rank == 1) {
			int forget = strcmp(p->name, "out.b") != 0;
			for (size_t j = 0; j < p->n; j++)
				ck_assert_msg(p->w[j] == (forget && j >= 24 &&
							  j < 48),
					      "%s[%zu] = %g", p->name, j,
					      p->w[j]);
			continue;
		}
		for (size_t j = 0; j < p->n; j++) {
			ck_assert_msg(fabsf(p->w[j]) <= 0.08f, "%s", p->name);
			s += (double)p->w[j] * p->w[j];
		}
		s = sqrt(s / p->n);
		ck_assert_msg(fabs(s / (0.08 / sqrt(3)) - 1) < 0.1,
			      "%s: sd %g", p->name, s);
	}
	model_free(m);
}
END_TEST

START_TEST(parameter_table)
{
	struct model *m = make_model(NULL);
	static const char *const want[] = {
		"src.emb [11,5]", "enc.0.W [16,5]", "enc.0.U [16,4]",
		"enc.0.b [16]", "enc.1.W [16,4]", "enc.1.U [16,4]",
		"enc.1.b [16]", "tgt.emb [13,5]", "dec.0.W [16,5]",
		"dec.0.U [16,4]", "dec.0.b [16]", "dec.1.W [16,4]",
		"dec.1.U [16,4]", "dec.1.b [16]", "out.W [13,4]", "out.b [13]",
	};
	char buf[PARAM_NAME_MAX + 32];
	char keys[512];

	ck_assert_ptr_eq(arch_find("seq2seq"), &arch_seq2seq);
	ck_assert_int_eq(m->nparam, 16);
	for (int i = 0; i < m->nparam; i++) {
		const struct param *p = &m->param[i];
		if (p->rank == 2)
			snprintf(buf, sizeof buf, "%s [%d,%d]", p->name,
				 p->dim[0], p->dim[1]);
		else
			snprintf(buf, sizeof buf, "%s [%d]", p->name,
				 p->dim[0]);
		ck_assert_str_eq(buf, want[i]);
	}
	/* the defaults, and the keys a user may set */
	ck_assert_str_eq(config_get(&m->cfg, "layers"), "2");
	ck_assert_str_eq(config_get(&m->cfg, "reverse"), "1");
	ck_assert_str_eq(config_get(&m->cfg, "dropout"), "0");
	model_keys(&arch_seq2seq, keys, sizeof keys);
	for (const char *k = "emb hidden layers reverse dropout"; *k;) {
		char one[16];
		int len = (int)strcspn(k, " ");
		snprintf(one, sizeof one, "%.*s", len, k);
		ck_assert_msg(strstr(keys, one), "%s not in %s", one, keys);
		k += len + (k[len] == ' ');
	}
	ck_assert_int_eq(model_check_setting(&arch_seq2seq, "layers=4"), 0);
	ck_assert_int_eq(model_check_setting(&arch_seq2seq, "dropout=0.2"), 0);
	ck_assert_int_eq(model_check_setting(&arch_seq2seq, "reverse=2"), -1);
	ck_assert_int_eq(model_check_setting(&arch_seq2seq, "layers=65"), -1);
	ck_assert_int_eq(model_check_setting(&arch_seq2seq, "att=4"), -1);
	ck_assert_int_eq(model_check_setting(&arch_rnnsearch, "layers=2"), -1);
	model_free(m);
}
END_TEST

/* ---- refusals ------------------------------------------------------------ */

START_TEST(config_refused)
{
	const char *rev[] = { "src_vocab=11", "tgt_vocab=13", "reverse=2" };
	const char *lay[] = { "src_vocab=11", "tgt_vocab=13", "layers=0" };

	ck_assert_ptr_null(model_create("seq2seq", rev, 3, "", ""));
	ck_assert_ptr_nonnull(strstr(err_msg(), "reverse"));
	ck_assert_ptr_null(model_create("seq2seq", lay, 3, "", ""));
	ck_assert_ptr_nonnull(strstr(err_msg(), "layers"));
}
END_TEST

/* Records of a model of other sizes, missing ones, and bad ids. */
START_TEST(records_refused)
{
	static const int slen[] = { 3 };
	struct model *m = make_model(NULL);
	struct model *other = make_model("layers=3");
	struct batch src, tgt;
	struct frame *f, *fp;
	double nll;
	int ntok;

	make_batch(&src, 1, slen, VS, 13);
	f = pipeline(m, &src);
	fp = f;
	/* att.h of 2 layers into a decoder of 3 */
	ck_assert_ptr_null(other->arch->dec_new(other, &fp, 1, 1));
	ck_assert_ptr_nonnull(strstr(err_msg(), "att.h"));
	ck_assert_int_eq(other->arch->attend(other, &fp, 1), -1);
	ck_assert_ptr_nonnull(strstr(err_msg(), "enc.h"));
	frame_drop(f, "att.c");
	ck_assert_ptr_null(m->arch->dec_new(m, &fp, 1, 1));
	ck_assert_ptr_nonnull(strstr(err_msg(), "att.c"));
	ck_assert_ptr_nonnull(strstr(err_msg(), "attend"));
	((int32_t *)frame_find(f, "src.ids")->data)[1] = VS;
	ck_assert_int_eq(m->arch->embed(m, &fp, 1), -1);
	ck_assert_ptr_nonnull(strstr(err_msg(), "src.ids"));
	ck_assert(m->arch->train_batch(m, &src.b, &src.b, 1, &nll, &ntok) < 0);
	grads_on(m);
	src.ids[0] = -1;
	make_batch(&tgt, 1, slen, VT, 14);
	ck_assert(m->arch->train_batch(m, &src.b, &tgt.b, 1, &nll, &ntok) < 0);
	ck_assert_ptr_nonnull(strstr(err_msg(), "source"));
	free_frames(f, 1);
	model_free(m);
	model_free(other);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("seq2seq");
	TCase *t = tcase_create("core");

	tcase_set_timeout(t, 120);
	tcase_add_test(t, equations);
	tcase_add_test(t, reverse_changes_the_reading);
	tcase_add_test(t, gradients);
	tcase_add_test(t, gradients_dropout);
	tcase_add_test(t, lstm_padding_backward);
	tcase_add_test(t, decoder_scores_as_training);
	tcase_add_test(t, padding);
	tcase_add_test(t, padding_in_training);
	tcase_add_test(t, threads);
	tcase_add_test(t, select_duplicates);
	tcase_add_test(t, initialisation);
	tcase_add_test(t, parameter_table);
	tcase_add_test(t, config_refused);
	tcase_add_test(t, records_refused);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	return run_suite(suite());
}
