/*
 * rnn_decoder.c: the decoder of the recurrent models (MODELS.md): one step
 * of attention, GRU and deep output, shared by training (rnn_train.c), and
 * the step-wise decoder of model.h for greedy search, beam search and
 * scoring, batched over every live hypothesis.
 */
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "kernels.h"
#include "layers.h"
#include "rnnsearch.h"

/* Attention of rows whose sentences are given by mem->row: the sentences'
 * memories are not in row order, so each row is its own batch of one. */
struct row_attention {
	const struct rnn_net *net;
	const struct rnn_mem *mem;
	float *ctx, *a;
	const float *wq;
};

static void row_attention_task(void *arg, int64_t lo, int64_t hi)
{
	const struct row_attention *r = arg;
	const struct rnn_mem *mem = r->mem;
	size_t S = mem->S, na = r->net->na, dc = r->net->dc;

	for (int64_t b = lo; b < hi; b++) {
		size_t k = mem->row[b];

		additive_attention_forward(r->ctx + b * dc, r->a + b * S,
					   r->wq + b * na, mem->keys + k * S * na,
					   r->net->w.att_v, mem->ann + k * S * dc,
					   mem->len + k, 1, (int)S, (int)na,
					   (int)dc);
	}
}

void rnn_step_forward(const struct rnn_net *net, const struct rnn_mem *mem,
		      int B, const float *s, float *pre, float *wq, float *a,
		      float *ctx, float *zr, float *rh, float *hh, float *snew)
{
	const struct rnn_params *w = &net->w;
	int n = net->n, dc = net->dc;

	if (net->attention) {
		/* wq [B, n'] = s Wa^T; e, a and c_i by the fused kernel */
		sgemm(0, 1, B, net->na, n, 1.0f, s, n, w->att_W, n, 0.0f, wq,
		      net->na);
		if (mem->row) {
			struct row_attention r = { net, mem, ctx, a, wq };
			kern_parallel_for(B, 1, row_attention_task, &r);
		} else {
			additive_attention_forward(ctx, a, wq, mem->keys,
						   w->att_v, mem->ann, mem->len,
						   B, mem->S, net->na, dc);
		}
	} else {
		for (int b = 0; b < B; b++)
			memcpy(ctx + (size_t)b * dc,
			       mem->ctx + (size_t)(mem->row ? mem->row[b] : b) * dc,
			       dc * sizeof(float));
	}
	/* pre [B, 3n] += ctx [B, dc] . C^T */
	sgemm(0, 1, B, 3 * n, dc, 1.0f, ctx, dc, w->dec_C, dc, 1.0f, pre,
	      3 * n);
	gru_step_forward(snew, pre, zr, rh, hh, s, w->dec_U, B, n);
}

void rnn_deep_forward(const struct rnn_net *net, int N, const float *s,
		      const float *y, const float *ctx, float *tt, float *t)
{
	const struct rnn_params *w = &net->w;
	int l2 = 2 * net->l;

	linear_forward(tt, s, w->out_U, w->out_b, N, net->n, l2);
	sgemm(0, 1, N, l2, net->m, 1.0f, y, net->m, w->out_V, net->m, 1.0f,
	      tt, l2);
	sgemm(0, 1, N, l2, net->dc, 1.0f, ctx, net->dc, w->out_C, net->dc,
	      1.0f, tt, l2);
	maxout_forward(t, tt, N, net->l);
}

void rnn_logits_forward(const struct rnn_net *net, int N, const float *t,
			float *logits)
{
	linear_forward(logits, t, net->w.out_W, net->w.out_bias, N, net->l,
		       net->Vt);
}

/* ---- the step-wise decoder ------------------------------------------------ */

struct decoder {
	const struct rnn_net *net;
	int nsent, cap, nh;	/* sentences, rows (nsent * width), live */
	struct rnn_mem mem;	/* row: the live hypotheses' sentences */
	int *len, *row, *row_next;
	struct arena arena;
	float *keys, *ann, *ctx0;	/* [nsent, S, n'], [nsent, S, 2n]; [nsent, n] */
	float *s, *s_next;		/* [cap, n] */
	/* one step's values, [cap, ...] */
	float *y, *pre, *wq, *a, *ctx, *zr, *rh, *hh, *tt, *t;
};

static void decoder_layout(struct decoder *d)
{
	const struct rnn_net *net = d->net;
	struct arena *A = &d->arena;
	size_t cap = d->cap, ns = d->nsent, S = d->mem.S, n = net->n;

	if (net->attention) {
		d->keys = arena_take(A, ns * S * net->na);
		d->ann = arena_take(A, ns * S * net->da);
	} else {
		d->ctx0 = arena_take(A, ns * net->dc);
	}
	d->s = arena_take(A, cap * n);
	d->s_next = arena_take(A, cap * n);
	d->y = arena_take(A, cap * net->m);
	d->pre = arena_take(A, cap * 3 * n);
	d->wq = arena_take(A, cap * net->na);
	d->a = arena_take(A, cap * S);
	d->ctx = arena_take(A, cap * net->dc);
	d->zr = arena_take(A, cap * 2 * n);
	d->rh = arena_take(A, cap * n);
	d->hh = arena_take(A, cap * n);
	d->tt = arena_take(A, cap * 2 * net->l);
	d->t = arena_take(A, cap * net->l);
}

/* The frame's source length, and its memory checked against the model. */
static int frame_memory(const struct rnn_net *net, const struct frame *f,
			int *S)
{
	int Sk;

	if (!rnn_need_rows(f, "enc.out", net->da, "encode", S) ||
	    !rnn_need_vector(f, "att.init", net->n, "attend"))
		return -1;
	if (!net->attention)
		return rnn_need_vector(f, "att.ctx", net->n, "attend") ? 0 : -1;
	if (!rnn_need_rows(f, "att.keys", net->na, "attend", &Sk))
		return -1;
	if (Sk != *S) {
		err_set("frame %llu: att.keys has %d rows and enc.out %d",
			(unsigned long long)f->number, Sk, *S);
		return -1;
	}
	return 0;
}

