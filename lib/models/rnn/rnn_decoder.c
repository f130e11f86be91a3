/*
 * rnn_decoder.c: the step-wise decoder of the recurrent models (doc/MODELS.md)
 * for greedy search, beam search and scoring, batched over every live
 * hypothesis; and the output layer, which training shares.
 *
 * The step-wise decoder never forms the context c_i: the context enters a
 * step only through C c_i and Co c_i, and as c_i = sum_j a_ij h_j these
 * are sum_j a_ij (C h_j) and sum_j a_ij (Co h_j).  It projects every
 * annotation once per sentence (rnnencdec: its one context), and a step
 * then weighs S rows of 3n + 2l instead of multiplying [3n + 2l, 2n]
 * matrices: at batch 1 the step no longer reads C and Co at all.  Every
 * way of attending (rnnsearch.h) makes weights a [nh, S] that weigh the
 * projected rows the same way.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "base/errmsg.h"
#include "kernels/kernels.h"
#include "nn/layers.h"
#include "models/shortlist.h"
#include "nn/window.h"
#include "rnn_common.h"
#include "rnnsearch.h"

void rnn_logits_forward(const struct rnn_net *net, int N, const float *t,
			float *logits)
{
	linear_forward(logits, t, net->w.out_W, net->w.out_bias, N, net->l,
		       net->Vt);
}

/* ---- the step-wise decoder ------------------------------------------------ */

struct decoder {
	struct dec_rows r;	/* first: rnn_common.h's accessors */
	const struct rnn_net *net;
	int P;			/* 3n + 2l */
	int Sp;			/* projected rows per sentence: S, or 1 */
	int *step, *step_next;	/* [cap]: the hypotheses' steps done */
	/* per sentence: keys [nsent, S, n'] (additive); proj [nsent, S, P],
	 * each annotation (rnnencdec: the context) times [C; Co]^T */
	float *keys, *proj;
	float *s, *s_next;		/* [cap, n] */
	float *kap, *kap_next;		/* window: [cap, K], kappa_{i-1} */
	float *wp;			/* window: [cap, 3K], its layer's */
	/* one step's values, [cap, ...]; pctx [cap, P] = [C c_i; Co c_i] */
	float *y, *pre, *wq, *a, *pctx, *zr, *rh, *hh, *tt, *t;
};

static void decoder_layout(struct decoder *d)
{
	const struct rnn_net *net = d->net;
	struct arena *A = &d->r.arena;
	size_t cap = d->r.cap, ns = d->r.nsent, S = d->r.S, n = net->n;

	if (net->attention && net->kind == ATT_ADDITIVE)
		d->keys = arena_floats(A, ns * S * net->na);
	if (net->attention && net->kind == ATT_WINDOW) {
		d->kap = arena_floats(A, cap * net->K);
		d->kap_next = arena_floats(A, cap * net->K);
		d->wp = arena_floats(A, cap * 3 * net->K);
	}
	d->proj = arena_floats(A, ns * d->Sp * d->P);
	d->s = arena_floats(A, cap * n);
	d->s_next = arena_floats(A, cap * n);
	d->y = arena_floats(A, cap * net->m);
	d->pre = arena_floats(A, cap * 3 * n);
	d->wq = arena_floats(A, cap * net->na);
	d->a = arena_floats(A, cap * S);
	d->pctx = arena_floats(A, cap * d->P);
	d->zr = arena_floats(A, cap * 2 * n);
	d->rh = arena_floats(A, cap * n);
	d->hh = arena_floats(A, cap * n);
	d->tt = arena_floats(A, cap * 2 * net->l);
	d->t = arena_floats(A, cap * net->l);
}

/* proj [rows, P] = h [rows, dc] [C; Co]^T */
static void project(const struct rnn_net *net, float *proj, const float *h,
		    int rows, int P)
{
	int n3 = 3 * net->n, l2 = 2 * net->l, dc = net->dc;

	sgemm(0, 1, rows, n3, dc, 1.0f, h, dc, net->w.dec_C, dc, 0.0f, proj,
	      P);
	sgemm(0, 1, rows, l2, dc, 1.0f, h, dc, net->w.out_C, dc, 0.0f,
	      proj + n3, P);
}

