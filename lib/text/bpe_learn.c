/*
 * bpe_learn.c: learning merges (bpe.h), with pair counts kept up to date
 * incrementally: each pair knows the words it occurs in, a merge rewrites
 * only those words and adjusts the counts of the pairs it changed, and a
 * heap with lazy deletion yields the most frequent pair.
 */
#include <stdlib.h>
#include <string.h>
#include "bpe_impl.h"
#include "base/errmsg.h"

struct bpe_counter {
	struct strmap pieces;          /* piece -> occurrences */
	struct bpe_text line;           /* a line with its dummy prefix */
};

struct bpe_counter *bpe_counter_new(void)
{
	struct bpe_counter *c = calloc(1, sizeof(*c));

	if (!c)
		err_set("out of memory");
	return c;
}

static int count_piece(void *ctx, const char *s, size_t n)
{
	struct bpe_counter *c = ctx;
	int64_t *count = strmap_put(&c->pieces, s, n, NULL);

	if (!count)
		return -1;
	++*count;
	return 0;
}

/* Lines are counted with the dummy prefix, since bpe_learn makes every
 * vocabulary with it. */
int bpe_counter_add(struct bpe_counter *c, const char *line, size_t len)
{
	return bpe_line_pieces(line, len, 1, &c->line, count_piece, c);
}

void bpe_counter_free(struct bpe_counter *c)
{
	if (!c)
		return;
	strmap_free(&c->pieces);
	bpe_text_free(&c->line);
	free(c);
}

/* ---- characters --------------------------------------------------------- */

struct char_count {
	const char *s;
	size_t len;
	int64_t count;
};

/* More frequent first; of equal ones, byte order. */
static int char_cmp(const void *x, const void *y)
{
	const struct char_count *a = x, *b = y;
	size_t n = a->len < b->len ? a->len : b->len;
	int c;

	if (a->count != b->count)
		return a->count > b->count ? -1 : 1;
	if ((c = memcmp(a->s, b->s, n)))
		return c;
	return a->len < b->len ? -1 : a->len > b->len;
}

/* Adds the most frequent characters of the pieces as units. */
static int add_chars(struct bpe *v, const struct strmap *pieces,
		     int max_chars, double coverage)
{
	struct strmap chars = { 0 };
	struct char_count *cc = NULL;
	const struct strmap_ent *e;
	const char *s;
	struct bpe_char c;
	double total = 0, covered = 0;
	int64_t *count;
	size_t i, k;
	int rc = -1;

	for (i = 0; i < pieces->n; i++) {
		e = &pieces->ent[i];
		s = pieces->keys.s + e->off;
		for (k = 0; k < e->len; k += c.len) {
			c = bpe_char_at(s + k, e->len - k);
			if (!c.unit)
				continue;
			if (!(count = strmap_put(&chars, s + k, c.len, NULL)))
				goto out;
			*count += e->val;
			total += e->val;
		}
	}
	if (chars.n && !(cc = malloc(chars.n * sizeof(*cc)))) {
		err_set("out of memory");
		goto out;
	}
	for (i = 0; i < chars.n; i++) {
		cc[i].s = chars.keys.s + chars.ent[i].off;
		cc[i].len = chars.ent[i].len;
		cc[i].count = chars.ent[i].val;
	}
	if (chars.n)
		qsort(cc, chars.n, sizeof(*cc), char_cmp);
	for (i = 0; i < chars.n && (int)i < max_chars; i++) {
		if (i > 0 && covered >= coverage * total)
			break;
		if (bpe_add_unit(v, BPE_KIND_CHAR, cc[i].s, cc[i].len, -1,
				 -1) < 0)
			goto out;
		covered += cc[i].count;
	}
	rc = 0;
out:
	free(cc);
	strmap_free(&chars);
	return rc;
}

/* ---- words and pairs ---------------------------------------------------- */

struct word {
	size_t off;             /* its units in learner.sym */
	int32_t len;
	int32_t stamp;          /* the last merge that rewrote it */
	int64_t freq;
};

