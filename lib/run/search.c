/*
 * search.c: beam search (greedy with k = 1) and forced decoding over the
 * dec_* operations of an architecture; see search.h and doc/MODELS.md.
 *
 * The decoder's rows are the live hypotheses of all sentences, a
 * sentence's rows next to each other and in rank order.  Every step keeps
 * the candidates it selects (token, the row it extends) and, per row, the
 * candidate of the step before that the row continues, so a finished
 * hypothesis is read back from its last candidate.
 *
 * With a shortlist (shortlist.h), row r's log-probabilities are those of
 * its sentence's units only, in ascending order of id: the scans run
 * over them and map their places back to ids, so the order of the scan,
 * and with it every choice, is that of the full vocabulary's.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/errmsg.h"
#include "kernels/kernels.h"
#include "models/shortlist.h"
#include "search.h"


/* Scores a thread's chunk of the selection takes, at least: below, a
 * second thread's wake-up costs more than it saves. */
#define SELECT_WORK 32768

void search_opts_default(struct search_opts *o)
{
	memset(o, 0, sizeof *o);
	o->k = 1;
	o->alpha = 0;
	o->len_a = 2;
	o->len_b = 10;
	o->nbest = 1;
	o->min_len = 1;
}

int search_max_len(const struct search_opts *o, int S)
{
	double x = o->len_a * S + o->len_b;
	double n = o->len_ceil ? ceil(x) : floor(x);

	if (!(n >= 1))
		return 1;
	return n > 100000 ? 100000 : (int)n;
}

/* Config key of m as a number in [lo, hi] into *v: 1, 0 when absent,
 * -1 with err_msg() when not such a number. */
static int model_number(const struct model *m, const char *key, double lo,
			double hi, double *v)
{
	if (!config_get(&m->cfg, key))
		return 0;
	if (config_double(&m->cfg, key, v) < 0)
		return -1;
	if (!(*v >= lo && *v <= hi)) {
		err_set("model.config: %s=%g is not from %g to %g", key, *v,
			lo, hi);
		return -1;
	}
	return 1;
}

int search_opts_model(struct search_opts *o, const struct model *m,
		      unsigned given, int beam)
{
	double k, norm, factor, allow, wp, minl, empty;
	int rk, rn, rf, ru, rw, rm, re;

	if ((rk = model_number(m, "dec_beam_size", 1, 1000, &k)) < 0 ||
	    (rn = model_number(m, "dec_normalize", 0, 100, &norm)) < 0 ||
	    (rf = model_number(m, "dec_max_length_factor", 0, 1000,
			       &factor)) < 0 ||
	    (ru = model_number(m, "dec_allow_unk", 0, 1, &allow)) < 0 ||
	    (rw = model_number(m, "dec_word_penalty", -1e6, 1e6, &wp)) < 0 ||
	    (rm = model_number(m, "dec_min_len", 0, SEARCH_MIN_LEN_MAX,
			       &minl)) < 0 ||
	    (re = model_number(m, "dec_empty_source", 0, 1, &empty)) < 0)
		return -1;
	if ((rm && minl != floor(minl)) || (re && empty != floor(empty))) {
		err_set("model.config: dec_min_len=%g, dec_empty_source=%g: "
			"integers", minl, empty);
		return -1;
	}
	if (rm && !(given & SEARCH_GIVEN_MIN_LEN))
		o->min_len = (int)minl;
	if (re)
		o->empty_source = empty == 1;
	if (beam && rw && !(given & SEARCH_GIVEN_ALPHA))
		o->word_penalty = wp;
	if (ru && allow == 0 && m->unk_id >= 0)
		o->no_unk = 1;
	if (rk && k != floor(k)) {
		err_set("model.config: dec_beam_size=%g is not an integer", k);
		return -1;
	}
	if (beam && rk && !(given & SEARCH_GIVEN_K))
		o->k = (int)k;
	if (beam && rn && !(given & SEARCH_GIVEN_ALPHA)) {
		o->alpha = norm;
		o->lp_power = 1;
	}
	if (rf && !(given & SEARCH_GIVEN_LEN)) {
		o->len_a = factor;
		o->len_b = 0;
		o->len_ceil = 1;
	}
	return 0;
}

