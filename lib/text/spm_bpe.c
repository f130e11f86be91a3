/*
 * spm_bpe.c: SentencePiece's BPE segmentation.  The normalised line is
 * cut into characters (a user-defined piece is one symbol, frozen: it
 * never merges); then, repeatedly, of the adjacent pairs whose joined
 * text is a piece, the one whose piece scores highest is merged (of
 * equal scores, the leftmost).  A symbol that is not a piece is <unk>.
 * A merged piece of type unused is cut back into the two symbols it was
 * made from, recursively (SentencePiece's resegmentation).
 */
#include <string.h>
#include "spm_impl.h"
#include "base/errmsg.h"

struct sym {
	uint32_t off, len;      /* in the line; len 0: merged away */
	int32_t prev, next;
	int freeze;
};

struct pair {
	float score;
	int32_t left, right;
	uint32_t len;           /* of the two together, when pushed */
};

static int before(const void *x, const void *y, const void *ctx)
{
	const struct pair *a = x, *b = y;

	(void)ctx;
	return a->score > b->score ||
	       (a->score == b->score && a->left < b->left);
}

static int maybe_push(struct spm *m, struct sym *y, int32_t l, int32_t r)
{
	struct pair p;
	const int64_t *id;
	int64_t *rv;
	int added;

	if (l < 0 || r < 0 || y[l].freeze || y[r].freeze)
		return 0;
	p.len = y[l].len + y[r].len;
	if (!(id = bpe_map_find(&m->pieces, m->line.s + y[l].off, p.len)))
		return 0;
	p.score = m->piece[*id].score;
	p.left = l;
	p.right = r;
	if (bpe_heap_push(&m->heap, &p) < 0)
		return -1;
	if (m->piece[*id].type == SPM_UNUSED) {
		/* what it was made from (the last pair pushed that made
		 * it, as SentencePiece keeps): the left part's length */
		if (!(rv = bpe_map_put(&m->revmerge, m->line.s + y[l].off,
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
	    !(left = bpe_map_find(&m->revmerge, s, len)))
		return spm_tok_push(m, id, off, len);
	if (resegment(m, off, (uint32_t)*left, depth + 1) < 0)
		return -1;
	return resegment(m, off + (uint32_t)*left, len - (uint32_t)*left,
			 depth + 1);
}

int spm_bpe(struct spm *m)
{
	const char *s = m->line.s;
	size_t size = m->line.n, pos, mblen;
	struct sym *y;
	struct pair top;
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
	}
	m->heap.n = 0;
	m->heap.size = sizeof(struct pair);
	m->heap.before = before;
	if (m->revmerge.n)
		bpe_map_clear(&m->revmerge);
	for (i = 1; i < n; i++)
		if (maybe_push(m, y, i - 1, i) < 0)
			return -1;
	while (m->heap.n) {
		bpe_heap_pop(&m->heap, &top);
		if (!y[top.left].len || !y[top.right].len ||
		    y[top.left].len + y[top.right].len != top.len)
			continue;
		y[top.left].len += y[top.right].len;
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
