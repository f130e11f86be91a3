/*
 * transformer_batch.c: a padded batch of the Transformer: its activations
 * planned in one workspace (transformer_batch.h), and a batch of pairs
 * run through the encoder and decoder for training (with the loss and the
 * backward pass) or teacher-forced scoring.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "base/errmsg.h"
#include "base/scratch.h"
#include "kernels/kernels.h"
#include "models/arena.h"
#include "transformer_batch.h"

/* For a config without them (a model file states every training key). */
#define DEFAULT_DROPOUT 0.1
#define DEFAULT_LABEL_SMOOTHING 0.1

/* ---- the activations' layout ------------------------------------------- */

static void plan_sub(struct sub_acts *s, struct arena *a, const struct fwd *f,
		     size_t N, int d)
{
	s->ln = arena_floats(a, N * d);
	s->mean = arena_floats(a, N);
	s->rstd = arena_floats(a, N);
	s->fo = arena_floats(a, N * d);
	s->sum = arena_floats(a, N * d);
	s->mask = f->drop > 0 ? arena_take(a, N * d) : NULL;
}

static void plan_mha(struct mha_acts *m, struct arena *a, const struct fwd *f,
		     int H, size_t Tq, size_t Tk, int d)
{
	m->q = arena_floats(a, f->B * Tq * d);
	m->k = arena_floats(a, f->B * Tk * d);
	m->v = arena_floats(a, f->B * Tk * d);
	m->ctx = arena_floats(a, f->B * Tq * d);
	m->lse = arena_floats(a, (size_t)f->B * H * Tq);
}

static size_t maxz(size_t a, size_t b)
{
	return a > b ? a : b;
}

struct mha_dims tf_mha_dims(const struct tf_net *n, const struct fwd *f,
			    int Tq, int Tk, const int *klen, int causal,
			    const int *pos)
{
	/* rope: queries and keys of one sequence only; between two (the
	 * cross-attention) a difference of positions means nothing */
	if (n->pos != POS_ROPE)
		pos = NULL;
	return (struct mha_dims){
		.B = f->B, .Tq = Tq, .Tk = Tk, .d = n->d, .heads = n->heads,
		.klen = klen, .causal = causal, .dropout = f->drop,
		.qpos = pos, .kpos = pos, .cs = n->rope,
		.cs_rows = TF_PE_ROWS, .marian = n->marian && !f->train,
	};
}

/* Lays out f's buffers in a (f's sizes and flags set). */
static void plan(struct fwd *f, struct arena *a, const struct tf_net *n)
{
	size_t N = (size_t)f->B * f->S, M = (size_t)f->B * f->T;
	size_t rows = maxz(N, M);
	int d = n->d, H = n->heads, l;
	struct mha_dims es, ds, dc;

	f->x0 = arena_floats(a, N * d);
	f->spos = arena_take(a, sizeof(int) * N);
	f->m0 = f->drop > 0 ? arena_take(a, N * d) : NULL;
	f->enc = arena_take(a, sizeof(*f->enc) * n->enc_layers);
	for (l = 0; l < n->enc_layers; l++) {
		struct enc_acts tmp, *e = a->base ? &f->enc[l] : &tmp;

		/* with no backward pass to come, one set serves every
		 * layer: a layer reads only the output of the one before it
		 * (its s_ffn.sum, pre-norm, or s_ffn.ln, post-norm), and
		 * writes that buffer last, after its s_att's, once nothing
		 * reads it (a base model's encoder then needs a sixth of the
		 * memory, and each page of it faults once) */
		if (!f->train && l >= 1) {
			if (a->base)
				f->enc[l] = f->enc[0];
			continue;
		}
		plan_sub(&e->s_att, a, f, N, d);
		plan_mha(&e->att, a, f, H, f->S, f->S, d);
		plan_sub(&e->s_ffn, a, f, N, d);
		e->h = arena_floats(a, N * n->ffn);
		e->a = n->swish ? arena_floats(a, N * n->ffn) : NULL;
	}
	plan_sub(&f->enc_ln, a, f, N, d);
	if (!f->T)
		return;
	f->dec_in = arena_take(a, sizeof(int32_t) * M);
	f->tpos = arena_take(a, sizeof(int) * M);
	f->y0 = arena_floats(a, M * d);
	f->my0 = f->drop > 0 ? arena_take(a, M * d) : NULL;
	f->dec = arena_take(a, sizeof(*f->dec) * n->dec_layers);
	for (l = 0; l < n->dec_layers; l++) {
		struct dec_acts tmp, *e = a->base ? &f->dec[l] : &tmp;

		plan_sub(&e->s_self, a, f, M, d);
		if (n->ssru) {
			e->ssru.xw = arena_floats(a, M * d);
			e->ssru.f = arena_floats(a, M * d);
			e->ssru.c = arena_floats(a, M * d);
		} else {
			plan_mha(&e->self, a, f, H, f->T, f->T, d);
		}
		plan_sub(&e->s_cross, a, f, M, d);
		plan_mha(&e->cross, a, f, H, f->T, f->S, d);
		plan_sub(&e->s_ffn, a, f, M, d);
		e->h = arena_floats(a, M * n->ffn);
		e->a = n->swish ? arena_floats(a, M * n->ffn) : NULL;
	}
	plan_sub(&f->dec_ln, a, f, M, d);
	f->logits = arena_floats(a, M * n->tgt_vocab);
	if (!f->train)
		return;
	f->out_row = arena_take(a, sizeof(int) * M);
	f->out_tgt = arena_take(a, sizeof(int32_t) * M);
	f->Yo = arena_floats(a, M * d);
	f->dA = arena_floats(a, rows * d);
	f->dB = arena_floats(a, rows * d);
	f->dln = arena_floats(a, rows * d);
	f->dfo = arena_floats(a, rows * d);
	f->dE = arena_floats(a, N * d);
	if (f->guide_layer >= 0) {
		f->gq = arena_floats(a, M * d);
		f->gk = arena_floats(a, N * d);
	}
	f->dh = arena_floats(a, rows * n->ffn);
	if (n->ssru) {
		f->dxw = arena_floats(a, M * d);
		f->dfp = arena_floats(a, M * d);
	}
	es = tf_mha_dims(n, f, f->S, f->S, NULL, 0, NULL);
	ds = tf_mha_dims(n, f, f->T, f->T, NULL, 1, NULL);
	dc = tf_mha_dims(n, f, f->T, f->S, NULL, 0, NULL);
	f->dmha = arena_floats(a, maxz(mha_scratch_floats(&es),
				maxz(mha_scratch_floats(&ds),
				     mha_scratch_floats(&dc))));
}

