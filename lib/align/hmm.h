/*
 * hmm.h: the HMM alignment model (Vogel, Ney and Tillmann 1996), with
 * the NULL word of Och and Ney (2003), for one direction of the word
 * aligner: target word j of m is aligned to source word a_j of n (from
 * 1) or to the NULL word (0), and a link depends on the one before it:
 *
 *	p(a_j = i | memory k) = (1 - p0) J(i - k) / Z(k),
 *	p(a_j = NULL | memory k) = p0,
 *	Z(k) = sum over i = 1..n of J(i - k),
 *
 * where the memory k is the source position of the last target word
 * before j not aligned to NULL (0 before the first), and after a NULL
 * link the memory stays.  J, the jump widths, is a table over
 * d = i - k clamped to [-WA_HMM_REACH, WA_HMM_REACH]: jumps further than
 * the reach share the end cells.  Emissions are the lexical table's
 * t(f_j | e_i) (ibm2.h), t(f_j | NULL) for NULL.
 *
 * The states of step j are the memories k = 0..n, reached through a word
 * (W_k, k >= 1) or through NULL (N_k): every sum over the previous step
 * is over n + 1 memories, and the clamped ends are prefix sums, so a
 * pair costs O(m n WA_HMM_REACH).
 */
#ifndef ATTN_HMM_H
#define ATTN_HMM_H

#include <stddef.h>
#include <stdint.h>

#define WA_HMM_REACH 7
#define WA_HMM_JUMPS (2 * WA_HMM_REACH + 1)
#define WA_HMM_JUMP_FLOOR 1e-3

/* The cell of jump d in a table of WA_HMM_JUMPS. */
static inline int wa_hmm_cell(int d)
{
	return d < -WA_HMM_REACH ? 0 :
	       d > WA_HMM_REACH ? 2 * WA_HMM_REACH : d + WA_HMM_REACH;
}

/* Scratch that grows as the pairs do; zero it before the first use. */
struct wa_hmm_work {
	double *d, *e;
	size_t dcap, ecap;
	int32_t *i;
	size_t icap;
};

/* Room for n doubles of the caller's (the emissions, say), kept apart
 * from what the functions below use: NULL (err_msg()) when out of
 * memory. */
double *wa_hmm_room(struct wa_hmm_work *w, size_t n);
void wa_hmm_work_free(struct wa_hmm_work *w);

/*
 * Forward-backward over one pair: emis [m (n + 1)] holds t(f_j | NULL) at
 * j (n + 1) and t(f_j | e_i) at j (n + 1) + i, all > 0.  Writes post
 * [m (n + 1)] in the same layout, the posteriors of the links (NULL's
 * summed over the memories), adds into jumps [WA_HMM_JUMPS] the expected
 * count of each jump cell's transitions to a word (those from the memory
 * before the first word included) and into from [n + 1] the expected
 * count of those from each memory (either may be NULL: not counted),
 * and sets *log_lik to ln p(f | e).  0, or -1 (err_msg()) when out of
 * memory.
 */
int wa_hmm_posteriors(const double *jump, double p0, int n, int m,
		      const double *emis, float *post, double *jumps,
		      double *from, double *log_lik, struct wa_hmm_work *w);

/*
 * The M-step of J: the widths that maximise the expected log-likelihood
 * of the transitions,
 *
 *	sum over d of c(d) ln J(d) - sum over (n, k) of N(n, k) ln Z(k),
 *
 * c [WA_HMM_JUMPS] the cells' counts, N(n, k) the transitions from
 * memory k in pairs of n source words: from [nn (n + 1) ...] for the
 * lengths len [nn], each length's n + 1 in turn.  Counting and
 * normalising c would be wrong for the clamped ends, whose J serves each
 * far position alone; the maximum instead satisfies
 *
 *	J(d) = c(d) / sum over (n, k) of N(n, k) n_k(d) / Z(k),
 *
 * n_k(d) the positions of cell d from memory k, iterated from jump (in
 * place, normalised to sum 1 each round; a cell no pair can reach keeps
 * its width).  Then a share WA_HMM_JUMP_FLOOR of the uniform is mixed
 * in, so that no width is 0.
 */
void wa_hmm_jump_m_step(double *jump, const double *c, const int32_t *len,
			int nn, const double *from);

/*
 * The most probable alignment (Viterbi) of the same pair into a [m]:
 * a[j] = i - 1 for source word i, -1 for NULL; of equal paths, the one
 * whose last steps come from the lowest memories, a word before NULL.
 * 0, or -1 (err_msg()) when out of memory.
 */
int wa_hmm_viterbi(const double *jump, double p0, int n, int m,
		   const double *emis, int32_t *a, struct wa_hmm_work *w);

#endif
