/*
 * bleu_ngram.c: counting the n-grams that a hypothesis shares with its
 * references.  Only the hypothesis' n-grams are stored (an n-gram it lacks
 * cannot match), in an open-addressing table that is reused from segment
 * to segment.  Symbols are code points (chrF) or word ids (BLEU, chrF++).
 */
#include <stdlib.h>
#include <string.h>
#include "bleu.h"
#include "err.h"

struct entry {
	uint32_t hash;
	uint32_t pos;		/* start of the n-gram in the hypothesis */
	int32_t order;		/* n; 0 in an empty slot */
	int32_t hyp;		/* count in the hypothesis */
	int32_t cur;		/* count in the reference of `stamp` */
	int32_t max;		/* largest count in a reference so far */
	uint32_t stamp;
};

struct ngram_table {
	struct entry *e;
	size_t cap;		/* a power of two */
	uint32_t *used;		/* the slots in use, to clear and to sum */
	size_t nused;
	const uint32_t *hyp;
	int max_order;
	uint32_t stamp;
};

/* The hashes of the n-grams starting at s, of orders 1..max, in h[]. */
static void hash_prefixes(const uint32_t *s, int max, uint32_t *h)
{
	uint64_t x = 0x9e3779b97f4a7c15ULL;

	for (int n = 0; n < max; n++) {
		x = (x ^ s[n]) * 0x100000001b3ULL;
		x ^= x >> 29;
		h[n] = (uint32_t)(x ^ x >> 32);
	}
}

struct ngram_table *ngram_new(void)
{
	struct ngram_table *t = calloc(1, sizeof *t);

	if (!t)
		err_set("out of memory");
	return t;
}

void ngram_free(struct ngram_table *t)
{
	if (t) {
		free(t->e);
		free(t->used);
		free(t);
	}
}

static int same(const uint32_t *a, const uint32_t *b, int n)
{
	for (int k = 0; k < n; k++)
		if (a[k] != b[k])
			return 0;
	return 1;
}

static struct entry *find(const struct ngram_table *t, uint32_t h,
			  const uint32_t *s, int n)
{
	size_t i = h & (t->cap - 1);

	for (;; i = (i + 1) & (t->cap - 1)) {
		struct entry *e = &t->e[i];

		if (e->order == 0 || (e->hash == h && e->order == n &&
		    same(t->hyp + e->pos, s, n)))
			return e;
	}
}

static int reserve(struct ngram_table *t, size_t count)
{
	size_t cap = 64;
	struct entry *e;
	uint32_t *used;

	while (cap < 2 * count)
		cap *= 2;
	if (cap <= t->cap)
		return 0;
	e = calloc(cap, sizeof *e);
	used = malloc(cap / 2 * sizeof *used);
	if (!e || !used) {
		free(e);
		free(used);
		err_set("out of memory for %zu n-grams", count);
		return -1;
	}
	free(t->e);
	free(t->used);
	t->e = e;
	t->used = used;
	t->cap = cap;
	t->nused = 0;
	return 0;
}

int ngram_load(struct ngram_table *t, const uint32_t *hyp, size_t len,
	       int max_order, int64_t *total)
{
	uint32_t h[16];

	for (size_t k = 0; k < t->nused; k++)
		memset(&t->e[t->used[k]], 0, sizeof t->e[0]);
	t->nused = 0;
	if (len > UINT32_MAX / 2 || reserve(t, len * max_order) < 0)
		return -1;
	t->hyp = hyp;
	t->max_order = max_order;
	for (int n = 1; n <= max_order; n++)
		total[n - 1] = len >= (size_t)n ? len - n + 1 : 0;
	for (size_t i = 0; i < len; i++) {
		int m = len - i < (size_t)max_order ? (int)(len - i) : max_order;

		hash_prefixes(hyp + i, m, h);
		for (int n = 1; n <= m; n++) {
			struct entry *e = find(t, h[n - 1], hyp + i, n);

			if (e->order == 0) {
				e->hash = h[n - 1];
				e->pos = i;
				e->order = n;
				t->used[t->nused++] = e - t->e;
			}
			e->hyp++;
		}
	}
	return 0;
}

