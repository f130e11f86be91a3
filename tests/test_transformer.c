/*
 * test_transformer.c: arch_transformer on tiny models (vocabulary 13, d 8,
 * 2 heads, ffn 12, 2+2 layers): its parameters, every gradient against
 * central differences (post- and pre-norm, every tying), the cached
 * decoder against the teacher-forced forward pass, padding, dropout, and
 * a copy task that training learns.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "base/errmsg.h"
#include "models/model.h"
#include "run/optim.h"
#include "run_suite.h"
#include "models/transformer/transformer.h"
#include "models/transformer/transformer_batch.h"

#define V 13


/* Whether train_batch runs as a training step (dropout on). */
static int dropout;
/* ---- models and batches -------------------------------------------------- */

/*
 * A model of the given settings (on top of the tiny sizes), saved and
 * reloaded with gradients as training does; with noise, every parameter
 * gets a random offset so that biases and gains are not their
 * initial 0 and 1.
 */
static struct model *make(const char *const *extra, int nextra, double noise)
{
	const char *set[24] = {
		"src_vocab=13", "tgt_vocab=13", "d_model=8", "heads=2",
		"ffn=12", "enc_layers=2", "dec_layers=2", "seed=7",
	};
	char dir[] = "/tmp/test_transformer.XXXXXX", p[64];
	struct model *m;
	struct rng r;
	int i, n = 8;
	size_t k;

	for (i = 0; i < nextra; i++)
		set[n++] = extra[i];
	m = model_create("transformer", set, n, "", "");
	ck_assert_msg(m != NULL, "%s", err_msg());
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(p, sizeof p, "%s/m", dir);
	ck_assert_msg(model_save(m, p, NULL, 0) == 0, "%s", err_msg());
	model_free(m);
	m = model_load(p, 1, NULL);
	ck_assert_msg(m != NULL, "%s", err_msg());
	unlink(p);
	rmdir(dir);
	rng_seed(&r, 99);
	for (i = 0; i < m->nparam; i++)
		for (k = 0; k < m->param[i].n; k++)
			m->param[i].w[k] += noise * (2 * rng_uniform(&r) - 1);
	return m;
}

/* pos NULL: no pos key, as in a model from before it (sinusoidal) */
static struct model *make2(const char *norm, const char *tie, const char *pos,
			   double noise)
{
	const char *extra[] = { norm, tie, "dropout=0", pos };

	return make(extra, pos ? 4 : 3, noise);
}

/* B sentences of random tokens 3 .. V-1 ending with </s>, lengths len[]. */
static void make_batch(struct batch_ids *b, int B, const int *len,
		       struct rng *r)
{
	int i, t;

	b->B = B;
	b->S = 0;
	for (i = 0; i < B; i++)
		if (len[i] > b->S)
			b->S = len[i];
	b->ids = calloc((size_t)B * b->S, sizeof(int32_t));
	b->len = malloc(sizeof(int) * B);
	for (i = 0; i < B; i++) {
		b->len[i] = len[i];
		for (t = 0; t < len[i] - 1; t++)
			b->ids[i * b->S + t] = 3 + (int)rng_below(r, V - 3);
		b->ids[i * b->S + len[i] - 1] = 2;
	}
}

/* Sentence i of b alone. */
static void batch_one(struct batch_ids *one, const struct batch_ids *b, int i)
{
	one->B = 1;
	one->S = b->len[i];
	one->ids = b->ids + (size_t)i * b->S;
	one->len = b->len + i;
}

static void free_batch(struct batch_ids *b)
{
	free(b->ids);
	free(b->len);
}

/* Frames holding the src.ids of b's sentences. */
static struct frame *frames_of(const struct batch_ids *b, struct frame **fp)
{
	struct frame *f = calloc(b->B, sizeof(*f));
	int i;

	for (i = 0; i < b->B; i++) {
		struct tensor t;
		uint64_t dim = b->len[i];

		f[i].number = i;
		ck_assert_int_eq(tensor_init_copy(&t, "src.ids", DT_I32, 1,
						  &dim, b->ids + i * b->S), 0);
		ck_assert_ptr_nonnull(frame_put(&f[i], &t));
		fp[i] = &f[i];
	}
	return f;
}

static void pipeline(const struct model *m, struct frame **fp, int n)
{
	ck_assert_msg(m->arch->embed(m, fp, n) == 0, "%s", err_msg());
	ck_assert_msg(m->arch->encode(m, fp, n) == 0, "%s", err_msg());
	ck_assert_msg(m->arch->attend(m, fp, n) == 0, "%s", err_msg());
}

static void free_frames(struct frame *f, int n)
{
	int i;

	for (i = 0; i < n; i++)
		frame_free(&f[i]);
	free(f);
}

static void zero_grad(struct model *m)
{
	memset(m->g, 0, sizeof(float) * m->nw);
}

/* ---- parameters ---------------------------------------------------------- */

START_TEST(parameters_as_models_md)
{
	const char *pre_tgt[] = { "norm=pre", "tie=tgt" };
	const char *all[] = { "tie=all" };
	const char *odd[] = { "heads=3" };
	const char *paper[] = { "norm=post", "tie=none" };
	struct model *m = make(paper, 2, 0);
	struct param *p;
	int i;

	ck_assert_ptr_eq(arch_find("transformer"), &arch_transformer);
	/* 2 emb + 2 x (8 + 4 + 4) + 2 x (16 + 6 + 4) + out.W, out.b */
	ck_assert_int_eq(m->nparam, 2 + 32 + 52 + 2);
	ck_assert_str_eq(m->param[0].name, "src.emb");
	ck_assert_str_eq(m->param[2].name, "enc.0.self.q.W");
	ck_assert_str_eq(m->param[m->nparam - 1].name, "out.b");
	ck_assert_ptr_null(model_param(m, "enc.ln.g"));
	p = model_param(m, "dec.1.cross.k.b");
	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(p->rank, 1);
	ck_assert_int_eq(p->dim[0], 8);
	p = model_param(m, "enc.1.ffn.W1");
	ck_assert_int_eq(p->dim[0], 12);
	ck_assert_int_eq(p->dim[1], 8);
	p = model_param(m, "dec.0.ffn.W2");
	ck_assert_int_eq(p->dim[0], 8);
	ck_assert_int_eq(p->dim[1], 12);
	/* initialisation: gains 1, biases 0, Xavier bound, N(0, 1/d) */
	for (i = 0; i < m->nparam; i++) {
		size_t k;

		p = &m->param[i];
		for (k = 0; k < p->n; k++) {
			if (strstr(p->name, "ln") && p->name[strlen(p->name) - 1]
			    == 'g')
				ck_assert_float_eq(p->w[k], 1.0f);
			else if (p->rank == 1)
				ck_assert_float_eq(p->w[k], 0.0f);
			else if (!strstr(p->name, "emb"))
				ck_assert_float_le(fabsf(p->w[k]),
				    sqrt(6.0 / (p->dim[0] + p->dim[1])));
		}
	}
	{
		double s2 = 0;
		size_t k;

		p = model_param(m, "tgt.emb");
		for (k = 0; k < p->n; k++)
			s2 += p->w[k] * p->w[k];
		/* variance 1/8 from 104 draws: within 40% */
		ck_assert_double_lt(fabs(s2 / p->n - 0.125), 0.05);
	}
	model_free(m);

	m = make(pre_tgt, 2, 0);
	ck_assert_ptr_nonnull(model_param(m, "enc.ln.g"));
	ck_assert_ptr_nonnull(model_param(m, "dec.ln.b"));
	ck_assert_ptr_null(model_param(m, "out.W"));
	ck_assert_ptr_nonnull(model_param(m, "src.emb"));
	model_free(m);
	m = make(all, 1, 0);
	ck_assert_ptr_null(model_param(m, "out.W"));
	ck_assert_ptr_null(model_param(m, "src.emb"));
	model_free(m);

	{
		const char *set[] = { "src_vocab=13", "tgt_vocab=14",
				      "tie=all" };
		ck_assert_ptr_null(model_create("transformer", set, 3, "", ""));
		ck_assert_ptr_nonnull(strstr(err_msg(), "tie=all"));
		set[1] = "tgt_vocab=13";
		set[2] = odd[0];
		ck_assert_ptr_null(model_create("transformer", set, 3, "", ""));
		ck_assert_ptr_nonnull(strstr(err_msg(), "divisible"));
	}
}
END_TEST

