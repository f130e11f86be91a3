/*
 * search_select.c: the selection of a step's candidates, a sentence's
 * best among its rows; once enough are held, the units that cannot beat
 * the worst of them are skipped in bulk.
 */
#include <math.h>
#include "search_impl.h"

/*
 * A log-probability below which no unit of a row with score base can
 * beat a candidate scored worst: lower than worst - base by more than
 * the rounding of either (in float, and of base + lp in double), so that
 * the exact test decides every unit that might pass.  NaN, which no unit
 * passes, where no unit can (worst NaN, or base -inf), as the exact test
 * finds: the arithmetic gives it.
 */
static float floor_to_beat(double worst, double base)
{
	return nextafterf((float)(worst - base -
				  1e-9 * (fabs(worst) + fabs(base))),
			  -INFINITY);
}

/* The first of lp [y .. n-1] above t (n if none): sixteen compares a
 * round, which the compiler makes vector ones, instead of a candidate
 * test per unit; most units of a beam's rows cannot pass. */
static int next_above(const float *lp, int y, int n, float t)
{
	for (; y + 16 <= n; y += 16) {
		int any = 0;

		for (int i = 0; i < 16; i++)
			any |= lp[y + i] > t;
		if (any)
			break;
	}
	while (y < n && !(lp[y] > t))
		y++;
	return y;
}

/*
 * The best `need` candidates of rows lo .. hi-1 into c [need], best first:
 * by score, then the earlier row, then the lower id (the scan order, so a
 * later candidate only passes an earlier one with a strictly higher score).
 * Once need are held, the units that cannot beat the worst are skipped in
 * bulk (next_above); the others take the exact test.
 */
static int select_top(const struct beam *b, int lo, int hi, int need,
		      struct cand *c)
{
	int r, y, i, have = 0;

	if (need == 1 && hi - lo == 1 && beam_select_best(b, lo, c))
		return 1;
	for (r = lo; r < hi; r++) {
		const float *lp = b->logp + (size_t)r * b->V;
		const int32_t *ids;
		double base = b->cur.score[r];
		int n = row_units(b, r, &ids);

		for (y = 0; y < n; y++) {
			double sc;

			if (have == need) {
				y = next_above(lp, y, n, floor_to_beat(
					c[have - 1].score, base));
				if (y == n)
					break;
			}
			sc = base + lp[y];
			if (have == need && !(sc > c[have - 1].score))
				continue;
			i = have < need ? have++ : have - 1;
			for (; i > 0 && sc > c[i - 1].score; i--)
				c[i] = c[i - 1];
			c[i].score = sc;
			c[i].row = r;
			c[i].tok = ids ? ids[y] : y;
		}
	}
	return have;
}

/* The candidates of the groups (sentences) lo .. hi-1 of a step. */
void beam_select_groups(void *ctx, int64_t lo, int64_t hi)
{
	struct beam *b = ctx;

	for (int64_t g = lo; g < hi; g++) {
		int s = b->cur.sent[b->glo[g]];

		b->got[g] = select_top(b, b->glo[g], b->ghi[g],
				       b->k - b->nfin[s], b->cand + g * b->k);
	}
}
