/*
 * rnn_train.c: training of the recurrent models (doc/MODELS.md): the forward
 * pass over a padded batch with teacher forcing (decoder inputs <s> then
 * the reference shifted by one), the loss, and the backward pass through
 * the deep output, the decoder GRU, the attention, the initial state, both
 * encoder directions and the embeddings.
 *
 * Everything that does not wait on the recurrence runs over all steps at
 * once: the input terms W y + b before the decoder loop, the deep output,
 * the loss and the weight gradients after it; the loops do only what each
 * step needs of the last.  Of rnnsearch's ways of attending (rnnsearch.h)
 * only the additive one has keys; the window carries its positions kappa
 * from step to step, and their gradient back.  Padding never reaches a
 * real position: the encoder masks it (gru.h), the attention skips it,
 * and a padded target's loss and gradients are zero.
 */
#include <stdlib.h>
#include <string.h>

#include "base/errmsg.h"
#include "base/scratch.h"
#include "kernels/kernels.h"
#include "nn/layers.h"
#include "nn/window.h"
#include "rnn_common.h"
#include "rnnsearch.h"

/* Rows of the output layer done at once: bounds logits [rows, V]. */
#define OUT_ROWS 256

/* A batch's values, time-major [T, B, ...] in the decoder (and [S, B, ...]
 * in the encoder), with their gradients. */
struct pass {
	int B, S, T;
	int parts;			/* of the batch's rows, one per thread */
	int32_t *src_ids, *yin, *ytgt;	/* [S*B], [T*B], [T*B] */
	struct arena arena;
	size_t grads;		/* bytes of the arena before the gradients */
	/* forward */
	float *xs, *encmem, *ann, *keys, *h0, *c;
	struct rnn_encoder enc;
	float *y, *pre, *zr, *rh, *hh, *s, *wq, *a, *ctx, *tt, *t, *logits;
	float *wp, *kappa;		/* window: [T, B, 3K], [T + 1, B, K] */
	/* backward */
	float *ds, *dpre, *dwq, *dctx, *dy, *dtt, *dt, *drh, *dann, *dkeys;
	float *dva;			/* [parts, n'] */
	float *dwp, *dkappa, *dphi;	/* window: [T, B, 3K], [B, K], [B, S] */
	float *dhs[2], *dencpre[2], *dxs[2], *encdrh[2], *dh0, *dc;
};