/* pos: the learned tables' names and shapes, max_pos written into the
 * config, no key at all by default; the keys' errors; and pos=learned's
 * clear refusal of sentences longer than its table, in training, in the
 * embed stage and in the decoder. */
START_TEST(positions_config_and_limits)
{
	const char *learned[] = { "pos=learned" };
	const char *small[] = { "pos=learned", "max_pos=5" };
	const char *rope[] = { "pos=rope" };
	const char *bad[][3] = {
		{ "pos=alibi", NULL, "pos must be" },
		{ "max_pos=9", NULL, "max_pos is for pos=learned" },
		{ "pos=rope", "d_model=6", "must be even" },
		{ "pos=learned", "max_pos=0", "max_pos=0" },
	};
	int sl[] = { 4, 6 }, tl[] = { 3, 2 }, sl2[] = { 3, 5 }, i, step;
	struct batch_ids s, t, s1, t1;
	struct frame *f, *fp[2];
	struct decoder *d;
	struct model *m;
	struct param *p;
	struct rng r;
	float logp[2 * V];
	int32_t prev[2] = { 1, 1 };
	int np;

	m = make(NULL, 0, 0);
	ck_assert_ptr_null(config_get(&m->cfg, "pos"));
	ck_assert_ptr_null(config_get(&m->cfg, "max_pos"));
	np = m->nparam;
	model_free(m);
	m = make(rope, 1, 0);
	ck_assert_int_eq(m->nparam, np);
	model_free(m);
	/* the two tables right after tgt.emb */
	m = make(learned, 1, 0);
	ck_assert_int_eq(m->nparam, np + 2);
	ck_assert_str_eq(config_get(&m->cfg, "max_pos"), "512");
	p = model_param(m, "tgt.emb");
	ck_assert_str_eq(p[1].name, "src.pos.emb");
	ck_assert_str_eq(p[2].name, "tgt.pos.emb");
	for (i = p + 1 - m->param; i < p + 3 - m->param; i++) {
		ck_assert_int_eq(m->param[i].rank, 2);
		ck_assert_int_eq(m->param[i].dim[0], 512);
		ck_assert_int_eq(m->param[i].dim[1], 8);
	}
	model_free(m);
	for (i = 0; i < 4; i++) {
		const char *set[] = { "src_vocab=13", "tgt_vocab=13",
				      "heads=2", bad[i][0], bad[i][1] };

		ck_assert_ptr_null(model_create("transformer", set,
						bad[i][1] ? 5 : 4, "", ""));
		ck_assert_msg(strstr(err_msg(), bad[i][2]) != NULL, "%s",
			      err_msg());
	}

	m = make(small, 2, 0);
	p = model_param(m, "tgt.pos.emb");
	ck_assert_int_eq(p->dim[0], 5);
	rng_seed(&r, 8);
	make_batch(&s, 2, sl, &r);
	make_batch(&t, 2, tl, &r);
	ck_assert_double_lt(m->arch->train_batch(m, &s, &t, 1.0f, dropout, NULL, NULL),
			    0);
	ck_assert_msg(strstr(err_msg(), "pair 1") &&
		      strstr(err_msg(), "max_pos=5"), "%s", err_msg());
	batch_one(&s1, &s, 0);
	batch_one(&t1, &t, 0);
	ck_assert_double_ge(m->arch->train_batch(m, &s1, &t1, 1.0f, dropout, NULL,
						 NULL), 0);
	f = frames_of(&s, fp);
	ck_assert_int_eq(m->arch->embed(m, fp, 2), -1);
	ck_assert_msg(strstr(err_msg(), "frame 1: src.ids has 6 tokens") &&
		      strstr(err_msg(), "max_pos=5"), "%s", err_msg());
	free_frames(f, 2);
	free_batch(&s);
	make_batch(&s, 2, sl2, &r);
	f = frames_of(&s, fp);
	pipeline(m, fp, 2);
	d = m->arch->dec_new(m, NULL, fp, 2, 1);
	ck_assert_ptr_nonnull(d);
	for (step = 0; step < 5; step++)
		ck_assert_int_eq(m->arch->dec_step(d, 2, prev, logp, NULL), 0);
	ck_assert_int_eq(m->arch->dec_step(d, 2, prev, logp, NULL), -1);
	ck_assert_msg(strstr(err_msg(), "max_pos=5"), "%s", err_msg());
	m->arch->dec_free(d);
	free_frames(f, 2);
	free_batch(&s);
	free_batch(&t);
	model_free(m);
}
END_TEST

/* ---- gradients ----------------------------------------------------------- */

/* Guided alignment's reference for the gradient checks' batches (NULL:
 * none). */
static const float *guide;

/* The loss of the batch from a fixed generator state (same dropout),
 * with guided alignment's. */
static double loss_at(struct model *m, const struct batch_ids *s,
		      const struct batch_ids *t, const struct rng *r0)
{
	struct batch_ids tg = *t;
	double g = 0, l;

	m->rng = *r0;
	tg.guide = guide;
	tg.guide_loss = &g;
	l = m->arch->train_batch(m, s, &tg, 1.0f, dropout, NULL, NULL);
	return l + g;
}

/*
 * Every parameter tensor (up to 4 random entries of each) against finite
 * differences of the summed, label-smoothed loss, with h = 2e-3.  The loss
 * (about 30 over 12 tokens) is computed in float: two evaluations differ
 * by rounding of about 1e-6, i.e. 2.5e-4 in the central difference C,
 * whose truncation error h^2 f'''/6 is far below that for these O(1)
 * activations; tolerance 1e-3 + 2% of |C|.  A wrong gradient (a missing
 * term, a transposed product, a wrong mask) is off by far more.
 *
 * C is wrong where [w - h, w + h] straddles a kink of a ReLU (a hidden
 * unit within ~h of 0 in some row; with ~200 units a few entries do).
 * There the one-sided differences D+ and D- differ by the kink's jump and
 * the gradient matches the one on the side without the kink; their own
 * truncation error is h f''/2, hence tolerance 5e-3 + 5%.  One unit
 * near its kink moves with every parameter upstream of it, so such
 * entries can be several percent; more than 10% would mean the central
 * check no longer covers the model.
 */
static void grad_check_model(struct model *m, const char *norm,
			     const char *tie, const char *drop,
			     const char *pos);

static void grad_check(const char *norm, const char *tie, const char *drop,
		       const char *pos)
{
	const char *extra[] = { norm, tie, drop, "label_smoothing=0.1", pos };
	struct model *m = make(extra, pos ? 5 : 4, 0.3);

	grad_check_model(m, norm, tie, drop, pos);
}

/* The same of a model with Marian's variants (more: keys beyond those) */
static void grad_check_more(const char *norm, const char *tie,
			    const char *const *more, int nmore)
{
	const char *extra[12] = { norm, tie, "dropout=0",
				  "label_smoothing=0.1" };
	int i;

	for (i = 0; i < nmore; i++)
		extra[4 + i] = more[i];
	grad_check_model(make(extra, 4 + nmore, 0.3), norm, tie, "dropout=0",
			 more[0]);
}

