/*
 * transformer_dec_step.c: a step of the Transformer's step-by-step decoder
 * (transformer_dec.h): the embedding of each live hypothesis' last id,
 * every layer (self-attention over the slot's cache, or the SSRU's cell;
 * cross-attention over the memory; the FFN) and the output layer, in
 * blocks of rows on the kernels' threads.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include "base/errmsg.h"
#include "kernels/attn_step.h"
#include "kernels/kernels.h"
#include "nn/layers.h"
#include "transformer_dec.h"

/* Doubles the positions every slot holds. */
static int grow_cache(struct tf_decoder *dc)
{
	int tcap = 2 * dc->tcap, l, s, kind;
	size_t d = dc->n->d, es = dc->es;

	for (l = 0; l < dc->n->dec_layers; l++) {
		for (kind = 0; kind < 2; kind++) {
			char **c = kind ? &dc->sv[l] : &dc->sk[l];
			char *nc = malloc(es * dc->cap * tcap * d);

			if (!nc) {
				err_set("out of memory for the decoder's "
					"cache (%d positions)", tcap);
				return -1;
			}
			for (s = 0; s < dc->cap; s++)
				memcpy(nc + es * s * tcap * d,
				       *c + es * s * dc->tcap * d,
				       es * dc->t * d);
			free(*c);
			*c = nc;
		}
	}
	for (l = 0; dc->kv_hist && l < dc->n->dec_layers; l++) {
		float *nx = malloc(sizeof(float) * dc->cap * tcap * d);

		if (!nx) {
			err_set("out of memory for the decoder's "
				"cache (%d positions)", tcap);
			return -1;
		}
		for (s = 0; s < dc->cap; s++)
			memcpy(nx + s * tcap * d, dc->sx[l] + s * dc->tcap * d,
			       sizeof(float) * dc->t * d);
		free(dc->sx[l]);
		dc->sx[l] = nx;
	}
	dc->tcap = tcap;
	return 0;
}

/*
 * A block of the step's rows, from row lo: the decoder's [cap, .] arrays
 * from there.  Every part of a step treats each row alone (the products
 * too: gemm_packed.h), so blocks of any size give the same bits.
 */
struct rows {
	int lo, n;
	float *x, *q, *k, *v, *ctx, *h, *logits, *logp, *attw;
	struct sub_acts sub;
	const void **kp, **vp;
	int *nkeys, *pos;
	const int *slot, *sent, *klen;
	const int32_t *prev;
};

static void rows_at(const struct tf_decoder *dc, struct rows *r, int lo,
		    int n, const int32_t *prev, float *logp, float *attw)
{
	size_t d = dc->n->d, i = lo;

	*r = (struct rows){
		.lo = lo, .n = n, .x = dc->x + i * d, .q = dc->q + i * d,
		.k = dc->k + i * d, .v = dc->v + i * d,
		.ctx = dc->ctx + i * d, .h = dc->h + i * dc->n->ffn,
		.logits = dc->logits + i * dc->n->tgt_vocab,
		.logp = logp + i * dc->n->tgt_vocab,
		.attw = attw ? attw + i * dc->n->dec_layers * dc->n->heads *
			(size_t)dc->S : NULL,
		.sub = { .ln = dc->sub.ln + i * d, .mean = dc->sub.mean + i,
			 .rstd = dc->sub.rstd + i, .fo = dc->sub.fo + i * d,
			 .sum = dc->sub.sum + i * d },
		.kp = dc->kp + i, .vp = dc->vp + i, .nkeys = dc->nkeys + i,
		.pos = dc->pos + i, .slot = dc->slot + i,
		.sent = dc->sent + i, .klen = dc->klen + i, .prev = prev + i,
	};
}

/* Self-attention of the rows' queries (r->q) over each slot's cache. */
static void self_attention(const struct tf_decoder *dc, int l,
			   struct rows *r)
{
	const struct tf_net *n = dc->n;
	int d = n->d, i;
	size_t row = dc->es * dc->tcap * d;

