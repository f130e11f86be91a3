/*
 * lexicon.c: the shortlist's table by Dice's coefficient; see lexicon.h.
 *
 * Each pair's distinct target units are listed once; each source unit's
 * pairs are listed (postings); then, a source unit at a time, its
 * co-occurrence counts are summed into one array of the target
 * vocabulary, read for the units it touched, and cleared.
 */
#include <stdlib.h>
#include <string.h>
#include "base/errmsg.h"
#include "models/shortlist.h"
#include "lexicon.h"

struct unit {
	long n;
	int32_t id;
};

/* More occurrences first, then the lower id. */
static int by_count(const void *a, const void *b)
{
	const struct unit *x = a, *y = b;

	if (x->n != y->n)
		return x->n > y->n ? -1 : 1;
	return (x->id > y->id) - (x->id < y->id);
}

/* Marks special [n] in flag [V] (ids outside it have no effect). */
static void mark_special(char *flag, int V, const int32_t *special, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (special[i] >= 0 && special[i] < V)
			flag[special[i]] = 1;
}

/* The nfreq most frequent target units, not special (spec_t [Vt]). */
static int frequent(const struct corpus *c, int Vt, const char *spec_t,
		    int nfreq, int32_t *freq, int *nfound)
{
	struct unit *u = calloc(Vt, sizeof *u);
	int p, j, n = 0;

	if (!u)
		return -1;
	for (j = 0; j < Vt; j++)
		u[j].id = j;
	for (p = 0; p < c->n; p++)
		for (j = 0; j < c->tlen[p]; j++)
			u[c->tgt[c->toff[p] + j]].n++;
	qsort(u, Vt, sizeof *u, by_count);
	for (j = 0; j < Vt && n < nfreq; j++)
		if (!spec_t[u[j].id])
			freq[n++] = u[j].id;
	*nfound = n;
	for (; n < nfreq; n++)
		freq[n] = -1;
	free(u);
	return 0;
}

/* Every id of c below Vs (sources) and Vt (targets). */
static int check_ids(const struct corpus *c, int Vs, int Vt)
{
	int p, j;

	for (p = 0; p < c->n; p++) {
		for (j = 0; j < c->slen[p]; j++)
			if (c->src[c->soff[p] + j] < 0 ||
			    c->src[c->soff[p] + j] >= Vs)
				goto bad;
		for (j = 0; j < c->tlen[p]; j++)
			if (c->tgt[c->toff[p] + j] < 0 ||
			    c->tgt[c->toff[p] + j] >= Vt)
				goto bad;
	}
	return 0;
bad:
	err_set("shortlist: pair %d holds an id outside the vocabularies "
		"(%d source units, %d target)", p + 1, Vs, Vt);
	return -1;
}

/* The best k so far of one source unit: a short list kept in order. */
struct best {
	double dice;
	int cst;
	int32_t id;
};

static void keep(struct best *b, int *have, int k, double dice, int cst,
		 int32_t id)
{
	int i;

	if (*have == k && !(dice > b[k - 1].dice ||
			    (dice == b[k - 1].dice && (cst > b[k - 1].cst ||
			     (cst == b[k - 1].cst && id < b[k - 1].id)))))
		return;
	i = *have < k ? (*have)++ : k - 1;
	for (; i > 0 && (dice > b[i - 1].dice ||
			 (dice == b[i - 1].dice && (cst > b[i - 1].cst ||
			  (cst == b[i - 1].cst && id < b[i - 1].id)))); i--)
		b[i] = b[i - 1];
	b[i] = (struct best){ dice, cst, id };
}