static void grad_check_model(struct model *m, const char *norm,
			     const char *tie, const char *drop,
			     const char *pos)
{
	int sl[] = { 5, 3, 6 }, tl[] = { 4, 6, 2 }, i, j, bad = 0, kinks = 0;
	int checked = 0;
	struct batch_ids s, t;
	struct rng r, r0;
	float *g;
	double h = 2e-3, l0;

	rng_seed(&r, 5);
	make_batch(&s, 3, sl, &r);
	make_batch(&t, 3, tl, &r);
	dropout = 1;
	r0 = m->rng;
	zero_grad(m);
	l0 = loss_at(m, &s, &t, &r0);
	ck_assert_double_gt(l0, 0);
	g = malloc(sizeof(float) * m->nw);
	memcpy(g, m->g, sizeof(float) * m->nw);
	for (i = 0; i < m->nparam; i++) {
		struct param *p = &m->param[i];
		const float *gp = g + (p->w - m->w);
		int nk = p->n < 4 ? (int)p->n : 4;
		/* a learned table: among the rows of the batch's positions */
		size_t range = strstr(p->name, ".pos.emb")
			? 6 * (size_t)p->dim[1] : p->n;

		for (j = 0; j < nk; j++, checked++) {
			size_t k = p->n <= 4 ? (size_t)j
				: rng_below(&r, range);
			float w0 = p->w[k];
			double lp, lm, c, dp, dm;

			p->w[k] = w0 + h;
			lp = loss_at(m, &s, &t, &r0);
			p->w[k] = w0 - h;
			lm = loss_at(m, &s, &t, &r0);
			p->w[k] = w0;
			c = (lp - lm) / (2 * h);
			dp = (lp - l0) / h;
			dm = (l0 - lm) / h;
			if (fabs(c - gp[k]) <= 1e-3 + 0.02 * fabs(c))
				continue;
			if (fmin(fabs(dp - gp[k]), fabs(dm - gp[k])) <=
			    5e-3 + 0.05 * fabs(gp[k])) {
				kinks++;
				continue;
			}
			fprintf(stderr, "%s %s %s %s: %s[%zu]: gradient %g, "
				"differences %g (one-sided %g, %g)\n", norm,
				tie, drop, pos ? pos : "", p->name, k, gp[k],
				c, dm, dp);
			bad++;
		}
	}
	ck_assert_msg(bad == 0, "%s %s %s %s: %d gradients off", norm, tie,
		      drop, pos ? pos : "", bad);
	ck_assert_msg(kinks * 10 <= checked, "%s %s %s: %d kinks in %d",
		      norm, tie, drop, kinks, checked);
	free(g);
	free_batch(&s);
	free_batch(&t);
	dropout = 0;
	model_free(m);
}

/*
 * Guided alignment: the loss of head 1 of decoder layer 1 against links
 * of the batch's pairs (three of lengths 5, 3, 6 and 4, 6, 2) added, in
 * both norms, with dropout (which the guided head's probabilities do not
 * see) and without, at the positions that predict the units and (shift)
 * at those that read them; a layer's cross-attention then gets gradients
 * from both losses.
 */
START_TEST(gradients_guided)
{
	static float g[3 * 6 * 6];
	const char *extra[] = { "norm=pre", "tie=all", "dropout=0",
				"label_smoothing=0.1", "guided_weight=0.8",
				"guided_layer=1", "guided_head=1",
				"guided_shift=1" };
	int sl[] = { 5, 3, 6 }, tl[] = { 4, 6, 2 }, b, t, s;

	for (b = 0; b < 3; b++)
		for (t = 0; t < tl[b]; t++)
			for (s = 0; s < sl[b]; s++)
				g[(b * 6 + t) * 6 + s] =
					(t + 2 * s + b) % 4 == 0;
	guide = g;
	grad_check_model(make(extra, 7, 0.3), "norm=pre", "tie=all",
			 "dropout=0", "guided");
	extra[0] = "norm=post";
	extra[2] = "dropout=0.2";
	grad_check_model(make(extra, 8, 0.3), "norm=post", "tie=all",
			 "dropout=0.2", "guided, shifted");
	guide = NULL;
}
END_TEST

START_TEST(gradients_post_norm)
{
	grad_check("norm=post", "tie=none", "dropout=0", NULL);
	grad_check("norm=post", "tie=tgt", "dropout=0", NULL);
	grad_check("norm=post", "tie=all", "dropout=0", NULL);
}
END_TEST

START_TEST(gradients_pre_norm)
{
	grad_check("norm=pre", "tie=none", "dropout=0", NULL);
	grad_check("norm=pre", "tie=tgt", "dropout=0", NULL);
	grad_check("norm=pre", "tie=all", "dropout=0", NULL);
}
END_TEST

/* The positions: rotary (every parameter's gradient passes through the
 * rotations of the self-attentions' queries and keys) and learned (the
 * tables' own gradients among them). */
START_TEST(gradients_positions)
{
	grad_check("norm=post", "tie=none", "dropout=0", "pos=rope");
	grad_check("norm=pre", "tie=all", "dropout=0.2", "pos=rope");
	grad_check("norm=post", "tie=tgt", "dropout=0", "pos=learned");
	grad_check("norm=pre", "tie=none", "dropout=0.2", "pos=learned");
}
END_TEST

/* With dropout the masks are fixed by the generator's state, so the loss
 * is a smooth function of the weights again. */
START_TEST(gradients_with_dropout)
{
	grad_check("norm=post", "tie=none", "dropout=0.2", NULL);
	grad_check("norm=pre", "tie=tgt", "dropout=0.2", NULL);
}
END_TEST

/* ---- the cached decoder -------------------------------------------------- */

/* The reference's previous token at step t of sentence i (<s> first:
 * bos, -1 for a zero vector). */
static int32_t prev_of(const struct batch_ids *t, int i, int step, int bos)
{
	if (step == 0)
		return bos;
	return step - 1 < t->len[i] ? t->ids[i * t->S + step - 1] : 2;
}

static void decoder_check_model(struct model *m, const char *norm,
				const char *tie, int width);

static void decoder_matches_teacher(const char *norm, const char *tie,
				    const char *pos, int width)
{
	decoder_check_model(make2(norm, tie, pos, 0.3), norm, tie, width);
}

/* The same with Marian's variants: more, keys beyond norm and tie. */
static void decoder_matches_teacher_more(const char *norm, const char *tie,
					 const char *const *more, int nmore,
					 int width)
{
	const char *extra[12] = { norm, tie, "dropout=0" };
	int i;

	for (i = 0; i < nmore; i++)
		extra[3 + i] = more[i];
	decoder_check_model(make(extra, 3 + nmore, 0.3), norm, tie, width);
}

