/*
 * rnn_common.h: what the recurrent models' decoders (rnn_decoder.c,
 * seq2seq_decoder.c) and training passes (rnn_train.c, seq2seq_train.c)
 * share: a decoder's rows and their sentences, and a teacher-forced
 * batch's checks and ids.
 */
#ifndef ATTN_RNN_COMMON_H
#define ATTN_RNN_COMMON_H

#include <stdint.h>
#include "models/arena.h"
#include "models/model.h"

/*
 * The bookkeeping of a decoder of nsent sentences with room for cap
 * hypotheses: each decoder's struct begins with one, so that the
 * accessors below serve both.
 */
struct dec_rows {
	int nsent, cap, nh;	/* sentences, rows (nsent * width), live */
	int S;			/* the longest source */
	int *len;		/* [nsent] the sources' lengths */
	int *row, *row_next;	/* [cap] the live hypotheses' sentences */
	struct arena arena;	/* the decoder's arrays, one allocation */
	struct shortlist *sl;	/* o->shortlist: the output layer's */
};

/* r for n sentences of width hypotheses each, hypothesis i sentence i.
 * 0, or -1 with err_msg() (sizes, memory). */
int dec_rows_init(struct dec_rows *r, int n, int width);
/* Checks dec_select's nh and parent against r: 0, or -1 (err_msg()). */
int dec_rows_check(const struct dec_rows *r, int nh, const int *parent);
/* Hypothesis i of the next step is parent[i]'s: the rows follow. */
void dec_rows_select(struct dec_rows *r, int nh, const int *parent);
void dec_rows_free(struct dec_rows *r);

/* arch's accessors, for a decoder whose first member is its dec_rows. */
int rnn_dec_sentence(const struct decoder *d, int i);
int rnn_dec_srclen(const struct decoder *d, int sentence);
const struct shortlist *rnn_dec_shortlist(const struct decoder *d);

/*
 * A training batch's checks, shared by train_batch: the model has
 * gradients (grads not NULL), the sentences' ids in the vocabularies of
 * Vs and Vt, as many targets as sources, and the config's
 * label_smoothing (0 when absent) in [0, 1) into *eps.  0, or -1
 * (err_msg()).
 */
int rnn_train_check(const struct model *m, const void *grads, int Vs,
		    int Vt, const struct batch_ids *src,
		    const struct batch_ids *tgt, double *eps);
/* A training key of the config in [0, 1) into *v, 0 when absent. */
int rnn_rate_key(const struct model *m, const char *key, double *v);
/* Checks a batch's shape and ids against a vocabulary of V: 0, or -1
 * with err_msg() naming what ("source", "target") and where. */
int rnn_check_batch(const struct batch_ids *x, int V, const char *what);

/*
 * A teacher-forced batch's ids, time-major and malloc'ed: *src [S, B]
 * (with reverse, each sentence's words backwards and then its </s>, as
 * seq2seq.h's s2s_read_pos reads them), *yin [T, B] the decoder's
 * inputs (bos, then tgt[0 .. T-2]) and *ytgt [T, B] its targets; past
 * each length <pad> (0) in *src and *yin, XENT_PAD in *ytgt (the loss
 * skips it; 0 may be </s>).  0, or -1 (err_msg(); all three NULL).
 */
int rnn_teacher_ids(const struct batch_ids *src, const struct batch_ids *tgt,
		    int bos, int reverse, int32_t **srcp, int32_t **yin,
		    int32_t **ytgt);

#endif