void ngram_match(struct ngram_table *t, const uint32_t *ref, size_t len,
		 int64_t *match, int64_t *ref_total)
{
	uint32_t h[16];
	int max = t->max_order;

	t->stamp++;
	for (int n = 1; n <= max; n++) {
		match[n - 1] = 0;
		ref_total[n - 1] = len >= (size_t)n ? len - n + 1 : 0;
	}
	for (size_t i = 0; i < len; i++) {
		int m = len - i < (size_t)max ? (int)(len - i) : max;

		hash_prefixes(ref + i, m, h);
		for (int n = 1; n <= m; n++) {
			struct entry *e = find(t, h[n - 1], ref + i, n);

			if (e->order == 0)
				continue;
			if (e->stamp != t->stamp) {
				e->stamp = t->stamp;
				e->cur = 0;
			}
			if (++e->cur <= e->hyp)
				match[n - 1]++;
			if (e->cur > e->max)
				e->max = e->cur;
		}
	}
}

void ngram_clipped(const struct ngram_table *t, int64_t *correct)
{
	for (int n = 0; n < t->max_order; n++)
		correct[n] = 0;
	for (size_t k = 0; k < t->nused; k++) {
		const struct entry *e = &t->e[t->used[k]];

		correct[e->order - 1] += e->hyp < e->max ? e->hyp : e->max;
	}
}

/* ---- word ids ---- */

struct word_slot {
	uint32_t hash, id;	/* id + 1; 0 in an empty slot */
	struct bleu_str word;
};

struct word_ids {
	struct word_slot *s;
	size_t cap;
	uint32_t count;
};

static uint32_t hash_word(struct bleu_str w)
{
	uint64_t x = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < w.n; i++)
		x = (x ^ w.c[i]) * 0x100000001b3ULL;
	x ^= x >> 29;
	return (uint32_t)(x ^ x >> 32);
}

static struct word_slot *find_word(const struct word_ids *w, uint32_t h,
				   struct bleu_str word)
{
	size_t i = h & (w->cap - 1);

	for (;; i = (i + 1) & (w->cap - 1)) {
		struct word_slot *s = &w->s[i];

		if (s->id == 0 || (s->hash == h && s->word.n == word.n &&
		    memcmp(s->word.c, word.c, word.n * sizeof *word.c) == 0))
			return s;
	}
}

struct word_ids *word_ids_new(void)
{
	struct word_ids *w = calloc(1, sizeof *w);

	if (!w)
		err_set("out of memory");
	return w;
}

void word_ids_free(struct word_ids *w)
{
	if (w) {
		free(w->s);
		free(w);
	}
}

int word_ids_load(struct word_ids *w, const struct bleu_words *hyp, struct bleu_buf *ids)
{
	size_t cap = 64;

	while (cap < 2 * hyp->n)
		cap *= 2;
	if (cap > w->cap) {
		struct word_slot *s = calloc(cap, sizeof *s);

		if (!s) {
			err_set("out of memory for %zu words", hyp->n);
			return -1;
		}
		free(w->s);
		w->s = s;
		w->cap = cap;
	} else {
		memset(w->s, 0, w->cap * sizeof *w->s);
	}
	w->count = 0;
	ids->n = 0;
	if (bleu_buf_reserve(ids, hyp->n) < 0)
		return -1;
	for (size_t i = 0; i < hyp->n; i++) {
		uint32_t h = hash_word(hyp->w[i]);
		struct word_slot *s = find_word(w, h, hyp->w[i]);

		if (s->id == 0) {
			s->hash = h;
			s->id = ++w->count;
			s->word = hyp->w[i];
		}
		ids->c[ids->n++] = s->id - 1;
	}
	return 0;
}

int word_ids_lookup(const struct word_ids *w, const struct bleu_words *ref, struct bleu_buf *ids)
{
	ids->n = 0;
	if (bleu_buf_reserve(ids, ref->n) < 0)
		return -1;
	for (size_t i = 0; i < ref->n; i++) {
		struct word_slot *s = w->cap ? find_word(w, hash_word(ref->w[i]), ref->w[i]) : NULL;

		ids->c[ids->n++] = s && s->id ? s->id - 1 : WORD_UNKNOWN;
	}
	return 0;
}
