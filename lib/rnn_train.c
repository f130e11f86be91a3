/*
 * rnn_train.c: training of the recurrent models (MODELS.md): the forward
 * pass over a padded batch with teacher forcing (decoder inputs <s> then
 * the reference shifted by one), the loss, and the backward pass through
 * the deep output, the decoder GRU, the attention, the initial state, both
 * encoder directions and the embeddings.
 *
 * Everything that does not wait on the recurrence runs over all steps at
 * once: the input terms W y + b before the decoder loop, the deep output,
 * the loss and the weight gradients after it; the loops do only what each
 * step needs of the last.  Padding never reaches a real position: the
 * encoder masks it (gru.h), the attention skips it, and a padded target's
 * loss and gradients are zero.
 */
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "kernels.h"
#include "layers.h"
#include "rnnsearch.h"

/* Rows of the output layer done at once: bounds logits [rows, V]. */
#define OUT_ROWS 256

/* A batch's values, time-major [T, B, ...] in the decoder (and [S, B, ...]
 * in the encoder), with their gradients. */
struct pass {
	int B, S, T;
	int32_t *src_ids, *yin, *ytgt;	/* [S*B], [T*B], [T*B] */
	struct arena arena;
	/* forward */
	float *xs, *encmem, *ann, *keys, *h0, *c;
	struct rnn_encoder enc;
	float *y, *pre, *zr, *rh, *hh, *s, *wq, *a, *ctx, *tt, *t, *logits;
	/* backward */
	float *ds, *dpre, *dwq, *dctx, *dy, *dtt, *dt, *drh, *dann, *dkeys;
	float *dhs[2], *dencpre, *dxs, *dh0, *dc;
};

static void pass_layout(const struct rnn_net *net, struct pass *p)
{
	struct arena *A = &p->arena;
	size_t B = p->B, S = p->S, T = p->T, n = net->n, TB = T * B;

	p->xs = arena_take(A, S * B * net->m);
	p->encmem = arena_take(A, rnn_encoder_floats(net, p->S, p->B));
	p->ann = arena_take(A, B * S * net->da);
	p->keys = arena_take(A, B * S * net->na);
	p->h0 = arena_take(A, B * n);
	p->c = arena_take(A, B * n);
	p->y = arena_take(A, TB * net->m);
	p->pre = arena_take(A, TB * 3 * n);
	p->zr = arena_take(A, TB * 2 * n);
	p->rh = arena_take(A, TB * n);
	p->hh = arena_take(A, TB * n);
	p->s = arena_take(A, (T + 1) * B * n);
	p->wq = arena_take(A, TB * net->na);
	p->a = arena_take(A, TB * S);
	p->ctx = arena_take(A, TB * net->dc);
	p->tt = arena_take(A, TB * 2 * net->l);
	p->t = arena_take(A, TB * net->l);
	p->logits = arena_take(A, (size_t)OUT_ROWS * net->Vt);

	p->ds = arena_take(A, (T + 1) * B * n);
	p->dpre = arena_take(A, TB * 3 * n);
	p->dwq = arena_take(A, TB * net->na);
	p->dctx = arena_take(A, TB * net->dc);
	p->dy = arena_take(A, TB * net->m);
	p->dtt = arena_take(A, TB * 2 * net->l);
	p->dt = arena_take(A, TB * net->l);
	p->drh = arena_take(A, B * n);
	p->dann = arena_take(A, B * S * net->da);
	p->dkeys = arena_take(A, B * S * net->na);
	p->dhs[0] = arena_take(A, (S + 1) * B * n);
	p->dhs[1] = arena_take(A, (S + 1) * B * n);
	p->dencpre = arena_take(A, S * B * 3 * n);
	p->dxs = arena_take(A, S * B * net->m);
	p->dh0 = arena_take(A, B * n);
	p->dc = arena_take(A, B * n);
}

/*
 * The scratch of the last batch, kept for the next: a trainer's batches
 * are alike in size, and fresh memory (a hundred megabytes at the sizes
 * of issue 6) costs a tenth of a batch in page faults.  One per thread,
 * held until the process exits.
 */
static _Thread_local float *kept;
static _Thread_local size_t kept_floats;

/* Memory for what a measuring pass of pass_layout took, zeroed. */
static int pass_memory(struct arena *A)
{
	size_t need = A->used ? A->used : 16;

	if (need > kept_floats) {
		free(kept);
		kept_floats = 0;
		kept = aligned_alloc(64, need * sizeof(float));
		if (!kept) {
			err_set("out of memory (%zu bytes of scratch)",
				need * sizeof(float));
			return -1;
		}
		kept_floats = need;
	}
	memset(kept, 0, need * sizeof(float));
	A->base = kept;
	A->used = 0;
	return 0;
}

