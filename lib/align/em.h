/*
 * em.h: training one direction of the word aligner (ibm2.h) by EM, as
 * fast_align does (Dyer, Chahuneau and Smith 2013).
 *
 * The lexical table starts uniform over the pairs of words that share a
 * sentence pair (t(f | e) = 1 / nf for every such cell, the NULL word's
 * with every target word).  Each iteration:
 *
 * - E-step: for every target word j of every pair, the posterior of each
 *   link, q(i | j) = prior(i | j) t(f_j | e_i) / sum over i' (NULL
 *   included);
 * - M-step: with c(e, f) the sum of the posteriors of the links of e to
 *   f, t(f | e) = c(e, f) / sum over f' of c(e, f'); or, with alpha > 0
 *   (variational Bayes under a symmetric Dirichlet prior of alpha on each
 *   t(. | e)), t(f | e) = exp(psi(c(e, f) + alpha) - psi(sum over f' of
 *   (c(e, f') + alpha))), the sum over e's cells;
 * - and with optimize (and the diagonal prior), the tension lambda that
 *   maximises the expected log-likelihood of the links: the root of
 *
 *	sum over target words of [ sum over i >= 1 of q(i | j) h(i, j)
 *	    - (1 - q(0 | j)) d log Z(j, m, n, lambda) / d lambda ],
 *
 *   which falls as lambda grows, by bisection in [WA_TENSION_MIN,
 *   WA_TENSION_MAX].  p0 stays as given.
 *
 * Then, with hmm_iterations, the HMM model (hmm.h) from that table: the
 * E-step's posteriors are forward-backward's, and with them the expected
 * count of each jump cell's transitions and of those from each memory;
 * the M-step sets t as above and J by wa_hmm_jump_m_step, the jumps
 * starting uniform.  p0 stays as given.
 *
 * Pairs with an empty side take no part.  The E-step runs on the kernels'
 * thread pool, a pair at a time into its own slots, and the counts are
 * summed pair by pair in corpus order: the result is the same for any
 * number of threads.  After the last iteration the cells below WA_T_MIN
 * are dropped and t is stored as float.
 */
#ifndef ATTN_EM_H
#define ATTN_EM_H

#include "bitext.h"
#include "ibm2.h"

#define WA_TENSION_MIN 0.1
#define WA_TENSION_MAX 50.0

struct wa_em_opts {
	int iterations;		/* EM iterations (fast_align: 5) */
	int diagonal;		/* the diagonal prior; 0: IBM Model 1 */
	int optimize;		/* re-estimate the tension each iteration */
	double tension;		/* lambda to start from (fast_align: 4) */
	double p0;		/* the NULL word's prior (fast_align: 0.08) */
	double alpha;		/* the Dirichlet prior; 0: plain EM */
	int hmm_iterations;	/* HMM iterations after those; 0: none */
};

/* What an iteration's E-step found and the tension after its M-step. */
struct wa_em_report {
	int iteration;		/* from 1, in each model */
	int hmm;		/* an iteration of the HMM model */
	double log_lik;		/* sum of ln p(f_j | e) over target words */
	int64_t words;		/* target words of the pairs */
	double tension;
};

/*
 * Trains d (its old contents ignored; free it with wa_dir_free) on b, the
 * source side 0 and the target side 1, or the other way round with
 * reverse; ne and nf are the source and target vocabularies' sizes, every
 * id of b within them (no -1).  progress (may be NULL) is called after
 * each iteration.  0, or -1 (err_msg()) when out of memory or when the
 * table would pass INT32_MAX cells.
 */
int wa_em_train(struct wa_dir *d, const struct wa_bitext *b, int reverse,
		int32_t ne, int32_t nf, const struct wa_em_opts *o,
		void (*progress)(void *ctx, const struct wa_em_report *r),
		void *ctx);

/* For the tests: with 1, wa_em_train builds its table as it does when a
 * key and a slot's number do not fit in 64 bits (em.c): the keys sorted
 * alone, then a search for each slot's cell; 0, the default, undoes it.
 * The tables are the same, bit for bit. */
void wa_em_set_unpacked(int on);

/* The digamma function psi(x), x > 0, to about 1e-12 relative. */
double wa_digamma(double x);

#endif