static void pass_layout(const struct rnn_net *net, struct pass *p)
{
	struct arena *A = &p->arena;
	size_t B = p->B, S = p->S, T = p->T, n = net->n, TB = T * B;

	p->xs = arena_floats(A, S * B * net->m);
	p->encmem = arena_floats(A, rnn_encoder_floats(net, p->S, p->B));
	p->ann = arena_floats(A, B * S * net->da);
	p->keys = arena_floats(A, B * S * net->na);
	p->h0 = arena_floats(A, B * n);
	p->c = arena_floats(A, B * n);
	p->y = arena_floats(A, TB * net->m);
	p->pre = arena_floats(A, TB * 3 * n);
	p->zr = arena_floats(A, TB * 2 * n);
	p->rh = arena_floats(A, TB * n);
	p->hh = arena_floats(A, TB * n);
	p->s = arena_floats(A, (T + 1) * B * n);
	p->wq = arena_floats(A, TB * net->na);
	p->a = arena_floats(A, TB * S);
	p->ctx = arena_floats(A, TB * net->dc);
	p->tt = arena_floats(A, TB * 2 * net->l);
	p->t = arena_floats(A, TB * net->l);
	p->logits = arena_floats(A, (size_t)OUT_ROWS * net->Vt);
	if (net->attention && net->kind == ATT_WINDOW) {
		p->wp = arena_floats(A, TB * 3 * net->K);
		p->kappa = arena_floats(A, (T + 1) * B * net->K);
	}

	/* the gradients, which the backward pass adds into, last: only
	 * they need zeroing (every forward array is written before read) */
	p->grads = A->used;
	p->ds = arena_floats(A, (T + 1) * B * n);
	p->dpre = arena_floats(A, TB * 3 * n);
	p->dwq = arena_floats(A, TB * net->na);
	p->dctx = arena_floats(A, TB * net->dc);
	p->dy = arena_floats(A, TB * net->m);
	p->dtt = arena_floats(A, TB * 2 * net->l);
	p->dt = arena_floats(A, TB * net->l);
	p->drh = arena_floats(A, B * n);
	p->dann = arena_floats(A, B * S * net->da);
	p->dkeys = arena_floats(A, B * S * net->na);
	p->dva = arena_floats(A, (size_t)p->parts * net->na);
	if (net->attention && net->kind == ATT_WINDOW) {
		p->dwp = arena_floats(A, TB * 3 * net->K);
		p->dkappa = arena_floats(A, B * net->K);
		p->dphi = arena_floats(A, B * S);
	}
	for (int d = 0; d < (net->attention ? 2 : 1); d++) {
		p->dhs[d] = arena_floats(A, (S + 1) * B * n);
		p->dencpre[d] = arena_floats(A, S * B * 3 * n);
		p->dxs[d] = arena_floats(A, S * B * net->m);
		p->encdrh[d] = arena_floats(A, B * n);
	}
	p->dh0 = arena_floats(A, B * n);
	p->dc = arena_floats(A, B * n);
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
 * One decoder step i for B rows, at row r of the [T, B, ...] arrays (and
 * of [T + 1, B, ...] s and kappa).  On entry pre holds W y + b (y the
 * embedding of the previous token); from s_{i-1} it computes the weights
 * a [B, S] over the source (additive: from wq [B, n'] = Wa s; window:
 * from wp [B, 3K] = Ww s + bw and kappa_{i-1}, making kappa_i), the
 * context ctx [B, dc], the complete pre-activations, the GRU's
 * zr [B, 2n], rh, hh [B, n] and the new state s_i.
 */
static void step_forward(const struct rnn_net *net, const struct rnn_mem *mem,
			 struct pass *p, int B, int i, size_t r)
{
	const struct rnn_params *w = &net->w;
	size_t n = net->n, dc = net->dc, S = p->S, K = net->K;
	float *s = p->s + r * n, *pre = p->pre + r * 3 * n;
	float *a = p->a + r * S, *ctx = p->ctx + r * dc;

	if (!net->attention) {
		memcpy(ctx, mem->ctx, (size_t)B * dc * sizeof(float));
	} else if (net->kind == ATT_ADDITIVE) {
		float *wq = p->wq + r * net->na;

		/* wq [B, n'] = s Wa^T; e, a and c_i by the fused kernel */
		sgemm(0, 1, B, net->na, (int)n, 1.0f, s, (int)n, w->att_W,
		      (int)n, 0.0f, wq, net->na);
		additive_attention_forward(ctx, a, wq, mem->keys, w->att_v,
					   mem->ann, mem->len, B, mem->S,
					   net->na, (int)dc);
	} else {
		if (net->kind == ATT_DIAGONAL) {
			diagonal_forward(a, i, net->ratio, mem->len, B,
					 mem->S);
		} else {
			float *wp = p->wp + r * 3 * K;

			linear_forward(wp, s, w->win_W, w->win_b, B, (int)n,
				       3 * net->K);
			window_forward(a, p->kappa + (r + p->B) * K, wp,
				       p->kappa + r * K, mem->len, B, mem->S,
				       net->K);
		}
		context_forward(ctx, a, mem->ann, mem->len, B, mem->S,
				(int)dc);
	}
	/* pre [B, 3n] += ctx [B, dc] . C^T */
	sgemm(0, 1, B, 3 * (int)n, (int)dc, 1.0f, ctx, (int)dc, w->dec_C,
	      (int)dc, 1.0f, pre, 3 * (int)n);
	gru_step_forward(p->s + (r + p->B) * n, pre, p->zr + r * 2 * n,
			 p->rh + r * n, p->hh + r * n, s, w->dec_U, B,
			 (int)n);
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

/*
 * The decoder's recurrence runs on the batch's rows split into parts, one
 * per thread: each step's products have only B rows, too few to split
 * well, and the rows never meet (a sentence is its own recurrence; sgemm
 * gives an entry the same bits whatever the rows).  Part q is rows
 * [*b0, *b0 + *nb).
 */
struct rows_job {
	const struct rnn_net *net;
	struct pass *p;
	const int *len;
};

static void part_rows(const struct pass *p, int64_t q, int *b0, int *nb)
{
	*b0 = (int)(q * p->B / p->parts);
	*nb = (int)((q + 1) * p->B / p->parts) - *b0;
}

static void forward_rows(void *arg, int64_t lo, int64_t hi)
{
	const struct rows_job *j = arg;
	const struct rnn_net *net = j->net;
	struct pass *p = j->p;
	size_t B = p->B, S = p->S, n = net->n, na = net->na;

	for (int64_t q = lo; q < hi; q++) {
		int b0, nb;

		part_rows(p, q, &b0, &nb);
		struct rnn_mem mem = { .keys = p->keys + b0 * S * na,
				       .ann = p->ann + b0 * S * net->da,
				       .ctx = p->c + b0 * n,
				       .len = j->len + b0, .S = p->S };
		for (int i = 0; i < p->T; i++)	/* from the part's first row */
			step_forward(net, &mem, p, nb, i, i * B + b0);
	}
}

/*
 * The window's part of step i's backward pass for rows b0 .. b0+nb-1
 * (at row r): dctx to the weights, to wp and kappa (carried to the step
 * before in dkappa), and ds_{i-1} += dwp Ww.  The diagonal has nothing to
 * do here: its one-hot weights pass dctx to the annotations, as every
 * attention's weights do after the loop.
 */
static void window_step_backward(const struct rnn_net *net, struct pass *p,
				 const int *len, int b0, int nb, size_t r)
{
	size_t S = p->S, K = net->K, n = net->n, k3 = 3 * K;
	float *dphi = p->dphi + b0 * S, *dwp = p->dwp + r * k3;

	memset(dphi, 0, nb * S * sizeof(float));
	context_backward(dphi, NULL, p->dctx + r * net->dc, p->a + r * S,
			 p->ann + b0 * S * net->da, len, nb, (int)S, net->da);
	window_backward(dwp, p->dkappa + b0 * K, dphi, p->wp + r * k3,
			p->kappa + (r + p->B) * K, len, nb, (int)S, (int)K);
	sgemm(0, 0, nb, (int)n, (int)k3, 1.0f, dwp, (int)k3, net->w.win_W,
	      (int)n, 1.0f, p->ds + r * n, (int)n);
}

/* The decoder's steps in reverse: ds of s_{i+1} is complete once step
 * i+1 has been undone.  Part q adds va's gradient into p->dva[q]. */
static void backward_rows(void *arg, int64_t lo, int64_t hi)
{
	const struct rows_job *j = arg;
	const struct rnn_net *net = j->net;
	const struct rnn_params *w = &net->w;
	struct pass *p = j->p;
	size_t B = p->B, S = p->S, n = net->n, na = net->na, dc = net->dc;
	size_t da = net->da;

	for (int64_t q = lo; q < hi; q++) {
		int b0, nb;

		part_rows(p, q, &b0, &nb);
		for (int i = p->T - 1; i >= 0; i--) {
			size_t r = i * B + b0;
			float *dpre = p->dpre + r * 3 * n, *ds = p->ds + r * n;
			float *dctx = p->dctx + r * dc, *dwq = p->dwq + r * na;

			gru_step_backward(dpre, ds, p->drh + b0 * n,
					  p->ds + (r + B) * n, p->zr + r * 2 * n,
					  p->hh + r * n, p->s + r * n, w->dec_U,
					  nb, n);
			/* dctx [nb, dc] += dpre [nb, 3n] . C [3n, dc] */
			sgemm(0, 0, nb, dc, 3 * n, 1.0f, dpre, 3 * n, w->dec_C,
			      dc, 1.0f, dctx, dc);
			if (!net->attention || net->kind == ATT_DIAGONAL)
				continue;
			if (net->kind == ATT_WINDOW) {
				window_step_backward(net, p, j->len + b0, b0,
						     nb, r);
				continue;
			}
			additive_attention_backward(
				dwq, p->dkeys + b0 * S * na, p->dva + q * na,
				NULL, dctx, p->a + r * S,
				p->wq + r * na, p->keys + b0 * S * na, w->att_v,
				p->ann + b0 * S * da, j->len + b0, nb, p->S,
				net->na, net->da);
			/* ds [nb, n] += dwq [nb, n'] . Wa [n', n] */
			sgemm(0, 0, nb, n, na, 1.0f, dwq, na, w->att_W, n, 1.0f,
			      ds, n);
		}
		/* the annotations' part of c_i = sum_j a_ij h_j over every
		 * step at once, sentence by sentence: dann_b [S, da] +=
		 * a_b^T [S, T] . dctx_b [T, da] */
		for (int b = b0; net->attention && b < b0 + nb; b++)
			sgemm(1, 0, p->S, net->da, p->T, 1.0f, p->a + b * S,
			      (int)(B * S), p->dctx + b * dc, (int)(B * dc),
			      1.0f, p->dann + b * S * da, net->da);
	}
}

static void forward(const struct rnn_net *net, struct pass *p,
		    const int *srclen)
{
	const struct rnn_params *w = &net->w;
	int B = p->B, S = p->S, T = p->T, n = net->n, TB = T * B;
	struct rows_job j = { net, p, srclen };

	embedding_forward(p->xs, p->src_ids, S * B, w->src_emb, net->m);
	rnn_encoder_bind(net, &p->enc, p->encmem, S, B);
	rnn_encoder_forward(net, &p->enc, p->ann, p->xs, srclen, S, B);
	if (p->kappa)		/* kappa_0 = 0 */
		memset(p->kappa, 0, (size_t)B * net->K * sizeof(float));
	if (net->attention && net->kind == ATT_ADDITIVE)
		/* keys [B*S, n'] = ann Ua^T + ba */
		linear_forward(p->keys, p->ann, w->att_U, w->att_b, B * S,
			       net->da, net->na);
	for (int b = 0; b < B; b++)
		memcpy(p->h0 + (size_t)b * n, p->ann + (size_t)b * S * net->da +
		       rnn_init_offset(net, srclen[b]), n * sizeof(float));
	rnn_init_forward(net, p->s, p->c, p->h0, B);

	embedding_forward(p->y, p->yin, TB, w->tgt_emb, net->m);
	linear_forward(p->pre, p->y, w->dec_W, w->dec_b, TB, net->m, 3 * n);
	kern_parallel_for(p->parts, 1, forward_rows, &j);
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
		double nll_part, part;

		rnn_logits_forward(net, rows, t, p->logits);
		part = xent_forward_backward(p->logits, p->logits,
					     p->ytgt + r, rows, V, eps, scale,
					     &nll_part, &count);
		if (part < 0)
			return -1;
		loss += part;
		*nll += nll_part;
		*ntok += count;
		linear_backward(p->dt + (size_t)r * l, g->out_W, g->out_bias,
				p->logits, t, w->out_W, rows, l, V);
	}
	return loss;
}

struct encode_job {
	const struct rnn_net *net;
	struct pass *p;
	const int *len;
};

/* The backward pass of encoder directions lo .. hi-1 (0 forwards). */
static void encoder_backward(void *arg, int64_t lo, int64_t hi)
{
	const struct encode_job *j = arg;
	const struct rnn_params *w = &j->net->w, *g = &j->net->g;
	struct pass *p = j->p;

	for (int64_t d = lo; d < hi; d++)
		gru_backward(p->dxs[d], d ? g->bwd_W : g->fwd_W,
			     d ? g->bwd_U : g->fwd_U, d ? g->bwd_b : g->fwd_b,
			     p->dhs[d], p->dencpre[d], p->encdrh[d],
			     p->enc.hs[d], &p->enc.c[d], p->xs,
			     d ? w->bwd_W : w->fwd_W, d ? w->bwd_U : w->fwd_U,
			     j->len, p->S, p->B, j->net->m, j->net->n, (int)d);
}

static void backward(const struct rnn_net *net, struct pass *p,
		     const int *srclen)
{
	const struct rnn_params *w = &net->w, *g = &net->g;
	int B = p->B, S = p->S, T = p->T, n = net->n, TB = T * B;
	int m = net->m, na = net->na, dc = net->dc, da = net->da, l2 = 2 * net->l;
	size_t bn = (size_t)B * n;
	struct encode_job j = { net, p, srclen };

	/* the deep output: t~ = Uo s_{i-1} + Vo y + Co c_i + bo */
	maxout_backward(p->dtt, p->dt, p->tt, TB, net->l);
	linear_backward(p->ds, g->out_U, g->out_b, p->dtt, p->s, w->out_U, TB,
			n, l2);
	linear_backward(p->dy, g->out_V, NULL, p->dtt, p->y, w->out_V, TB, m,
			l2);
	linear_backward(p->dctx, g->out_C, NULL, p->dtt, p->ctx, w->out_C, TB,
			dc, l2);

	/* the decoder's steps in reverse, each part of the rows on its own;
	 * va's gradient summed over the parts in their order */
	struct rows_job rj = { net, p, srclen };
	kern_parallel_for(p->parts, 1, backward_rows, &rj);
	for (int q = 0; q < p->parts; q++)
		for (int k = 0; k < na; k++)
			g->att_v[k] += p->dva[(size_t)q * na + k];
	/* the decoder's weights over every step at once */
	gru_dU(g->dec_U, p->dpre, p->s, p->rh, TB, n);
	linear_backward(p->dy, g->dec_W, g->dec_b, p->dpre, p->y, w->dec_W, TB,
			m, 3 * n);
	sgemm(1, 0, 3 * n, dc, TB, 1.0f, p->dpre, 3 * n, p->ctx, dc, 1.0f,
	      g->dec_C, dc);
	embedding_backward(g->tgt_emb, p->yin, TB, p->dy, m);

	/* the initial state, and rnnencdec's context c used at every step */
	if (net->attention) {
		if (net->kind == ATT_ADDITIVE)
			sgemm(1, 0, na, n, TB, 1.0f, p->dwq, na, p->s, n, 1.0f,
			      g->att_W, n);
		if (net->kind == ATT_WINDOW)
			linear_backward(NULL, g->win_W, g->win_b, p->dwp, p->s,
					w->win_W, TB, n, 3 * net->K);
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
	if (net->attention && net->kind == ATT_ADDITIVE)
		linear_backward(p->dann, g->att_U, g->att_b, p->dkeys, p->ann,
				w->att_U, B * S, da, na);

	/* the encoder: annotations back to each direction's states, the
	 * two directions on two threads, each into its own dxs */
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
	kern_parallel_for(net->attention ? 2 : 1, 1, encoder_backward, &j);
	for (int d = 0; d < (net->attention ? 2 : 1); d++)
		embedding_backward(g->src_emb, p->src_ids, S * B, p->dxs[d], m);
}

double rnn_train_batch(struct model *m, const struct batch_ids *src,
		       const struct batch_ids *tgt, float scale, int dropout, double *nll,
		       int *ntok)
{
	const struct rnn_net *net = m->net;
	struct pass p = { 0 };
	double eps, loss = -1, nll_sum;
	int count;

	if (rnn_train_check(m, net->g.src_emb, net->Vs, net->Vt, src, tgt,
			    &eps) < 0)
		return -1;
	p.B = src->B;
	p.S = src->S;
	p.T = tgt->S;
	p.parts = kern_threads() < p.B ? kern_threads() : p.B;
	if (rnn_teacher_ids(src, tgt, m->bos_id, 0, &p.src_ids, &p.yin,
			    &p.ytgt) < 0)
		goto out;
	pass_layout(net, &p);
	if (arena_in(&p.arena, &m->scratch, p.grads) < 0)
		goto out;
	pass_layout(net, &p);
	forward(net, &p, src->len);
	loss = output_layer(net, &p, (float)eps, scale, &nll_sum, &count);
	if (loss < 0)
		goto out;
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