void hyp_free(struct hyp *h)
{
	free(h->ids);
	free(h->attw);
	memset(h, 0, sizeof *h);
}

void search_result_free(struct search_result *r)
{
	int i;

	for (i = 0; i < r->n; i++)
		hyp_free(&r->hyp[i]);
	free(r->hyp);
	memset(r, 0, sizeof *r);
}

/* One step of the search, kept for reading hypotheses back. */
struct step {
	int nrow;
	int *row_ent;		/* [nrow] the entry of the step before */
	float *att;		/* [nrow, P, smax], or NULL */
	int nent;
	int32_t *tok;		/* [nent] the selected candidates */
	int *row;		/* [nent] the rows they extend */
};

struct fin {
	int t, e;		/* the last candidate: step and entry */
	double score, norm;
};

struct cand {
	double score;
	int row;
	int32_t tok;
};

/* The live hypotheses: the decoder's rows. */
struct rows {
	int *sent, *ent;
	int32_t *prev;
	double *score;
	int *parent;
};

struct beam {
	const struct model *m;
	const struct search_opts *o;
	struct decoder *d;
	int n, k, V, L, H, P, smax, tmax, cap;
	int *slen, *maxlen, *nfin;
	struct fin *fin;	/* [n, k] */
	struct step *steps;	/* [tmax + 1], from 1 */
	struct rows cur, next;
	float *logp, *attw;
	struct cand *cand;	/* [n, k]: a sentence's group's, best first */
	int *glo, *ghi, *got;	/* [n]: the groups of a step, their rows */
	const struct shortlist *sl;	/* the decoder's, or NULL */
};

/* Row r's units: how many (*ids NULL: 0 .. V-1) and which (*ids). */
static int row_units(const struct beam *b, int r, const int32_t **ids)
{
	int s;

	if (!b->sl) {
		*ids = NULL;
		return b->V;
	}
	s = b->cur.sent[r];
	*ids = b->sl->ids + b->sl->off[s];
	return b->sl->off[s + 1] - b->sl->off[s];
}

static int rows_alloc(struct rows *r, int cap)
{
	r->sent = malloc(cap * sizeof *r->sent);
	r->ent = malloc(cap * sizeof *r->ent);
	r->prev = malloc(cap * sizeof *r->prev);
	r->score = malloc(cap * sizeof *r->score);
	r->parent = malloc(cap * sizeof *r->parent);
	return r->sent && r->ent && r->prev && r->score && r->parent ? 0 : -1;
}

static void rows_free(struct rows *r)
{
	free(r->sent);
	free(r->ent);
	free(r->prev);
	free(r->score);
	free(r->parent);
}

/* GNMT's ((5 + len) / 6)^alpha, or with lp_power Marian's len^alpha. */
static double length_penalty(const struct search_opts *o, int len)
{
	if (o->alpha == 0)
		return 1.0;
	return o->lp_power ? pow(len, o->alpha) :
			     pow((5.0 + len) / 6.0, o->alpha);
}

static void finish(struct beam *b, int s, int t, int e, double score)
{
	struct fin *f = &b->fin[s * b->k + b->nfin[s]++];

	f->t = t;
	f->e = e;
	f->score = score;
	f->norm = (score - b->o->word_penalty * t) / length_penalty(b->o, t);
}

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
static int select_best(const struct beam *b, int r, struct cand *c)
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

	if (need == 1 && hi - lo == 1 && select_best(b, lo, c))
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

/* Keeps step t's inputs for reading back, and runs the decoder. */
static int beam_step(struct beam *b, int t, int nh)
{
	struct step *st = &b->steps[t];
	size_t natt = (size_t)nh * b->P * b->smax;

	st->nrow = nh;
	st->row_ent = malloc(nh * sizeof *st->row_ent);
	/* each sentence takes at most k candidates: cap = n k entries (not
	 * nh k, which is k times more and overflows an int) */
	st->tok = malloc((size_t)b->cap * sizeof *st->tok);
	st->row = malloc((size_t)b->cap * sizeof *st->row);
	st->att = b->attw ? malloc((natt ? natt : 1) * sizeof(float)) : NULL;
	if (!st->row_ent || !st->tok || !st->row || (b->attw && !st->att)) {
		err_set("out of memory in the search");
		return -1;
	}
	memcpy(st->row_ent, b->cur.ent, nh * sizeof *st->row_ent);
	if (b->m->arch->dec_step(b->d, nh, b->cur.prev, b->logp, b->attw) < 0)
		return -1;
	if (b->attw)
		memcpy(st->att, b->attw, natt * sizeof(float));
	return 0;
}

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

