/*
 * spm_bpe.c: SentencePiece's BPE segmentation.  The normalised line is
 * cut into characters (a user-defined piece is one symbol, frozen: it
 * never merges); then, repeatedly, of the adjacent pairs whose joined
 * text is a piece, the one whose piece scores highest is merged (of
 * equal scores, the leftmost).  A symbol that is not a piece is <unk>.
 * A merged piece of type unused is cut back into the two symbols it was
 * made from, recursively (SentencePiece's resegmentation).
 *
 * Speed: two symbols that are both pieces merge only into the piece that
 * the pair table (made when the model loads) gives for their ids, which
 * is exactly the piece of their joined text, if any; only a symbol that
 * is no piece (an unknown character) needs its text looked up.
 */
#include <stdlib.h>
#include <string.h>
#include "spm_impl.h"
#include "base/errmsg.h"

struct sym {
	uint32_t off, len;      /* in the line; len 0: merged away */
	int32_t prev, next;
	int32_t id;             /* its piece (normal, user, unused), or -1 */
	int freeze;
};

struct spm_merge {
	float score;
	int32_t left, right;
	uint32_t len;           /* of the two together, when pushed */
	int32_t id;             /* the piece they make */
};

/* ---- the pair table: (left id, right id) -> the id of their join ------- */

static size_t pair_slot(uint64_t key, size_t mask)
{
	key *= 0x9e3779b97f4a7c15u;
	return (size_t)(key >> 32 ^ key) & mask;
}

static int pair_put(struct spm *m, uint64_t key, int32_t id)
{
	size_t i, slots;
	struct spm_pair *p;

	if ((m->npairs + 1) * 2 > m->pairmask + 1 || !m->pairs) {
		slots = m->pairs ? 2 * (m->pairmask + 1) : 1024;
		if (!(p = calloc(slots, sizeof(*p)))) {
			err_set("out of memory");
			return -1;
		}
		for (i = 0; m->pairs && i <= m->pairmask; i++) {
			size_t j;

			if (!m->pairs[i].key)
				continue;
			for (j = pair_slot(m->pairs[i].key, slots - 1); p[j].key;
			     j = (j + 1) & (slots - 1))
				;
			p[j] = m->pairs[i];
		}
		free(m->pairs);
		m->pairs = p;
		m->pairmask = slots - 1;
	}
	for (i = pair_slot(key, m->pairmask); m->pairs[i].key;
	     i = (i + 1) & m->pairmask)
		;
	m->pairs[i].key = key;
	m->pairs[i].id = id;
	m->npairs++;
	return 0;
}

static int32_t pair_find(const struct spm *m, int32_t l, int32_t r)
{
	uint64_t key = ((uint64_t)l << 32 | (uint32_t)r) + 1;
	size_t i;

	if (!m->pairs)
		return -1;
	for (i = pair_slot(key, m->pairmask); m->pairs[i].key;
	     i = (i + 1) & m->pairmask)
		if (m->pairs[i].key == key)
			return m->pairs[i].id;
	return -1;
}

int spm_bpe_init(struct spm *m)
{
	const int64_t *l, *r, *v;
	const char *s;
	size_t i, k, len;
	unsigned c;

	for (c = 0; c < 128; c++) {
		v = strmap_find(&m->pieces, &(char){ (char)c }, 1);
		m->ascii_id[c] = v ? (int32_t)*v : -1;
	}
	for (i = 0; i < m->pieces.n; i++) {
		s = m->pieces.keys.s + m->pieces.ent[i].off;
		len = m->pieces.ent[i].len;
		for (k = 1; k < len; k++)
			if ((l = strmap_find(&m->pieces, s, k)) &&
			    (r = strmap_find(&m->pieces, s + k, len - k)) &&
			    pair_put(m, ((uint64_t)*l << 32 | (uint32_t)*r) + 1,
				     (int32_t)m->pieces.ent[i].val) < 0)
				return -1;
	}
	return 0;
}

/* ---- a heap of pairs: the highest score first, then the leftmost ------- */

static int before(const struct spm_merge *a, const struct spm_merge *b)
{
	return a->score > b->score ||
	       (a->score == b->score && a->left < b->left);
}

static int heap_push(struct spm *m, const struct spm_merge *p)
{
	struct spm_merge *h = m->heap;
	size_t i, up, cap;

	if (m->nheap == m->heapcap) {
		cap = m->heapcap ? 2 * m->heapcap : 256;
		if (!(h = realloc(m->heap, cap * sizeof(*h)))) {
			err_set("out of memory");
			return -1;
		}
		m->heap = h;
		m->heapcap = cap;
	}
	for (i = m->nheap++; i > 0; i = up) {
		up = (i - 1) / 2;
		if (!before(p, &h[up]))
			break;
		h[i] = h[up];
	}
	h[i] = *p;
	return 0;
}

