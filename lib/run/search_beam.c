/*
 * search_beam.c: beam search (greedy with k = 1) over the dec_* operations
 * of an architecture, search.h's search and search_batches; the
 * selection itself is search_select.c's, the rules search_rules.c's
 * (search_impl.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "base/errmsg.h"
#include "kernels/kernels.h"
#include "search_impl.h"

/* Scores a thread's chunk of the selection takes, at least: below, a
 * second thread's wake-up costs more than it saves. */
#define SELECT_WORK 32768

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
	beam_rules(b, t, nh);
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
			  beam_select_groups, b);
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
	return search_deal(&dl, f, start, nb, res);
}

int search(const struct model *m, struct frame **f, int n,
	   const struct search_opts *o, struct search_result *res)
{
	int start[2] = { 0, n };

	return search_batches(m, f, start, 1, o, res);
}