int lexicon_learn(const struct corpus *c, int Vs, int Vt,
		  const int32_t *special, int nspecial, int nfreq, int k,
		  int32_t *freq, int *nfound, int32_t *trans, float *dice)
{
	char *spec_s = calloc(Vs, 1), *spec_t = calloc(Vt, 1);
	int *cs = calloc(Vs, sizeof *cs), *ct = calloc(Vt, sizeof *ct);
	int *seen_s = malloc(sizeof(int) * Vs), *seen_t = malloc(sizeof(int) *
								  Vt);
	int *cnt = calloc(Vt, sizeof *cnt), *touched = malloc(sizeof(int) *
								  Vt);
	size_t *poff = calloc((size_t)Vs + 1, sizeof *poff), *toff = NULL;
	int *post = NULL;
	int32_t *dt = NULL;
	struct best *b = malloc(sizeof *b * (k > 0 ? k : 1));
	size_t nd = 0, np = 0, i;
	int p, s, rc = -1;

	if (!spec_s || !spec_t || !cs || !ct || !seen_s || !seen_t || !cnt ||
	    !touched || !poff ||
	    !b || !(toff = malloc(sizeof *toff * ((size_t)c->n + 1))))
		goto oom;
	if (check_ids(c, Vs, Vt) < 0)
		goto out;
	mark_special(spec_s, Vs, special, nspecial);
	mark_special(spec_t, Vt, special, nspecial);
	if (frequent(c, Vt, spec_t, nfreq, freq, nfound) < 0)
		goto oom;
	memset(seen_s, -1, sizeof(int) * Vs);
	memset(seen_t, -1, sizeof(int) * Vt);
	/* c(s), c(t), and the room of the lists */
	for (p = 0; p < c->n; p++) {
		for (i = 0; i < (size_t)c->slen[p]; i++) {
			int32_t x = c->src[c->soff[p] + i];

			if (!spec_s[x] && seen_s[x] != p) {
				seen_s[x] = p;
				cs[x]++;
				np++;
			}
		}
		for (i = 0; i < (size_t)c->tlen[p]; i++) {
			int32_t y = c->tgt[c->toff[p] + i];

			if (!spec_t[y] && seen_t[y] != p) {
				seen_t[y] = p;
				ct[y]++;
				nd++;
			}
		}
	}
	post = malloc(sizeof *post * (np ? np : 1));
	dt = malloc(sizeof *dt * (nd ? nd : 1));
	if (!post || !dt)
		goto oom;
	for (s = 0; s < Vs; s++)
		poff[s + 1] = poff[s] + cs[s];
	/* the postings (poff[s] moves to the end of s's and back) and each
	 * pair's distinct target units */
	memset(seen_s, -1, sizeof(int) * Vs);
	memset(seen_t, -1, sizeof(int) * Vt);
	for (nd = 0, p = 0; p < c->n; p++) {
		for (i = 0; i < (size_t)c->slen[p]; i++) {
			int32_t x = c->src[c->soff[p] + i];

			if (!spec_s[x] && seen_s[x] != p) {
				seen_s[x] = p;
				post[poff[x]++] = p;
			}
		}
		toff[p] = nd;
		for (i = 0; i < (size_t)c->tlen[p]; i++) {
			int32_t y = c->tgt[c->toff[p] + i];

			if (!spec_t[y] && seen_t[y] != p) {
				seen_t[y] = p;
				dt[nd++] = y;
			}
		}
	}
	toff[c->n] = nd;
	for (s = 0; s < Vs; s++)
		poff[s] -= cs[s];
	for (s = 0; s < Vs; s++) {
		int nt = 0, have = 0, j;
		size_t e;

		for (e = poff[s]; e < poff[s] + cs[s]; e++)
			for (i = toff[post[e]]; i < toff[post[e] + 1]; i++)
				if (cnt[dt[i]]++ == 0)
					touched[nt++] = dt[i];
		for (j = 0; j < nt; j++) {
			int y = touched[j];

			keep(b, &have, k, 2.0 * cnt[y] / (cs[s] + ct[y]),
			     cnt[y], y);
			cnt[y] = 0;
		}
		for (j = 0; j < k; j++) {
			trans[(size_t)s * k + j] = j < have ? b[j].id : -1;
			if (dice)
				dice[(size_t)s * k + j] = j < have ?
					(float)b[j].dice : 0;
		}
	}
	rc = 0;
	goto out;
oom:
	err_set("out of memory for the shortlist's counts");
out:
	free(spec_s);
	free(spec_t);
	free(cs);
	free(ct);
	free(seen_s);
	free(seen_t);
	free(cnt);
	free(touched);
	free(poff);
	free(toff);
	free(post);
	free(dt);
	free(b);
	return rc;
}
