/*
 * search_rules.c: the options that rule candidates out, before a step's
 * selection, by giving them log-probability -inf: block_repeats, min_len,
 * empty_source and no_unk (search.h).
 */
#include <math.h>
#include "search_impl.h"

/*
 * Row r's last ids before step t, the latest first, into h [max]; returns
 * how many (fewer than max near the start).  Reads the steps back.
 */
static int history(const struct beam *b, int t, int r, int32_t *h, int max)
{
	int e = b->steps[t].row_ent[r], u, n = 0;

	for (u = t - 1; u >= 1 && e >= 0 && n < max; u--) {
		h[n++] = b->steps[u].tok[e];
		e = b->steps[u].row_ent[b->steps[u].row[e]];
	}
	return n;
}

/*
 * The option block_repeats = N: for each row and each phrase length k <= N,
 * the one id that would end the third saying of a phrase of k ids in a
 * row gets log-probability -inf.  With h the row's ids latest first, that
 * id is y = h[k-1] when y = h[2k-1] and h[j-1] = h[j+k-1] = h[j+2k-1] for
 * j = 1 .. k-1: the candidate and the 3k - 1 ids before it repeat with
 * period k.  At most N ids a row, so the search's choices stay the scan's.
 */
static void block_repeats(struct beam *b, int t, int nh)
{
	int N = b->o->block_repeats, r, k, j, n, p;
	int32_t h[3 * SEARCH_BLOCK_MAX];

	for (r = 0; r < nh; r++) {
		n = history(b, t, r, h, 3 * N - 1);
		for (k = 1; 3 * k - 1 <= n; k++) {
			for (j = 0; j < k; j++) {
				int32_t y = j ? h[j - 1] : h[k - 1];

				if (h[j + k - 1] != y || h[j + 2 * k - 1] != y)
					break;
			}
			if (j == k && (p = place(b->sl, b->cur.sent[r],
						  h[k - 1])) >= 0)
				b->logp[(size_t)r * b->V + p] = -INFINITY;
		}
	}
}

/*
 * The option min_len = N, at a step t <= N: </s> gets log-probability -inf
 * in every row of a sentence whose source has more than </s> alone, so
 * that its translation has at least N ids before </s>.  A model trained
 * on long sentences may put </s> first for a short unfamiliar one (the
 * Bible model gives "Hola." p(</s>) 0.30, more than any word): the
 * contract's search then prints an empty line.  An empty source (S = 1)
 * is left to the model, whose </s> gives it its empty line.
 */
static void no_early_end(struct beam *b, int nh)
{
	int r, s, p;

	for (r = 0; r < nh; r++) {
		s = b->cur.sent[r];
		if (b->slen[s] > 1 && (p = place(b->sl, s, b->m->eos_id)) >= 0)
			b->logp[(size_t)r * b->V + p] = -INFINITY;
	}
}

/*
 * The option empty_source, at the first step: every row of a sentence
 * whose source is </s> alone gets </s> with log-probability 0 and
 * nothing else, as Marian's beam search forces an empty line's entry to
 * </s> (src/translator/beam_search.cpp, emptyBatchEntries).
 */
static void empty_source(struct beam *b, int nh)
{
	const int32_t *ids;
	int r, s, p, n, y;

	for (r = 0; r < nh; r++) {
		s = b->cur.sent[r];
		if (b->slen[s] != 1 || (p = place(b->sl, s, b->m->eos_id)) < 0)
			continue;
		n = row_units(b, r, &ids);
		for (y = 0; y < n; y++)
			b->logp[(size_t)r * b->V + y] = -INFINITY;
		b->logp[(size_t)r * b->V + p] = 0;
	}
}

/* The option no_unk: the model's unk_id gets log-probability -inf in
 * every row (Marian's suppressWord, unless allow-unk). */
static void no_unk(struct beam *b, int nh)
{
	int r, p;

	for (r = 0; r < nh; r++)
		if ((p = place(b->sl, b->cur.sent[r], b->m->unk_id)) >= 0)
			b->logp[(size_t)r * b->V + p] = -INFINITY;
}

void beam_rules(struct beam *b, int t, int nh)
{
	if (b->o->block_repeats)
		block_repeats(b, t, nh);
	if (t <= b->o->min_len)
		no_early_end(b, nh);
	if (t == 1 && b->o->empty_source)
		empty_source(b, nh);
	if (b->o->no_unk)
		no_unk(b, nh);
}