static void decoder_check_model(struct model *m, const char *norm,
				const char *tie, int width)
{
	/* sentence 1's target outgrows the cache's first 2 * 6 + 10 rows */
	int sl[] = { 5, 3, 6 }, tl[] = { 4, 30, 9 };
	struct batch_ids s, t;
	struct frame *f, *fp[3];
	struct decoder *d;
	struct rng r;
	float *ref, *logp, *attw;
	int sent[6] = { 0, 1, 2 }, nh = 3, step, i, k, L, H;
	size_t rowV = V;

	rng_seed(&r, 11);
	make_batch(&s, 3, sl, &r);
	make_batch(&t, 3, tl, &r);
	ref = malloc(sizeof(float) * 3 * t.S * V);
	ck_assert_msg(transformer_logp(m, &s, &t, ref) == 0, "%s", err_msg());
	f = frames_of(&s, fp);
	pipeline(m, fp, 3);
	d = m->arch->dec_new(m, NULL, fp, 3, width);
	ck_assert_ptr_nonnull(d);
	m->arch->dec_attw_planes(d, &L, &H);
	ck_assert_int_eq(L, 2);
	ck_assert_int_eq(H, 2);
	logp = malloc(sizeof(float) * 6 * V);
	attw = malloc(sizeof(float) * 6 * L * H * s.S);
	for (step = 0; step < t.S; step++) {
		int32_t prev[6];

		if (step == 3) {
			/* branch and reorder: 2, 0, 0, 1, 1 */
			int parent[5] = { 2, 0, 0, 1, 1 };

			ck_assert_int_eq(m->arch->dec_select(d, 5, parent), 0);
			nh = 5;
			for (i = 0; i < nh; i++)
				sent[i] = i == 0 ? 2 : i < 3 ? 0 : 1;
		}
		if (step == 6)
			nh = 4;		/* the last one dropped */
		if (step == 10) {
			/* sentence 1 only, branching again */
			int parent[2] = { 3, 3 };

			ck_assert_int_eq(m->arch->dec_select(d, 2, parent), 0);
			nh = 2;
			sent[0] = sent[1] = 1;
		}
		for (i = 0; i < nh; i++) {
			ck_assert_int_eq(m->arch->dec_sentence(d, i), sent[i]);
			prev[i] = prev_of(&t, sent[i], step, m->bos_id);
		}
		ck_assert_msg(m->arch->dec_step(d, nh, prev, logp, attw) == 0,
			      "%s", err_msg());
		for (i = 0; i < nh; i++) {
			const float *want = ref + ((size_t)sent[i] * t.S
						   + step) * rowV;
			int sl_i = m->arch->dec_srclen(d, sent[i]), pl;

			ck_assert_int_eq(sl_i, s.len[sent[i]]);
			if (step >= t.len[sent[i]])
				continue;
			for (k = 0; k < V; k++)
				ck_assert_msg(fabsf(logp[i * V + k] - want[k])
					      < 1e-4, "%s %s step %d hyp %d "
					      "token %d: %g, teacher %g", norm,
					      tie, step, i, k, logp[i * V + k],
					      want[k]);
			/* each plane a distribution over the source */
			for (pl = 0; pl < L * H; pl++) {
				const float *a = attw + ((size_t)i * L * H + pl)
					* s.S;
				double sum = 0;

				for (k = 0; k < s.S; k++) {
					if (k >= sl_i)
						ck_assert_float_eq(a[k], 0);
					ck_assert_float_ge(a[k], 0);
					sum += a[k];
				}
				ck_assert_double_lt(fabs(sum - 1), 1e-5);
			}
		}
	}
	m->arch->dec_free(d);
	free(ref);
	free(logp);
	free(attw);
	free_frames(f, 3);
	free_batch(&s);
	free_batch(&t);
	model_free(m);
}

START_TEST(decoder_cache_matches_full_forward)
{
	/* width 4: more than 8 rows, the decoder's transposed weights */
	decoder_matches_teacher("norm=post", "tie=none", NULL, 2);
	decoder_matches_teacher("norm=pre", "tie=all", NULL, 4);
	decoder_matches_teacher("norm=post", "tie=tgt", NULL, 4);
}
END_TEST

/* rope: the keys rotated once as they join the cache (and copied with
 * it) are those the teacher-forced pass rotates all at once */
START_TEST(decoder_cache_matches_full_forward_positions)
{
	decoder_matches_teacher("norm=post", "tie=none", "pos=rope", 2);
	decoder_matches_teacher("norm=pre", "tie=all", "pos=rope", 4);
	decoder_matches_teacher("norm=pre", "tie=tgt", "pos=learned", 4);
}
END_TEST

/* ---- padding --------------------------------------------------------------- */

static void assert_close(const char *what, const float *a, const float *b,
			 size_t n, double tol)
{
	size_t i;

	for (i = 0; i < n; i++)
		ck_assert_msg(fabsf(a[i] - b[i]) <= tol, "%s[%zu]: %g vs %g",
			      what, i, a[i], b[i]);
}

static void padding_check(const char *pos)
{
	struct model *m = make2("norm=post", "tie=none", pos, 0.3);
	int sl[] = { 7, 3, 5 }, tl[] = { 6, 4, 8 }, l, k, step;
	struct batch_ids s, t, s1, t1;
	struct frame *fb, *fa, *pb[3], *pa[1];
	struct decoder *db, *da;
	struct rng r;
	char name[16];
	double lb, la = 0, nb, na = 0, nll;
	int ntb, nta = 0, nt;
	float lpb[3 * V], lpa[V], awb[3 * 2 * 2 * 7], awa[2 * 2 * 3];

	rng_seed(&r, 3);
	make_batch(&s, 3, sl, &r);
	make_batch(&t, 3, tl, &r);
	/* sentence 1 (the shortest) alone and among longer ones */
	fb = frames_of(&s, pb);
	batch_one(&s1, &s, 1);
	batch_one(&t1, &t, 1);
	fa = frames_of(&s1, pa);
	pipeline(m, pb, 3);
	pipeline(m, pa, 1);
	{
		const char *names[] = { "src.emb", "enc.out" };

		for (k = 0; k < 2; k++)
			assert_close(names[k], frame_find(pb[1], names[k])->data,
				     frame_find(pa[0], names[k])->data, 3 * 8,
				     1e-5);
	}
	for (l = 0; l < 2; l++) {
		snprintf(name, sizeof name, "att.%d.v", l);
		assert_close(name, frame_find(pb[1], name)->data,
			     frame_find(pa[0], name)->data, 3 * 8, 1e-5);
	}
	db = m->arch->dec_new(m, NULL, pb, 3, 1);
	da = m->arch->dec_new(m, NULL, pa, 1, 1);
	for (step = 0; step < 4; step++) {
		int32_t prev[3], p1 = prev_of(&t, 1, step, m->bos_id);

		for (k = 0; k < 3; k++)
			prev[k] = prev_of(&t, k, step, m->bos_id);
		ck_assert_int_eq(m->arch->dec_step(db, 3, prev, lpb, awb), 0);
		ck_assert_int_eq(m->arch->dec_step(da, 1, &p1, lpa, awa), 0);
		assert_close("logp", lpb + V, lpa, V, 1e-5);
		for (k = 0; k < 4; k++)		/* L*H planes */
			assert_close("attw", awb + (4 + k) * 7, awa + k * 3, 3,
				     1e-6);
	}
	m->arch->dec_free(db);
	m->arch->dec_free(da);

	/* training: the batch's loss is the sum of its sentences' */
	lb = m->arch->train_batch(m, &s, &t, 1.0f, dropout, &nb, &ntb);
	for (k = 0; k < 3; k++) {
		batch_one(&s1, &s, k);
		batch_one(&t1, &t, k);
		la += m->arch->train_batch(m, &s1, &t1, 1.0f, dropout, &nll, &nt);
		na += nll;
		nta += nt;
	}
	ck_assert_int_eq(ntb, 6 + 4 + 8);
	ck_assert_int_eq(nta, ntb);
	ck_assert_double_lt(fabs(lb - la), 1e-4 * la);
	ck_assert_double_lt(fabs(nb - na), 1e-4 * na);
	free_frames(fb, 3);
	free_frames(fa, 1);
	free_batch(&s);
	free_batch(&t);
	model_free(m);
}

START_TEST(padding_changes_nothing)
{
	padding_check(NULL);
	padding_check("pos=rope");
	padding_check("pos=learned");
	padding_check("dec_self=ssru");
}
END_TEST

/*
 * The encode stage's encoder, whose layers share one set of buffers (no
 * backward pass to come), against the training plan's, which keeps every
 * layer's: the same enc.out, bit for bit, in three layers (each reading
 * the buffers the one before wrote), post- and pre-norm.
 */