struct decoder *rnn_dec_new(const struct model *m, struct frame **f, int n,
			    int width)
{
	const struct rnn_net *net = m->net;
	struct decoder *d;
	size_t nn = net->n;

	if (n < 1 || width < 1 || (long)n * width > (1L << 24)) {
		err_set("decoder: %d sentences of %d hypotheses", n, width);
		return NULL;
	}
	d = calloc(1, sizeof *d);
	if (!d || !(d->len = malloc(n * sizeof(int))) ||
	    !(d->row = malloc((size_t)n * width * sizeof(int))) ||
	    !(d->row_next = malloc((size_t)n * width * sizeof(int)))) {
		err_set("out of memory");
		goto fail;
	}
	d->net = net;
	d->nsent = d->nh = n;
	d->cap = n * width;
	for (int b = 0; b < n; b++) {
		if (frame_memory(net, f[b], &d->len[b]) < 0)
			goto fail;
		if (d->len[b] > d->mem.S)
			d->mem.S = d->len[b];
	}
	decoder_layout(d);
	if (arena_alloc(&d->arena) < 0)
		goto fail;
	decoder_layout(d);
	for (int b = 0; b < n; b++) {
		size_t S = d->mem.S, len = d->len[b];

		d->row[b] = b;
		memcpy(d->s + b * nn, frame_find(f[b], "att.init")->data,
		       nn * sizeof(float));
		if (!net->attention) {
			memcpy(d->ctx0 + b * nn,
			       frame_find(f[b], "att.ctx")->data,
			       nn * sizeof(float));
			continue;
		}
		memcpy(d->keys + b * S * net->na,
		       frame_find(f[b], "att.keys")->data,
		       len * net->na * sizeof(float));
		memcpy(d->ann + b * S * net->da,
		       frame_find(f[b], "enc.out")->data,
		       len * net->da * sizeof(float));
	}
	d->mem.keys = d->keys;
	d->mem.ann = d->ann;
	d->mem.ctx = d->ctx0;
	d->mem.len = d->len;
	d->mem.row = d->row;
	return d;
fail:
	rnn_dec_free(d);
	return NULL;
}

int rnn_dec_step(struct decoder *d, int nh, const int32_t *prev, float *logp,
		 float *attw)
{
	const struct rnn_net *net = d->net;
	float *swap;

	if (nh < 0 || nh > d->nh) {
		err_set("decoder: step on %d hypotheses, %d live", nh, d->nh);
		return -1;
	}
	for (int i = 0; i < nh; i++)
		if (prev[i] < 0 || prev[i] >= net->Vt) {
			err_set("decoder: token %d is outside the target "
				"vocabulary of %d", prev[i], net->Vt);
			return -1;
		}
	d->nh = nh;
	if (nh == 0)
		return 0;
	/* the input terms W y + b; then attention and the new state */
	embedding_forward(d->y, prev, nh, net->w.tgt_emb, net->m);
	linear_forward(d->pre, d->y, net->w.dec_W, net->w.dec_b, nh, net->m,
		       3 * net->n);
	rnn_step_forward(net, &d->mem, nh, d->s, d->pre, d->wq, d->a, d->ctx,
			 d->zr, d->rh, d->hh, d->s_next);
	/* p(y_i) from s_{i-1}, y_{i-1} and c_i */
	rnn_deep_forward(net, nh, d->s, d->y, d->ctx, d->tt, d->t);
	rnn_logits_forward(net, nh, d->t, logp);
	log_softmax_rows(logp, logp, nh, net->Vt);
	if (attw) {
		/* [nh, 1, S]; the model without attention has no weights */
		size_t size = (size_t)nh * d->mem.S * sizeof(float);

		if (net->attention)
			memcpy(attw, d->a, size);
		else
			memset(attw, 0, size);
	}
	swap = d->s;
	d->s = d->s_next;
	d->s_next = swap;
	return 0;
}

int rnn_dec_select(struct decoder *d, int nh, const int *parent)
{
	size_t nn = d->net->n;
	float *swap;
	int *rswap;

	if (nh < 0 || nh > d->cap) {
		err_set("decoder: %d hypotheses, room for %d", nh, d->cap);
		return -1;
	}
	for (int i = 0; i < nh; i++) {
		if (parent[i] < 0 || parent[i] >= d->nh) {
			err_set("decoder: parent %d of hypothesis %d is not "
				"one of the %d live", parent[i], i, d->nh);
			return -1;
		}
		memcpy(d->s_next + i * nn, d->s + parent[i] * nn,
		       nn * sizeof(float));
		d->row_next[i] = d->row[parent[i]];
	}
	swap = d->s;
	d->s = d->s_next;
	d->s_next = swap;
	rswap = d->row;
	d->row = d->row_next;
	d->row_next = rswap;
	d->mem.row = d->row;
	d->nh = nh;
	return 0;
}

int rnn_dec_sentence(const struct decoder *d, int i)
{
	return i >= 0 && i < d->nh ? d->row[i] : -1;
}

int rnn_dec_srclen(const struct decoder *d, int sentence)
{
	return sentence >= 0 && sentence < d->nsent ? d->len[sentence] : -1;
}

void rnn_dec_free(struct decoder *d)
{
	if (!d)
		return;
	free(d->len);
	free(d->row);
	free(d->row_next);
	free(d->arena.base);
	free(d);
}