/* Checks a batch's shape and ids; *what names it in errors. */
static int check_batch(const struct batch_ids *x, int V, const char *what)
{
	if (x->B < 1 || x->S < 1 || (long)x->B * x->S > (1L << 24)) {
		err_set("%s batch: %d sentences of %d ids", what, x->B, x->S);
		return -1;
	}
	for (int b = 0; b < x->B; b++) {
		if (x->len[b] < 1 || x->len[b] > x->S) {
			err_set("%s sentence %d has length %d, not 1 .. %d",
				what, b, x->len[b], x->S);
			return -1;
		}
		for (int t = 0; t < x->len[b]; t++) {
			int32_t id = x->ids[(size_t)b * x->S + t];

			if (id < 0 || id >= V) {
				err_set("%s sentence %d: id %d at position %d "
					"is outside the vocabulary of %d",
					what, b, id, t, V);
				return -1;
			}
		}
	}
	return 0;
}

/* The ids time-major: src [S, B]; decoder inputs <s>, tgt[0 .. T-2] and
 * targets tgt[0 .. T-1], [T, B]; <pad> (0) past each length. */
static void arrange_ids(struct pass *p, const struct batch_ids *src,
			const struct batch_ids *tgt)
{
	int B = p->B;

	for (int b = 0; b < B; b++) {
		const int32_t *x = src->ids + (size_t)b * src->S;
		const int32_t *y = tgt->ids + (size_t)b * tgt->S;

		for (int t = 0; t < p->S; t++)
			p->src_ids[t * B + b] = t < src->len[b] ? x[t] : 0;
		for (int t = 0; t < p->T; t++) {
			p->ytgt[t * B + b] = t < tgt->len[b] ? y[t] : 0;
			p->yin[t * B + b] = t == 0 ? 1 :
				t - 1 < tgt->len[b] ? y[t - 1] : 0;
		}
	}
}

/*
 * What a decoder step reads of the source, for B sentences: rnnsearch:
 * keys [B, S, n'] (att.keys), ann [B, S, 2n] (enc.out) and len [B];
 * rnnencdec: ctx [B, n], the fixed context c.
 */
struct rnn_mem {
	const float *keys, *ann, *ctx;
	const int *len;
	int S;
};

/*
 * One decoder step for B rows.  On entry pre [B, 3n] holds W y + b (y the
 * embedding of the previous token); from s [B, n] = s_{i-1} it computes
 * wq [B, n'] = Wa s and the attention weights a [B, S] (rnnsearch; unused
 * otherwise), the context ctx [B, dc], the complete pre-activations, the
 * GRU's zr [B, 2n], rh, hh [B, n] and the new state snew [B, n] = s_i.
 */
static void step_forward(const struct rnn_net *net, const struct rnn_mem *mem,
			 int B, const float *s, float *pre, float *wq,
			 float *a, float *ctx, float *zr, float *rh,
			 float *hh, float *snew)
{
	const struct rnn_params *w = &net->w;
	int n = net->n, dc = net->dc;

	if (net->attention) {
		/* wq [B, n'] = s Wa^T; e, a and c_i by the fused kernel */
		sgemm(0, 1, B, net->na, n, 1.0f, s, n, w->att_W, n, 0.0f, wq,
		      net->na);
		additive_attention_forward(ctx, a, wq, mem->keys, w->att_v,
					   mem->ann, mem->len, B, mem->S,
					   net->na, dc);
	} else {
		memcpy(ctx, mem->ctx, (size_t)B * dc * sizeof(float));
	}
	/* pre [B, 3n] += ctx [B, dc] . C^T */
	sgemm(0, 1, B, 3 * n, dc, 1.0f, ctx, dc, w->dec_C, dc, 1.0f, pre,
	      3 * n);
	gru_step_forward(snew, pre, zr, rh, hh, s, w->dec_U, B, n);
}

/*
 * The deep output of N rows, from s [N, n] = s_{i-1}, y [N, m] and
 * ctx [N, dc]: tt [N, 2l] = Uo s + Vo y + Co ctx + bo, t [N, l] its maxout.
 */
