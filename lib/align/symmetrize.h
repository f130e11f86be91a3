/*
 * symmetrize.h: one alignment of a pair from the aligner's two
 * directions.  fwd [m]: the source word (from 0) of each target word, or
 * -1 (the forward direction aligns target words); rev [n]: the target
 * word of each source word, or -1.  The heuristics (Och and Ney 2003;
 * Koehn et al. 2003, as Moses' grow-diag-final-and):
 *
 * - forward, reverse: the one direction's links;
 * - intersect: the links both have; union: those of either;
 * - grow-diag-final-and: the intersection, grown: while any link is
 *   added, for each link (i, j) in order (i, then j, increasing), each
 *   neighbour (i', j') in the order (i-1, j), (i, j-1), (i+1, j),
 *   (i, j+1), (i-1, j-1), (i-1, j+1), (i+1, j-1), (i+1, j+1) that is in
 *   the union and whose i' or j' has no link yet is added at once; then
 *   ("final-and") each link of forward, then each of reverse, in order
 *   (i, then j), whose i and j both have no link yet is added;
 * - posterior: the links (i, j) whose two posteriors, p(a_j = i) of the
 *   forward direction and p(b_i = j) of the reverse, average at least a
 *   threshold in [0.5, 1] (Liang, Taskar and Klein 2006 decode so; with
 *   0.5 or more a word's links hold, summed, at least its share of one
 *   link, so a pair has at most n + m).
 */
#ifndef ATTN_SYMMETRIZE_H
#define ATTN_SYMMETRIZE_H

#include <stdint.h>

enum wa_sym {
	WA_SYM_FORWARD, WA_SYM_REVERSE, WA_SYM_INTERSECT, WA_SYM_UNION,
	WA_SYM_GDFA, WA_SYM_POSTERIOR,
};

/* The heuristic named ("forward", "reverse", "intersect", "union",
 * "grow-diag-final-and", "posterior"), or -1. */
int wa_sym_parse(const char *name);
const char *wa_sym_name(int sym);

/*
 * The links of heuristic sym as pairs (i, j) in ij [2 k] (room for
 * n + m pairs), sorted by i, then j; returns k.  grid [(n + 1) (m + 1)]
 * is scratch.
 */
int wa_symmetrize(int sym, const int32_t *fwd, int m, const int32_t *rev,
		  int n, unsigned char *grid, int32_t *ij);

/*
 * The posterior heuristic's links, as wa_symmetrize gives them: fwd
 * [m (n + 1)] the forward posteriors, target word j's of source word i
 * at j (n + 1) + i + 1 (NULL's at j (n + 1)); rev [n (m + 1)] the
 * reverse ones, laid out the other way round.
 */
int wa_symmetrize_posterior(const float *fwd, int m, const float *rev,
			    int n, double threshold, int32_t *ij);

#endif