struct pair {
	int32_t left, right;
	int64_t count;          /* occurrences, weighted by word frequency */
	int32_t *word;          /* words it occurs in (maybe no longer) */
	int32_t nword, cap;
	int blocked;            /* its merge is already a unit */
	int dirty;              /* count changed in this merge */
};

struct heap_ent {
	int64_t count;
	int32_t pair;
};

struct learner {
	struct bpe *v;
	struct word *word;
	size_t nword;
	struct bpe_ids sym;             /* every word's units, back to back */
	struct pair *pair;
	int32_t npair, cap;
	struct strmap pair_index;      /* pair key -> index in pair */
	struct bpe_heap heap;           /* of struct heap_ent */
	struct bpe_ids dirty;           /* pairs whose count changed */
	struct bpe_ids next;            /* scratch: a word after a merge */
	uint64_t *old_keys, *new_keys;  /* scratch: its pairs before, after */
};

static int units_cmp(const struct bpe *v, int32_t a, int32_t b)
{
	const struct bpe_unit *x = &v->unit[a], *y = &v->unit[b];
	size_t n = x->len < y->len ? x->len : y->len;
	int c = memcmp(bpe_unit_bytes(v, a), bpe_unit_bytes(v, b), n);

	if (c)
		return c;
	return x->len < y->len ? -1 : x->len > y->len;
}

/* The more frequent pair first; of equal ones, the bytes of the left unit,
 * then of the right one, in byte order. */
static int heap_before(const void *x, const void *y, const void *ctx)
{
	const struct heap_ent *a = x, *b = y;
	const struct learner *l = ctx;
	const struct pair *p = &l->pair[a->pair], *q = &l->pair[b->pair];
	int c;

	if (a->count != b->count)
		return a->count > b->count;
	if ((c = units_cmp(l->v, p->left, q->left)))
		return c < 0;
	return units_cmp(l->v, p->right, q->right) < 0;
}

static int pair_ok(int32_t left, int32_t right)
{
	return left >= BPE_FIRST_UNIT && right >= BPE_FIRST_UNIT;
}

/* The index of a pair, made if new; -1 if out of memory. */
static int32_t pair_get(struct learner *l, uint64_t key)
{
	struct pair *p;
	int64_t *index;
	int added;
	int32_t cap;

	if (!(index = strmap_put(&l->pair_index, &key, sizeof(key), &added)))
		return -1;
	if (!added)
		return *index;
	if (l->npair == l->cap) {
		cap = l->cap ? 2 * l->cap : 1024;
		if (!(p = realloc(l->pair, cap * sizeof(*p)))) {
			err_set("out of memory");
			return -1;
		}
		l->pair = p;
		l->cap = cap;
	}
	p = memset(&l->pair[l->npair], 0, sizeof(*p));
	p->left = key >> 32;
	p->right = (int32_t)(uint32_t)key;
	*index = l->npair;
	return l->npair++;
}

static int pair_add_word(struct pair *p, int32_t w)
{
	int32_t *a, cap;

	if (p->nword == p->cap) {
		cap = p->cap ? 2 * p->cap : 4;
		if (!(a = realloc(p->word, cap * sizeof(*a)))) {
			err_set("out of memory");
			return -1;
		}
		p->word = a;
		p->cap = cap;
	}
	p->word[p->nword++] = w;
	return 0;
}

/* Changes a pair's count by delta and marks it for the heap. */
static int pair_count(struct learner *l, int32_t i, int64_t delta)
{
	struct pair *p = &l->pair[i];

	p->count += delta;
	if (p->dirty)
		return 0;
	p->dirty = 1;
	return bpe_ids_push(&l->dirty, i);
}

static int push_dirty(struct learner *l)
{
	struct heap_ent e;
	struct pair *p;
	size_t i;

	for (i = 0; i < l->dirty.n; i++) {
		p = &l->pair[l->dirty.v[i]];
		p->dirty = 0;
		if (p->count < 2 || p->blocked)
			continue;
		e.count = p->count;
		e.pair = l->dirty.v[i];
		if (bpe_heap_push(&l->heap, &e) < 0)
			return -1;
	}
	l->dirty.n = 0;
	return 0;
}

