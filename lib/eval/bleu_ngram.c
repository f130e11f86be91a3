/*
 * bleu_ngram.c: counting the n-grams that a hypothesis shares with its
 * references.  Only the hypothesis' n-grams are stored (an n-gram it lacks
 * cannot match).  An n-gram is keyed by the slot of its prefix and its last
 * symbol: one 64-bit key for any order, compared in one step.  So the
 * n-grams starting at one position are found order by order, and a
 * reference's stop at the first the hypothesis lacks (no longer one can be
 * there).  Symbols are ids, small and dense (of words, or of chrF's
 * characters, given below), or any 32-bit values.  Ids' unigrams are an
 * array, and an n-gram's slot is found with no hashing at all, in an array
 * of the children of every prefix by last id (when that fits in CHILD_MAX
 * entries: the prefixes are the unigrams and at most len n-grams an order).
 * The tables are reused from segment to segment: an entry is in use when
 * it bears the current generation.
 */
#include <stdlib.h>
#include <string.h>
#include "bleu.h"
#include "base/errmsg.h"

struct slot {
	uint64_t key;		/* prefix << 32 | last symbol */
	uint32_t gen;		/* in use when equal to the table's gen */
	uint32_t stamp;		/* cur counts in the reference of this stamp */
	int32_t hyp;		/* count in the hypothesis */
	int32_t cur;		/* count in the current reference */
	int32_t max;		/* largest count in a reference so far */
};

/* Entries of the children array at most: a slot in CHILD_BITS bits, its
 * generation in the others (32-bit entries: half the cache of 64). */
#define CHILD_BITS 18
#define CHILD_MAX (1 << CHILD_BITS)
#define CHILD_GEN_MAX ((1u << (32 - CHILD_BITS)) - 1)

/*
 * The prefix of an n-gram's key: 0 for none, 1 + symbol for a dense
 * unigram, 1 + nsym + slot for the others.  With children, the slots are
 * s[0..nused), in order, and the n-gram of prefix p (a unigram's symbol, or
 * nsym + a slot) and last word x is child[p * nsym + x]: its slot, below
 * its generation (<< CHILD_BITS).
 */
struct ngram_table {
	struct slot *s;
	size_t cap;		/* a power of two */
	int shift;		/* 64 - log2(cap) */
	uint32_t gen;
	size_t nused;		/* slots made among children: s[0..nused) */
	struct slot *uni;	/* by symbol when they are dense (nsym > 0) */
	uint32_t nsym, uni_cap;
	int max_order;
	uint32_t stamp;
	int64_t correct[NGRAM_MAX_ORDER];	/* clipped matches so far */
	int dense;		/* n-grams found among children, not hashed */
	uint32_t *child;
	size_t child_cap;
	uint32_t child_gen;
};

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
		free(t->s);
		free(t->uni);
		free(t->child);
		free(t);
	}
}

/* The slot of key: its own, or the empty one where it belongs. */
static inline struct slot *find(const struct ngram_table *t, uint64_t key)
{
	size_t i = (key * 0x9e3779b97f4a7c15ULL) >> t->shift;

	for (;; i = (i + 1) & (t->cap - 1)) {
		struct slot *s = &t->s[i];

		if (s->gen != t->gen || s->key == key)
			return s;
	}
}

/* Room for count n-grams, the table at most half full; a new generation. */
static int reserve(struct ngram_table *t, size_t count, uint32_t nsym)
{
	size_t cap = 64;
	int bits = 6;

	while (cap < 2 * count) {
		cap *= 2;
		bits++;
	}
	if (cap > t->cap || ++t->gen == 0) {
		struct slot *s = calloc(cap > t->cap ? cap : t->cap, sizeof *s);

		if (!s) {
			err_set("out of memory for %zu n-grams", count);
			return -1;
		}
		free(t->s);
		t->s = s;
		if (cap > t->cap) {
			t->cap = cap;
			t->shift = 64 - bits;
		}
		t->gen = 1;
	}
	if (nsym > t->uni_cap) {
		struct slot *u = realloc(t->uni, nsym * sizeof *u);

		if (!u) {
			err_set("out of memory for %u words", nsym);
			return -1;
		}
		t->uni = u;
		t->uni_cap = nsym;
	}
	return 0;
}