/* The frame's source length, and its memory checked against the model. */
static int frame_memory(const struct rnn_net *net, const struct frame *f,
			int *S)
{
	int Sk;

	if (!frame_rows(f, "enc.out", net->da, "encode", S) ||
	    !rnn_need_vector(f, "att.init", net->n, "attend"))
		return -1;
	if (!net->attention)
		return rnn_need_vector(f, "att.ctx", net->n, "attend") ? 0 : -1;
	if (net->kind != ATT_ADDITIVE)
		return 0;
	if (!frame_rows(f, "att.keys", net->na, "attend", &Sk))
		return -1;
	if (Sk != *S) {
		err_set("frame %llu: att.keys has %d rows and enc.out %d",
			(unsigned long long)f->number, Sk, *S);
		return -1;
	}
	return 0;
}

struct decoder *rnn_dec_new(const struct model *m, const struct dec_opts *o,
			    struct frame **f, int n, int width)
{
	const struct rnn_net *net = m->net;
	struct decoder *d;
	size_t nn = net->n;

	d = calloc(1, sizeof *d);
	if (!d) {
		err_set("out of memory");
		return NULL;
	}
	if (dec_rows_init(&d->r, n, width) < 0)
		goto fail;
	if (!(d->step = calloc((size_t)n * width, sizeof(int))) ||
	    !(d->step_next = calloc((size_t)n * width, sizeof(int)))) {
		err_set("out of memory");
		goto fail;
	}
	d->net = net;
	d->P = 3 * net->n + 2 * net->l;
	for (int b = 0; b < n; b++) {
		if (frame_memory(net, f[b], &d->r.len[b]) < 0)
			goto fail;
		if (d->r.len[b] > d->r.S)
			d->r.S = d->r.len[b];
	}
	d->Sp = net->attention ? d->r.S : 1;
	decoder_layout(d);
	if (arena_alloc(&d->r.arena) < 0)
		goto fail;
	decoder_layout(d);
	/* the sentences' annotations (rnnencdec: contexts), padded with
	 * zeros, go through [C; Co] in one product */
	size_t S = d->r.S, rows = (size_t)n * d->Sp;
	float *h = calloc(rows * net->dc, sizeof(float));
	if (!h) {
		err_set("out of memory");
		goto fail;
	}
	for (int b = 0; b < n; b++) {
		memcpy(d->s + b * nn, frame_find(f[b], "att.init")->data,
		       nn * sizeof(float));
		if (!net->attention) {
			memcpy(h + b * nn, frame_find(f[b], "att.ctx")->data,
			       nn * sizeof(float));
			continue;
		}
		if (net->kind == ATT_ADDITIVE)
			memcpy(d->keys + b * S * net->na,
			       frame_find(f[b], "att.keys")->data,
			       d->r.len[b] * net->na * sizeof(float));
		memcpy(h + b * S * net->dc, frame_find(f[b], "enc.out")->data,
		       d->r.len[b] * net->dc * sizeof(float));
	}
	project(net, d->proj, h, (int)rows, d->P);
	free(h);
	if (o && o->shortlist && !(d->r.sl = shortlist_new(m, o->shortlist, f,
			n, n * width,
			net->w.out_W, net->w.out_bias, net->l,
			m->int8 ? WPACK_I8 : WPACK_F32)))
		goto fail;
	return d;
fail:
	rnn_dec_free(d);
	return NULL;
}

/* x [n] += y [n] */
static void vadd(float *x, const float *y, int n)
{
	for (int k = 0; k < n; k++)
		x[k] += y[k];
}

/* The attention of live hypotheses, whose sentences (d->r.row) are not in
 * row order: each row is its own batch of one. */
