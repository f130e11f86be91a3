/*
 * shortlist.h: a vocabulary shortlist (as Marian's lexical shortlists):
 * the output layer of a translation scores only the units a sentence is
 * likely to need, not the whole target vocabulary.
 *
 * The table (train-step --shortlist learns it, run/lexicon.h; a model
 * keeps it in m->sl and in its file as shortlist.frequent, i32 [N], and
 * shortlist.translations, i32 [src_vocab, K], doc/MODELS.md): the N most
 * frequent target units, and each source unit's K likeliest
 * translations, -1 past the last it has.
 *
 * A sentence's shortlist is the union of the special units (ids 0 to
 * SHORTLIST_SPECIAL - 1: <pad> <s> </s> <unk>), the frequent ones and the
 * translations of each unit of its source, in ascending order of id.  The
 * rows of the output matrix (and bias) a decoder needs are gathered and
 * packed once, when it is made.  A beam's decoder (more than one row a
 * sentence) packs each sentence's own, and a step multiplies each
 * sentence's rows by its sentence's matrix; a greedy one, whose rows
 * would each stream a matrix of their own, packs the union of its
 * sentences' units (a few times one sentence's, a third of the Bible's
 * vocabulary at 64 sentences) and multiplies all its rows by it in one
 * product.  Either way every entry has the bits of the full product's
 * (gemm_packed.h) and each row's log-softmax runs over its own sentence's
 * units only, so a sentence's log-probabilities are the same whatever
 * the batch, and with every unit in the shortlist they are those of the
 * full softmax, bit for bit.
 */
#ifndef ATTN_SHORTLIST_H
#define ATTN_SHORTLIST_H

#include <stdint.h>
#include "kernels/gemm_packed.h"
#include "model.h"

#define SHORTLIST_SPECIAL 4

/*
 * Sets m's table: freq [nfreq] and trans [src_vocab, k] (-1 past a unit's
 * last), copied after checking the ids against the vocabularies; nfreq 0
 * and k 0 are allowed.  0, or -1 with err_msg().
 */
int shortlist_table_set(struct model *m, const int32_t *freq, int nfreq,
			const int32_t *trans, int k);

/* A decoder's shortlists. */
struct shortlist {
	int nsent, cap, U;	/* sentences, rows, units of the union */
	int K;			/* the output layer's inputs */
	int32_t *uid;		/* [U] the union, ascending */
	int *off;		/* [nsent + 1]: sentence s has units
				   ids[off[s] .. off[s + 1]) */
	int32_t *ids;		/* each sentence's, ascending */
	int *pos;		/* their places in uid */
	int nw;			/* 1: w [0] packs the union's rows of the
				   output matrix; nsent: w [s] sentence s's */
	struct wpack *w;
	float *W, *b;		/* the rows gathered: the union's [U,
				   K] and [U], or the sentences'
				   [off[nsent], K] and [off[nsent]]; b
				   NULL without bias */
	int8_t *q;		/* int8: the gathered rows and scales */
	float *qs;
	float *logits;		/* [cap, U], or [cap, the most units] */
};

/*
 * The shortlists of the n sentences of frames f (their src.ids) for a
 * decoder of cap rows (cap / n a sentence) whose output layer is W
 * [tgt_vocab, K] (a
 * parameter of m, or a table it holds) and bias b [tgt_vocab] (NULL:
 * none), packed as pack says (gemm_packed.h's WPACK_*; an int8
 * parameter's own rows and scales where W has them, as model_wpack).
 * NULL with err_msg() when m has no table, a frame has no src.ids, or out
 * of memory.
 */
struct shortlist *shortlist_new(const struct model *m, struct frame **f,
				int n, int cap, const float *W, const float *b,
				int K, int pack);
/*
 * The output layer of nh rows x [nh, K], row i of sentence sent[i]: its
 * log-probabilities over the sentence's units into logp + i ld (entry j
 * for unit ids[off[s] + j]).  0, or -1 (err_msg(), linear_packed's).
 */
int shortlist_logp(struct shortlist *s, float *logp, long ld,
		   const float *x, int nh, const int *sent);
/* The place of unit id among sentence sent's, or -1. */
int shortlist_find(const struct shortlist *s, int sent, int32_t id);
void shortlist_free(struct shortlist *s);

#endif