/*
 * Room in the children array for the n-grams of len word ids, nsym
 * distinct, to max_order, and a new generation: dense is set, unless they
 * would not fit in CHILD_MAX (they are hashed then).
 */
static int reserve_children(struct ngram_table *t, size_t len, uint32_t nsym, int max_order)
{
	/* the prefixes: unigrams, and any slot (they are numbered across
	 * orders) */
	size_t need = max_order > 1 ? (max_order - 1) * len : 0;

	t->dense = 0;
	if (!nsym || max_order < 2 || need + nsym > CHILD_MAX / nsym)
		return 0;
	need = (need + nsym) * nsym;
	if (need > t->child_cap || t->child_gen == CHILD_GEN_MAX) {
		size_t cap = need > t->child_cap ? need : t->child_cap;
		uint32_t *c = calloc(cap, sizeof *c);

		if (!c) {
			err_set("out of memory for %zu n-grams", need);
			return -1;
		}
		free(t->child);
		t->child = c;
		t->child_cap = cap;
		t->child_gen = 0;
	}
	t->child_gen++;
	t->dense = 1;
	return 0;
}

/*
 * One more of g (of order n) in the current reference; match gets it if
 * within the hypothesis' count, and the clipped matches when it is also
 * past the largest count of the references before (the largest count rises
 * a step at a time).  No branches: which way they go is anyone's guess.
 */
static inline void count_ref(struct ngram_table *t, struct slot *g, int n, int64_t *match)
{
	g->cur = (g->stamp == t->stamp ? g->cur : 0) + 1;
	g->stamp = t->stamp;
	*match += g->cur <= g->hyp;
	t->correct[n - 1] += (g->cur > g->max) & (g->cur <= g->hyp);
	g->max = g->cur > g->max ? g->cur : g->max;
}

/* The slot of the n-gram of prefix p and last word x among the children:
 * made when make, else NULL when the hypothesis lacks it. */
static inline struct slot *child(struct ngram_table *t, size_t p, uint32_t x, int make)
{
	uint32_t *c = &t->child[p * t->nsym + x];

	if (*c >> CHILD_BITS == t->child_gen)
		return &t->s[*c & (CHILD_MAX - 1)];
	if (!make)
		return NULL;
	t->s[t->nused] = (struct slot){ 0 };
	*c = t->child_gen << CHILD_BITS | t->nused;
	return &t->s[t->nused++];
}

int ngram_load(struct ngram_table *t, const uint32_t *hyp, size_t len,
	       uint32_t nsym, int max_order, int64_t *total)
{
	/* every prefix within 32 bits */
	if (len > UINT32_MAX / 8 / NGRAM_MAX_ORDER) {
		err_set("%zu symbols in one segment: too many", len);
		return -1;
	}
	if (reserve(t, len * max_order, nsym) < 0 ||
	    reserve_children(t, len, nsym, max_order) < 0)
		return -1;
	t->nused = 0;
	t->nsym = nsym;
	t->max_order = max_order;
	t->stamp = 0;
	if (nsym)
		memset(t->uni, 0, nsym * sizeof *t->uni);
	for (int n = 1; n <= max_order; n++) {
		total[n - 1] = len >= (size_t)n ? len - n + 1 : 0;
		t->correct[n - 1] = 0;
	}
	for (size_t i = 0; i < len; i++) {
		int m = len - i < (size_t)max_order ? (int)(len - i) : max_order;
		uint64_t prefix = 0;
		int n = 1;

		if (nsym) {
			t->uni[hyp[i]].hyp++;
			prefix = 1 + hyp[i];
			n++;
		}
		if (t->dense) {
			size_t p = hyp[i];

			for (; n <= m; n++) {
				struct slot *s = child(t, p, hyp[i + n - 1], 1);

				s->hyp++;
				p = nsym + (s - t->s);
			}
			continue;
		}
		for (; n <= m; n++) {
			uint64_t key = prefix << 32 | hyp[i + n - 1];
			struct slot *s = find(t, key);

			if (s->gen != t->gen) {
				*s = (struct slot){ .key = key, .gen = t->gen };
			}
			s->hyp++;
			prefix = 1 + nsym + (s - t->s);
		}
	}
	return 0;
}