int tf_plan_alloc(struct fwd *f, const struct tf_net *n)
{
	struct arena a = { NULL, 0 };
	struct scratch *ws;
	size_t i;

	/* in the calling thread's block, kept between batches (scratch.h) */
	plan(f, &a, n);
	if (!(ws = kern_caller_scratch()) || arena_in(&a, ws, SIZE_MAX) < 0) {
		err_prefix("transformer: a batch");
		return -1;
	}
	plan(f, &a, n);
	/* row b * T + t is position t */
	for (i = 0; i < (size_t)f->B * f->S; i++)
		f->spos[i] = (int)(i % f->S);
	for (i = 0; f->T && i < (size_t)f->B * f->T; i++)
		f->tpos[i] = (int)(i % f->T);
	return 0;
}

/* ---- a batch of pairs: training and teacher-forced scoring ------------- */

static int check_ids(const struct batch_ids *b, int vocab, const char *what)
{
	size_t i;
	int k;

	if (b->B < 1 || b->S < 1) {
		err_set("transformer: empty %s batch (%d x %d)", what, b->B,
			b->S);
		return -1;
	}
	for (k = 0; k < b->B; k++)
		if (b->len[k] < 1 || b->len[k] > b->S) {
			err_set("transformer: %s sentence %d has length %d "
				"outside 1..%d", what, k, b->len[k], b->S);
			return -1;
		}
	for (i = 0; i < (size_t)b->B * b->S; i++)
		if (b->ids[i] < 0 || b->ids[i] >= vocab) {
			err_set("transformer: %s id %d outside the vocabulary "
				"(%d)", what, (int)b->ids[i], vocab);
			return -1;
		}
	return 0;
}

/* Checks the batch, lays out f and runs the forward pass to f->logits. */
static int forward_batch(struct fwd *f, const struct tf_net *n, int bos,
			 const struct batch_ids *src,
			 const struct batch_ids *tgt, float drop, int train,
			 int guide_layer, struct rng *r)
{
	int b, t;

	if (check_ids(src, n->src_vocab, "source") < 0 ||
	    check_ids(tgt, n->tgt_vocab, "target") < 0)
		return -1;
	if (src->B != tgt->B) {
		err_set("transformer: %d sources for %d targets", src->B,
			tgt->B);
		return -1;
	}
	for (b = 0; b < src->B; b++)
		if (src->len[b] > tf_pos_limit(n) ||
		    tgt->len[b] > tf_pos_limit(n)) {
			err_set("transformer: pair %d of the batch has %d "
				"source and %d target tokens, more than "
				"max_pos=%d of pos=learned", b, src->len[b],
				tgt->len[b], n->max_pos);
			return -1;
		}
	memset(f, 0, sizeof(*f));
	f->B = src->B;
	f->S = src->S;
	f->T = tgt->S;
	f->drop = drop;
	f->train = train;
	f->guide_layer = guide_layer;
	f->slen = src->len;
	f->tlen = tgt->len;
	f->src_ids = src->ids;
	f->tgt_ids = train ? tgt->ids : NULL;
	if (tf_plan_alloc(f, n) < 0)
		return -1;
	for (b = 0; b < f->B; b++) {
		const int32_t *y = tgt->ids + (size_t)b * f->T;
		int32_t *in = f->dec_in + (size_t)b * f->T;

		in[0] = bos;	/* <s>, or -1: a zero vector */
		for (t = 1; t < f->T; t++)
			in[t] = y[t - 1];
	}
	tf_embed_forward(n, f->x0, src->ids, f->B, f->S, 0, 0);
	tf_encoder_forward(n, f, r);
	tf_decoder_forward(n, f, r);
	return 0;
}