static struct spm_merge heap_pop(struct spm *m)
{
	struct spm_merge *h = m->heap, top = h[0], last = h[--m->nheap];
	size_t i = 0, c, n = m->nheap;

	while ((c = 2 * i + 1) < n) {
		if (c + 1 < n && before(&h[c + 1], &h[c]))
			c++;
		if (!before(&h[c], &last))
			break;
		h[i] = h[c];
		i = c;
	}
	if (n)
		h[i] = last;
	return top;
}

/* ---- merging ------------------------------------------------------------ */

static int maybe_push(struct spm *m, struct sym *y, int32_t l, int32_t r)
{
	struct spm_merge p;
	const int64_t *found;
	int64_t *rv;
	int32_t id;
	int added;

	if (l < 0 || r < 0 || y[l].freeze || y[r].freeze)
		return 0;
	p.len = y[l].len + y[r].len;
	if (y[l].id >= 0 && y[r].id >= 0) {
		id = pair_find(m, y[l].id, y[r].id);
	} else {
		found = strmap_find(&m->pieces, m->line.s + y[l].off, p.len);
		id = found ? (int32_t)*found : -1;
	}
	if (id < 0)
		return 0;
	p.score = m->piece[id].score;
	p.id = id;
	p.left = l;
	p.right = r;
	if (heap_push(m, &p) < 0)
		return -1;
	if (m->piece[id].type == SPM_UNUSED) {
		/* what it was made from (the last pair pushed that made
		 * it, as SentencePiece keeps): the left part's length */
		if (!(rv = strmap_put(&m->revmerge, m->line.s + y[l].off,
				       p.len, &added)))
			return -1;
		*rv = y[l].len;
	}
	return 0;
}

/* Appends the tokens of the symbol s [len] at off, cut back if unused. */
static int resegment(struct spm *m, uint32_t off, uint32_t len, int depth)
{
	const char *s = m->line.s + off;
	int32_t id = spm_piece_to_id(m, s, len);
	const int64_t *left;

	if (m->piece[id].type != SPM_UNUSED || depth > 1000 ||
	    !(left = strmap_find(&m->revmerge, s, len)))
		return spm_tok_push(m, id, off, len);
	if (resegment(m, off, (uint32_t)*left, depth + 1) < 0)
		return -1;
	return resegment(m, off + (uint32_t)*left, len - (uint32_t)*left,
			 depth + 1);
}

/* The piece id of a symbol's text, or -1. */
static int32_t sym_id(const struct spm *m, const char *s, size_t len)
{
	const int64_t *v;

	if (len == 1 && !(*s & 0x80))
		return m->ascii_id[(unsigned char)*s];
	v = strmap_find(&m->pieces, s, len);
	return v ? (int32_t)*v : -1;
}

int spm_bpe(struct spm *m)
{
	const char *s = m->line.s;
	size_t size = m->line.n, pos, mblen;
	struct sym *y;
	struct spm_merge top;
	int32_t n = 0, i, v;

	m->ntok = 0;
	if (!size)
		return 0;
	if (size > INT32_MAX) {
		err_set("line of %zu bytes: too long", size);
		return -1;
	}
	if (!(y = spm_work(m, size * sizeof(*y))))
		return -1;
	for (pos = 0; pos < size; pos += mblen, n++) {
		mblen = m->has_user ? spm_trie_longest(&m->user, s + pos,
						       size - pos, &v) : 0;
		y[n].freeze = mblen > 0;
		if (!mblen) {
			mblen = spm_char_len((unsigned char)s[pos]);
			if (mblen > size - pos)
				mblen = size - pos;
		}
		y[n].off = (uint32_t)pos;
		y[n].len = (uint32_t)mblen;
		y[n].prev = n - 1;
		y[n].next = pos + mblen < size ? n + 1 : -1;
		y[n].id = sym_id(m, s + pos, mblen);
	}
	m->nheap = 0;
	if (m->revmerge.n)
		strmap_clear(&m->revmerge);
	for (i = 1; i < n; i++)
		if (maybe_push(m, y, i - 1, i) < 0)
			return -1;
	while (m->nheap) {
		top = heap_pop(m);
		if (!y[top.left].len || !y[top.right].len ||
		    y[top.left].len + y[top.right].len != top.len)
			continue;
		y[top.left].len += y[top.right].len;
		y[top.left].id = top.id;
		y[top.left].next = y[top.right].next;
		if (y[top.right].next >= 0)
			y[y[top.right].next].prev = top.left;
		y[top.right].len = 0;
		if (maybe_push(m, y, y[top.left].prev, top.left) < 0 ||
		    maybe_push(m, y, top.left, y[top.left].next) < 0)
			return -1;
	}
	for (i = 0; i >= 0; i = y[i].next)
		if (resegment(m, y[i].off, y[i].len, 0) < 0)
			return -1;
	return 0;
}