/* Every word of at most BPE_LEARN_MAX_PIECE bytes and two units, with the
 * counts of its pairs. */
static int make_words(struct learner *l, const struct strmap *pieces)
{
	const struct strmap_ent *e;
	struct word *w;
	int32_t *s, i, p;
	size_t k, off;

	if (pieces->n && !(l->word = malloc(pieces->n * sizeof(*l->word)))) {
		err_set("out of memory");
		return -1;
	}
	for (k = 0; k < pieces->n; k++) {
		e = &pieces->ent[k];
		if (e->len > BPE_LEARN_MAX_PIECE)
			continue;
		off = l->sym.n;
		if (bpe_piece_symbols(l->v, pieces->keys.s + e->off, e->len,
				      &l->sym) < 0)
			return -1;
		if (l->sym.n - off < 2) {
			l->sym.n = off;
			continue;
		}
		w = &l->word[l->nword];
		w->off = off;
		w->len = l->sym.n - off;
		w->stamp = -1;
		w->freq = e->val;
		s = l->sym.v + off;
		for (i = 0; i + 1 < w->len; i++) {
			if (!pair_ok(s[i], s[i + 1]))
				continue;
			if ((p = pair_get(l, bpe_pair_key(s[i], s[i + 1]))) < 0 ||
			    pair_count(l, p, w->freq) < 0)
				return -1;
			if ((!l->pair[p].nword ||
			     l->pair[p].word[l->pair[p].nword - 1] !=
				     (int32_t)l->nword) &&
			    pair_add_word(&l->pair[p], l->nword) < 0)
				return -1;
		}
		l->nword++;
	}
	return push_dirty(l);
}

static int key_cmp(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return a < b ? -1 : a > b;
}

/* The keys of a word's pairs that may merge, sorted; their number. */
static size_t word_pairs(const int32_t *s, int32_t n, uint64_t *keys)
{
	size_t k = 0;
	int32_t i;

	for (i = 0; i + 1 < n; i++)
		if (pair_ok(s[i], s[i + 1]))
			keys[k++] = bpe_pair_key(s[i], s[i + 1]);
	qsort(keys, k, sizeof(*keys), key_cmp);
	return k;
}

/*
 * Rewrites word wi with every (left, right) replaced by id, left to right,
 * and changes the counts of the pairs that it gained or lost.
 */
static int merge_word(struct learner *l, int32_t wi, int32_t left,
		      int32_t right, int32_t id)
{
	struct word *w = &l->word[wi];
	int32_t *s = l->sym.v + w->off, i, p;
	size_t nold, nnew, a = 0, b = 0, ca, cb;
	uint64_t key;

	l->next.n = 0;
	for (i = 0; i < w->len; i++) {
		if (i + 1 < w->len && s[i] == left && s[i + 1] == right) {
			if (bpe_ids_push(&l->next, id) < 0)
				return -1;
			i++;
		} else if (bpe_ids_push(&l->next, s[i]) < 0) {
			return -1;
		}
	}
	if (l->next.n == (size_t)w->len)
		return 0;                       /* a stale entry: no pair here */
	nold = word_pairs(s, w->len, l->old_keys);
	nnew = word_pairs(l->next.v, l->next.n, l->new_keys);
	while (a < nold || b < nnew) {
		if (b == nnew || (a < nold && l->old_keys[a] < l->new_keys[b]))
			key = l->old_keys[a];
		else
			key = l->new_keys[b];
		for (ca = 0; a < nold && l->old_keys[a] == key; a++)
			ca++;
		for (cb = 0; b < nnew && l->new_keys[b] == key; b++)
			cb++;
		if (ca == cb)
			continue;
		if ((p = pair_get(l, key)) < 0 ||
		    pair_count(l, p, ((int64_t)cb - (int64_t)ca) * w->freq) < 0)
			return -1;
		if (ca == 0 && pair_add_word(&l->pair[p], wi) < 0)
			return -1;
	}
	memcpy(s, l->next.v, l->next.n * sizeof(*s));
	w->len = l->next.n;
	return 0;
}