static void encoder_plan_check(const char *norm)
{
	const char *extra[] = { norm, "tie=none", "dropout=0",
				"enc_layers=3" };
	struct model *m = make(extra, 4, 0.3);
	const struct tf_net *n = m->net;
	int sl[] = { 5, 2, 7 }, i;
	struct batch_ids s;
	struct frame *f, *fp[3];
	struct fwd w = { .B = 3, .train = 1 };
	struct rng r;

	ck_assert_int_eq(n->enc_layers, 3);
	rng_seed(&r, 5);
	make_batch(&s, 3, sl, &r);
	f = frames_of(&s, fp);
	pipeline(m, fp, 3);
	w.S = s.S;
	w.slen = s.len;
	ck_assert_msg(tf_plan_alloc(&w, n) == 0, "%s", err_msg());
	for (i = 0; i < 3; i++)
		memcpy(w.x0 + (size_t)i * s.S * n->d,
		       frame_find(fp[i], "src.emb")->data,
		       sizeof(float) * sl[i] * n->d);
	tf_encoder_forward(n, &w, NULL);
	for (i = 0; i < 3; i++)
		ck_assert_msg(!memcmp(frame_find(fp[i], "enc.out")->data,
				      w.E + (size_t)i * s.S * n->d,
				      sizeof(float) * sl[i] * n->d),
			      "%s: sentence %d's enc.out", norm, i);
	free_frames(f, 3);
	free_batch(&s);
	model_free(m);
}

START_TEST(encoder_layers_share_buffers)
{
	encoder_plan_check("norm=post");
	encoder_plan_check("norm=pre");
}
END_TEST

/* ---- dropout ------------------------------------------------------------- */

/*
 * dropout_forward and dropout_backward against one element at a time as
 * transformer.h words it: 16 bits of rng_next per element, low bits first,
 * kept when at least p 65536 (rounded), then the residual's a added; the
 * same draws, masks and bits, on sizes around the vector's eight, rates 0
 * (no draws: a + x) to all but 1, with a residual and without.
 */
START_TEST(dropout_matches_one_at_a_time)
{
	size_t sizes[] = { 1, 3, 4, 7, 8, 9, 13, 16, 23, 1001 }, nmax = 1001;
	float rates[] = { 0.0f, 0.1f, 0.5f, 0.99999f, 0.999999f };
	float *x = malloc(nmax * sizeof *x), *y = malloc(nmax * sizeof *y);
	float *a = malloc(nmax * sizeof *a), *dx = malloc(nmax * sizeof *dx);
	float *want = malloc(nmax * sizeof *want);
	uint8_t *mask = malloc(nmax), keep;
	size_t si, ri, i;

	for (i = 0; i < nmax; i++) {
		x[i] = (float)(sin(i * 0.7) * 3);
		a[i] = (float)(cos(i * 0.9) * 5);
	}
	for (si = 0; si < sizeof sizes / sizeof *sizes; si++)
		for (ri = 0; ri < 2 * sizeof rates / sizeof *rates; ri++) {
			size_t n = sizes[si];
			float p = rates[ri / 2], s = 1.0f / (1.0f - p);
			const float *res = ri % 2 ? a : NULL;
			uint32_t thresh = (uint32_t)(p * 65536.0f + 0.5f);
			struct rng r, r2;
			uint64_t bits = 0;

			rng_seed(&r, 11 + si);
			r2 = r;
			memset(mask, 1, nmax);
			dropout_forward(y, mask, res, x, n, p, &r);
			for (i = 0; i < n; i++) {
				if (p > 0 && i % 4 == 0)
					bits = rng_next(&r2);
				keep = (bits & 0xffff) >= thresh;
				bits >>= 16;
				if (p > 0)
					ck_assert_int_eq(mask[i], keep);
				want[i] = keep ? x[i] * s : 0.0f;
				if (res)
					want[i] = res[i] + want[i];
				ck_assert_msg(!memcmp(&y[i], &want[i], 4),
					      "n %zu p %g: y[%zu] %g, not %g",
					      n, p, i, y[i], want[i]);
			}
			ck_assert(rng_next(&r) == rng_next(&r2));
			for (i = 0; i < n; i++)
				dx[i] = want[i] = (float)cos(i * 0.3) + 2;
			dropout_backward(dx, x, mask, n, p);
			for (i = 0; i < n; i++) {
				if (mask[i])
					want[i] += x[i] * s;
				ck_assert(!memcmp(&dx[i], &want[i], 4));
			}
		}
	free(x);
	free(y);
	free(a);
	free(dx);
	free(want);
	free(mask);
}
END_TEST

START_TEST(dropout_is_reproducible_and_off_at_inference)
{
	const char *extra[] = { "dropout=0.3" };
	struct model *m = make(extra, 1, 0.3);
	int sl[] = { 5, 4 }, tl[] = { 6, 3 };
	struct batch_ids s, t;
	struct rng r, r0;
	float *g1;
	double l1, l2, l0, l_off;

	rng_seed(&r, 8);
	make_batch(&s, 2, sl, &r);
	make_batch(&t, 2, tl, &r);
	g1 = malloc(sizeof(float) * m->nw);
	r0 = m->rng;

	dropout = 1;
	zero_grad(m);
	l1 = m->arch->train_batch(m, &s, &t, 1.0f, dropout, NULL, NULL);
	memcpy(g1, m->g, sizeof(float) * m->nw);
	ck_assert(memcmp(&m->rng, &r0, sizeof r0) != 0);	/* drew masks */
	m->rng = r0;
	zero_grad(m);
	l2 = m->arch->train_batch(m, &s, &t, 1.0f, dropout, NULL, NULL);
	ck_assert(l1 == l2);
	ck_assert(memcmp(g1, m->g, sizeof(float) * m->nw) == 0);
	/* the next batch draws other masks */
	l2 = m->arch->train_batch(m, &s, &t, 1.0f, dropout, NULL, NULL);
	ck_assert(l1 != l2);

	/* training off: no dropout, no draws, the loss of dropout=0 */
	dropout = 0;
	r0 = m->rng;
	l_off = m->arch->train_batch(m, &s, &t, 1.0f, dropout, NULL, NULL);
	ck_assert(memcmp(&m->rng, &r0, sizeof r0) == 0);
	ck_assert_int_eq(config_set(&m->cfg, "dropout", "0"), 0);
	dropout = 1;
	l0 = m->arch->train_batch(m, &s, &t, 1.0f, dropout, NULL, NULL);
	ck_assert(l0 == l_off);
	ck_assert(l0 != l1);
	free(g1);
	free_batch(&s);
	free_batch(&t);
	model_free(m);
}
END_TEST

/* ---- learning -------------------------------------------------------------- */

/* Greedy copies of n random sequences: the fraction of tokens right. */
static double copied_tokens(const struct model *m, struct rng *r, int n)
{
	int len[16], i, k, step, right = 0, total = 0;
	struct batch_ids s;
	struct frame *f, *fp[16];
	struct decoder *d;
	int32_t prev[16], out[16][16];
	float logp[16 * V];

	for (i = 0; i < n; i++)
		len[i] = 3 + (int)rng_below(r, 4);
	make_batch(&s, n, len, r);
	f = frames_of(&s, fp);
	pipeline(m, fp, n);
	d = m->arch->dec_new(m, NULL, fp, n, 1);
	for (i = 0; i < n; i++)
		prev[i] = 1;
	for (step = 0; step < s.S; step++) {
		ck_assert_int_eq(m->arch->dec_step(d, n, prev, logp, NULL), 0);
		for (i = 0; i < n; i++) {
			int best = 0;

			for (k = 1; k < V; k++)
				if (logp[i * V + k] > logp[i * V + best])
					best = k;
			out[i][step] = prev[i] = best;
		}
	}
	for (i = 0; i < n; i++)
		for (k = 0; k < len[i]; k++, total++)
			right += out[i][k] == s.ids[i * s.S + k];
	m->arch->dec_free(d);
	free_frames(f, n);
	free_batch(&s);
	return (double)right / total;
}