void ngram_match(struct ngram_table *t, const uint32_t *ref, size_t len,
		 int64_t *match, int64_t *ref_total)
{
	int max = t->max_order;

	t->stamp++;
	for (int n = 1; n <= max; n++) {
		match[n - 1] = 0;
		ref_total[n - 1] = len >= (size_t)n ? len - n + 1 : 0;
	}
	if (!t->cap)
		return;
	for (size_t i = 0; i < len; i++) {
		int m = len - i < (size_t)max ? (int)(len - i) : max;
		uint64_t prefix = 0;
		int n = 1;

		if (t->nsym) {
			if (ref[i] >= t->nsym)
				continue;
			count_ref(t, &t->uni[ref[i]], 1, &match[0]);
			prefix = 1 + ref[i];
			n++;
		}
		if (t->dense) {
			size_t p = ref[i];

			for (; n <= m && ref[i + n - 1] < t->nsym; n++) {
				struct slot *s = child(t, p, ref[i + n - 1], 0);

				if (!s)
					break;
				count_ref(t, s, n, &match[n - 1]);
				p = t->nsym + (s - t->s);
			}
			continue;
		}
		for (; n <= m; n++) {
			struct slot *s = find(t, prefix << 32 | ref[i + n - 1]);

			if (s->gen != t->gen)
				break;
			count_ref(t, s, n, &match[n - 1]);
			prefix = 1 + t->nsym + (s - t->s);
		}
	}
}

void ngram_clipped(const struct ngram_table *t, int64_t *correct)
{
	memcpy(correct, t->correct, t->max_order * sizeof *correct);
}

/* ---- word ids ---- */

struct word_slot {
	uint64_t key;		/* the word's bytes, or their hash */
	const char *s;		/* the word */
	size_t n;		/* its length */
	uint32_t id;
	uint32_t gen;		/* in use when equal to the table's gen */
};

struct word_ids {
	struct word_slot *s;
	size_t cap;		/* a power of two */
	int shift;		/* 64 - log2(cap) */
	uint32_t gen, count;
};

/*
 * The n <= 8 bytes at s, s[0] the lowest, the others zero.  The eight bytes
 * from s are loaded at once when they lie in the page of s (so they can be
 * read; those past the word are masked off): no branch on the length,
 * whose way is anyone's guess.  That load may pass the end of the buffer,
 * which ASan would report: it does not watch this function.
 */
__attribute__((no_sanitize_address))
static inline uint64_t load_short(const char *s, size_t n)
{
	unsigned char b[8] = { 0 };

	if (__builtin_expect(((uintptr_t)s & 4095) <= 4096 - 8, 1)) {
		memcpy(b, s, 8);	/* here, where ASan does not look */
		return n ? bleu_load8(b) & ~0ULL >> (64 - 8 * n) : 0;
	}
	memcpy(b, s, n);
	return bleu_load8(b);
}

/*
 * A word's key.  Most words are up to eight bytes long: they are their own
 * key (their bytes), so that two of the same length are equal when their
 * keys are.  Longer words are keyed by a hash of their bytes, eight a
 * step, and compared in full.
 */
static inline uint64_t word_key(struct bleu_text w)
{
	uint64_t x;
	size_t i;

	if (__builtin_expect(w.n <= 8, 1))
		return load_short(w.s, w.n);
	x = w.n * 0x9e3779b97f4a7c15ULL;
	for (i = 0; i + 8 < w.n; i += 8)
		x = (x ^ bleu_load8(w.s + i)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ bleu_load8(w.s + w.n - 8)) * 0xbf58476d1ce4e5b9ULL;
	return x ^ x >> 29;
}