	/* this position's keys and values join the cache */
	for (i = 0; i < r->n; i++) {
		char *k = dc->sk[l] + r->slot[i] * row, *v = dc->sv[l] +
			  r->slot[i] * row;
		size_t o = dc->es * dc->t * d;

		if (dc->kv16) {
			kv_to_f16((uint16_t *)(k + o), r->k + (size_t)i * d, d);
			kv_to_f16((uint16_t *)(v + o), r->v + (size_t)i * d, d);
		} else {
			memcpy(k + o, r->k + (size_t)i * d, sizeof(float) * d);
			memcpy(v + o, r->v + (size_t)i * d, sizeof(float) * d);
		}
		r->kp[i] = k;
		r->vp[i] = v;
		r->nkeys[i] = dc->t + 1;
	}
	attn_step(&(struct attn_step){
		.rows = r->n, .H = n->heads, .dk = n->dk,
		.scale = 1.0f / sqrtf((float)n->dk),
		.q = r->q, .qs = d, .k = r->kp, .v = r->vp, .ks = d,
		.vs = d, .f16 = dc->kv16, .n = r->nkeys, .out = r->ctx,
		.os = d, .marian = n->marian,
	});
}

/* Cross-attention of r->q over the sentences' memory; with r->attw, the
 * weights go to attw [n, L*H, S] (layer l's planes). */
static void cross_attention(const struct tf_decoder *dc, int l,
			    struct rows *r)
{
	const struct tf_net *n = dc->n;
	int d = n->d, H = n->heads, S = dc->S, i;
	size_t mem = dc->es * S * d, plane = (size_t)H * S;

	for (i = 0; i < r->n; i++) {
		r->kp[i] = dc->ck[l] + r->sent[i] * mem;
		r->vp[i] = dc->cv[l] + r->sent[i] * mem;
	}
	attn_step(&(struct attn_step){
		.rows = r->n, .H = H, .dk = n->dk,
		.scale = 1.0f / sqrtf((float)n->dk),
		.q = r->q, .qs = d, .k = r->kp, .v = r->vp, .ks = d,
		.vs = d, .f16 = dc->kv16, .n = r->klen, .out = r->ctx,
		.os = d,
		.weights = r->attw ? r->attw + l * plane : NULL,
		.ws = (long)(n->dec_layers * plane), .wn = S,
		.marian = n->marian,
	});
}

/* A sub-layer of the step: out = x + F(x) with F's output in sub.fo. */
static const float *step_out(const struct tf_decoder *dc, struct rows *r,
			     const struct ln_w *ln, const float *x)
{
	const float *y = tf_sub_out(dc->n, &r->sub, ln, x, r->n, 0.0f, NULL);

	/* the next sub-layer's input must survive its use of r->sub */
	memcpy(r->x, y, sizeof(float) * r->n * dc->n->d);
	return r->x;
}

/*
 * kv_hist (transformer_dec.h): the keys and values of every position of
 * the rows' hypotheses, as Marian's int8 without alphas makes them: the
 * inputs kv [n, d] join sx, then one product over all the rows' inputs
 * so far, [n * (t + 1), d], writes the cache's earlier positions again
 * and r->k, r->v (the new one, which self_attention adds).  0 or -1.
 */
