/*
 * test_rnnsearch.c: the recurrent models rnnsearch and rnnencdec
 * (doc/MODELS.md): the decoder against the equations computed in double,
 * every parameter's gradient against finite differences,
 * scoring through the step-wise decoder against training, padding that
 * never changes a result, hypotheses duplicated by dec_select, the paper's
 * initialisation, and the refusals of records and batches that disagree
 * with the model.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/errmsg.h"
#include "kernels/kernels.h"
#include "models/model.h"
#include "base/rng.h"
#include "run_suite.h"

/* ---- helpers -------------------------------------------------------------- */

enum { VS = 11, VT = 13 };

/*
 * A small model, every parameter drawn from N(0, 0.5^2), Wa and va from
 * N(0, 2^2): far from the paper's near-zero start, so that every path of
 * the network carries a gradient of a size finite differences can see (the
 * attention's too: its weights then move with s_{i-1}) and the outputs are
 * far from uniform.  extra: more config settings separated by spaces, or
 * NULL.
 */
static struct model *make_model(const char *arch, const char *extra)
{
	const char *set[8] = { "src_vocab=11", "tgt_vocab=13", "emb=5",
			       "hidden=4", "maxout=3" };
	char more[128];
	int k = 5;
	struct model *m;
	struct rng r;

	if (strcmp(arch, "rnnsearch") == 0)
		set[k++] = "att=3";
	snprintf(more, sizeof more, "%s", extra ? extra : "");
	for (char *t = strtok(more, " "); t && k < 8; t = strtok(NULL, " "))
		set[k++] = t;
	m = model_create(arch, set, k, "", "");
	ck_assert_msg(m != NULL, "%s", err_msg());
	rng_seed(&r, 7);
	for (int i = 0; i < m->nparam; i++) {
		struct param *p = &m->param[i];
		double sd = strcmp(p->name, "att.W") == 0 ||
			    strcmp(p->name, "att.v") == 0 ? 2.0 : 0.5;

		for (size_t j = 0; j < p->n; j++)
			p->w[j] = (float)(sd * rng_normal(&r));
	}
	return m;
}

/* Gradients for a model made for inference (as model_load does when
 * training), bound again. */
static void grads_on(struct model *m)
{
	m->g = calloc(m->nw, sizeof(float));
	ck_assert_ptr_nonnull(m->g);
	for (int i = 0; i < m->nparam; i++)
		m->param[i].g = m->g + (m->param[i].w - m->w);
	ck_assert_int_eq(m->arch->bind(m), 0);
}

/* A batch of sentences of the given lengths, random ids >= 3 ending with
 * </s>, padded with <pad>. */
struct batch {
	struct batch_ids b;
	int32_t ids[64];
	int len[8];
};

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

/* Sentence b of x alone (a batch of one), its length cut to len. */
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

static double train(struct model *m, const struct batch *src,
		    const struct batch *tgt, float scale, double *nll)
{
	int ntok;
	double loss = m->arch->train_batch(m, &src->b, &tgt->b, scale, nll,
					   &ntok);

	ck_assert_msg(loss >= 0, "%s", err_msg());
	return loss;
}

/* Frames holding src.ids of each sentence of x, then embed, encode and
 * attend on all of them at once. */
static struct frame *pipeline(const struct model *m, const struct batch *x)
{
	struct frame *f = calloc(x->b.B, sizeof *f);
	struct frame *fp[8];