/* The slot of a word: its own, or the empty one where it belongs. */
static inline struct word_slot *find_word(const struct word_ids *w, uint64_t key,
					  struct bleu_text word)
{
	size_t i = (key * 0x9e3779b97f4a7c15ULL) >> w->shift;

	for (;; i = (i + 1) & (w->cap - 1)) {
		struct word_slot *s = &w->s[i];

		if (s->gen != w->gen || (s->key == key && s->n == word.n &&
		    (word.n <= 8 || memcmp(s->s, word.s, word.n) == 0)))
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
	int bits = 6;

	while (cap < 2 * hyp->n) {
		cap *= 2;
		bits++;
	}
	/* a new generation empties the table; a new table when it wraps */
	if (cap > w->cap || ++w->gen == 0) {
		struct word_slot *s;

		if (cap < w->cap)
			cap = w->cap;
		else
			w->shift = 64 - bits;
		if (!(s = calloc(cap, sizeof *s))) {
			err_set("out of memory for %zu words", hyp->n);
			return -1;
		}
		free(w->s);
		w->s = s;
		w->cap = cap;
		w->gen = 1;
	}
	w->count = 0;
	ids->n = 0;
	if (bleu_buf_reserve(ids, hyp->n) < 0)
		return -1;
	for (size_t i = 0; i < hyp->n; i++) {
		uint64_t key = word_key(hyp->w[i]);
		struct word_slot *s = find_word(w, key, hyp->w[i]);

		if (s->gen != w->gen)
			*s = (struct word_slot){ key, hyp->w[i].s, hyp->w[i].n, w->count++, w->gen };
		ids->c[ids->n++] = s->id;
	}
	return 0;
}

int word_ids_lookup(const struct word_ids *w, const struct bleu_words *ref, struct bleu_buf *ids)
{
	ids->n = 0;
	if (bleu_buf_reserve(ids, ref->n) < 0)
		return -1;
	for (size_t i = 0; i < ref->n; i++) {
		struct word_slot *s = w->cap ? find_word(w, word_key(ref->w[i]), ref->w[i]) : NULL;

		ids->c[ids->n++] = s && s->gen == w->gen ? s->id : WORD_UNKNOWN;
	}
	return 0;
}

uint32_t word_ids_count(const struct word_ids *w)
{
	return w->count;
}

/* ---- character ids ---- */

#define CHAR_LIMIT 0x110000	/* code points are below it */

/* A code point's id, below its generation (<< 32), in an array by code
 * point: untouched pages of it (most) cost nothing. */
struct char_ids {
	uint64_t *id;
	uint32_t gen, count;
};

struct char_ids *char_ids_new(void)
{
	struct char_ids *c = calloc(1, sizeof *c);

	if (!c || !(c->id = calloc(CHAR_LIMIT, sizeof *c->id))) {
		free(c);
		err_set("out of memory");
		return NULL;
	}
	return c;
}

void char_ids_free(struct char_ids *c)
{
	if (c) {
		free(c->id);
		free(c);
	}
}

int char_ids_load(struct char_ids *c, const uint32_t *cps, size_t n, struct bleu_buf *ids)
{
	ids->n = 0;
	if (bleu_buf_reserve(ids, n) < 0)
		return -1;
	/* a new generation forgets the previous hypothesis */
	if (++c->gen == 0) {
		memset(c->id, 0, CHAR_LIMIT * sizeof *c->id);
		c->gen = 1;
	}
	c->count = 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t *e = &c->id[cps[i]];

		if (*e >> 32 != c->gen)
			*e = (uint64_t)c->gen << 32 | c->count++;
		ids->c[ids->n++] = (uint32_t)*e;
	}
	return 0;
}

int char_ids_lookup(const struct char_ids *c, const uint32_t *cps, size_t n, struct bleu_buf *ids)
{
	ids->n = 0;
	if (bleu_buf_reserve(ids, n) < 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		uint64_t e = c->id[cps[i]];

		ids->c[ids->n++] = e >> 32 == c->gen ? (uint32_t)e : WORD_UNKNOWN;
	}
	return 0;
}

uint32_t char_ids_count(const struct char_ids *c)
{
	return c->count;
}
