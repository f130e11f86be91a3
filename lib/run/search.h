/*
 * search.h: decoding with a model's step-wise decoder (struct arch's dec_*
 * operations), exactly as doc/MODELS.md "Decoding" defines it: beam search in
 * the RNNsearch authors' manner, which with k = 1 is greedy decoding; and
 * forced decoding of given target ids, for score and the dev loss.
 *
 * Sentences are decoded together (all their beams in one dec_step) and the
 * result of each depends only on its own frame, never on the others; with
 * more than one kernel thread, search deals the sentences out to them, a
 * search each, and search_batches deals out whole batches (search_deal.c).
 */
#ifndef ATTN_SEARCH_H
#define ATTN_SEARCH_H

#include <stdint.h>
#include "models/model.h"

/* The longest phrase block_repeats may name. */
#define SEARCH_BLOCK_MAX 64
/* The largest min_len. */
#define SEARCH_MIN_LEN_MAX 1000

struct search_opts {
	int k;			/* beam size; 1 is greedy */
	double alpha;		/* length penalty ((5 + len) / 6)^alpha */
	int lp_power;		/* the penalty len^alpha instead (Marian's
				   --normalize) */
	double len_a, len_b;	/* at most a S + b target ids (</s> too) */
	int nbest;		/* hypotheses returned per sentence, <= k */
	int want_attw;		/* keep the attention weights */
	int block_repeats;	/* 0, or N: no phrase of 1 .. N ids said
				   three times in a row (a candidate that
				   would make one is not taken) */
	int no_unk;		/* the model's unk_id is never chosen
				   (Marian's default, without allow-unk) */
	int len_ceil;		/* at most ceil(a S + b) target ids, not
				   floor (Marian's max-length-factor) */
	int min_len;		/* 0, or N: a sentence whose source has
				   more than </s> alone does not end (</s>)
				   before N other target ids (the maximum
				   length still ends it) */
	double word_penalty;	/* a finished hypothesis' score less this
				   times its length, before the length
				   penalty (Marian's --word-penalty) */
	int empty_source;	/* a source of </s> alone (an empty line)
				   translates to </s> at once, score 0
				   (Marian's rule) */
	struct dec_opts dec;	/* how the decoder computes (arch.h) */
};

/* The defaults of doc/MODELS.md: k 1, alpha 0, 2 S + 10, one best, no
 * phrase blocked; and one rule outside the contract, min_len 1: a
 * non-empty source never gets an empty translation.  min_len 0 is the
 * contract's search exactly. */
void search_opts_default(struct search_opts *o);

/* A hypothesis: its ids (</s> included when reached) and scores. */
struct hyp {
	int32_t *ids;
	int len;
	double score;		/* the sum of the log-probabilities */
	double norm;		/* score / lp */
	int L, H, S;		/* attention planes L x H, source length */
	float *attw;		/* [L * H, len, S] when asked, else NULL */
};

/* A sentence's hypotheses, best first. */
struct search_result {
	int n;
	struct hyp *hyp;
};

/*
 * Decodes the n frames (holding the decoder's memory, from attend) into
 * res[0 .. n-1].  Returns 0, or -1 with err_msg().
 */
int search(const struct model *m, struct frame **f, int n,
	   const struct search_opts *o, struct search_result *res);
/*
 * As search, for nb batches at once: batch b is f [start[b]] to
 * f [start[b + 1] - 1], start[0] = 0, its results at the same places of
 * res.  With more than one kernel thread, the threads take the batches
 * whole, the last first (a window sorted by length: the longest).
 */
int search_batches(const struct model *m, struct frame **f, const int *start,
		   int nb, const struct search_opts *o,
		   struct search_result *res);
void search_result_free(struct search_result *r);

/*
 * Forced decoding: the log-probability of the i32 ids of record `name` in
 * each frame (tgt.ids, or hyp.ids), given its memory.  out[i] gets the
 * ids, the sum of their log-probabilities (norm = score / len) and, when
 * want_attw, the attention weights.
 */
int search_force(const struct model *m, const struct dec_opts *dec,
		 struct frame **f, int n, const char *name, int want_attw,
		 struct hyp *out);
/* search_force for nb batches at once, as search_batches. */
int search_force_batches(const struct model *m, const struct dec_opts *dec,
			 struct frame **f, const int *start, int nb,
			 const char *name, int want_attw, struct hyp *out);
void hyp_free(struct hyp *h);

/* The maximum target length for a source of S ids: floor(a S + b), or
 * with len_ceil ceil(a S + b); at least 1. */
int search_max_len(const struct search_opts *o, int S);

/*
 * The decoding settings that a model file names, as an import from
 * Marian keeps how Marian would decode it (doc/MODELS.md: dec_beam_size,
 * dec_normalize, dec_word_penalty, dec_max_length_factor, dec_allow_unk,
 * dec_min_len, dec_empty_source), into o: the beam size (when beam), the
 * length penalty len^normalize and the word penalty (when beam), at most
 * factor * S target ids, rounded up as Marian does (its search stops
 * once the history holds factor * S steps), the minimum length and the
 * empty source's rule; but none of those the user gave (given:
 * SEARCH_GIVEN_*).  dec_allow_unk=0 sets no_unk: Marian's search never
 * chooses <unk>.  A model without them leaves o as it is.  0, or -1
 * with err_msg() naming a bad value.
 */
enum { SEARCH_GIVEN_K = 1, SEARCH_GIVEN_ALPHA = 2, SEARCH_GIVEN_LEN = 4,
       SEARCH_GIVEN_MIN_LEN = 8 };
int search_opts_model(struct search_opts *o, const struct model *m,
		      unsigned given, int beam);

#endif
