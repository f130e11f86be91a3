/*
 * search_greedy.c: the step of greedy search, a row's one best candidate,
 * found without the candidate tests of select_top (search_select.c).
 */
#include <math.h>
#include "search_impl.h"

/* The largest of lp [n] that is not NaN (-inf when none). */
static float row_max(const float *lp, int n)
{
	float m[8] = { -INFINITY, -INFINITY, -INFINITY, -INFINITY,
		       -INFINITY, -INFINITY, -INFINITY, -INFINITY };
	int y = 0, i;

	/* eight independent maxima, not one chain of compares */
	for (; y + 8 <= n; y += 8)
		for (i = 0; i < 8; i++)
			m[i] = lp[y + i] > m[i] ? lp[y + i] : m[i];
	for (; y < n; y++)
		m[0] = lp[y] > m[0] ? lp[y] : m[0];
	for (i = 1; i < 8; i++)
		m[0] = m[i] > m[0] ? m[i] : m[0];
	return m[0];
}

/*
 * select_top for one row r and need 1, the step of greedy search: the
 * scan's choice, the first id with the highest score, found from the
 * row's largest log-probability (base + lp is monotonic in lp) and then
 * the first id that reaches it.  0 when the scan must decide (a NaN
 * first, or no id reaching it).
 */
int beam_select_best(const struct beam *b, int r, struct cand *c)
{
	const float *lp = b->logp + (size_t)r * b->V;
	const int32_t *ids;
	double base = b->cur.score[r], best;
	int n = row_units(b, r, &ids), y;

	if (isnan(base + lp[0]))
		return 0;
	best = base + row_max(lp, n);
	for (y = 0; y < n; y++)
		if (base + lp[y] == best) {
			c[0].score = best;
			c[0].row = r;
			c[0].tok = ids ? ids[y] : y;
			return 1;
		}
	return 0;
}