static void attend_rows(void *arg, int64_t lo, int64_t hi)
{
	const struct decoder *d = arg;
	const struct rnn_net *net = d->net;
	size_t S = d->r.S, na = net->na, P = d->P;

	for (int64_t i = lo; i < hi; i++) {
		size_t b = d->r.row[i];

		additive_attention_forward(d->pctx + i * P, d->a + i * S,
					   d->wq + i * na, d->keys + b * S * na,
					   net->w.att_v, d->proj + b * S * P,
					   d->r.len + b, 1, (int)S, (int)na,
					   (int)P);
	}
}

/* The diagonal's and the window's weights and contexts, row by row. */
static void locate_rows(struct decoder *d, int nh)
{
	const struct rnn_net *net = d->net;
	size_t S = d->r.S, P = d->P, K = net->K;

	for (size_t i = 0; i < (size_t)nh; i++) {
		int b = d->r.row[i];

		if (net->kind == ATT_DIAGONAL)
			diagonal_forward(d->a + i * S, d->step[i], net->ratio,
					 d->r.len + b, 1, (int)S);
		else
			window_forward(d->a + i * S, d->kap_next + i * K,
				       d->wp + i * 3 * K, d->kap + i * K,
				       d->r.len + b, 1, (int)S, (int)K);
		context_forward(d->pctx + i * P, d->a + i * S,
				d->proj + b * S * P, d->r.len + b, 1, (int)S,
				(int)P);
	}
}

/* pctx [nh, P] = [C c_i; Co c_i] of the nh live hypotheses from s_{i-1}:
 * with attention, the weights a [nh, S] of the projected annotations. */
static void dec_context(struct decoder *d, int nh)
{
	const struct rnn_net *net = d->net;

	if (!net->attention) {
		for (int i = 0; i < nh; i++)
			memcpy(d->pctx + (size_t)i * d->P,
			       d->proj + (size_t)d->r.row[i] * d->P,
			       d->P * sizeof(float));
		return;
	}
	if (net->kind == ATT_WINDOW)	/* wp [nh, 3K] = s Ww^T + bw */
		linear_forward(d->wp, d->s, net->w.win_W, net->w.win_b, nh,
			       net->n, 3 * net->K);
	if (net->kind != ATT_ADDITIVE) {
		locate_rows(d, nh);
		return;
	}
	/* wq [nh, n'] = s Wa^T (int8 for an int8 export) */
	linear_forward(d->wq, d->s, net->w.att_W, NULL, nh, net->n, net->na);
	kern_parallel_for(nh, 1, attend_rows, d);
}

/* The step of nh rows of d (all the decoder's, or a block's view): the
 * new states into s_next (and kap_next), log p(y_i) into logp [nh, Vt]. */
static int step_rows(struct decoder *d, int nh, const int32_t *prev,
		     float *logp, float *attw)
{
	const struct rnn_net *net = d->net;
	int l2 = 2 * net->l;

	/* the input terms W y + b; then attention and the new state */
	embedding_forward(d->y, prev, nh, net->w.tgt_emb, net->m);
	linear_forward(d->pre, d->y, net->w.dec_W, net->w.dec_b, nh, net->m,
		       3 * net->n);
	dec_context(d, nh);
	for (int i = 0; i < nh; i++)
		vadd(d->pre + (size_t)i * 3 * net->n, d->pctx + (size_t)i * d->P,
		     3 * net->n);
	gru_step_forward(d->s_next, d->pre, d->zr, d->rh, d->hh, d->s,
			 net->w.dec_U, nh, net->n);
	/* p(y_i) from s_{i-1}, y_{i-1} and c_i: the deep output */
	linear_forward(d->tt, d->s, net->w.out_U, net->w.out_b, nh, net->n, l2);
	sgemm(0, 1, nh, l2, net->m, 1.0f, d->y, net->m, net->w.out_V, net->m,
	      1.0f, d->tt, l2);
	for (int i = 0; i < nh; i++)
		vadd(d->tt + (size_t)i * l2,
		     d->pctx + (size_t)i * d->P + 3 * net->n, l2);
	maxout_forward(d->t, d->tt, nh, net->l);
	if (d->r.sl) {
		if (shortlist_logp(d->r.sl, logp, net->Vt, d->t, nh,
				   d->r.row) < 0)
			return -1;
	} else {
		rnn_logits_forward(net, nh, d->t, logp);
		log_softmax_rows(logp, logp, nh, net->Vt);
	}
	if (attw) {
		/* [nh, 1, S]; the model without attention has no weights */
		size_t size = (size_t)nh * d->r.S * sizeof(float);

		if (net->attention)
			memcpy(attw, d->a, size);
		else
			memset(attw, 0, size);
	}
	return 0;
}

