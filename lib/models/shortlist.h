/*
 * shortlist.h: a vocabulary shortlist (as Marian's lexical shortlists):
 * the output layer of a translation scores only the units a sentence is
 * likely to need, not the whole target vocabulary.
 *
 * The table (train-step --shortlist learns it, run/lexicon.h; a model
 * file keeps it as two annexes (model.h), shortlist.frequent, i32 [N],
 * and shortlist.translations, i32 [src_vocab, K], doc/MODELS.md): the N
 * most frequent target units, and each source unit's K likeliest
 * translations, -1 past the last it has.  A translation that asks for
 * the shortlist loads the table and hands it to the decoder (arch.h's
 * struct dec_opts).
 *
 * A sentence's shortlist is the union of the model's special units (its
 * pad, bos, eos and unk ids: 0 1 2 3 in attn's own vocabularies, </s> 0
 * and <unk> 1 in Marian's), the frequent ones and the
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

/* A shortlist's table, for a model of these vocabularies and special
 * units. */
struct sl_table {
	int src_vocab, tgt_vocab;
	int32_t special[4];	/* shortlist_specials */
	int nspecial;
	int nfreq, k;
	int32_t *freq;		/* [nfreq] frequent units */
	int32_t *trans;		/* [src_vocab, k], -1 past the last */
	/* Marian's rule (0 0: none; annex shortlist.pad, i32 [2]): each
	 * sentence's units filled up to a multiple of pad[0] with the
	 * smallest ids from pad[1] on that it lacks, while there are some
	 * (marian-dev src/data/shortlist.cpp:292-299, for intgemm's
	 * multiples of 8); they change the softmax's units, so a table
	 * imported from Marian keeps them to give Marian's scores. */
	int32_t pad[2];
};

/*
 * Model m's special units, which every shortlist holds and a table's
 * lists leave out: its pad, bos, eos and unk ids that are units of both
 * vocabularies (bos -1, the zero start vector, is none), each once, in
 * ascending order, into special; returns how many (at most 4).
 */
int shortlist_specials(const struct model *m, int32_t special[4]);

/*
 * A table for model m: freq [nfreq] and trans [src_vocab, k] (-1 past a
 * unit's last), copied after checking the ids against m's vocabularies;
 * nfreq may be 0, k is at least 1.  NULL with err_msg().
 */
struct sl_table *shortlist_table_new(const struct model *m,
				     const int32_t *freq, int nfreq,
				     const int32_t *trans, int k);
/*
 * m's table, from its file's annexes, checked as shortlist_table_new:
 * 0 with *t the table, or NULL when m has none; -1 with err_msg() when
 * the records are not a table for m.
 */
int shortlist_table_load(const struct model *m, struct sl_table **t);
/*
 * Writes t into the model file at path (the model's it was made for),
 * replacing the shortlist it had: every other record as it is,
 * atomically (model_file_set_annexes).  0, or -1 (err_msg()).
 */
int shortlist_table_save(const struct sl_table *t, const char *path);
/* t's annex records into rec (not copied: t's arrays), as a model file
 * holds them; returns how many (2, or 3 with pad). */
int shortlist_table_records(const struct sl_table *t, struct tensor rec[3]);
void shortlist_table_free(struct sl_table *t);

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
	/* a Marian int8 model's output (model_marian_pack_qb): its
	 * parameter, and B's multiplier for a tied one (else 0) */
	const struct param *mp;
	float mqb;
	int f32;		/* the rows W packed f32 whatever the pack
				   (model_marian_float_out) */
	float *logits;		/* [cap, U], or [cap, the most units] */
};

/*
 * The shortlists by table t of the n sentences of frames f (their
 * src.ids) for a decoder of model m of cap rows (cap / n a sentence)
 * whose output layer is W
 * [tgt_vocab, K] (a
 * parameter of m, or a table it holds) and bias b [tgt_vocab] (NULL:
 * none), packed as pack says (gemm_packed.h's WPACK_*; an int8
 * parameter's own rows and scales where W has them, as model_wpack).
 * NULL with err_msg() when t is not a table for m, a frame has no
 * src.ids, or out of memory.
 */
struct shortlist *shortlist_new(const struct model *m,
				const struct sl_table *t, struct frame **f,
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