START_TEST(position_table_is_the_formula)
{
	/* the table the encoder and decoder read equals doc/MODELS.md's PE
	 * computed in double, and posenc() bit for bit */
	enum { ROWS = 40, D = 10 };
	float pe[ROWS * D], v;
	int p, i;

	posenc_table(pe, ROWS, D);
	for (p = 0; p < ROWS; p++)
		for (i = 0; i < D; i++) {
			double a = p / pow(10000.0, (double)(i / 2 * 2) / D);

			v = posenc(p, i, D);
			ck_assert(memcmp(&v, &pe[p * D + i], sizeof v) == 0);
			ck_assert(fabs(pe[p * D + i] -
				       (i % 2 ? cos(a) : sin(a))) <= 6e-8);
		}
}
END_TEST

/* ---- Marian's variants ------------------------------------------------- */

static const char *const marian_post[] = {
	"pos=marian", "ffn_act=swish", "bos_id=-1", "ln_eps=1e-06",
};
static const char *const marian_pre_relu[] = {
	"pos=marian", "ffn_act=relu", "bos_id=-1", "pre_kv=input",
};

START_TEST(marian_config_and_parameters)
{
	const char *extra[] = { "tie=src", "pos=marian", "ffn_act=swish",
				"bos_id=-1" };
	const char *bad[] = { "src_vocab=13", "tgt_vocab=13", "d_model=8",
			      "heads=2", "ffn=12", "enc_layers=1",
			      "dec_layers=1", "ffn_act=gelu" };
	struct model *m = make(extra, 4, 0);
	const struct tf_net *n = m->net;

	/* tie=src: one embedding for both sides, the output layer apart */
	ck_assert_ptr_null(model_param(m, "src.emb"));
	ck_assert_ptr_nonnull(model_param(m, "tgt.emb"));
	ck_assert_ptr_nonnull(model_param(m, "out.W"));
	ck_assert_ptr_eq(n->w.src_emb, n->w.tgt_emb);
	ck_assert_ptr_eq(n->g.src_emb, n->g.tgt_emb);
	ck_assert_ptr_ne(n->w.out_W, n->w.tgt_emb);
	ck_assert_int_eq(n->swish, 1);
	ck_assert_int_eq(n->pos, POS_MARIAN);
	ck_assert_int_eq(m->bos_id, -1);
	model_free(m);
	ck_assert_ptr_null(model_create("transformer", bad, 8, "", ""));
	ck_assert_msg(strstr(err_msg(), "ffn_act must be relu or swish"),
		      "%s", err_msg());
	bad[7] = "tie=src";
	bad[1] = "tgt_vocab=14";
	ck_assert_ptr_null(model_create("transformer", bad, 8, "", ""));
	ck_assert_msg(strstr(err_msg(), "tie=src needs src_vocab"), "%s",
		      err_msg());
	/* and a user may set them (train-step --set) */
	ck_assert_int_eq(model_check_setting(&arch_transformer, "tie=src"), 0);
	ck_assert_int_eq(model_check_setting(&arch_transformer, "pos=marian"),
			 0);
	ck_assert_int_eq(model_check_setting(&arch_transformer,
					     "ffn_act=swish"), 0);
	ck_assert_int_eq(model_check_setting(&arch_transformer,
					     "ffn_act=gelu"), -1);
	ck_assert_int_eq(model_check_setting(&arch_rnnsearch,
					     "ffn_act=swish"), -1);
}
END_TEST

/* Marian's inits::sinusoidalPositionEmbeddings as its loop writes the
 * table (node_initializers.cpp l. 215-234: float, libm's float
 * functions, an odd d's last sine written over the first cosine). */
static void marians_loop(float *t, int rows, int d)
{
	float nts = (float)d / 2, inc = logf(10000.f) / (nts - 1.f);

	for (int p = 0; p < rows; p++)
		for (int i = 0; i < nts; i++) {
			float v = p * expf(i * -inc);

			t[p * d + i] = sinf(v);
			t[p * d + (int)nts + i] = cosf(v);
		}
}

START_TEST(marian_position_table_is_marians_formula)
{
	enum { ROWS = 30, D = 12, DO = 7 };
	float pe[ROWS * D], want[ROWS * D], v, x[3 * D];
	int p, i;

	tf_marian_pe_table(pe, ROWS, D);
	marians_loop(want, ROWS, D);
	ck_assert(memcmp(pe, want, sizeof pe) == 0);
	/* the formula in double, within the float arguments' rounding:
	 * h = d/2 timescales, increment ln(10000)/(h-1), sines then cosines */
	for (p = 0; p < ROWS; p++)
		for (i = 0; i < D / 2; i++) {
			double inc = log(10000.0) / (D / 2 - 1);
			double a = p * exp(-i * inc);

			ck_assert(fabs(pe[p * D + i] - sin(a)) <= 4e-6);
			ck_assert(fabs(pe[p * D + D / 2 + i] - cos(a)) <= 4e-6);
			v = tf_marian_pe(p, i, D);
			ck_assert(memcmp(&v, &pe[p * D + i], sizeof v) == 0);
		}
	/* an odd d: sines in 0 .. 3, cosines of timescales 1 .. 3 in 4 .. 6 */
	tf_marian_pe_table(pe, ROWS, DO);
	marians_loop(want, ROWS, DO);
	ck_assert(memcmp(pe, want, sizeof(float) * ROWS * DO) == 0);
	/* the last timescale is 1/10000: position 10000's angle is 1 */
	ck_assert(fabs(tf_marian_pe(10000, D / 2 - 1, D) - sin(1.0)) < 1e-6);
	/* added beyond the table as from it */
	tf_marian_pe_table(pe, ROWS, D);
	memset(x, 0, sizeof(x));
	tf_marian_pe_add(x, 3, D, 28, pe, ROWS);
	for (i = 0; i < D; i++) {
		ck_assert(x[i] == pe[28 * D + i]);
		ck_assert(x[2 * D + i] == tf_marian_pe(30, i, D));
	}
}
END_TEST

/* bos_id -1: the decoder's first input is 0 * sqrt(d) + PE(0) (Marian's
 * shift of the embeddings inserts a zero row there): sines 0, cosines 1 */
START_TEST(marian_zero_start_is_the_position_alone)
{
	const char *extra[] = { "pos=marian", "bos_id=-1", "tie=all" };
	struct model *m = make(extra, 3, 0.3);
	const struct tf_net *n = m->net;
	int32_t ids[3] = { -1, 5, -1 };
	float x[3 * 8];
	int i;

	tf_embed_forward(n, x, ids, 3, 1, 0, 1);
	for (i = 0; i < 8; i++) {
		ck_assert(x[i] == (i < 4 ? 0.0f : 1.0f));
		ck_assert(x[16 + i] == x[i]);
		ck_assert(fabsf(x[8 + i] - (n->w.tgt_emb[5 * 8 + i] *
					    sqrtf(8.0f) +
					    (i < 4 ? 0.0f : 1.0f))) < 1e-6);
	}
	model_free(m);
}
END_TEST

