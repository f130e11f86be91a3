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
#include "rnnsearch.h"
#include "seq2seq.h"

struct decoder {
	const struct s2s_net *net;
	int nsent, cap, nh;	/* sentences, rows (nsent * width), live */
	int S;			/* the longest source */
	int *len;		/* the sources' lengths */
	int *row, *row_next;	/* the live hypotheses' sentences */
	struct arena arena;
	struct shortlist *sl;	/* o->shortlist: the output layer's */
	/* [L, cap, n]: the hypotheses' states and cells, and the next ones */
	float *h, *c, *h_next, *c_next;
	float *y, *act;		/* one step's [cap, m], [cap, 4n] */
};

static void decoder_layout(struct decoder *d)
{
	const struct s2s_net *net = d->net;
	struct arena *A = &d->arena;
	size_t state = (size_t)net->L * d->cap * net->n;

	d->h = arena_floats(A, state);
	d->c = arena_floats(A, state);
	d->h_next = arena_floats(A, state);
	d->c_next = arena_floats(A, state);
	d->y = arena_floats(A, (size_t)d->cap * net->m);
	d->act = arena_floats(A, (size_t)d->cap * 4 * net->n);
}

struct decoder *s2s_dec_new(const struct model *m, const struct dec_opts *o,
			    struct frame **f, int n, int width)
{
	const struct s2s_net *net = m->net;
	size_t nn = net->n, size = (size_t)net->L * nn;
	struct decoder *d;

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
		if (!frame_rows(f[b], "enc.out", net->n, "encode",
				&d->len[b]) ||
		    !rnn_need_vector(f[b], "att.h", (int)size, "attend") ||
		    !rnn_need_vector(f[b], "att.c", (int)size, "attend"))
			goto fail;
		if (d->len[b] > d->S)
			d->S = d->len[b];
	}
	decoder_layout(d);
	if (arena_alloc(&d->arena) < 0)
		goto fail;
	decoder_layout(d);
	for (int b = 0; b < n; b++) {
		const float *h = frame_find(f[b], "att.h")->data;
		const float *c = frame_find(f[b], "att.c")->data;

		d->row[b] = b;
		for (int l = 0; l < net->L; l++) {
			size_t at = ((size_t)l * d->cap + b) * nn;

			memcpy(d->h + at, h + l * nn, nn * sizeof(float));
			memcpy(d->c + at, c + l * nn, nn * sizeof(float));
		}
	}
	if (o && o->shortlist && !(d->sl = shortlist_new(m, o->shortlist, f,
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
	size_t n = net->n, layer = (size_t)d->cap * n;
	const float *x;

	if (dec_step_check(nh, d->nh, prev, net->Vt) < 0)
		return -1;
	d->nh = nh;
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
	if (d->sl) {
		if (shortlist_logp(d->sl, logp, net->Vt, x, nh, d->row) < 0)
			return -1;
	} else {
		linear_forward(logp, x, net->w.out_W, net->w.out_b, nh,
			       (int)n, net->Vt);
		log_softmax_rows(logp, logp, nh, net->Vt);
	}
	if (attw)	/* [nh, 1, S]: no attention, no weights */
		memset(attw, 0, (size_t)nh * d->S * sizeof(float));
	swap(&d->h, &d->h_next);
	swap(&d->c, &d->c_next);
	return 0;
}

int s2s_dec_select(struct decoder *d, int nh, const int *parent)
{
	const struct s2s_net *net = d->net;
	size_t nn = net->n, layer = (size_t)d->cap * nn;
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
		for (int l = 0; l < net->L; l++) {
			size_t to = l * layer + i * nn;
			size_t from = l * layer + parent[i] * nn;

			memcpy(d->h_next + to, d->h + from, nn * sizeof(float));
			memcpy(d->c_next + to, d->c + from, nn * sizeof(float));
		}
		d->row_next[i] = d->row[parent[i]];
	}
	swap(&d->h, &d->h_next);
	swap(&d->c, &d->c_next);
	rswap = d->row;
	d->row = d->row_next;
	d->row_next = rswap;
	d->nh = nh;
	return 0;
}

int s2s_dec_sentence(const struct decoder *d, int i)
{
	return i >= 0 && i < d->nh ? d->row[i] : -1;
}

const struct shortlist *s2s_dec_shortlist(const struct decoder *d)
{
	return d->sl;
}

int s2s_dec_srclen(const struct decoder *d, int sentence)
{
	return sentence >= 0 && sentence < d->nsent ? d->len[sentence] : -1;
}

void s2s_dec_free(struct decoder *d)
{
	if (!d)
		return;
	free(d->len);
	free(d->row);
	free(d->row_next);
	free(d->arena.base);
	shortlist_free(d->sl);
	free(d);
}
