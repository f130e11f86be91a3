/*
 * seq2seq_train.c: training of seq2seq (doc/MODELS.md): the source in the
 * order of reading through the encoder's stack, each layer's last state
 * and cell into the decoder's layer of the same number, the decoder's
 * stack with teacher forcing (inputs <s> then the reference shifted by
 * one), the output layer and the loss; then the same backwards.
 *
 * Padding never reaches a real position: the encoder masks it (lstm.h)
 * and each sentence hands on its own last states; a padded target's loss
 * and gradients are zero.  Dropout (the `dropout` key, in a training step)
 * draws from m->rng, the encoder's masks first.
 */
#include <stdlib.h>
#include <string.h>

#include "base/errmsg.h"
#include "base/scratch.h"
#include "kernels/kernels.h"
#include "models/arena.h"
#include "nn/layers.h"
#include "rnn_common.h"
#include "rnnsearch.h"
#include "seq2seq.h"

/* Rows of the output layer done at once: bounds logits [rows, V]. */
#define OUT_ROWS 256

struct pass {
	int B, S, T;
	float p;			/* dropout rate */
	int32_t *src_ids, *yin, *ytgt;	/* [S*B] read order, [T*B], [T*B] */
	struct arena arena;
	size_t grads;		/* bytes of the arena before the gradients */
	float *xs, *ys;		/* [S, B, m], [T, B, m] */
	float *logits;		/* [OUT_ROWS, V] */
	void *encmem, *decmem;
	struct s2s_stack enc, dec;
	/* gradients */
	float *dout, *dxs, *dys, *dpre, *dxl;
	float *dhe[S2S_LAYERS_MAX], *dce[S2S_LAYERS_MAX];
	float *dhd[S2S_LAYERS_MAX], *dcd[S2S_LAYERS_MAX];
};

static void pass_layout(const struct s2s_net *net, struct pass *p)
{
	struct arena *A = &p->arena;
	size_t B = p->B, S = p->S, T = p->T, n = net->n, m = net->m;
	size_t ST = S > T ? S : T, w = m > n ? m : n;

	p->xs = arena_floats(A, S * B * m);
	p->ys = arena_floats(A, T * B * m);
	p->logits = arena_floats(A, (size_t)OUT_ROWS * net->Vt);
	p->encmem = arena_take(A, s2s_stack_size(net, p->S, p->B, p->p));
	p->decmem = arena_take(A, s2s_stack_size(net, p->T, p->B, p->p));
	p->dpre = arena_floats(A, ST * B * 4 * n);
	p->dxl = arena_floats(A, ST * B * w);
	/* the gradients, which the backward pass adds into, last: only
	 * they need zeroing */
	p->grads = A->used;
	p->dout = arena_floats(A, T * B * n);
	p->dxs = arena_floats(A, S * B * m);
	p->dys = arena_floats(A, T * B * m);
	for (int l = 0; l < net->L; l++) {
		p->dhe[l] = arena_floats(A, (S + 1) * B * n);
		p->dce[l] = arena_floats(A, (S + 1) * B * n);
		p->dhd[l] = arena_floats(A, (T + 1) * B * n);
		p->dcd[l] = arena_floats(A, (T + 1) * B * n);
	}
}

static void forward(struct model *m, struct pass *p, const int *srclen)
{
	const struct s2s_net *net = m->net;
	const struct s2s_params *w = &net->w;
	size_t B = p->B, n = net->n, bn = B * n;

	embedding_forward(p->xs, p->src_ids, p->S * p->B, w->src_emb, net->m);
	s2s_stack_bind(net, &p->enc, p->encmem, p->S, p->B, p->p);
	s2s_stack_bind(net, &p->dec, p->decmem, p->T, p->B, p->p);
	for (int l = 0; l < net->L; l++) {
		memset(p->enc.hs[l], 0, bn * sizeof(float));
		memset(p->enc.cs[l], 0, bn * sizeof(float));
	}
	s2s_stack_forward(net, &p->enc, w->enc, p->xs, srclen, &m->rng);
	/* each sentence's last states start the decoder's layers */
	for (int l = 0; l < net->L; l++)
		for (size_t b = 0; b < B; b++) {
			size_t last = (size_t)srclen[b] * bn + b * n;

			memcpy(p->dec.hs[l] + b * n, p->enc.hs[l] + last,
			       n * sizeof(float));
			memcpy(p->dec.cs[l] + b * n, p->enc.cs[l] + last,
			       n * sizeof(float));
		}
	embedding_forward(p->ys, p->yin, p->T * p->B, w->tgt_emb, net->m);
	s2s_stack_forward(net, &p->dec, w->dec, p->ys, NULL, &m->rng);
}