/* Makes the merge of pair pi the unit id in every word that has it. */
static int merge_pair(struct learner *l, int32_t pi, int32_t id)
{
	struct pair *p = &l->pair[pi];
	int32_t *words = p->word, n = p->nword, left = p->left,
		right = p->right, i;
	int rc = 0;

	p->word = NULL;                 /* the pair is gone from every word */
	p->nword = p->cap = 0;
	for (i = 0; i < n && rc == 0; i++) {
		if (l->word[words[i]].stamp == id)
			continue;               /* listed twice */
		l->word[words[i]].stamp = id;
		rc = merge_word(l, words[i], left, right, id);
	}
	free(words);
	return rc < 0 ? -1 : push_dirty(l);
}

/* The next pair to merge, or -1 when none occurs twice. */
static int32_t best_pair(struct learner *l)
{
	struct heap_ent e;

	while (l->heap.n) {
		bpe_heap_pop(&l->heap, &e);
		if (e.count == l->pair[e.pair].count &&
		    !l->pair[e.pair].blocked)
			return e.pair;
	}
	return -1;
}

static int learn_merges(struct learner *l, int vocab_size)
{
	struct bpe_text joined = { 0 };
	struct pair *p;
	int32_t pi, id;
	int rc = -1;

	while (l->v->n < vocab_size && (pi = best_pair(l)) >= 0) {
		p = &l->pair[pi];
		joined.n = 0;
		if (bpe_text_add(&joined, bpe_unit_bytes(l->v, p->left),
				 l->v->unit[p->left].len) < 0 ||
		    bpe_text_add(&joined, bpe_unit_bytes(l->v, p->right),
				 l->v->unit[p->right].len) < 0)
			goto out;
		if (strmap_find(&l->v->by_bytes, joined.s, joined.n)) {
			p->blocked = 1;
			continue;
		}
		id = bpe_add_unit(l->v, BPE_KIND_MERGE, joined.s, joined.n,
				  p->left, p->right);
		if (id < 0 || merge_pair(l, pi, id) < 0)
			goto out;
	}
	rc = 0;
out:
	bpe_text_free(&joined);
	return rc;
}

static void learner_free(struct learner *l)
{
	int32_t i;

	for (i = 0; i < l->npair; i++)
		free(l->pair[i].word);
	free(l->pair);
	free(l->word);
	bpe_ids_free(&l->sym);
	strmap_free(&l->pair_index);
	bpe_heap_free(&l->heap);
	bpe_ids_free(&l->dirty);
	bpe_ids_free(&l->next);
	free(l->old_keys);
	free(l->new_keys);
}

struct bpe *bpe_learn(const struct bpe_counter *c, int vocab_size,
		      double coverage)
{
	struct learner l = { 0 };
	int rc = -1;

	if (vocab_size < BPE_FIRST_UNIT || !(coverage >= 0 && coverage <= 1)) {
		err_set("a vocabulary needs at least %d units and a coverage "
			"from 0 to 1", BPE_FIRST_UNIT);
		return NULL;
	}
	l.heap.size = sizeof(struct heap_ent);
	l.heap.before = heap_before;
	l.heap.ctx = &l;
	l.old_keys = malloc(BPE_LEARN_MAX_PIECE * sizeof(*l.old_keys));
	l.new_keys = malloc(BPE_LEARN_MAX_PIECE * sizeof(*l.new_keys));
	if (!l.old_keys || !l.new_keys) {
		err_set("out of memory");
		goto out;
	}
	if (!(l.v = bpe_new()))
		goto out;
	l.v->prefix = 1;
	if (add_chars(l.v, &c->pieces, vocab_size - BPE_FIRST_UNIT,
		      coverage) < 0 ||
	    make_words(&l, &c->pieces) < 0 || learn_merges(&l, vocab_size) < 0)
		goto out;
	rc = 0;
out:
	learner_free(&l);
	if (rc < 0) {
		bpe_free(l.v);
		return NULL;
	}
	return l.v;
}
