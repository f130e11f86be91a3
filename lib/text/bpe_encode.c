/*
 * bpe_encode.c: text to ids.  A piece starts as characters and byte units;
 * pairs of adjacent units are then merged lowest rank first, the ranks in a
 * heap, so that even a piece of a megabyte takes O(n log n).  Merged pieces
 * are cached, so common words cost a hash lookup.
 */
#include <string.h>
#include <stdlib.h>
#include "bpe_impl.h"
#include "base/errmsg.h"

#define CACHE_MAX_PIECE 256             /* bytes; longer pieces are not kept */
#define CACHE_MAX_PIECES (1 << 20)      /* then the cache starts afresh */
#define CACHE_MAX_IDS (1 << 24)

int bpe_piece_symbols(const struct bpe *v, const char *s, size_t n,
		      struct bpe_ids *out)
{
	struct bpe_char c;
	int64_t *found;
	int32_t id;
	size_t i;
	int k;

	for (i = 0; i < n; i += c.len) {
		c = bpe_char_at(s + i, n - i);
		id = -1;
		if (c.unit && c.len == 1) {
			id = v->ascii[(unsigned char)s[i]];
		} else if (c.unit) {
			found = strmap_find(&v->by_bytes, s + i, c.len);
			if (found && v->unit[*found].kind == BPE_KIND_CHAR)
				id = *found;
		}
		if (id >= 0) {
			if (bpe_ids_push(out, id) < 0)
				return -1;
			continue;
		}
		for (k = 0; k < c.len; k++)
			if (bpe_ids_push(out, BPE_BYTE0 +
					 (unsigned char)s[i + k]) < 0)
				return -1;
	}
	return 0;
}

/* The merge of left and right (its id is its rank), or -1. */
static int32_t merged(const struct bpe *v, int32_t left, int32_t right)
{
	uint64_t key = bpe_pair_key(left, right);
	int64_t *id;

	if (left < BPE_FIRST_UNIT || right < BPE_FIRST_UNIT)
		return -1;
	id = strmap_find(&v->merge, &key, sizeof(key));
	return id ? (int32_t)*id : -1;
}

/* A pair to merge: its rank, and the position of its left unit. */
struct merge_at {
	int32_t rank, pos;
};

static int merge_before(const void *x, const void *y, const void *ctx)
{
	const struct merge_at *a = x, *b = y;

	return a->rank < b->rank || (a->rank == b->rank && a->pos < b->pos);
}

/* Pushes the pair at pos (sym[pos], sym[next[pos]]) if it has a merge. */
static int push_pair(struct bpe *v, int32_t pos)
{
	struct merge_at e;

	e.rank = merged(v, v->sym.v[pos], v->sym.v[v->next.v[pos]]);
	e.pos = pos;
	return e.rank < 0 ? 0 : bpe_heap_push(&v->heap, &e);
}

/* How a piece is encoded: BPE-dropout's rate and draws (p 0: none). */
struct encoding {
	struct bpe *v;
	struct bpe_ids *out;
	double p;
	struct rng *r;
};

/* Merges the units in v->sym and appends the result to out, each merge
 * skipped with probability how->p. */
static int merge_symbols(struct bpe *v, struct bpe_ids *out,
			 const struct encoding *how)
{
	int32_t *sym = v->sym.v, *prev, *next, p, q, n = v->sym.n, i;
	struct merge_at e;

	v->prev.n = v->next.n = 0;
	for (i = 0; i < n; i++)
		if (bpe_ids_push(&v->prev, i - 1) < 0 ||
		    bpe_ids_push(&v->next, i + 1) < 0)
			return -1;
	prev = v->prev.v;
	next = v->next.v;
	v->heap.size = sizeof(e);
	v->heap.before = merge_before;
	v->heap.n = 0;
	for (i = 0; i + 1 < n; i++)
		if (push_pair(v, i) < 0)
			return -1;
	while (v->heap.n) {
		bpe_heap_pop(&v->heap, &e);
		p = e.pos;
		if (sym[p] < 0 || (q = next[p]) >= n ||
		    merged(v, sym[p], sym[q]) != e.rank)
			continue;               /* a pair that is gone */
		if (how->p > 0 && rng_uniform(how->r) < how->p)
			continue;               /* dropped */
		sym[p] = e.rank;
		sym[q] = -1;
		next[p] = next[q];
		if (next[q] < n)
			prev[next[q]] = p;
		if ((prev[p] >= 0 && push_pair(v, prev[p]) < 0) ||
		    (next[p] < n && push_pair(v, p) < 0))
			return -1;
	}
	for (i = 0; i < n; i = next[i])
		if (bpe_ids_push(out, sym[i]) < 0)
			return -1;
	return 0;
}

static int encode_piece(const struct encoding *e, const char *s, size_t n)
{
	struct bpe *v = e->v;
	struct bpe_ids *out = e->out;
	size_t start = out->n, count, k;
	int cached = n <= CACHE_MAX_PIECE && e->p == 0;
	int64_t *hit;

	if (cached && (hit = strmap_find(&v->cache, s, n))) {
		count = *hit & 0xfffff;
		for (k = 0; k < count; k++)
			if (bpe_ids_push(out, v->cache_ids.v[(*hit >> 20) + k]) < 0)
				return -1;
		return 0;
	}
	if (n >= INT32_MAX) {
		err_set("a piece of %zu bytes", n);
		return -1;
	}
	v->sym.n = 0;
	if (bpe_piece_symbols(v, s, n, &v->sym) < 0 ||
	    merge_symbols(v, out, e) < 0)
		return -1;
	if (!cached)
		return 0;
	if (v->cache.n >= CACHE_MAX_PIECES ||
	    v->cache_ids.n >= CACHE_MAX_IDS) {
		strmap_clear(&v->cache);
		v->cache_ids.n = 0;
	}
	count = out->n - start;
	for (k = 0; k < count; k++)
		if (bpe_ids_push(&v->cache_ids, out->v[start + k]) < 0)
			return -1;
	if (!(hit = strmap_put(&v->cache, s, n, NULL)))
		return -1;
	*hit = (int64_t)(v->cache_ids.n - count) << 20 | count;
	return 0;
}

static int encode_next(void *ctx, const char *s, size_t n)
{
	return encode_piece(ctx, s, n);
}

int bpe_encode(struct bpe *v, const char *text, size_t len,
	       struct bpe_ids *out)
{
	struct encoding e = { v, out, 0, NULL };

	return bpe_line_pieces(text, len, v->prefix, &v->line, encode_next,
			       &e);
}

int bpe_encode_dropout(struct bpe *v, const char *text, size_t len,
		       struct bpe_ids *out, double p, struct rng *r)
{
	struct encoding e = { v, out, p > 0 ? p : 0, r };

	return bpe_line_pieces(text, len, v->prefix, &v->line, encode_next,
			       &e);
}