static void deep_forward(const struct rnn_net *net, int N, const float *s,
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

static void forward(const struct rnn_net *net, struct pass *p,
		    const int *srclen)
{
	const struct rnn_params *w = &net->w;
	int B = p->B, S = p->S, T = p->T, n = net->n, TB = T * B;
	size_t bn = (size_t)B * n;
	struct rnn_mem mem = { .keys = p->keys, .ann = p->ann, .ctx = p->c,
			       .len = srclen, .S = S };

	embedding_forward(p->xs, p->src_ids, S * B, w->src_emb, net->m);
	rnn_encoder_bind(net, &p->enc, p->encmem, S, B);
	rnn_encoder_forward(net, &p->enc, p->ann, p->xs, srclen, S, B);
	if (net->attention)	/* keys [B*S, n'] = ann Ua^T + ba */
		linear_forward(p->keys, p->ann, w->att_U, w->att_b, B * S,
			       net->da, net->na);
	for (int b = 0; b < B; b++)
		memcpy(p->h0 + (size_t)b * n, p->ann + (size_t)b * S * net->da +
		       rnn_init_offset(net, srclen[b]), n * sizeof(float));
	rnn_init_forward(net, p->s, p->c, p->h0, B);

	embedding_forward(p->y, p->yin, TB, w->tgt_emb, net->m);
	linear_forward(p->pre, p->y, w->dec_W, w->dec_b, TB, net->m, 3 * n);
	for (int i = 0; i < T; i++)
		step_forward(net, &mem, B, p->s + i * bn, p->pre + i * 3 * bn,
			     p->wq + (size_t)i * B * net->na,
			     p->a + (size_t)i * B * S,
			     p->ctx + (size_t)i * B * net->dc,
			     p->zr + i * 2 * bn, p->rh + i * bn, p->hh + i * bn,
			     p->s + (i + 1) * bn);
	deep_forward(net, TB, p->s, p->y, p->ctx, p->tt, p->t);
}

/* The output layer and the loss, OUT_ROWS rows at a time, with their
 * backward pass into dt. */
static double output_layer(const struct rnn_net *net, struct pass *p,
			   float eps, float scale, double *nll, int *ntok)
{
	const struct rnn_params *w = &net->w, *g = &net->g;
	int TB = p->T * p->B, l = net->l, V = net->Vt;
	double loss = 0;

	*nll = 0;
	*ntok = 0;
	for (int r = 0; r < TB; r += OUT_ROWS) {
		int rows = TB - r < OUT_ROWS ? TB - r : OUT_ROWS, count;
		const float *t = p->t + (size_t)r * l;
		double nll_part;

		rnn_logits_forward(net, rows, t, p->logits);
		loss += xent_forward_backward(p->logits, p->logits,
					      p->ytgt + r, rows, V, eps, scale,
					      &nll_part, &count);
		*nll += nll_part;
		*ntok += count;
		linear_backward(p->dt + (size_t)r * l, g->out_W, g->out_bias,
				p->logits, t, w->out_W, rows, l, V);
	}
	return loss;
}

static void backward(const struct rnn_net *net, struct pass *p,
		     const int *srclen)
{
	const struct rnn_params *w = &net->w, *g = &net->g;
	int B = p->B, S = p->S, T = p->T, n = net->n, TB = T * B;
	int m = net->m, na = net->na, dc = net->dc, da = net->da, l2 = 2 * net->l;
	size_t bn = (size_t)B * n;

	/* the deep output: t~ = Uo s_{i-1} + Vo y + Co c_i + bo */
	maxout_backward(p->dtt, p->dt, p->tt, TB, net->l);
	linear_backward(p->ds, g->out_U, g->out_b, p->dtt, p->s, w->out_U, TB,
			n, l2);
	linear_backward(p->dy, g->out_V, NULL, p->dtt, p->y, w->out_V, TB, m,
			l2);
	linear_backward(p->dctx, g->out_C, NULL, p->dtt, p->ctx, w->out_C, TB,
			dc, l2);

	/* the decoder's steps in reverse: ds of s_{i+1} is complete once
	 * step i+1 has been undone */
	for (int i = T - 1; i >= 0; i--) {
		float *dpre = p->dpre + i * 3 * bn, *ds = p->ds + i * bn;
		float *dctx = p->dctx + (size_t)i * B * dc;

		gru_step_backward(dpre, ds, p->drh, p->ds + (i + 1) * bn,
				  p->zr + i * 2 * bn, p->hh + i * bn,
				  p->s + i * bn, w->dec_U, B, n);
		/* dctx [B, dc] += dpre [B, 3n] . C [3n, dc] */
		sgemm(0, 0, B, dc, 3 * n, 1.0f, dpre, 3 * n, w->dec_C, dc, 1.0f,
		      dctx, dc);
		if (!net->attention)
			continue;
		float *dwq = p->dwq + (size_t)i * B * na;
		additive_attention_backward(dwq, p->dkeys, g->att_v, p->dann,
					    dctx, p->a + (size_t)i * B * S,
					    p->wq + (size_t)i * B * na, p->keys,
					    w->att_v, p->ann, srclen, B, S, na,
					    da);
		/* ds [B, n] += dwq [B, n'] . Wa [n', n] */
		sgemm(0, 0, B, n, na, 1.0f, dwq, na, w->att_W, n, 1.0f, ds, n);
	}
	/* the decoder's weights over every step at once */
	gru_dU(g->dec_U, p->dpre, p->s, p->rh, TB, n);
	linear_backward(p->dy, g->dec_W, g->dec_b, p->dpre, p->y, w->dec_W, TB,
			m, 3 * n);
	sgemm(1, 0, 3 * n, dc, TB, 1.0f, p->dpre, 3 * n, p->ctx, dc, 1.0f,
	      g->dec_C, dc);
	embedding_backward(g->tgt_emb, p->yin, TB, p->dy, m);

	/* the initial state, and rnnencdec's context c used at every step */
	if (net->attention) {
		sgemm(1, 0, na, n, TB, 1.0f, p->dwq, na, p->s, n, 1.0f,
		      g->att_W, n);
		tanh_linear_backward(p->dh0, g->init_W, g->init_b, p->ds,
				     p->s, p->h0, w->init_W, B, n);
	} else {
		for (int i = 0; i < T; i++)
			for (size_t k = 0; k < bn; k++)
				p->dc[k] += p->dctx[i * bn + k];
		tanh_linear_backward(p->dc, g->init_W, g->init_b, p->ds, p->s,
				     p->c, w->init_W, B, n);
		tanh_linear_backward(p->dh0, g->sum_W, g->sum_b, p->dc, p->c,
				     p->h0, w->sum_W, B, n);
	}
	for (int b = 0; b < B; b++) {
		float *d = p->dann + (size_t)b * S * da +
			   rnn_init_offset(net, srclen[b]);

		for (int k = 0; k < n; k++)
			d[k] += p->dh0[(size_t)b * n + k];
	}
	if (net->attention)
		linear_backward(p->dann, g->att_U, g->att_b, p->dkeys, p->ann,
				w->att_U, B * S, da, na);

	/* the encoder: annotations back to each direction's states */
	for (int b = 0; b < B; b++)
		for (int t = 0; t < S; t++) {
			const float *d = p->dann + ((size_t)b * S + t) * da;
			size_t o = (size_t)b * n;

			memcpy(p->dhs[0] + (t + 1) * bn + o, d,
			       n * sizeof(float));
			if (net->attention)
				memcpy(p->dhs[1] + t * bn + o, d + n,
				       n * sizeof(float));
		}
	gru_backward(p->dxs, g->fwd_W, g->fwd_U, g->fwd_b, p->dhs[0],
		     p->dencpre, p->drh, p->enc.hs[0], &p->enc.c[0], p->xs,
		     w->fwd_W, w->fwd_U, srclen, S, B, m, n, 0);
	if (net->attention)
		gru_backward(p->dxs, g->bwd_W, g->bwd_U, g->bwd_b, p->dhs[1],
			     p->dencpre, p->drh, p->enc.hs[1], &p->enc.c[1],
			     p->xs, w->bwd_W, w->bwd_U, srclen, S, B, m, n, 1);
	embedding_backward(g->src_emb, p->src_ids, S * B, p->dxs, m);
}

double rnn_train_batch(struct model *m, const struct batch_ids *src,
		       const struct batch_ids *tgt, float scale, double *nll,
		       int *ntok)
{
	const struct rnn_net *net = m->net;
	struct pass p = { 0 };
	double eps = 0, loss = -1, nll_sum;
	int count;

	if (!net->g.src_emb) {
		err_set("train: the model has no gradients (not loaded for "
			"training)");
		return -1;
	}
	if (config_get(&m->cfg, "label_smoothing") &&
	    config_double(&m->cfg, "label_smoothing", &eps) < 0)
		return -1;
	if (!(eps >= 0 && eps < 1)) {
		err_set("config: label_smoothing=%g is not in [0, 1)", eps);
		return -1;
	}
	if (check_batch(src, net->Vs, "source") < 0 ||
	    check_batch(tgt, net->Vt, "target") < 0)
		return -1;
	if (src->B != tgt->B) {
		err_set("train: %d source and %d target sentences", src->B,
			tgt->B);
		return -1;
	}
	p.B = src->B;
	p.S = src->S;
	p.T = tgt->S;
	p.src_ids = malloc((size_t)p.S * p.B * sizeof(int32_t));
	p.yin = malloc((size_t)p.T * p.B * sizeof(int32_t));
	p.ytgt = malloc((size_t)p.T * p.B * sizeof(int32_t));
	if (!p.src_ids || !p.yin || !p.ytgt) {
		err_set("out of memory");
		goto out;
	}
	pass_layout(net, &p);
	if (pass_memory(&p.arena) < 0)
		goto out;
	pass_layout(net, &p);
	arrange_ids(&p, src, tgt);
	forward(net, &p, src->len);
	loss = output_layer(net, &p, (float)eps, scale, &nll_sum, &count);
	backward(net, &p, src->len);
	if (nll)
		*nll = nll_sum;
	if (ntok)
		*ntok = count;
out:
	free(p.src_ids);
	free(p.yin);
	free(p.ytgt);
	return loss;
}