/* A training key of the config, or its default. */
static double train_key(const struct model *m, const char *key, double def)
{
	double v;

	if (!config_get(&m->cfg, key) || config_double(&m->cfg, key, &v) < 0)
		return def;
	return v;
}

/*
 * Guided alignment's keys: guided_weight (0 or absent: none), and the
 * head guided_head of decoder layer guided_layer, at the position that
 * predicts a unit or (guided_shift=1) reads it; *layer -1 when off.
 */
static int guide_setting(const struct model *m, float *weight, int *layer,
			 int *head, int *shift)
{
	const struct tf_net *n = m->net;
	double w = train_key(m, "guided_weight", 0);
	double l = train_key(m, "guided_layer", n->dec_layers - 1);
	double h = train_key(m, "guided_head", 0);

	*shift = train_key(m, "guided_shift", 0) == 1;
	*layer = -1;
	if (!(w > 0))
		return 0;
	if (l < 0 || l >= n->dec_layers || l != (int)l || h < 0 ||
	    h >= n->heads || h != (int)h) {
		err_set("transformer: guided_layer=%g and guided_head=%g "
			"must name one of %d decoder layers and %d heads",
			l, h, n->dec_layers, n->heads);
		return -1;
	}
	*weight = (float)w;
	*layer = (int)l;
	*head = (int)h;
	return 0;
}

double tf_train_batch(struct model *m, const struct batch_ids *src,
		      const struct batch_ids *tgt, float scale, int dropout, double *nll,
		      int *ntok)
{
	struct tf_net *n = m->net;
	float drop = dropout ? (float)train_key(m, "dropout",
						    DEFAULT_DROPOUT) : 0.0f;
	float eps = (float)train_key(m, "label_smoothing",
				     DEFAULT_LABEL_SMOOTHING);
	struct fwd f;
	double loss;
	int gl = -1, gh = 0, gs = 0;
	float gw = 0;

	if (tgt->guide && guide_setting(m, &gw, &gl, &gh, &gs) < 0)
		return -1;
	if (!(drop >= 0 && drop < 1) || !(eps >= 0 && eps < 1)) {
		err_set("transformer: dropout (%g) and label_smoothing (%g) "
			"must be in [0, 1)", drop, eps);
		return -1;
	}
	if (!m->g) {
		err_set("transformer: train_batch on a model without "
			"gradients");
		return -1;
	}
	if (forward_batch(&f, n, m->bos_id, src, tgt, drop, 1, gl,
			  &m->rng) < 0)
		return -1;
	if (gl >= 0) {
		const struct mha_acts *c = &f.dec[gl].cross;
		double g;

		memset(f.gq, 0, sizeof(float) * f.B * f.T * n->d);
		memset(f.gk, 0, sizeof(float) * f.B * f.S * n->d);
		g = guided_forward_backward(f.gq, f.gk, c->q, c->k, tgt->guide,
					    src->len, f.B, f.T, f.S, n->d,
					    n->heads, gh, gs, gw, scale);
		if (g < 0)
			return -1;
		if (tgt->guide_loss)
			*tgt->guide_loss += g;
	}
	/* logits + out.b; dlogits overwrite the logits; out.b's gradient */
	loss = xent_biased_forward_backward(f.logits, f.logits, n->w.out_b,
					    n->g.out_b, f.out_tgt, f.nout,
					    n->tgt_vocab, eps, scale, nll,
					    ntok);
	if (loss < 0)
		return -1;
	tf_backward(n, &f);
	return loss;
}

int transformer_logp(const struct model *m, const struct batch_ids *src,
		     const struct batch_ids *tgt, float *logp)
{
	const struct tf_net *n = m->net;
	struct fwd f;

	if (forward_batch(&f, n, m->bos_id, src, tgt, 0.0f, 0, -1, NULL) < 0)
		return -1;
	log_softmax_rows(logp, f.logits, f.B * f.T, n->tgt_vocab);
	return 0;
}

