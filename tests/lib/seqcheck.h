/*
 * seqcheck.h: the checks the recurrent models' tests share
 * (test_rnnsearch.c, test_seq2seq.c): small models with large random
 * weights, batches of random sentences, the stages run on them, and what
 * must hold of any such model: every gradient against finite
 * differences, the decoder against a reference in double and against
 * training, padding, batching and threads that change no result, and
 * hypotheses duplicated by dec_select.  Each fails the running Check
 * test, naming the model's architecture and what differed.
 */
#ifndef ATTN_SEQCHECK_H
#define ATTN_SEQCHECK_H

#include <stdint.h>
#include "base/rng.h"
#include "models/model.h"

/* The vocabularies of sc_model's models. */
enum { SC_VS = 11, SC_VT = 13 };

/*
 * A model of architecture arch with src_vocab=SC_VS tgt_vocab=SC_VT,
 * then the settings of set and then of extra (each a list separated by
 * spaces; extra may be NULL, and a later setting overrides an earlier
 * one), every float of m->w drawn from N(0, 0.5^2) by a generator seeded
 * 7: far from the paper's small start, so that every path of the network
 * carries a gradient of a size finite differences can see and the
 * outputs are far from uniform.  Made for inference; sc_grads_on makes
 * it trainable.
 */
struct model *sc_model(const char *arch, const char *set, const char *extra);
/* Gradients for a model made for inference (as model_load does when
 * training), bound again. */
void sc_grads_on(struct model *m);

/* A batch of at most 8 sentences, 64 ids in all. */
struct sc_batch {
	struct batch_ids b;
	int32_t ids[64];
	int len[8];
};

/* B sentences of the given lengths, random ids in [3, V) ending with
 * </s> (2), padded with <pad> (0), drawn by a generator seeded seed. */
void sc_make_batch(struct sc_batch *x, int B, const int *len, int V,
		   uint64_t seed);
/* Sentence b of x alone (a batch of one), its length cut to len. */
void sc_one_sentence(struct sc_batch *one, const struct sc_batch *x, int b,
		     int len);

/*
 * With r, every sc_train from now on starts m->rng from *r (copied): the
 * same dropout masks each time.  NULL: m->rng as it is.
 */
void sc_fix_masks(const struct rng *r);
/* Whether sc_train runs training steps (dropout on) from now on. */
void sc_dropout(int on);
/* train_batch's loss (asserted >= 0), its nll in *nll. */
double sc_train(struct model *m, const struct sc_batch *src,
		const struct sc_batch *tgt, float scale, double *nll);

/* Frames holding src.ids of each sentence of x (numbered 0, 1, ...),
 * then embed, encode and attend on all of them at once. */
struct frame *sc_pipeline(const struct model *m, const struct sc_batch *x);
void sc_free_frames(struct frame *f, int n);

/* |a - b| <= tol * max(1, |a|) for n entries: values of order one
 * compared absolutely, larger ones relatively. */
void sc_assert_close(const float *a, const float *b, size_t n, double tol,
		     const char *what);

/*
 * Every parameter's gradient of the loss of a batch with every kind of
 * padding on both sides (sources of 4, 2 and 3 ids, targets of 3, 5
 * and 1) against central differences; turns m's gradients on.
 */
void sc_check_gradients(struct model *m);

/*
 * The decoder of the frames f[0 .. tgt B - 1] fed tgt's ids one step at
 * a time (teacher forcing) against ref [B, tgt S, SC_VT], the
 * log-probabilities computed in double: within tol at each step i <
 * tgt len[b].  what names the case in a failure.
 */
void sc_decoder_vs_ref(const struct model *m, struct frame *f,
		       const struct sc_batch *tgt, const double *ref,
		       double tol, const char *what);
/* The decoder's log-probabilities of each reference token against the
 * nll of train_batch (turns m's gradients on). */
void sc_decoder_vs_training(struct model *m);

/*
 * Sentences of 6, 2 and 4 ids each alone and in one batch: the records
 * rec[0 .. nrec-1] of the stages (the rest of the records are the
 * model's own business), then dec_srclen and four steps of the decoder:
 * log-probabilities within tol (as sc_assert_close), and the attention
 * weights, which must all be 0 when noatt (a model without attention),
 * else within tol of the lone sentence's and 0 past its end.
 */
struct sc_record {
	const char *name;
	double tol;	/* as sc_assert_close, over every float */
};
void sc_padding(struct model *m, const struct sc_record *rec, int nrec,
		double tol, int noatt);
/* Training: a batch's loss and gradients are the sums of its sentences'
 * (turns m's gradients on). */
void sc_padding_in_training(struct model *m);
/*
 * Training on 1, 2 and 3 threads: the same loss and gradients to the bit,
 * but for the parameter named inexact (NULL: none), whose gradient may
 * sum its parts in another order: within 1e-6.  Turns m's gradients on.
 */
void sc_threads(struct model *m, const char *inexact);
/*
 * After dec_select with parents {1, 0, 0, 1, 0}, hypotheses 1, 2 and 4
 * continue sentence 0's and 0, 3 sentence 1's: fed the same tokens, they
 * give the log-probabilities of a decoder that never selected.  A parent
 * past the live hypotheses is refused.
 */
void sc_select_duplicates(const struct model *m);

/* m's parameters, "NAME [D0,D1]" or "NAME [D0]", are want[0 .. n-1]. */
void sc_param_table(const struct model *m, const char *const *want, int n);
/* model_create(arch) with one setting refuses it, err_msg() naming key. */
void sc_setting_refused(const char *arch, const char *setting,
			const char *key);
/*
 * A sentence of 3 ids (src; f its frame, through the stages): an id
 * outside the source vocabulary is refused by embed and by train_batch,
 * which refuses a model without gradients too; turns m's gradients on.
 */
void sc_ids_refused(struct model *m, struct frame *f, struct sc_batch *src);

#endif
