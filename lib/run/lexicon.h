/*
 * lexicon.h: a vocabulary shortlist's table (models/shortlist.h) learned
 * from sentence pairs, for train-step --shortlist.
 *
 * The statistic is Dice's coefficient of co-occurrence in a pair,
 *
 *	dice(s, t) = 2 c(s, t) / (c(s) + c(t)),
 *
 * c(s) the pairs whose source holds unit s, c(t) those whose target holds
 * unit t, c(s, t) those that hold both (a pair counts once however often
 * a unit occurs in it).  It is 1 for units that always come together and
 * falls as either occurs without the other, so a frequent target unit
 * does not become every source unit's translation (as it would by
 * co-occurrence counts or p(t | s) alone), nor a pair seen once a sure
 * one (as by PMI); the frequent units are in every shortlist anyway.  One
 * pass, in time linear in the pairs' co-occurrences (sum over the pairs
 * of distinct source units times distinct target units), where a few
 * iterations of IBM model 1 would cost as much each and a table of
 * p(t | s) for every co-occurring (s, t).
 *
 * Unit s's translations: the k target units of the highest dice with it
 * (ties: the higher c(s, t), then the lower id), of those that occur with
 * it at least once; -1 fills the rest.  The frequent units: the nfreq
 * target units of most occurrences (ties: the lower id; units never seen
 * come last, so that nfreq = Vt makes a shortlist of every unit, the full
 * softmax's).  The model's special units (shortlist_specials) are left
 * out of both, on either side: every shortlist has them.
 */
#ifndef ATTN_LEXICON_H
#define ATTN_LEXICON_H

#include <stdint.h>
#include "train.h"

/*
 * The table of c's pairs, ids below Vs and Vt, special [nspecial] the
 * units left out (shortlist_specials): freq [nfreq] (*nfound gets
 * how many units it holds, fewer than nfreq only when the vocabulary has
 * fewer units that are not special; -1 fills the rest),
 * trans [Vs, k], and when dice is not NULL their coefficients into dice
 * [Vs, k] (0 where trans is -1).  0, or -1 with err_msg().
 */
int lexicon_learn(const struct corpus *c, int Vs, int Vt,
		  const int32_t *special, int nspecial, int nfreq, int k,
		  int32_t *freq, int *nfound, int32_t *trans, float *dice);

#endif