/* The place of unit id among sentence s's log-probabilities (sl NULL:
 * the id itself), or -1 when it has none. */
static int place(const struct shortlist *sl, int s, int32_t id)
{
	return sl ? shortlist_find(sl, s, id) : id;
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

/* The candidates of the groups (sentences) lo .. hi-1 of a step. */
static void select_groups(void *ctx, int64_t lo, int64_t hi)
{
	struct beam *b = ctx;

	for (int64_t g = lo; g < hi; g++) {
		int s = b->cur.sent[b->glo[g]];

		b->got[g] = select_top(b, b->glo[g], b->ghi[g],
				       b->k - b->nfin[s], b->cand + g * b->k);
	}
}

/*
 * Selects every sentence's candidates of step t; returns the new rows.
 * The sentences' selections are independent: they run on the threads,
 * the bookkeeping after them in order.
 */
static int beam_select(struct beam *b, int t, int nh)
{
	struct step *st = &b->steps[t];
	struct rows *nx = &b->next;
	int r = 0, nn = 0, ng = 0, g, i;

	st->nent = 0;
	if (b->o->block_repeats)
		block_repeats(b, t, nh);
	if (t <= b->o->min_len)
		no_early_end(b, nh);
	if (t == 1 && b->o->empty_source)
		empty_source(b, nh);
	if (b->o->no_unk)
		no_unk(b, nh);
	while (r < nh) {
		int hi = r;

		while (hi < nh && b->cur.sent[hi] == b->cur.sent[r])
			hi++;
		b->glo[ng] = r;
		b->ghi[ng++] = hi;
		r = hi;
	}
	/* about SELECT_WORK scores a chunk */
	kern_parallel_for(ng, 1 + SELECT_WORK / ((int64_t)nh / ng * b->V),
			  select_groups, b);
	for (g = 0; g < ng; g++) {
		int s = b->cur.sent[b->glo[g]], first = nn, got = b->got[g];

		for (i = 0; i < got; i++) {
			const struct cand *c = &b->cand[g * b->k + i];
			int e = st->nent++;

			st->tok[e] = c->tok;
			st->row[e] = c->row;
			if (c->tok == b->m->eos_id) {
				finish(b, s, t, e, c->score);
				continue;
			}
			nx->sent[nn] = s;
			nx->ent[nn] = e;
			nx->prev[nn] = c->tok;
			nx->score[nn] = c->score;
			nx->parent[nn] = c->row;
			nn++;
		}
		if (t >= b->maxlen[s]) {	/* live ones count as finished */
			for (i = first; i < nn; i++)
				finish(b, s, t, nx->ent[i], nx->score[i]);
			nn = first;
		}
	}
	return nn;
}

/* Reads finished hypothesis f of sentence s back into h. */
static int read_back(const struct beam *b, int s, const struct fin *f,
		     struct hyp *h)
{
	int len = f->t, S = b->slen[s], e = f->e, t, p;

	memset(h, 0, sizeof *h);
	h->len = len;
	h->score = f->score;
	h->norm = f->norm;
	h->L = b->L;
	h->H = b->H;
	h->S = S;
	h->ids = malloc(len * sizeof *h->ids);
	if (b->attw)
		h->attw = malloc(((size_t)b->P * len * S + 1) * sizeof(float));
	if (!h->ids || (b->attw && !h->attw)) {
		err_set("out of memory in the search");
		return -1;
	}
	for (t = len; t >= 1; t--) {
		const struct step *st = &b->steps[t];
		int r = st->row[e];

		h->ids[t - 1] = st->tok[e];
		for (p = 0; b->attw && p < b->P; p++)
			memcpy(h->attw + ((size_t)p * len + t - 1) * S,
			       st->att + ((size_t)r * b->P + p) * b->smax,
			       S * sizeof(float));
		e = st->row_ent[r];
	}
	return 0;
}

/* Sentence s's finished hypotheses, by normalised score (ties: the first
 * finished), the best o->nbest of them into res. */
static int collect(const struct beam *b, int s, struct search_result *res)
{
	struct fin *f = &b->fin[s * b->k], tmp;
	int n = b->nfin[s], i, j;

	for (i = 1; i < n; i++) {
		tmp = f[i];
		for (j = i; j > 0 && tmp.norm > f[j - 1].norm; j--)
			f[j] = f[j - 1];
		f[j] = tmp;
	}
	if (n > b->o->nbest)
		n = b->o->nbest;
	res->hyp = calloc(n, sizeof *res->hyp);
	if (!res->hyp) {
		err_set("out of memory in the search");
		return -1;
	}
	for (i = 0; i < n; i++, res->n++)
		if (read_back(b, s, &f[i], &res->hyp[i]) < 0)
			return -1;
	return 0;
}

static void beam_free(struct beam *b)
{
	int t;

	if (b->d)
		b->m->arch->dec_free(b->d);
	for (t = 0; b->steps && t <= b->tmax; t++) {
		free(b->steps[t].row_ent);
		free(b->steps[t].att);
		free(b->steps[t].tok);
		free(b->steps[t].row);
	}
	free(b->steps);
	free(b->slen);
	free(b->maxlen);
	free(b->nfin);
	free(b->fin);
	rows_free(&b->cur);
	rows_free(&b->next);
	free(b->logp);
	free(b->attw);
	free(b->cand);
	free(b->glo);
	free(b->ghi);
	free(b->got);
}

static int identity(const int *parent, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (parent[i] != i)
			return 0;
	return 1;
}

/* The decoder, the sentences' lengths and every buffer of the search. */
static int beam_init(struct beam *b, const struct model *m, struct frame **f,
		     int n, const struct search_opts *o)
{
	const struct arch *a = m->arch;
	int s, L = 1, H = 1;

	b->m = m;
	b->o = o;
	b->n = n;
	b->k = o->k;
	b->V = m->tgt_vocab;
	b->cap = n * o->k;
	b->d = a->dec_new(m, &o->dec, f, n, o->k);
	if (!b->d)
		return -1;
	b->sl = a->dec_shortlist ? a->dec_shortlist(b->d) : NULL;
	if (a->dec_attw_planes)
		a->dec_attw_planes(b->d, &L, &H);
	b->L = L;
	b->H = H;
	b->P = L * H;
	b->slen = malloc(n * sizeof *b->slen);
	b->maxlen = malloc(n * sizeof *b->maxlen);
	b->nfin = calloc(n, sizeof *b->nfin);
	b->fin = malloc(b->cap * sizeof *b->fin);
	b->cand = malloc(b->cap * sizeof *b->cand);
	b->glo = malloc(n * sizeof *b->glo);
	b->ghi = malloc(n * sizeof *b->ghi);
	b->got = malloc(n * sizeof *b->got);
	if (!b->slen || !b->maxlen || !b->nfin || !b->fin || !b->cand ||
	    !b->glo || !b->ghi || !b->got)
		goto oom;
	for (s = 0; s < n; s++) {
		b->slen[s] = a->dec_srclen(b->d, s);
		b->maxlen[s] = search_max_len(o, b->slen[s]);
		if (b->slen[s] > b->smax)
			b->smax = b->slen[s];
		if (b->maxlen[s] > b->tmax)
			b->tmax = b->maxlen[s];
	}
	b->steps = calloc(b->tmax + 1, sizeof *b->steps);
	b->logp = malloc((size_t)b->cap * b->V * sizeof(float));
	if (o->want_attw)
		b->attw = malloc(((size_t)b->cap * b->P * b->smax + 1) *
				 sizeof(float));
	if (!b->steps || !b->logp || (o->want_attw && !b->attw) ||
	    rows_alloc(&b->cur, b->cap) < 0 || rows_alloc(&b->next, b->cap) < 0)
		goto oom;
	for (s = 0; s < n; s++) {
		b->cur.sent[s] = s;
		b->cur.ent[s] = -1;
		b->cur.prev[s] = b->m->bos_id;
		b->cur.score[s] = 0;
	}
	return 0;
oom:
	err_set("out of memory in the search");
	return -1;
}

/* One search over all of f: the kernels' threads share each product. */
static int search_batch(const struct model *m, struct frame **f, int n,
			const struct search_opts *o, struct search_result *res)
{
	struct beam b = { 0 };
	struct rows tmp;
	int nh = n, t, s, rc = -1;

	memset(res, 0, n * sizeof *res);
	if (o->k < 1 || o->nbest < 1 || o->nbest > o->k) {
		err_set("search: k %d, nbest %d: need 1 <= nbest <= k", o->k,
			o->nbest);
		return -1;
	}
	if (o->block_repeats < 0 || o->block_repeats > SEARCH_BLOCK_MAX) {
		err_set("search: block_repeats %d is not from 0 to %d",
			o->block_repeats, SEARCH_BLOCK_MAX);
		return -1;
	}
	if (o->min_len < 0 || o->min_len > SEARCH_MIN_LEN_MAX) {
		err_set("search: min_len %d is not from 0 to %d", o->min_len,
			SEARCH_MIN_LEN_MAX);
		return -1;
	}
	if (n == 0)
		return 0;
	if (beam_init(&b, m, f, n, o) < 0)
		goto out;
	for (t = 1; nh > 0; t++) {
		if (beam_step(&b, t, nh) < 0)
			goto out;
		nh = beam_select(&b, t, nh);
		tmp = b.cur;
		b.cur = b.next;
		b.next = tmp;
		if (nh > 0 && !identity(b.cur.parent, nh) &&
		    m->arch->dec_select(b.d, nh, b.cur.parent) < 0)
			goto out;
	}
	for (s = 0; s < n; s++)
		if (collect(&b, s, &res[s]) < 0)
			goto out;
	rc = 0;
out:
	if (rc < 0)
		for (s = 0; s < n; s++)
			search_result_free(&res[s]);
	beam_free(&b);
	return rc;
}

/*
 * Batches dealt out to the threads.  Given several (a window's), the
 * threads take them whole, one at a time, the last (the longest, in a
 * window sorted by length) first: each thread decodes full batches, and
 * the threads meet once per call, not once per batch, a thread left
 * idle at the end by the shortest batch at most.  Given one, its
 * sentences are dealt: sentence i to part i mod parts, so that a batch
 * sorted by length gives each part its share of the long ones.  Inside a
 * part the kernels run serially (the pool is busy: kernels.h), so each
 * thread decodes its own rows rather than a slice of every product,
 * which on a few dozen rows costs more in waking and waiting than it
 * gains.  A sentence's result depends on its frame alone, so the results
 * are those of one search.
 *
 * run(args, f, n, out) decodes frames f [n] into out [n] (elements of
 * size bytes), freeing what it made when it fails; drop frees one
 * element, for the parts that succeeded when another failed.
 */
struct deal {
	int (*run)(const void *args, struct frame **f, int n, void *out);
	void (*drop)(void *elem);
	const void *args;
	size_t size;
	struct frame **f;	/* part p's frames at f[start[p]] ... */
	char *out;		/* their elements, in the same order */
	const int *start;	/* [parts + 1] */
	int parts;
	int *failed;		/* [parts] */
	char (*msg)[256];	/* [parts]: err_msg() of a failure */
};

static void deal_task(void *ctx, int64_t lo, int64_t hi)
{
	struct deal *dl = ctx;

	for (int64_t x = lo; x < hi; x++) {
		int p = dl->parts - 1 - (int)x;
		int a = dl->start[p], n = dl->start[p + 1] - a;

		if (dl->run(dl->args, dl->f + a, n, dl->out + a * dl->size) < 0) {
			dl->failed[p] = 1;
			snprintf(dl->msg[p], sizeof dl->msg[p], "%s", err_msg());
		}
	}
}

/* Runs dl's parts on the threads; on a failure frees what the others
 * made and sets err_msg() to the first failure's. */
static int deal_parts(struct deal *dl)
{
	int n = dl->start[dl->parts];

	dl->failed = calloc(dl->parts, sizeof *dl->failed);
	dl->msg = malloc(dl->parts * sizeof *dl->msg);
	if (!dl->failed || !dl->msg) {
		err_set("search: out of memory");
		goto fail;
	}
	kern_parallel_each(dl->parts, deal_task, dl);
	for (int p = 0; p < dl->parts; p++)
		if (dl->failed[p]) {
			err_set("%s", dl->msg[p]);
			for (int q = 0; q < dl->parts; q++)
				for (int k = dl->start[q];
				     !dl->failed[q] && k < dl->start[q + 1]; k++)
					dl->drop(dl->out + k * dl->size);
			goto fail;
		}
	free(dl->failed);
	free(dl->msg);
	return 0;
fail:
	memset(dl->out, 0, n * dl->size);
	free(dl->failed);
	free(dl->msg);
	return -1;
}

/* Frames f [n] as one batch: its sentences dealt out to the threads. */
static int deal_sentences(struct deal *dl, struct frame **f, int n,
			  void *out)
{
	int parts = kern_threads() < n ? kern_threads() : n, rc = -1;
	int *start = malloc((parts + 1) * sizeof *start);

	dl->f = malloc(n * sizeof *dl->f);
	dl->out = calloc(n, dl->size);
	if (!dl->f || !dl->out || !start) {
		err_set("search: out of memory");
		goto out;
	}
	for (int p = 0, k = 0; p < parts; p++) {
		start[p] = k;
		for (int i = p; i < n; i += parts)
			dl->f[k++] = f[i];
	}
	start[parts] = n;
	dl->start = start;
	dl->parts = parts;
	if (deal_parts(dl) < 0)
		goto out;
	for (int p = 0, k = 0; p < parts; p++)
		for (int i = p; i < n; i += parts, k++)
			memcpy((char *)out + i * dl->size, dl->out + k * dl->size,
			       dl->size);
	rc = 0;
out:
	free(dl->f);
	free(dl->out);
	free(start);
	return rc;
}

/* Batch b of frames f, f [start[b]] to f [start[b + 1] - 1] (start[0]
 * = 0), into the same places of out. */
static int deal(struct deal *dl, struct frame **f, const int *start, int nb,
		void *out)
{
	if (nb == 1 && start[1] >= 2 && kern_threads() >= 2)
		return deal_sentences(dl, f, start[1], out);
	if (nb == 1)	/* one sentence, or one thread: kernels split */
		return dl->run(dl->args, f, start[1], out);
	dl->f = f;
	dl->out = out;
	dl->start = start;
	dl->parts = nb;
	return deal_parts(dl);
}

struct search_args {
	const struct model *m;
	const struct search_opts *o;
};

static int search_run(const void *args, struct frame **f, int n, void *out)
{
	const struct search_args *a = args;

	return search_batch(a->m, f, n, a->o, out);
}

static void search_drop(void *elem)
{
	search_result_free(elem);
}

int search_batches(const struct model *m, struct frame **f, const int *start,
		   int nb, const struct search_opts *o,
		   struct search_result *res)
{
	struct search_args a = { m, o };
	struct deal dl = { .run = search_run, .drop = search_drop,
			   .args = &a, .size = sizeof *res };

	memset(res, 0, start[nb] * sizeof *res);
	return deal(&dl, f, start, nb, res);
}

int search(const struct model *m, struct frame **f, int n,
	   const struct search_opts *o, struct search_result *res)
{
	int start[2] = { 0, n };

	return search_batches(m, f, start, 1, o, res);
}

/* Forced decoding of all of f in one batch: see search_force. */
static int force_batch(const struct model *m, const struct dec_opts *dec,
		       struct frame **f, int n, const char *name,
		       int want_attw, struct hyp *out)
{
	const struct arch *a = m->arch;
	const char *stage = strcmp(name, "tgt.ids") == 0 ?
			    "tokenize --pairs" : "decode --tensors";
	struct decoder *d = NULL;
	const struct shortlist *sl;
	int V = m->tgt_vocab, P, L = 1, H = 1, smax = 0, tmax = 0, y;
	int *sent = NULL, *parent = NULL, nh, t, i, r, rc = -1;
	int32_t *prev = NULL;
	float *logp = NULL, *attw = NULL;

	memset(out, 0, n * sizeof *out);
	if (n == 0)
		return 0;
	for (i = 0; i < n; i++) {
		const struct tensor *ids;

		if (model_check_ids(f[i], name, V, stage) < 0)
			goto fail;
		ids = frame_find(f[i], name);
		out[i].len = ids->dim[0];
		out[i].ids = malloc(out[i].len * sizeof(int32_t));
		if (!out[i].ids)
			goto oom;
		memcpy(out[i].ids, ids->data, out[i].len * sizeof(int32_t));
		if (out[i].len > tmax)
			tmax = out[i].len;
	}
	d = a->dec_new(m, dec, f, n, 1);
	if (!d)
		goto fail;
	sl = a->dec_shortlist ? a->dec_shortlist(d) : NULL;
	if (a->dec_attw_planes)
		a->dec_attw_planes(d, &L, &H);
	P = L * H;
	for (i = 0; i < n; i++) {
		out[i].S = a->dec_srclen(d, i);
		out[i].L = L;
		out[i].H = H;
		if (out[i].S > smax)
			smax = out[i].S;
		if (want_attw && !(out[i].attw = calloc((size_t)P * out[i].len
					* out[i].S + 1, sizeof(float))))
			goto oom;
	}
	sent = malloc(n * sizeof *sent);
	parent = malloc(n * sizeof *parent);
	prev = malloc(n * sizeof *prev);
	logp = malloc((size_t)n * V * sizeof *logp);
	if (want_attw)
		attw = malloc(((size_t)n * P * smax + 1) * sizeof *attw);
	if (!sent || !parent || !prev || !logp || (want_attw && !attw))
		goto oom;
	for (i = 0; i < n; i++)
		sent[i] = i;
	for (nh = n, t = 1; nh > 0; t++) {
		int nn = 0;

		for (r = 0; r < nh; r++)
			prev[r] = t == 1 ? m->bos_id : out[sent[r]].ids[t - 2];
		if (a->dec_step(d, nh, prev, logp, attw) < 0)
			goto fail;
		for (r = 0; r < nh; r++) {
			struct hyp *h = &out[sent[r]];
			int p;

			/* a unit outside the shortlist has probability 0 */
			y = place(sl, sent[r], h->ids[t - 1]);
			h->score += y < 0 ? -INFINITY :
				    logp[(size_t)r * V + y];
			for (p = 0; attw && p < P; p++)
				memcpy(h->attw + ((size_t)p * h->len + t - 1) *
				       h->S, attw + ((size_t)r * P + p) * smax,
				       h->S * sizeof(float));
			if (t < h->len) {
				parent[nn] = r;
				sent[nn++] = sent[r];
			}
		}
		nh = nn;
		if (nh > 0 && !identity(parent, nh) &&
		    a->dec_select(d, nh, parent) < 0)
			goto fail;
	}
	for (i = 0; i < n; i++)
		out[i].norm = out[i].score / out[i].len;
	rc = 0;
	goto done;
oom:
	err_set("out of memory in forced decoding");
fail:
	for (i = 0; i < n; i++)
		hyp_free(&out[i]);
done:
	if (d)
		a->dec_free(d);
	free(sent);
	free(parent);
	free(prev);
	free(logp);
	free(attw);
	return rc;
}

struct force_args {
	const struct model *m;
	const struct dec_opts *dec;
	const char *name;
	int want_attw;
};

static int force_run(const void *args, struct frame **f, int n, void *out)
{
	const struct force_args *a = args;

	return force_batch(a->m, a->dec, f, n, a->name, a->want_attw, out);
}

static void force_drop(void *elem)
{
	hyp_free(elem);
}

int search_force_batches(const struct model *m, const struct dec_opts *dec,
			 struct frame **f, const int *start, int nb,
			 const char *name, int want_attw, struct hyp *out)
{
	struct force_args a = { m, dec, name, want_attw };
	struct deal dl = { .run = force_run, .drop = force_drop,
			   .args = &a, .size = sizeof *out };

	memset(out, 0, start[nb] * sizeof *out);
	return deal(&dl, f, start, nb, out);
}

int search_force(const struct model *m, const struct dec_opts *dec,
		 struct frame **f, int n, const char *name, int want_attw,
		 struct hyp *out)
{
	int start[2] = { 0, n };

	return search_force_batches(m, dec, f, start, 1, name, want_attw,
				    out);
}