static int kv_again(const struct tf_decoder *dc, int l, struct rows *r,
		    const struct tf_dec_layer *w, const struct dec_wt *t,
		    const float *kv)
{
	size_t d = dc->n->d, T = dc->t + 1, xrow = dc->tcap * d, i, p;
	size_t row = dc->es * xrow, all = r->n * T * d;
	float *in = malloc(sizeof(float) * 3 * all), *k = in + all,
	      *v = k + all;
	int rc = 0;

	if (!in) {
		err_set("out of memory for %zu keys of the decoder", r->n * T);
		return -1;
	}
	for (i = 0; i < (size_t)r->n; i++) {
		float *x = dc->sx[l] + r->slot[i] * xrow;

		memcpy(x + dc->t * d, kv + i * d, sizeof(float) * d);
		memcpy(in + i * T * d, x, sizeof(float) * T * d);
	}
	rc |= linear_packed(k, in, (int)(r->n * T), &t->self_k, w->self.kb,
			    0);
	rc |= linear_packed(v, in, (int)(r->n * T), &t->self_v, w->self.vb,
			    0);
	for (i = 0; !rc && i < (size_t)r->n; i++) {
		char *ck = dc->sk[l] + r->slot[i] * row, *cv = dc->sv[l] +
			   r->slot[i] * row;
		const float *ki = k + i * T * d, *vi = v + i * T * d;

		for (p = 0; p + 1 < T && dc->kv16; p++) {
			kv_to_f16((uint16_t *)ck + p * d, ki + p * d, d);
			kv_to_f16((uint16_t *)cv + p * d, vi + p * d, d);
		}
		if (!dc->kv16) {
			memcpy(ck, ki, sizeof(float) * (T - 1) * d);
			memcpy(cv, vi, sizeof(float) * (T - 1) * d);
		}
		memcpy(r->k + i * d, ki + (T - 1) * d, sizeof(float) * d);
		memcpy(r->v + i * d, vi + (T - 1) * d, sizeof(float) * d);
	}
	free(in);
	return rc ? -1 : 0;
}

/* The self-attention of the rows' inputs u, to r->sub.fo; 0 or -1. */
static int self_layer(const struct tf_decoder *dc, int l, struct rows *r,
		      const struct tf_dec_layer *w, const struct dec_wt *t,
		      const float *u, const float *x)
{
	const struct tf_net *n = dc->n;
	int nh = r->n, rc = 0;
	/* pre_kv=input: keys and values of the sub-layer's input itself */
	const float *kv = n->kv_in ? x : u;

	rc |= linear_packed(r->q, u, nh, &t->self_q, w->self.qb, 0);
	if (dc->kv_hist) {
		rc |= kv_again(dc, l, r, w, t, kv);
	} else {
		rc |= linear_packed(r->k, kv, nh, &t->self_k, w->self.kb, 0);
		rc |= linear_packed(r->v, kv, nh, &t->self_v, w->self.vb, 0);
	}
	if (n->pos == POS_ROPE) {
		rope_forward(r->q, r->pos, nh, n->heads, n->dk, n->rope,
			     TF_PE_ROWS);
		rope_forward(r->k, r->pos, nh, n->heads, n->dk, n->rope,
			     TF_PE_ROWS);
	}
	self_attention(dc, l, r);
	rc |= linear_packed(r->sub.fo, r->ctx, nh, &t->self_o, w->self.ob, 0);
	return rc;
}

