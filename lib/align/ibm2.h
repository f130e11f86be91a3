/*
 * ibm2.h: one direction of the word aligner, a reparameterised IBM Model
 * 2 (fast_align's; diagonal.h has its prior): each target word f_j of a
 * pair is aligned to one source word e_i or to the NULL word e_0, with
 *
 *	p(a_j = i, f_j | e) = prior(i | j, m, n) t(f_j | e_i);
 *
 * or, with hmm, the HMM model of hmm.h over the same table, the link
 * depending on the one before it through the jump widths.
 *
 * The lexical table t is sparse: the cells of source word e (0 the NULL
 * word, 1..ne the vocabulary's words) are row[e] .. row[e + 1], their
 * target words col[] increasing, their probabilities prob[].  A pair (e,
 * f) without a cell (never seen together, pruned, or a word of no
 * vocabulary) has t = WA_T_FLOOR.
 */
#ifndef ATTN_IBM2_H
#define ATTN_IBM2_H

#include <stdint.h>
#include "hmm.h"

/* Cells whose t fall below WA_T_MIN after training are dropped; those
 * missing have t = WA_T_FLOOR. */
#define WA_T_MIN   1e-7
#define WA_T_FLOOR 1e-7

struct wa_dir {
	int32_t ne, nf;		/* source and target words (ids from 1) */
	int64_t nnz;		/* cells */
	int64_t *row;		/* [ne + 2] */
	int32_t *col;		/* [nnz], 1..nf */
	float *prob;		/* [nnz] */
	int diagonal;		/* the diagonal prior; 0: IBM Model 1's */
	double tension, p0;	/* lambda and the NULL word's prior */
	int hmm;		/* the HMM model; 0: IBM Model 2's prior */
	double jump[WA_HMM_JUMPS];	/* with hmm: J, summing to 1 */
};

/* t(f | e): e from 0 (NULL) to ne, f from 1 to nf; any other e or f
 * (-1: unknown) has WA_T_FLOOR. */
double wa_dir_t(const struct wa_dir *d, int32_t e, int32_t f);

/*
 * The most probable alignment of target words f [m] to source words
 * e [n] (ids; -1 unknown): a[j] = i (from 0) for source word i, or -1 for
 * the NULL word; IBM Model 2 takes the first of equal links (the NULL
 * word before all), the HMM the Viterbi path (hmm.h).  w is scratch.
 * 0, or -1 (err_msg()) when out of memory.
 */
int wa_dir_align(const struct wa_dir *d, const int32_t *e, int n,
		 const int32_t *f, int m, int32_t *a, struct wa_hmm_work *w);

/*
 * The posteriors of the links of the same pair into post [m (n + 1)]:
 * target word j's of the NULL word at j (n + 1), of source word i (from
 * 1) at j (n + 1) + i.  0, or -1 (err_msg()) when out of memory.
 */
int wa_dir_posteriors(const struct wa_dir *d, const int32_t *e, int n,
		      const int32_t *f, int m, float *post,
		      struct wa_hmm_work *w);

/* Checks d's shape: rows from 0 to nnz, never decreasing; columns from 1
 * to nf, increasing in a row; probabilities in (0, 1]; tension and p0 in
 * range; with hmm, jump widths in (0, 1] summing to 1 (to 1e-6).  Reads
 * nothing outside row [ne + 2], col and prob [nnz].  0, or -1 with
 * err_msg() naming what is wrong and where: name[5] (may be NULL) the
 * names of params, rows, cols, probs and jumps in messages. */
int wa_dir_check(const struct wa_dir *d, const char *const name[5]);

void wa_dir_free(struct wa_dir *d);

#endif