struct step_job {
	const struct decoder *d;
	const int32_t *prev;
	float *logp, *attw;
	_Atomic int rc;
};

/* Rows lo .. hi-1: the step on a view of the decoder from row lo. */
static void step_task(void *ctx, int64_t lo, int64_t hi)
{
	struct step_job *j = ctx;
	const struct rnn_net *net = j->d->net;
	struct decoder v = *j->d;
	size_t i = (size_t)lo, n = net->n, K = net->K;

	v.r.row += i;
	v.step += i;
	v.s += i * n;
	v.s_next += i * n;
	if (v.kap) {
		v.kap += i * K;
		v.kap_next += i * K;
		v.wp += i * 3 * K;
	}
	v.y += i * net->m;
	v.pre += i * 3 * n;
	v.wq += i * net->na;
	v.a += i * v.r.S;
	v.pctx += i * v.P;
	v.zr += i * 2 * n;
	v.rh += i * n;
	v.hh += i * n;
	v.tt += i * 2 * net->l;
	v.t += i * net->l;
	if (step_rows(&v, (int)(hi - lo), j->prev + i, j->logp + i * net->Vt,
		      j->attw ? j->attw + i * v.r.S : NULL) < 0)
		j->rc = -1;
}

int rnn_dec_step(struct decoder *d, int nh, const int32_t *prev, float *logp,
		 float *attw)
{
	const struct rnn_net *net = d->net;
	struct step_job j = { d, prev, logp, attw, 0 };
	int block;
	float *swap;

	if (dec_step_check(nh, d->r.nh, prev, net->Vt) < 0)
		return -1;
	d->r.nh = nh;
	if (nh == 0)
		return 0;
	if ((block = dec_step_block(nh, d->r.sl != NULL)) > 0)
		kern_parallel_for(nh, block, step_task, &j);
	else if (step_rows(d, nh, prev, logp, attw) < 0)
		return -1;
	if (j.rc < 0)
		return -1;
	swap = d->s;
	d->s = d->s_next;
	d->s_next = swap;
	swap = d->kap;		/* the window's kappa_i, written above */
	d->kap = d->kap_next;
	d->kap_next = swap;
	for (int i = 0; i < nh; i++)
		d->step[i]++;
	return 0;
}

int rnn_dec_select(struct decoder *d, int nh, const int *parent)
{
	size_t nn = d->net->n, K = d->net->K;
	float *swap;
	int *rswap;

	if (dec_rows_check(&d->r, nh, parent) < 0)
		return -1;
	for (int i = 0; i < nh; i++) {
		memcpy(d->s_next + i * nn, d->s + parent[i] * nn,
		       nn * sizeof(float));
		d->step_next[i] = d->step[parent[i]];
		if (d->kap)
			memcpy(d->kap_next + i * K, d->kap + parent[i] * K,
			       K * sizeof(float));
	}
	swap = d->s;
	d->s = d->s_next;
	d->s_next = swap;
	rswap = d->step;
	d->step = d->step_next;
	d->step_next = rswap;
	swap = d->kap;
	d->kap = d->kap_next;
	d->kap_next = swap;
	dec_rows_select(&d->r, nh, parent);
	return 0;
}

void rnn_dec_free(struct decoder *d)
{
	if (!d)
		return;
	dec_rows_free(&d->r);
	free(d->step);
	free(d->step_next);
	free(d);
}