/* The step for a block of rows: their log-probabilities; 0 or -1. */
static int step_rows(const struct tf_decoder *dc, struct rows *r)
{
	const struct tf_net *n = dc->n;
	const float *x = r->x, *u;
	int l, nh = r->n, rc = 0;

	tf_embed_forward(n, r->x, r->prev, nh, 1, dc->t, 1);
	for (l = 0; l < n->dec_layers; l++) {
		const struct tf_dec_layer *w = &n->w.dec[l];
		const struct dec_wt *t = &dc->wt[l];

		u = tf_sub_in(n, &r->sub, &w->ln1, x, nh);
		if (n->ssru) {
			/* W u, Wf u + bf, then the cells move on */
			rc |= linear_packed(r->q, u, nh, &t->ssru_W, NULL, 0);
			rc |= linear_packed(r->k, u, nh, &t->ssru_Wf,
					    w->ssru.bf, 0);
			ssru_step_forward(r->sub.fo, dc->cell[l] +
					  (size_t)r->lo * n->d, r->q, r->k,
					  nh, n->d);
		} else {
			rc |= self_layer(dc, l, r, w, t, u, x);
		}
		x = step_out(dc, r, &w->ln1, x);

		u = tf_sub_in(n, &r->sub, &w->ln2, x, nh);
		rc |= linear_packed(r->q, u, nh, &t->cross_q, w->cross.qb, 0);
		cross_attention(dc, l, r);
		rc |= linear_packed(r->sub.fo, r->ctx, nh, &t->cross_o,
				    w->cross.ob, 0);
		x = step_out(dc, r, &w->ln2, x);

		/* the FFN of ffn.c */
		u = tf_sub_in(n, &r->sub, &w->ln3, x, nh);
		rc |= linear_packed(r->h, u, nh, &t->W1, w->ffn.b1,
				    !n->swish);
		if (n->swish)
			tf_swish(r->h, r->h, (size_t)nh * n->ffn);
		rc |= linear_packed(r->sub.fo, r->h, nh, &t->W2, w->ffn.b2, 0);
		x = step_out(dc, r, &w->ln3, x);
	}
	u = tf_sub_in(n, &r->sub, &n->w.dec_ln, x, nh);
	if (dc->sl) {
		rc |= shortlist_logp(dc->sl, r->logp, n->tgt_vocab, u, nh,
				     r->sent);
	} else {
		rc |= linear_packed(r->logits, u, nh, dc->out_wt,
				    n->w.out_b, 0);
		if (!rc)
			log_softmax_rows(r->logp, r->logits, nh,
					 n->tgt_vocab);
	}
	return rc ? -1 : 0;	/* bf16, int8: out of memory for x's rows */
}

struct step_job {
	const struct tf_decoder *dc;
	const int32_t *prev;
	float *logp, *attw;
	_Atomic int rc;
};

static void step_task(void *ctx, int64_t lo, int64_t hi)
{
	struct step_job *j = ctx;
	struct rows r;

	rows_at(j->dc, &r, (int)lo, (int)(hi - lo), j->prev, j->logp,
		j->attw);
	if (step_rows(j->dc, &r) < 0)
		j->rc = -1;
}

/* 1 when this is the first step of a model with bos_id -1 and every
 * hypothesis' input is that -1 (a zero vector): dec_step_check refuses
 * it, as it refuses any id outside the vocabulary. */
static int first_zero_step(const struct tf_decoder *dc, int nh,
			  const int32_t *prev)
{
	int i;

	if (dc->t || dc->m->bos_id != -1 || nh < 0 || nh > dc->nh)
		return 0;
	for (i = 0; i < nh; i++)
		if (prev[i] != -1)
			return 0;
	err_clear();
	return 1;
}

int tf_dec_step(struct decoder *d, int nh, const int32_t *prev, float *logp,
		float *attw)
{
	struct tf_decoder *dc = (struct tf_decoder *)d;
	const struct tf_net *n = dc->n;
	struct step_job j = { dc, prev, logp, attw, 0 };
	int i, block;

	/* fewer than last time: the last ones were dropped (model.h) */
	if (dec_step_check(nh, dc->nh, prev, n->tgt_vocab) < 0 &&
	    !first_zero_step(dc, nh, prev))
		return -1;
	dc->nh = nh;
	if (nh == 0)
		return 0;
	if (dc->t >= tf_pos_limit(n)) {
		err_set("transformer: the translation of sentence %d of the "
			"batch outgrows max_pos=%d of pos=learned",
			dc->sent[0], n->max_pos);
		return -1;
	}
	if (!n->ssru && dc->t == dc->tcap && grow_cache(dc) < 0)
		return -1;
	for (i = 0; i < nh; i++)
		dc->pos[i] = dc->t;
	if ((block = dec_step_block(nh, dc->sl != NULL)) > 0)
		kern_parallel_for(nh, block, step_task, &j);
	else
		step_task(&j, 0, nh);
	if (j.rc < 0)
		return -1;
	dc->t++;
	return 0;
}