/* ffn_act=swish: y = W2 swish(W1 x + b1) + b2 in plain loops */
START_TEST(marian_swish_ffn_is_the_formula)
{
	const char *extra[] = { "ffn_act=swish" };
	struct model *m = make(extra, 1, 0.3);
	const struct tf_net *n = m->net;
	const struct ffn_w *w = &n->w.enc[0].ffn;
	enum { N = 3, D = 8, F = 12 };
	float x[N * D], y[N * D], h[N * F], a[N * F];
	struct rng r;
	int i, j, k;

	rng_seed(&r, 3);
	for (i = 0; i < N * D; i++)
		x[i] = (float)(2 * rng_uniform(&r) - 1);
	tf_ffn_forward(n, y, h, a, x, w, N);
	for (i = 0; i < N; i++) {
		double hv[F];

		for (j = 0; j < F; j++) {
			double s = w->b1[j];

			for (k = 0; k < D; k++)
				s += (double)w->W1[j * D + k] * x[i * D + k];
			hv[j] = s / (1 + exp(-s));
		}
		for (k = 0; k < D; k++) {
			double s = w->b2[k];

			for (j = 0; j < F; j++)
				s += (double)w->W2[k * F + j] * hv[j];
			ck_assert_msg(fabs(y[i * D + k] - s) < 1e-5,
				      "row %d [%d]: %g, want %g", i, k,
				      y[i * D + k], s);
		}
	}
	model_free(m);
}
END_TEST

/* teacher-forced log-probabilities of a model with keys extra */
static float *logp_of(const char *const *extra, int nextra)
{
	int sl[] = { 5, 3 }, tl[] = { 4, 6 };
	struct model *m = make(extra, nextra, 0.3);
	struct batch_ids s, t;
	struct rng r;
	float *lp;

	rng_seed(&r, 13);
	make_batch(&s, 2, sl, &r);
	make_batch(&t, 2, tl, &r);
	lp = malloc(sizeof(float) * 2 * t.S * V);
	ck_assert_msg(transformer_logp(m, &s, &t, lp) == 0, "%s", err_msg());
	free_batch(&s);
	free_batch(&t);
	model_free(m);
	return lp;
}

/* In Marian's vocabularies </s> is id 0: training takes it as a target
 * like any other (padding is told by length), or a model trained on such
 * a vocabulary would never learn to stop. */
START_TEST(marian_eos_zero_is_a_target)
{
	const char *extra[] = { "norm=post", "tie=all", "dropout=0",
				"pos=marian", "bos_id=-1", "eos_id=0" };
	struct model *m = make(extra, 6, 0.3);
	int sl[] = { 5, 3, 6 }, tl[] = { 4, 6, 2 }, i, ntok;
	struct batch_ids s, t;
	struct rng r;
	double nll, loss;

	rng_seed(&r, 5);
	make_batch(&s, 3, sl, &r);
	make_batch(&t, 3, tl, &r);
	for (i = 0; i < 3; i++)
		t.ids[i * t.S + tl[i] - 1] = 0;
	zero_grad(m);
	loss = m->arch->train_batch(m, &s, &t, 1.0f, 0, &nll, &ntok);
	ck_assert_int_eq(ntok, 4 + 6 + 2);
	ck_assert_double_gt(loss, 0);
	free_batch(&s);
	free_batch(&t);
	model_free(m);
}
END_TEST

/* A setting given to a trained model (train-step --set) is the one its
 * network runs with, and the one saved: pre_kv=input set over a saved
 * pre_kv=norm model changes the loss, and the saved result gives that
 * loss again.  (It was once set in the config after the network was
 * built: the training ran pre_kv=norm and saved pre_kv=input.)  A size
 * fails, naming the file. */
START_TEST(set_on_a_saved_model_is_run)
{
	const char *extra[] = { "norm=pre", "tie=all", "dropout=0",
				"pos=marian", "bos_id=-1" };
	const char *const set[] = { "pre_kv=input" }, *const big[] = {
		"d_model=16" };
	struct model *a = make(extra, 5, 0.3), *b, *c;
	int sl[] = { 5, 3, 6 }, tl[] = { 4, 6, 2 }, ntok;
	char dir[] = "/tmp/test_transformer.XXXXXX", p[64];
	struct batch_ids s, t;
	struct rng r;
	double nll, la, lb, lc;

	rng_seed(&r, 5);
	make_batch(&s, 3, sl, &r);
	make_batch(&t, 3, tl, &r);
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(p, sizeof p, "%s/m", dir);
	la = a->arch->train_batch(a, &s, &t, 1.0f, 0, &nll, &ntok);
	ck_assert_msg(model_save(a, p, NULL, 0) == 0, "%s", err_msg());
	b = model_load_set(p, MODEL_LOAD_TRAIN, NULL, set, 1);
	ck_assert_msg(b != NULL, "%s", err_msg());
	lb = b->arch->train_batch(b, &s, &t, 1.0f, 0, &nll, &ntok);
	ck_assert_msg(fabs(lb - la) > 1e-4 * la, "%g %g", la, lb);
	ck_assert_msg(model_save(b, p, NULL, 0) == 0, "%s", err_msg());
	c = model_load(p, MODEL_LOAD_TRAIN, NULL);
	ck_assert_msg(c != NULL, "%s", err_msg());
	lc = c->arch->train_batch(c, &s, &t, 1.0f, 0, &nll, &ntok);
	ck_assert(lc == lb);
	ck_assert_ptr_null(model_load_set(p, MODEL_LOAD_TRAIN, NULL, big, 1));
	ck_assert_msg(strstr(err_msg(), p), "%s", err_msg());
	unlink(p);
	rmdir(dir);
	free_batch(&s);
	free_batch(&t);
	model_free(a);
	model_free(b);
	model_free(c);
}
END_TEST

/* pre_kv=input (Marian's pre-norm): self-attention's keys and values of
 * the sub-layer's input, not of its layer norm: another function of the
 * same weights; norm is the default; post-norm has no such choice */
START_TEST(marian_pre_kv_is_another_attention)
{
	const char *in[] = { "norm=pre", "tie=all", "pre_kv=input" };
	const char *nm[] = { "norm=pre", "tie=all", "pre_kv=norm" };
	const char *post_in[] = { "norm=post", "tie=all", "pre_kv=input" };
	const char *bad[] = { "src_vocab=13", "tgt_vocab=13", "d_model=8",
			      "heads=2", "ffn=12", "enc_layers=1",
			      "dec_layers=1", "pre_kv=raw" };
	float *a = logp_of(in, 3), *b = logp_of(nm, 3), *c = logp_of(nm, 2);
	float *p = logp_of(post_in, 3), *q = logp_of(post_in, 2);
	size_t i, n = 2 * 6 * V;
	double most = 0;

	for (i = 0; i < n; i++)
		if (fabs(a[i] - b[i]) > most)
			most = fabs(a[i] - b[i]);
	ck_assert_msg(most > 1e-2, "pre_kv=input changes at most %g", most);
	ck_assert(memcmp(b, c, n * sizeof *b) == 0);
	ck_assert(memcmp(p, q, n * sizeof *p) == 0);
	free(a);
	free(b);
	free(c);
	free(p);
	free(q);
	ck_assert_ptr_null(model_create("transformer", bad, 8, "", ""));
	ck_assert_msg(strstr(err_msg(), "pre_kv must be norm or input"), "%s",
		      err_msg());
	ck_assert_int_eq(model_check_setting(&arch_transformer,
					     "pre_kv=input"), 0);
}
END_TEST

START_TEST(marian_gradients)
{
	grad_check_more("norm=post", "tie=src", marian_post, 4);
	grad_check_more("norm=post", "tie=all", marian_post, 4);
	grad_check_more("norm=pre", "tie=tgt", marian_pre_relu, 4);
	grad_check_more("norm=post", "tie=none", marian_post + 1, 1);
}
END_TEST

START_TEST(marian_decoder_matches_teacher)
{
	decoder_matches_teacher_more("norm=post", "tie=src", marian_post, 4,
				     2);
	decoder_matches_teacher_more("norm=pre", "tie=all", marian_pre_relu,
				     4, 4);
}
END_TEST

