/*
 * rnn_common.c: the recurrent models' shared decoder rows and training
 * checks; see rnn_common.h.
 */
#include <stdlib.h>
#include <string.h>
#include "base/errmsg.h"
#include "models/shortlist.h"
#include "nn/layers.h"
#include "rnn_common.h"

int dec_rows_init(struct dec_rows *r, int n, int width)
{
	if (n < 1 || width < 1 || (long)n * width > (1L << 24)) {
		err_set("decoder: %d sentences of %d hypotheses", n, width);
		return -1;
	}
	r->nsent = r->nh = n;
	r->cap = n * width;
	r->len = malloc(n * sizeof(int));
	r->row = malloc((size_t)r->cap * sizeof(int));
	r->row_next = malloc((size_t)r->cap * sizeof(int));
	if (!r->len || !r->row || !r->row_next) {
		err_set("out of memory");
		return -1;
	}
	for (int b = 0; b < n; b++)
		r->row[b] = b;
	return 0;
}

int dec_rows_check(const struct dec_rows *r, int nh, const int *parent)
{
	if (nh < 0 || nh > r->cap) {
		err_set("decoder: %d hypotheses, room for %d", nh, r->cap);
		return -1;
	}
	for (int i = 0; i < nh; i++)
		if (parent[i] < 0 || parent[i] >= r->nh) {
			err_set("decoder: parent %d of hypothesis %d is not "
				"one of the %d live", parent[i], i, r->nh);
			return -1;
		}
	return 0;
}

void dec_rows_select(struct dec_rows *r, int nh, const int *parent)
{
	int *swap;

	for (int i = 0; i < nh; i++)
		r->row_next[i] = r->row[parent[i]];
	swap = r->row;
	r->row = r->row_next;
	r->row_next = swap;
	r->nh = nh;
}

void dec_rows_free(struct dec_rows *r)
{
	free(r->len);
	free(r->row);
	free(r->row_next);
	free(r->arena.base);
	shortlist_free(r->sl);
}

/* The rows of decoder d: its first member. */
static const struct dec_rows *rows(const struct decoder *d)
{
	return (const struct dec_rows *)(const void *)d;
}

int rnn_dec_sentence(const struct decoder *d, int i)
{
	return i >= 0 && i < rows(d)->nh ? rows(d)->row[i] : -1;
}

int rnn_dec_srclen(const struct decoder *d, int sentence)
{
	return sentence >= 0 && sentence < rows(d)->nsent ?
		rows(d)->len[sentence] : -1;
}

const struct shortlist *rnn_dec_shortlist(const struct decoder *d)
{
	return rows(d)->sl;
}

int rnn_rate_key(const struct model *m, const char *key, double *v)
{
	*v = 0;
	if (config_get(&m->cfg, key) && config_double(&m->cfg, key, v) < 0)
		return -1;
	if (!(*v >= 0 && *v < 1)) {
		err_set("config: %s=%g is not in [0, 1)", key, *v);
		return -1;
	}
	return 0;
}

int rnn_train_check(const struct model *m, const void *grads, int Vs,
		    int Vt, const struct batch_ids *src,
		    const struct batch_ids *tgt, double *eps)
{
	if (!grads) {
		err_set("train: the model has no gradients (not loaded for "
			"training)");
		return -1;
	}
	if (rnn_rate_key(m, "label_smoothing", eps) < 0 ||
	    rnn_check_batch(src, Vs, "source") < 0 ||
	    rnn_check_batch(tgt, Vt, "target") < 0)
		return -1;
	if (src->B != tgt->B) {
		err_set("train: %d source and %d target sentences", src->B,
			tgt->B);
		return -1;
	}
	return 0;
}

int rnn_check_batch(const struct batch_ids *x, int V, const char *what)
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

int rnn_teacher_ids(const struct batch_ids *src, const struct batch_ids *tgt,
		    int bos, int reverse, int32_t **srcp, int32_t **yin,
		    int32_t **ytgt)
{
	int B = src->B, S = src->S, T = tgt->S;

	*srcp = malloc((size_t)S * B * sizeof(int32_t));
	*yin = malloc((size_t)T * B * sizeof(int32_t));
	*ytgt = malloc((size_t)T * B * sizeof(int32_t));
	if (!*srcp || !*yin || !*ytgt) {
		free(*srcp);
		free(*yin);
		free(*ytgt);
		*srcp = *yin = *ytgt = NULL;
		err_set("out of memory");
		return -1;
	}
	for (int b = 0; b < B; b++) {
		const int32_t *x = src->ids + (size_t)b * S;
		const int32_t *y = tgt->ids + (size_t)b * T;
		int ls = src->len[b];

		for (int t = 0; t < S; t++)
			(*srcp)[t * B + b] = t >= ls ? 0 :
				x[reverse && t < ls - 1 ? ls - 2 - t : t];
		for (int t = 0; t < T; t++) {
			(*ytgt)[t * B + b] = t < tgt->len[b] ? y[t] : XENT_PAD;
			(*yin)[t * B + b] = t == 0 ? bos :
				t - 1 < tgt->len[b] ? y[t - 1] : 0;
		}
	}
	return 0;
}