/* The output layer and the loss, OUT_ROWS rows at a time, with their
 * backward pass into dout. */
static double output_layer(const struct s2s_net *net, struct pass *p,
			   float eps, float scale, double *nll, int *ntok)
{
	const struct s2s_params *w = &net->w, *g = &net->g;
	int TB = p->T * p->B, n = net->n, V = net->Vt;
	double loss = 0;

	*nll = 0;
	*ntok = 0;
	for (int r = 0; r < TB; r += OUT_ROWS) {
		int rows = TB - r < OUT_ROWS ? TB - r : OUT_ROWS, count;
		const float *h = p->dec.out + (size_t)r * n;
		double nll_part, part;

		linear_forward(p->logits, h, w->out_W, w->out_b, rows, n, V);
		part = xent_forward_backward(p->logits, p->logits,
					     p->ytgt + r, rows, V, eps, scale,
					     &nll_part, &count);
		if (part < 0)
			return -1;
		loss += part;
		*nll += nll_part;
		*ntok += count;
		linear_backward(p->dout + (size_t)r * n, g->out_W, g->out_b,
				p->logits, h, w->out_W, rows, n, V);
	}
	return loss;
}

static void backward(const struct s2s_net *net, struct pass *p,
		     const int *srclen)
{
	const struct s2s_params *w = &net->w, *g = &net->g;
	size_t B = p->B, n = net->n, bn = B * n;

	s2s_stack_backward(net, &p->dec, w->dec, g->dec, p->dhd, p->dcd,
			   p->dout, p->dys, p->dpre, p->dxl, NULL);
	embedding_backward(g->tgt_emb, p->yin, p->T * p->B, p->dys, net->m);
	/* the decoder's first states were the encoder's last */
	for (int l = 0; l < net->L; l++)
		for (size_t b = 0; b < B; b++) {
			size_t last = (size_t)srclen[b] * bn + b * n;

			for (size_t k = 0; k < n; k++) {
				p->dhe[l][last + k] += p->dhd[l][b * n + k];
				p->dce[l][last + k] += p->dcd[l][b * n + k];
			}
		}
	s2s_stack_backward(net, &p->enc, w->enc, g->enc, p->dhe, p->dce, NULL,
			   p->dxs, p->dpre, p->dxl, srclen);
	embedding_backward(g->src_emb, p->src_ids, p->S * p->B, p->dxs, net->m);
}

double s2s_train_batch(struct model *m, const struct batch_ids *src,
		       const struct batch_ids *tgt, float scale, int dropout, double *nll,
		       int *ntok)
{
	const struct s2s_net *net = m->net;
	struct pass p = { 0 };
	double eps, drop, loss = -1, nll_sum;
	int count;

	if (rnn_train_check(m, net->g.src_emb, net->Vs, net->Vt, src, tgt,
			    &eps) < 0 ||
	    rnn_rate_key(m, "dropout", &drop) < 0)
		return -1;
	p.B = src->B;
	p.S = src->S;
	p.T = tgt->S;
	p.p = dropout ? (float)drop : 0.0f;
	if (rnn_teacher_ids(src, tgt, m->bos_id, net->reverse, &p.src_ids,
			    &p.yin, &p.ytgt) < 0)
		goto out;
	pass_layout(net, &p);
	if (arena_in(&p.arena, &m->scratch, p.grads) < 0)
		goto out;
	pass_layout(net, &p);
	forward(m, &p, src->len);
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
