/*
 * seq2seq_decoder.c: seq2seq's step-wise decoder (doc/MODELS.md) for
 * greedy search, beam search and scoring, batched over every live
 * hypothesis: each hypothesis carries every layer's state and cell, from
 * the encoder's last ones (att.h, att.c); a step reads the previous
 * token's embedding through the L layers, and p(y_i) is the softmax of
 * out.W h_i + out.b on the top layer's new state.  It attends to
 * nothing: its attention weights are zero.
 */
#include <stdlib.h>
#include <string.h>

#include "base/errmsg.h"
#include "kernels/kernels.h"
#include "models/arena.h"
#include "models/frames.h"
#include "nn/layers.h"
#include "models/shortlist.h"
#include "nn/lstm.h"
#include "rnn_common.h"
#include "rnnsearch.h"
#include "seq2seq.h"

struct decoder {
	struct dec_rows r;	/* first: rnn_common.h's accessors */
	const struct s2s_net *net;
	/* [L, cap, n]: the hypotheses' states and cells, and the next ones */
	float *h, *c, *h_next, *c_next;
	float *y, *act;		/* one step's [cap, m], [cap, 4n] */
};

static void decoder_layout(struct decoder *d)
{
	const struct s2s_net *net = d->net;
	struct arena *A = &d->r.arena;
	size_t state = (size_t)net->L * d->r.cap * net->n;

	d->h = arena_floats(A, state);
	d->c = arena_floats(A, state);
	d->h_next = arena_floats(A, state);
	d->c_next = arena_floats(A, state);
	d->y = arena_floats(A, (size_t)d->r.cap * net->m);
	d->act = arena_floats(A, (size_t)d->r.cap * 4 * net->n);
}

struct decoder *s2s_dec_new(const struct model *m, const struct dec_opts *o,
			    struct frame **f, int n, int width)
{
	const struct s2s_net *net = m->net;
	size_t nn = net->n, size = (size_t)net->L * nn;
	struct decoder *d;

	d = calloc(1, sizeof *d);
	if (!d) {
		err_set("out of memory");
		return NULL;
	}
	if (dec_rows_init(&d->r, n, width) < 0)
		goto fail;
	d->net = net;
	for (int b = 0; b < n; b++) {
		if (!frame_rows(f[b], "enc.out", net->n, "encode",
				&d->r.len[b]) ||
		    !rnn_need_vector(f[b], "att.h", (int)size, "attend") ||
		    !rnn_need_vector(f[b], "att.c", (int)size, "attend"))
			goto fail;
		if (d->r.len[b] > d->r.S)
			d->r.S = d->r.len[b];
	}
	decoder_layout(d);
	if (arena_alloc(&d->r.arena) < 0)
		goto fail;
	decoder_layout(d);
	for (int b = 0; b < n; b++) {
		const float *h = frame_find(f[b], "att.h")->data;
		const float *c = frame_find(f[b], "att.c")->data;

		for (int l = 0; l < net->L; l++) {
			size_t at = ((size_t)l * d->r.cap + b) * nn;

			memcpy(d->h + at, h + l * nn, nn * sizeof(float));
			memcpy(d->c + at, c + l * nn, nn * sizeof(float));
		}
	}
	if (o && o->shortlist && !(d->r.sl = shortlist_new(m, o->shortlist, f,
			n, n * width,
			net->w.out_W, net->w.out_b, (int)net->n,
			m->int8 ? WPACK_I8 : WPACK_F32)))
		goto fail;
	return d;
fail:
	s2s_dec_free(d);
	return NULL;
}

static void swap(float **a, float **b)
{
	float *t = *a;

	*a = *b;
	*b = t;
}

int s2s_dec_step(struct decoder *d, int nh, const int32_t *prev, float *logp,
		 float *attw)
{
	const struct s2s_net *net = d->net;
	size_t n = net->n, layer = (size_t)d->r.cap * n;
	const float *x;

	if (dec_step_check(nh, d->r.nh, prev, net->Vt) < 0)
		return -1;
	d->r.nh = nh;
	if (nh == 0)
		return 0;
	embedding_forward(d->y, prev, nh, net->w.tgt_emb, net->m);
	x = d->y;
	for (int l = 0; l < net->L; l++) {
		const struct s2s_layer *w = &net->w.dec[l];
		float *hn = d->h_next + l * layer;

		/* the input terms, then U h and the cell: as training's
		 * layer computes them */
		linear_forward(d->act, x, w->W, w->b, nh, l ? (int)n : net->m,
			       4 * (int)n);
		lstm_step_forward(hn, d->c_next + l * layer, d->act, d->act,
				  d->h + l * layer, d->c + l * layer, w->U, nh,
				  (int)n);
		x = hn;
	}
	if (d->r.sl) {
		if (shortlist_logp(d->r.sl, logp, net->Vt, x, nh, d->r.row) < 0)
			return -1;
	} else {
		linear_forward(logp, x, net->w.out_W, net->w.out_b, nh,
			       (int)n, net->Vt);
		log_softmax_rows(logp, logp, nh, net->Vt);
	}
	if (attw)	/* [nh, 1, S]: no attention, no weights */
		memset(attw, 0, (size_t)nh * d->r.S * sizeof(float));
	swap(&d->h, &d->h_next);
	swap(&d->c, &d->c_next);
	return 0;
}

int s2s_dec_select(struct decoder *d, int nh, const int *parent)
{
	const struct s2s_net *net = d->net;
	size_t nn = net->n, layer = (size_t)d->r.cap * nn;

	if (dec_rows_check(&d->r, nh, parent) < 0)
		return -1;
	for (int i = 0; i < nh; i++) {
		for (int l = 0; l < net->L; l++) {
			size_t to = l * layer + i * nn;
			size_t from = l * layer + parent[i] * nn;

			memcpy(d->h_next + to, d->h + from, nn * sizeof(float));
			memcpy(d->c_next + to, d->c + from, nn * sizeof(float));
		}
	}
	swap(&d->h, &d->h_next);
	swap(&d->c, &d->c_next);
	dec_rows_select(&d->r, nh, parent);
	return 0;
}

void s2s_dec_free(struct decoder *d)
{
	if (!d)
		return;
	dec_rows_free(&d->r);
	free(d);
}
