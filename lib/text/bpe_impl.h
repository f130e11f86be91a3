/*
 * bpe_impl.h: the inside of the subword tokenizer (bpe.h), shared by its
 * files: a binary heap, the pieces, and struct bpe.
 */
#ifndef ATTN_BPE_IMPL_H
#define ATTN_BPE_IMPL_H

#include "bpe.h"
#include "strmap.h"

/* ---- a binary heap ------------------------------------------------------ */

/* Entries of `size` bytes; the first is the one `before` all others. */
struct bpe_heap {
	char *a;
	size_t n, cap, size;
	int (*before)(const void *x, const void *y, const void *ctx);
	const void *ctx;
};
int bpe_heap_push(struct bpe_heap *h, const void *e);
void bpe_heap_pop(struct bpe_heap *h, void *top);       /* h->n > 0 */
void bpe_heap_free(struct bpe_heap *h);

/* A pair of ids as a map key. */
static inline uint64_t bpe_pair_key(int32_t left, int32_t right)
{
	return (uint64_t)(uint32_t)left << 32 | (uint32_t)right;
}

/* ---- pieces (bpe.h says what they are) ---------------------------------- */

enum { BPE_CL_SPACE, BPE_CL_CONTROL, BPE_CL_PUNCT, BPE_CL_DIGIT,
       BPE_CL_LETTER };

struct bpe_char {
	int len;                /* bytes */
	int cls;
	int unit;               /* may be a character unit */
};
struct bpe_char bpe_char_at(const char *s, size_t n);   /* n >= 1 */
size_t bpe_piece_len(const char *s, size_t n);          /* n >= 1 */

/*
 * Calls piece(ctx, s, n) on each piece of a line, in order; with prefix,
 * on those of the line with the dummy prefix (a space before a line that
 * is not empty, put with the line in scratch).  Stops at, and returns,
 * the first -1 that piece returns.  Learning and applying both cut lines
 * here, so that they cannot disagree.
 */
int bpe_line_pieces(const char *s, size_t n, int prefix,
		    struct bpe_text *scratch,
		    int (*piece)(void *ctx, const char *s, size_t n),
		    void *ctx);

/* ---- the vocabulary ----------------------------------------------------- */

enum { BPE_KIND_SPECIAL, BPE_KIND_BYTE, BPE_KIND_CHAR, BPE_KIND_MERGE };

struct bpe_unit {
	size_t off;             /* its bytes in struct bpe's bytes */
	uint32_t len;
	int32_t left, right;    /* a merge's parts; -1 otherwise */
	int kind;
};

struct bpe {
	int n, cap, nmerges;
	int prefix;                     /* the dummy prefix (version 2) */
	struct bpe_unit *unit;
	struct bpe_text bytes;
	struct strmap by_bytes;        /* char and merge units: bytes -> id */
	struct strmap merge;           /* pair key -> id of the merged unit */
	int32_t ascii[128];             /* id of an ASCII character unit, or -1 */

	/* bpe_encode: the line with its prefix, a cache of pieces, and
	 * room to merge one */
	struct bpe_text line;
	struct strmap cache;           /* piece -> offset << 20 | count */
	struct bpe_ids cache_ids;
	struct bpe_ids sym, prev, next;
	struct bpe_heap heap;           /* of struct merge_at (bpe_encode.c) */
};

/* Specials and bytes only; NULL if out of memory. */
struct bpe *bpe_new(void);
/* Adds a char or merge unit; the id, or -1 (a duplicate, out of memory). */
int32_t bpe_add_unit(struct bpe *v, int kind, const char *s, size_t len,
		     int32_t left, int32_t right);
static inline const char *bpe_unit_bytes(const struct bpe *v, int32_t id)
{
	return v->bytes.s + v->unit[id].off;
}

/* Appends the units of a piece before any merge. */
int bpe_piece_symbols(const struct bpe *v, const char *s, size_t n,
		      struct bpe_ids *out);

#endif