/* ---- the SSRU decoder (dec_self=ssru) ------------------------------------ */

START_TEST(ssru_config_and_parameters)
{
	const char *extra[] = { "dec_self=ssru", "norm=post", "tie=none" };
	const char *bad[] = { "src_vocab=13", "tgt_vocab=13", "d_model=8",
			      "heads=2", "ffn=12", "enc_layers=1",
			      "dec_layers=1", "dec_self=lstm" };
	struct model *m = make(extra, 3, 0);
	const struct tf_net *n = m->net;
	struct param *p;
	int l;

	ck_assert_int_eq(n->ssru, 1);
	/* 2 emb + 2 x 16 + 2 x (3 + 8 + 6 + 4) + out.W, out.b: the SSRU's
	 * three in place of the self-attention's eight */
	ck_assert_int_eq(m->nparam, 2 + 32 + 42 + 2);
	for (l = 0; l < 2; l++) {
		char name[32];

		snprintf(name, sizeof name, "dec.%d.self.q.W", l);
		ck_assert_ptr_null(model_param(m, name));
		snprintf(name, sizeof name, "dec.%d.ssru.W", l);
		ck_assert_ptr_nonnull(p = model_param(m, name));
		ck_assert_int_eq(p->rank, 2);
		ck_assert_int_eq(p->dim[0], 8);
		ck_assert_int_eq(p->dim[1], 8);
		ck_assert_ptr_eq(n->w.dec[l].ssru.W, p->w);
		snprintf(name, sizeof name, "dec.%d.ssru.Wf", l);
		ck_assert_ptr_nonnull(p = model_param(m, name));
		ck_assert_ptr_eq(n->w.dec[l].ssru.Wf, p->w);
		snprintf(name, sizeof name, "dec.%d.ssru.bf", l);
		ck_assert_ptr_nonnull(p = model_param(m, name));
		ck_assert_int_eq(p->rank, 1);
		ck_assert_int_eq(p->dim[0], 8);
		ck_assert_ptr_eq(n->w.dec[l].ssru.bf, p->w);
		/* the first of the layer, where self.q.W was */
		ck_assert_str_eq(m->param[2 + 32 + 21 * l].name,
				 l ? "dec.1.ssru.W" : "dec.0.ssru.W");
	}
	ck_assert_ptr_nonnull(model_param(m, "enc.0.self.q.W"));
	model_free(m);
	ck_assert_ptr_null(model_create("transformer", bad, 8, "", ""));
	ck_assert_msg(strstr(err_msg(), "dec_self must be attention or ssru, "
			     "not lstm"), "%s", err_msg());
	ck_assert_int_eq(model_check_setting(&arch_transformer,
					     "dec_self=ssru"), 0);
	ck_assert_int_eq(model_check_setting(&arch_transformer,
					     "dec_self=gru"), -1);
	ck_assert_int_eq(model_check_setting(&arch_rnnsearch,
					     "dec_self=ssru"), -1);
}
END_TEST

/* Every gradient, the SSRU's among them, with and without dropout, with
 * Marian's variants as an imported student has them. */
START_TEST(ssru_gradients)
{
	static const char *const student[] = {
		"dec_self=ssru", "pos=marian", "ffn_act=relu", "bos_id=-1",
		"ln_eps=1e-06",
	};

	grad_check("norm=post", "tie=none", "dropout=0", "dec_self=ssru");
	grad_check("norm=pre", "tie=tgt", "dropout=0.2", "dec_self=ssru");
	grad_check_more("norm=post", "tie=all", student, 5);
}
END_TEST

/* The step decoder's cells (carried, branched and dropped with the
 * hypotheses) give the teacher-forced pass's log-probabilities. */
START_TEST(ssru_decoder_matches_teacher)
{
	static const char *const student[] = {
		"dec_self=ssru", "pos=marian", "ffn_act=relu", "bos_id=-1",
	};

	decoder_matches_teacher("norm=post", "tie=none", "dec_self=ssru", 2);
	decoder_matches_teacher("norm=pre", "tie=all", "dec_self=ssru", 4);
	decoder_matches_teacher_more("norm=post", "tie=all", student, 4, 4);
}
END_TEST

/* Training learns to copy sequences, with the decoder's self-attention or
 * the SSRU in its place (self: the dec_self setting). */
static void learn_to_copy(const char *self)
{
	const char *extra[] = {
		"d_model=32", "heads=4", "ffn=64", "enc_layers=1",
		"dec_layers=1", "dropout=0", "label_smoothing=0",
		"schedule=constant", "lr=0.005", "clip=1", self,
	};
	struct model *m = make(extra, 11, 0);
	struct optim o;
	struct rng r;
	int step, i, len[16];
	double before, after;

	rng_seed(&r, 21);
	before = copied_tokens(m, &r, 16);
	ck_assert_int_eq(optim_init(&o, m), 0);
	dropout = 1;
	for (step = 0; step < 400; step++) {
		struct batch_ids s;
		int ntok = 0;

		for (i = 0; i < 16; i++) {
			len[i] = 3 + (int)rng_below(&r, 4);
			ntok += len[i];
		}
		make_batch(&s, 16, len, &r);
		zero_grad(m);
		ck_assert_double_ge(m->arch->train_batch(m, &s, &s,
							  1.0f / ntok, dropout,
							  NULL, NULL), 0);
		optim_update(&o, m, clip_factor(&o, grad_norm(m->g, m->nw)));
		free_batch(&s);
	}
	dropout = 0;
	after = copied_tokens(m, &r, 16);
	/* untrained: about chance (1 in 10 symbols) */
	ck_assert_msg(before < 0.3, "%s: %.2f of the tokens right untrained",
		      self, before);
	ck_assert_msg(after > 0.9, "%s: %.2f of the tokens right after "
		      "training", self, after);
	optim_free(&o);
	model_free(m);
}

START_TEST(learns_to_copy)
{
	learn_to_copy("dec_self=attention");
	learn_to_copy("dec_self=ssru");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("transformer");
	TCase *tc = tcase_create("transformer");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, gradients_guided);
	tcase_add_test(tc, parameters_as_models_md);
	tcase_add_test(tc, positions_config_and_limits);
	tcase_add_test(tc, gradients_post_norm);
	tcase_add_test(tc, gradients_pre_norm);
	tcase_add_test(tc, gradients_with_dropout);
	tcase_add_test(tc, gradients_positions);
	tcase_add_test(tc, decoder_cache_matches_full_forward);
	tcase_add_test(tc, decoder_cache_matches_full_forward_positions);
	tcase_add_test(tc, padding_changes_nothing);
	tcase_add_test(tc, encoder_layers_share_buffers);
	tcase_add_test(tc, dropout_matches_one_at_a_time);
	tcase_add_test(tc, dropout_is_reproducible_and_off_at_inference);
	tcase_add_test(tc, position_table_is_the_formula);
	tcase_add_test(tc, marian_config_and_parameters);
	tcase_add_test(tc, marian_position_table_is_marians_formula);
	tcase_add_test(tc, marian_zero_start_is_the_position_alone);
	tcase_add_test(tc, marian_swish_ffn_is_the_formula);
	tcase_add_test(tc, marian_pre_kv_is_another_attention);
	tcase_add_test(tc, marian_eos_zero_is_a_target);
	tcase_add_test(tc, set_on_a_saved_model_is_run);
	tcase_add_test(tc, marian_gradients);
	tcase_add_test(tc, marian_decoder_matches_teacher);
	tcase_add_test(tc, ssru_config_and_parameters);
	tcase_add_test(tc, ssru_gradients);
	tcase_add_test(tc, ssru_decoder_matches_teacher);
	tcase_add_test(tc, learns_to_copy);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