	for (int b = 0; b < x->b.B; b++) {
		uint64_t dim = x->len[b];
		struct tensor t;

		f[b].number = b;
		ck_assert_int_eq(tensor_init_copy(&t, "src.ids", DT_I32, 1,
						  &dim, x->ids + b * x->b.S), 0);
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

/* |a - b| <= tol * max(1, |a|): values of order one compared absolutely,
 * larger ones relatively. */
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
				 const char *name, size_t rows, double tol)
{
	const struct tensor *x = frame_find(a, name), *y = frame_find(b, name);
	size_t n;

	ck_assert_ptr_nonnull(x);
	ck_assert_ptr_nonnull(y);
	ck_assert_int_eq(x->rank, y->rank);
	ck_assert_uint_eq(x->dim[0], y->dim[0]);
	n = x->rank == 2 ? rows * x->dim[1] : x->dim[0];
	assert_close(x->data, y->data, n, tol, name);
}

/* ---- the equations of doc/MODELS.md, in double --------------------------- */

static const float *W_(const struct model *m, const char *name)
{
	const struct param *p = model_param(m, name);

	ck_assert_msg(p != NULL, "no %s", name);
	return p->w;
}

/* y [rows] += W [rows, cols] (row stride ld, from column c0) x */
static void ref_mv(double *y, const float *W, int ld, int c0,
		   const double *x, int rows, int cols)
{
	for (int r = 0; r < rows; r++)
		for (int c = 0; c < cols; c++)
			y[r] += (double)W[(size_t)r * ld + c0 + c] * x[c];
}

static int size_of(const struct model *m, const char *key)
{
	long v;

	ck_assert_int_eq(config_int(&m->cfg, key, &v), 0);
	return (int)v;
}

static double ref_sigma(double x)
{
	return 1 / (1 + exp(-x));
}

/*
 * The paper's GRU, written from doc/MODELS.md: rows z, r, h of W [3n, in],
 * U [3n, n], b [3n] and, for the decoder, C [3n, dc] times c:
 *   z = sigma(Wz x + Uz h + Cz c + bz), r likewise,
 *   h~ = tanh(W x + U (r * h) + C c + b), h' = (1 - z) h + z h~.
 */
static void ref_gru(double *h, const float *W, const float *U,
		    const float *b, const float *C, const double *x, int in,
		    const double *c, int dc, int n)
{
	double pre[3 * 64], rh[64], hn[64];

	for (int k = 0; k < 3 * n; k++)
		pre[k] = b[k];
	ref_mv(pre, W, in, 0, x, 3 * n, in);
	if (C)
		ref_mv(pre, C, dc, 0, c, 3 * n, dc);
	ref_mv(pre, U, n, 0, h, 2 * n, n);
	for (int k = 0; k < n; k++)
		rh[k] = ref_sigma(pre[n + k]) * h[k];
	ref_mv(pre + 2 * n, U + (size_t)2 * n * n, n, 0, rh, n, n);
	for (int k = 0; k < n; k++) {
		double z = ref_sigma(pre[k]);
		hn[k] = (1 - z) * h[k] + z * tanh(pre[2 * n + k]);
	}
	memcpy(h, hn, n * sizeof(double));
}

/* logp [T, VT] of tgt [T] given src [S] (teacher forcing), in double. */
static void ref_logp(const struct model *m, const int32_t *src, int S,
		     const int32_t *tgt, int T, double *logp)
{
	int search = strcmp(m->arch->name, "rnnsearch") == 0;
	int me = size_of(m, "emb"), n = size_of(m, "hidden");
	int l = size_of(m, "maxout"), na = search ? size_of(m, "att") : 0;
	int da = search ? 2 * n : n;
	double x[16][8], ann[16][16], h[8], s[8], c[16], y[8];

	ck_assert(S <= 16 && me <= 8 && n <= 8 && na <= 8 && l <= 8);
	for (int j = 0; j < S; j++)
		for (int k = 0; k < me; k++)
			x[j][k] = W_(m, "src.emb")[src[j] * me + k];
	memset(h, 0, sizeof h);
	for (int j = 0; j < S; j++) {
		ref_gru(h, W_(m, "enc.fwd.W"), W_(m, "enc.fwd.U"),
			W_(m, "enc.fwd.b"), NULL, x[j], me, NULL, 0, n);
		memcpy(ann[j], h, n * sizeof(double));
	}
	if (search) {
		memset(h, 0, sizeof h);
		for (int j = S - 1; j >= 0; j--) {
			ref_gru(h, W_(m, "enc.bwd.W"), W_(m, "enc.bwd.U"),
				W_(m, "enc.bwd.b"), NULL, x[j], me, NULL, 0, n);
			memcpy(ann[j] + n, h, n * sizeof(double));
		}
		/* s_0 = tanh(Ws bwd h_1 + bs) */
		for (int k = 0; k < n; k++)
			s[k] = W_(m, "dec.init.b")[k];
		ref_mv(s, W_(m, "dec.init.W"), n, 0, ann[0] + n, n, n);
	} else {
		/* c = tanh(Wc h_S + bc), s_0 = tanh(Ws c + bs) */
		for (int k = 0; k < n; k++)
			c[k] = W_(m, "enc.sum.b")[k];
		ref_mv(c, W_(m, "enc.sum.W"), n, 0, ann[S - 1], n, n);
		for (int k = 0; k < n; k++) {
			c[k] = tanh(c[k]);
			s[k] = W_(m, "dec.init.b")[k];
		}
		ref_mv(s, W_(m, "dec.init.W"), n, 0, c, n, n);
	}
	for (int k = 0; k < n; k++)
		s[k] = tanh(s[k]);

	for (int i = 0; i < T; i++) {
		int prev = i == 0 ? 1 : tgt[i - 1];
		double tt[16], t[8], z[VT], max = -INFINITY, sum = 0;

		for (int k = 0; k < me; k++)
			y[k] = W_(m, "tgt.emb")[prev * me + k];
		if (search) {
			/* e_j = va . tanh(Wa s + Ua h_j + ba); c = sum a_j h_j */
			double e[16], wa[8], emax = -INFINITY, esum = 0;

			memset(wa, 0, sizeof wa);
			ref_mv(wa, W_(m, "att.W"), n, 0, s, na, n);
			for (int j = 0; j < S; j++) {
				double u[8];

				for (int k = 0; k < na; k++)
					u[k] = W_(m, "att.b")[k] + wa[k];
				ref_mv(u, W_(m, "att.U"), da, 0, ann[j], na, da);
				e[j] = 0;
				for (int k = 0; k < na; k++)
					e[j] += W_(m, "att.v")[k] * tanh(u[k]);
				emax = fmax(emax, e[j]);
			}
			for (int j = 0; j < S; j++)
				esum += e[j] = exp(e[j] - emax);
			memset(c, 0, sizeof c);
			for (int j = 0; j < S; j++)
				for (int k = 0; k < da; k++)
					c[k] += e[j] / esum * ann[j][k];
		}
		/* the deep output reads s_{i-1} */
		for (int k = 0; k < 2 * l; k++)
			tt[k] = W_(m, "out.b")[k];
		ref_mv(tt, W_(m, "out.U"), n, 0, s, 2 * l, n);
		ref_mv(tt, W_(m, "out.V"), me, 0, y, 2 * l, me);
		ref_mv(tt, W_(m, "out.C"), da, 0, c, 2 * l, da);
		for (int k = 0; k < l; k++)
			t[k] = fmax(tt[2 * k], tt[2 * k + 1]);
		for (int v = 0; v < VT; v++) {
			z[v] = W_(m, "out.bias")[v];
			for (int k = 0; k < l; k++)
				z[v] += W_(m, "out.W")[v * l + k] * t[k];
			max = fmax(max, z[v]);
		}
		for (int v = 0; v < VT; v++)
			sum += exp(z[v] - max);
		for (int v = 0; v < VT; v++)
			logp[i * VT + v] = z[v] - max - log(sum);
		ref_gru(s, W_(m, "dec.W"), W_(m, "dec.U"), W_(m, "dec.b"),
			W_(m, "dec.C"), y, me, c, da, n);
	}
}

/*
 * dec_step along a reference against the equations in double: the f32
 * path differs by rounding only, a few 1e-7 of values of order one; 1e-5
 * leaves room and fails any misread equation (a reset gate after U, the
 * output from s_i, another order of the gates), which moves the numbers in
 * the first or second digit.
 */
static void reference_case(const char *arch)
{
	static const int slen[] = { 5, 3 }, tlen[] = { 4, 6 };
	struct model *m = make_model(arch, NULL);
	struct batch src, tgt;
	struct frame *f, *fp[2];
	struct decoder *d;
	double ref[2][6 * VT];
	float logp[2 * VT];
	int32_t prev[2] = { 1, 1 };

	make_batch(&src, 2, slen, VS, 15);
	make_batch(&tgt, 2, tlen, VT, 16);
	for (int b = 0; b < 2; b++)
		ref_logp(m, src.ids + b * src.b.S, slen[b],
			 tgt.ids + b * tgt.b.S, tlen[b], ref[b]);
	f = pipeline(m, &src);
	fp[0] = &f[0];
	fp[1] = &f[1];
	d = m->arch->dec_new(m, fp, 2, 1);
	ck_assert_ptr_nonnull(d);
	for (int i = 0; i < 6; i++) {
		ck_assert_int_eq(m->arch->dec_step(d, 2, prev, logp, NULL), 0);
		for (int b = 0; b < 2; b++) {
			if (i >= tlen[b])
				continue;
			for (int v = 0; v < VT; v++)
				ck_assert_msg(fabs(logp[b * VT + v] -
						   ref[b][i * VT + v]) <= 1e-5,
					      "%s sentence %d step %d id %d: "
					      "%.7g, reference %.7g", arch, b,
					      i, v, logp[b * VT + v],
					      ref[b][i * VT + v]);
			prev[b] = tgt.ids[b * tgt.b.S + i];
		}
	}
	m->arch->dec_free(d);
	free_frames(f, 2);
	model_free(m);
}

START_TEST(equations_rnnsearch)
{
	reference_case("rnnsearch");
}
END_TEST

START_TEST(equations_rnnencdec)
{
	reference_case("rnnencdec");
}
END_TEST

/* ---- gradients ------------------------------------------------------------ */

/* Central differences of the loss in parameter entry e of p, step h. */
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
 * Central differences in f32 on a loss that sums about ten token losses of
 * order 2 (xent sums in double).  With h = 1e-2 the truncation error
 * h^2/6 |f'''| and the f32 rounding of the forward pass (mostly the same in
 * both evaluations) leave them within 1e-4 of the true gradient (measured:
 * typically 1e-5), so 1e-4 + 1% passes a right gradient and fails a wrong
 * one, which is off by the size of a whole term.  The maxout has kinks:
 * where w +- h crosses one (the larger of a pair changes), the differences
 * are off, so an entry that fails at h = 1e-2 is tried again at h = 1e-3
 * (whose rounding error is still within the tolerance); a wrong gradient
 * fails both.  Every tensor is checked; of a large one, 12 entries drawn
 * at random, and at least one of them must be 1e-3 or more, ten times the
 * absolute tolerance, or the check proves nothing.
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
				      "%s %s[%zu]: analytic %.6g, finite "
				      "differences %.6g", m->arch->name,
				      p->name, e, an, fd);
			if (fabs(an) > gmax)
				gmax = fabs(an);
		}
		ck_assert_msg(gmax >= 1e-3, "%s %s: gradient %g", m->arch->name,
			      p->name, gmax);
	}
	free(g0);
}

/* Sources of 4, 2 and 3 ids, targets of 3, 5 and 1: every kind of
 * padding on both sides. */
static void grad_case(const char *arch, const char *extra)
{
	static const int slen[] = { 4, 2, 3 }, tlen[] = { 3, 5, 1 };
	struct model *m = make_model(arch, extra);
	struct batch src, tgt;

	make_batch(&src, 3, slen, VS, 1);
	make_batch(&tgt, 3, tlen, VT, 2);
	check_gradients(m, &src, &tgt);
	model_free(m);
}

START_TEST(gradients_rnnsearch)
{
	grad_case("rnnsearch", NULL);
}
END_TEST

START_TEST(gradients_rnnencdec)
{
	grad_case("rnnencdec", NULL);
}
END_TEST

/* The window's and the diagonal's (doc/MODELS.md); every step of
 * the batch's longest target moves the diagonal (ratio 0.7). */
START_TEST(gradients_window)
{
	grad_case("rnnsearch", "attention=window window_k=3");
}
END_TEST

START_TEST(gradients_diagonal)
{
	grad_case("rnnsearch", "attention=diagonal diag_ratio=0.7");
}
END_TEST

START_TEST(gradients_label_smoothing)
{
	grad_case("rnnsearch", "label_smoothing=0.1");
	grad_case("rnnencdec", "label_smoothing=0.1");
}
END_TEST

/* The gradient is that of (sum of losses) * scale, and adds to m->g. */
START_TEST(gradients_scale_and_accumulate)
{
	static const int slen[] = { 4, 2 }, tlen[] = { 3, 5 };
	struct model *m = make_model("rnnsearch", NULL);
	struct batch src, tgt;
	float *g1;
	double nll;

	make_batch(&src, 2, slen, VS, 3);
	make_batch(&tgt, 2, tlen, VT, 4);
	grads_on(m);
	train(m, &src, &tgt, 1.0f, &nll);
	g1 = malloc(m->nw * sizeof(float));
	memcpy(g1, m->g, m->nw * sizeof(float));
	train(m, &src, &tgt, 0.5f, &nll);
	for (size_t i = 0; i < m->nw; i++)
		ck_assert_msg(fabsf(m->g[i] - 1.5f * g1[i]) <=
			      1e-5f * (1 + fabsf(g1[i])), "g[%zu]", i);
	free(g1);
	model_free(m);
}
END_TEST

/* ---- decoding agrees with training ---------------------------------------- */

/*
 * Each sentence's reference scored through dec_step (teacher forcing by
 * hand) against train_batch on the prefixes of the reference: the loss of
 * prefix k+1 minus that of prefix k is token k's.  The two compute the
 * same numbers in a different batching (rows of one sgemm vs another), so
 * they agree to f32 rounding: 1e-5.  The whole batch's nll equals the sum
 * of all tokens' too.
 */
static void decoder_vs_training(const char *arch, const char *extra)
{
	static const int slen[] = { 4, 2, 5 }, tlen[] = { 3, 6, 2 };
	struct model *m = make_model(arch, extra);
	struct batch src, tgt, s1, t1;
	struct frame *f, *fp[3];
	struct decoder *d;
	float logp[3 * VT];
	int32_t prev[3] = { 1, 1, 1 };
	double total = 0, nll, prefix[8];

	make_batch(&src, 3, slen, VS, 5);
	make_batch(&tgt, 3, tlen, VT, 6);
	grads_on(m);
	f = pipeline(m, &src);
	for (int b = 0; b < 3; b++)
		fp[b] = &f[b];
	d = m->arch->dec_new(m, fp, 3, 1);
	ck_assert_msg(d != NULL, "%s", err_msg());
	/* every sentence's nll of its prefixes */
	double pre[3][8];
	for (int b = 0; b < 3; b++) {
		pre[b][0] = 0;
		one_sentence(&s1, &src, b, slen[b]);
		for (int k = 1; k <= tlen[b]; k++) {
			one_sentence(&t1, &tgt, b, k);
			train(m, &s1, &t1, 1.0f, &nll);
			pre[b][k] = nll;
		}
	}
	(void)prefix;
	for (int i = 0; i < 6; i++) {
		ck_assert_int_eq(m->arch->dec_step(d, 3, prev, logp, NULL), 0);
		for (int b = 0; b < 3; b++) {
			int32_t y;
			double token;

			if (i >= tlen[b]) {
				prev[b] = 0;
				continue;
			}
			y = tgt.ids[b * tgt.b.S + i];
			token = pre[b][i + 1] - pre[b][i];
			ck_assert_msg(fabs(-logp[b * VT + y] - token) <= 1e-5 *
				      (1 + fabs(token)),
				      "%s sentence %d token %d: decoder %.7g, "
				      "training %.7g", arch, b, i,
				      -logp[b * VT + y], token);
			total -= logp[b * VT + y];
			prev[b] = y;
		}
	}
	train(m, &src, &tgt, 1.0f, &nll);
	ck_assert_msg(fabs(nll - total) <= 1e-5 * total, "%s: batch nll %.7g, "
		      "decoder %.7g", arch, nll, total);
	m->arch->dec_free(d);
	free_frames(f, 3);
	model_free(m);
}

START_TEST(decoder_scores_as_training_rnnsearch)
{
	decoder_vs_training("rnnsearch", NULL);
	decoder_vs_training("rnnsearch", "attention=window window_k=3");
	decoder_vs_training("rnnsearch", "attention=diagonal diag_ratio=0.7");
}
END_TEST

START_TEST(decoder_scores_as_training_rnnencdec)
{
	decoder_vs_training("rnnencdec", NULL);
}
END_TEST

/* ---- padding never changes a result --------------------------------------- */

/*
 * A sentence alone and in a batch with longer ones: the stages' records and
 * the decoder's log-probabilities and attention weights.  Not asserted
 * bitwise: the sgemm may take another path (small-M kernel, another
 * blocking) for another number of rows, which changes the order of a dot
 * product's additions, so 1e-6 relative (a few f32 ulps of values of order
 * one).  A padding bug (a backward GRU starting in the padding, attention
 * on padded keys) changes results by orders of magnitude more.
 */
static void padding_case(const char *arch, const char *extra)
{
	static const int slen[] = { 6, 2, 4 };
	struct model *m = make_model(arch, extra);
	struct batch src, one;
	int search = strcmp(arch, "rnnsearch") == 0;
	int keys = search && !extra;	/* additive attention */

	make_batch(&src, 3, slen, VS, 8);
	struct frame *all = pipeline(m, &src);
	for (int b = 0; b < 3; b++) {
		one_sentence(&one, &src, b, slen[b]);
		struct frame *f = pipeline(m, &one);
		struct frame *fa = &all[b], *fo = f;
		struct decoder *da, *d1;
		struct frame *pa[3] = { &all[0], &all[1], &all[2] };
		float la[3 * VT], l1[VT], wa[3 * 6], w1[6];
		int32_t prev[3] = { 1, 1, 1 };

		assert_records_close(fa, fo, "src.emb", slen[b], 0);
		assert_records_close(fa, fo, "enc.out", slen[b], 1e-6);
		assert_records_close(fa, fo, "att.init", 0, 1e-6);
		if (keys)
			assert_records_close(fa, fo, "att.keys", slen[b], 1e-6);
		else if (!search)
			assert_records_close(fa, fo, "att.ctx", 0, 1e-6);
		da = m->arch->dec_new(m, pa, 3, 1);
		d1 = m->arch->dec_new(m, &fo, 1, 1);
		ck_assert_ptr_nonnull(da);
		ck_assert_ptr_nonnull(d1);
		ck_assert_int_eq(m->arch->dec_srclen(da, b), slen[b]);
		for (int i = 0; i < 4; i++) {
			ck_assert_int_eq(m->arch->dec_step(da, 3, prev, la, wa),
					 0);
			ck_assert_int_eq(m->arch->dec_step(d1, 1, prev + b, l1,
							   w1), 0);
			assert_close(la + b * VT, l1, VT, 1e-6, "logp");
			for (int j = 0; j < 6; j++) {
				float w = j < slen[b] ? w1[j] : 0;
				ck_assert_msg(fabsf(wa[b * 6 + j] - w) <= 1e-6,
					      "att weight %d", j);
			}
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

START_TEST(padding_rnnsearch)
{
	padding_case("rnnsearch", NULL);
	padding_case("rnnsearch", "attention=window window_k=3");
	padding_case("rnnsearch", "attention=diagonal diag_ratio=0.7");
}
END_TEST

START_TEST(padding_rnnencdec)
{
	padding_case("rnnencdec", NULL);
}
END_TEST

/* Training: the batch's loss and gradients are the sums of its sentences'. */
START_TEST(padding_in_training)
{
	static const int slen[] = { 4, 2, 3 }, tlen[] = { 3, 5, 1 };
	const char *arch[] = { "rnnsearch", "rnnencdec", "rnnsearch",
			       "rnnsearch" };
	const char *extra[] = { "label_smoothing=0.1", "label_smoothing=0.1",
				"attention=window window_k=3",
				"attention=diagonal diag_ratio=0.7" };

	for (int a = 0; a < 4; a++) {
		struct model *m = make_model(arch[a], extra[a]);
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
		ck_assert_msg(fabs(loss - sum) <= 1e-5 * sum, "%s: %.8g vs %.8g",
			      arch[a], loss, sum);
		assert_close(gb, m->g, m->nw, 1e-5, "gradient");
		free(gb);
		model_free(m);
	}
}
END_TEST

/* ---- beam bookkeeping ----------------------------------------------------- */

/*
 * After dec_select with parents {1, 0, 0, 1, 0}, hypotheses 1, 2 and 4
 * continue sentence 0's and 0, 3 sentence 1's: fed the same tokens, they
 * give the same log-probabilities as one another, and as a decoder that
 * never selected.
 */
/*
 * Training splits the batch's rows over the threads (and runs the
 * encoder's directions side by side): the loss and every gradient have
 * the same bits on 1, 2 and 3 threads, but for att.v's, which sums the
 * parts' shares in another order.
 */
static void threads_case(const char *arch, const char *extra)
{
	static const int slen[] = { 4, 2, 3, 5 }, tlen[] = { 3, 5, 1, 4 };
	struct model *m = make_model(arch, extra);
	struct batch src, tgt;
	float *want = malloc(m->nw * sizeof(float));
	int threads = kern_threads();
	double loss1 = 0, nll;

	ck_assert_ptr_nonnull(want);
	make_batch(&src, 4, slen, VS, 11);
	make_batch(&tgt, 4, tlen, VT, 12);
	grads_on(m);
	for (int nt = 1; nt <= 3; nt++) {
		kern_set_threads(nt);
		memset(m->g, 0, m->nw * sizeof(float));
		double loss = train(m, &src, &tgt, 1.0f, &nll);
		if (nt == 1) {
			loss1 = loss;
			memcpy(want, m->g, m->nw * sizeof(float));
			continue;
		}
		ck_assert_msg(loss == loss1, "%s: loss %.17g on %d threads, "
			      "%.17g on 1", arch, loss, nt, loss1);
		for (int i = 0; i < m->nparam; i++) {
			const struct param *p = &m->param[i];
			const float *w1 = want + (p->g - m->g);

			if (strcmp(p->name, "att.v") == 0) {
				assert_close(p->g, w1, p->n, 1e-6, p->name);
				continue;
			}
			ck_assert_msg(memcmp(p->g, w1, p->n * sizeof(float)) == 0,
				      "%s: %s's gradient on %d threads differs "
				      "from 1", arch, p->name, nt);
		}
	}
	kern_set_threads(threads);
	free(want);
	model_free(m);
}

START_TEST(threads_rnnsearch)
{
	threads_case("rnnsearch", NULL);
	threads_case("rnnsearch", "attention=window window_k=3");
	threads_case("rnnsearch", "attention=diagonal diag_ratio=0.7");
}
END_TEST

START_TEST(threads_rnnencdec)
{
	threads_case("rnnencdec", NULL);
}
END_TEST

START_TEST(select_duplicates)
{
	/* the window's kappa and the diagonal's step go with the parent */
	const char *arch[] = { "rnnsearch", "rnnencdec", "rnnsearch",
			       "rnnsearch" };
	const char *extra[] = { NULL, NULL, "attention=window window_k=3",
				"attention=diagonal diag_ratio=0.7" };
	static const int slen[] = { 3, 5 };

	for (int a = 0; a < 4; a++) {
		struct model *m = make_model(arch[a], extra[a]);
		struct batch src;
		make_batch(&src, 2, slen, VS, 12);
		struct frame *f = pipeline(m, &src);
		struct frame *fp[2] = { &f[0], &f[1] };
		struct decoder *d = m->arch->dec_new(m, fp, 2, 3);
		struct decoder *ref = m->arch->dec_new(m, fp, 2, 1);
		static const int parent[5] = { 1, 0, 0, 1, 0 };
		int32_t prev[5] = { 1, 1 }, rprev[2] = { 1, 1 };
		float lp[5 * VT], rl[2 * VT];

		ck_assert_int_eq(m->arch->dec_step(d, 2, prev, lp, NULL), 0);
		ck_assert_int_eq(m->arch->dec_step(ref, 2, rprev, rl, NULL), 0);
		ck_assert_int_eq(m->arch->dec_select(d, 5, parent), 0);
		for (int i = 0; i < 5; i++)
			ck_assert_int_eq(m->arch->dec_sentence(d, i),
					 parent[i]);
		for (int step = 0; step < 3; step++) {
			rprev[0] = 4 + step;
			rprev[1] = 7 + step;
			for (int i = 0; i < 5; i++)
				prev[i] = rprev[parent[i]];
			ck_assert_int_eq(m->arch->dec_step(d, 5, prev, lp,
							   NULL), 0);
			ck_assert_int_eq(m->arch->dec_step(ref, 2, rprev, rl,
							   NULL), 0);
			for (int i = 0; i < 5; i++)
				assert_close(lp + i * VT,
					     rl + parent[i] * VT, VT, 1e-6,
					     "continuation");
		}
		/* a parent outside the live hypotheses is refused */
		static const int bad[1] = { 5 };
		ck_assert_int_eq(m->arch->dec_select(d, 1, bad), -1);
		m->arch->dec_free(d);
		m->arch->dec_free(ref);
		free_frames(f, 2);
		model_free(m);
	}
}
END_TEST

/* ---- initialisation ------------------------------------------------------- */

static double sd_of(const float *w, size_t n)
{
	double s = 0;

	for (size_t i = 0; i < n; i++)
		s += (double)w[i] * w[i];
	return sqrt(s / n);
}

/* The paper's: orthogonal U blocks, Wa and Ua N(0, 0.001^2), va and
 * biases 0, the rest N(0, 0.01^2); sample deviations within 10% (each
 * tensor has at least 400 entries: the estimate's error is ~4%). */
START_TEST(paper_initialisation)
{
	const char *set[] = { "src_vocab=100", "tgt_vocab=120", "emb=20",
			      "hidden=24", "att=20", "maxout=10" };
	struct model *m = model_create("rnnsearch", set, 6, "", "");

	ck_assert_msg(m != NULL, "%s", err_msg());
	for (int i = 0; i < m->nparam; i++) {
		const struct param *p = &m->param[i];
		const char *name = p->name;
		size_t len = strlen(name);

		if (p->rank == 1 && strcmp(name, "att.v") != 0 &&
		    name[len - 1] != 'b' && strcmp(name, "out.bias") != 0)
			ck_abort_msg("%s: a vector that is not a bias", name);
		if (p->rank == 1) {
			for (size_t j = 0; j < p->n; j++)
				ck_assert_msg(p->w[j] == 0, "%s", name);
		} else if (name[len - 1] == 'U' && strncmp(name, "att", 3) &&
			   strncmp(name, "out", 3)) {
			int n = p->dim[1];
			for (int g = 0; g < 3; g++) {
				const float *q = p->w + (size_t)g * n * n;
				for (int r = 0; r < n; r++)
					for (int c = 0; c < n; c++) {
						double dot = 0;
						for (int k = 0; k < n; k++)
							dot += (double)q[r * n + k] * q[c * n + k];
						ck_assert_msg(fabs(dot - (r == c)) < 1e-5,
							      "%s block %d: %g", name, g, dot);
					}
			}
		} else {
			double want = strncmp(name, "att.", 4) == 0 ? 0.001 : 0.01;
			double sd = sd_of(p->w, p->n);
			ck_assert_msg(fabs(sd / want - 1) < 0.1, "%s: sd %g",
				      name, sd);
		}
	}
	model_free(m);
}
END_TEST

/* The parameters of doc/MODELS.md's tables, in their order and shapes. */
START_TEST(parameter_tables)
{
	struct model *s = make_model("rnnsearch", NULL);
	struct model *e = make_model("rnnencdec", NULL);
	static const char *const sn[] = {
		"src.emb [11,5]", "enc.fwd.W [12,5]", "enc.fwd.U [12,4]",
		"enc.fwd.b [12]", "enc.bwd.W [12,5]", "enc.bwd.U [12,4]",
		"enc.bwd.b [12]", "tgt.emb [13,5]", "dec.init.W [4,4]",
		"dec.init.b [4]", "att.W [3,4]", "att.U [3,8]", "att.b [3]",
		"att.v [3]", "dec.W [12,5]", "dec.U [12,4]", "dec.C [12,8]",
		"dec.b [12]", "out.U [6,4]", "out.V [6,5]", "out.C [6,8]",
		"out.b [6]", "out.W [13,3]", "out.bias [13]",
	};
	static const char *const en[] = {
		"src.emb [11,5]", "enc.fwd.W [12,5]", "enc.fwd.U [12,4]",
		"enc.fwd.b [12]", "enc.sum.W [4,4]", "enc.sum.b [4]",
		"tgt.emb [13,5]", "dec.init.W [4,4]", "dec.init.b [4]",
		"dec.W [12,5]", "dec.U [12,4]", "dec.C [12,4]", "dec.b [12]",
		"out.U [6,4]", "out.V [6,5]", "out.C [6,4]", "out.b [6]",
		"out.W [13,3]", "out.bias [13]",
	};
	char buf[PARAM_NAME_MAX + 32];

	/* the programs find the models by name */
	ck_assert_ptr_eq(arch_find("rnnsearch"), &arch_rnnsearch);
	ck_assert_ptr_eq(arch_find("rnnencdec"), &arch_rnnencdec);
	ck_assert_int_eq(s->nparam, 24);
	ck_assert_int_eq(e->nparam, 19);
	for (int k = 0; k < 2; k++) {
		struct model *m = k ? e : s;
		for (int i = 0; i < m->nparam; i++) {
			const struct param *p = &m->param[i];
			if (p->rank == 2)
				snprintf(buf, sizeof buf, "%s [%d,%d]", p->name,
					 p->dim[0], p->dim[1]);
			else
				snprintf(buf, sizeof buf, "%s [%d]", p->name,
					 p->dim[0]);
			ck_assert_str_eq(buf, k ? en[i] : sn[i]);
		}
	}
	model_free(s);
	model_free(e);
}
END_TEST

/* ---- refusals ------------------------------------------------------------- */

START_TEST(config_refused)
{
	const char *zero[] = { "src_vocab=11", "tgt_vocab=13", "hidden=0" };
	const char *word[] = { "src_vocab=11", "tgt_vocab=13", "att=big" };

	ck_assert_ptr_null(model_create("rnnsearch", zero, 3, "", ""));
	ck_assert_ptr_nonnull(strstr(err_msg(), "hidden"));
	ck_assert_ptr_null(model_create("rnnsearch", word, 3, "", ""));
	ck_assert_ptr_nonnull(strstr(err_msg(), "att"));
}
END_TEST

/* Records made by a model of other sizes, and bad ids. */
START_TEST(records_refused)
{
	static const int slen[] = { 3 };
	struct model *m = make_model("rnnsearch", NULL);
	struct model *other = make_model("rnnsearch", "emb=6");
	struct batch src, tgt;
	struct frame *f;
	struct frame *fp;
	double nll;
	int ntok;

	make_batch(&src, 1, slen, VS, 13);
	f = pipeline(m, &src);
	fp = f;
	/* src.emb of width 5 into a model of emb 6 */
	ck_assert_int_eq(other->arch->encode(other, &fp, 1), -1);
	ck_assert_ptr_nonnull(strstr(err_msg(), "src.emb"));
	/* no att.keys: the decoder names the record and the stage */
	frame_drop(f, "att.keys");
	ck_assert_ptr_null(m->arch->dec_new(m, &fp, 1, 1));
	ck_assert_ptr_nonnull(strstr(err_msg(), "att.keys"));
	ck_assert_ptr_nonnull(strstr(err_msg(), "attend"));
	/* an id outside the source vocabulary */
	((int32_t *)frame_find(f, "src.ids")->data)[1] = VS;
	ck_assert_int_eq(m->arch->embed(m, &fp, 1), -1);
	ck_assert_ptr_nonnull(strstr(err_msg(), "src.ids"));
	/* in training too, and a model without gradients */
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
	Suite *s = suite_create("rnnsearch");
	TCase *t = tcase_create("core");

	tcase_set_timeout(t, 60);
	tcase_add_test(t, equations_rnnsearch);
	tcase_add_test(t, equations_rnnencdec);
	tcase_add_test(t, gradients_rnnsearch);
	tcase_add_test(t, gradients_rnnencdec);
	tcase_add_test(t, gradients_window);
	tcase_add_test(t, gradients_diagonal);
	tcase_add_test(t, gradients_label_smoothing);
	tcase_add_test(t, gradients_scale_and_accumulate);
	tcase_add_test(t, decoder_scores_as_training_rnnsearch);
	tcase_add_test(t, decoder_scores_as_training_rnnencdec);
	tcase_add_test(t, padding_rnnsearch);
	tcase_add_test(t, padding_rnnencdec);
	tcase_add_test(t, padding_in_training);
	tcase_add_test(t, threads_rnnsearch);
	tcase_add_test(t, threads_rnnencdec);
	tcase_add_test(t, select_duplicates);
	tcase_add_test(t, paper_initialisation);
	tcase_add_test(t, parameter_tables);
	tcase_add_test(t, config_refused);
	tcase_add_test(t, records_refused);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	return run_suite(suite());
}
