/*
 * spm_impl.h: the inside of the SentencePiece model (spm.h), shared by its
 * files: a protobuf wire-format reader, a byte trie, the precompiled
 * charsmap, the normaliser and struct spm.
 */
#ifndef ATTN_SPM_IMPL_H
#define ATTN_SPM_IMPL_H

#include "spm.h"
#include "bpe_impl.h"   /* struct strmap, struct bpe_heap */

/* ---- the protobuf wire format (spm_proto.c) ----------------------------- */

enum { PB_VARINT = 0, PB_I64 = 1, PB_LEN = 2, PB_I32 = 5 };

/*
 * A reader of the bytes [p, end) of a message; base is the start of the
 * whole input, so that errors name byte offsets in it.
 */
struct pb {
	const uint8_t *p, *end, *base;
	const uint8_t *tag;     /* where the last tag read starts */
};

/* The next field's number and wire type; 0 at the end of the message,
 * -1 on a malformed tag (truncated, field 0, wire type 3, 4, 6 or 7). */
int pb_tag(struct pb *r, uint32_t *field, int *wire);
/* A varint (at most 10 bytes); -1 if truncated or too long. */
int pb_varint(struct pb *r, uint64_t *v);
/* A length-delimited field's bytes; -1 if its length runs past the end. */
int pb_bytes(struct pb *r, const uint8_t **s, size_t *n);
/* A 32-bit little-endian value (a float's bits). */
int pb_fixed32(struct pb *r, uint32_t *v);
/* Skips the value of a field of this wire type. */
int pb_skip(struct pb *r, int wire);
/* -1 with "field F of WHAT at byte N: wire type W, not WANT" unless
 * wire == want (N: where its tag starts). */
int pb_want(const struct pb *r, uint32_t field, int wire, int want,
	    const char *what);

/* ---- a byte trie (spm_trie.c): pieces, user-defined symbols ------------- */

/* Nodes are numbers (0 the root); an edge is a hash entry (node, byte),
 * key and child side by side: one cache line per byte looked up. */
struct spm_edge {
	uint32_t key;           /* (node << 8 | byte) + 1; 0 empty */
	int32_t child;
	int32_t value;          /* the child's (spm_trie_finish), and for */
	float score;            /* the unigram model its piece's score */
};
struct spm_trie {
	struct spm_edge *edge;
	size_t mask;            /* slots - 1 */
	size_t nedges;
	int32_t *value;         /* per node: a piece id, or -1 */
	int32_t nnodes, cap;
	int has_root;           /* root: the root's edges (spm_trie_finish) */
	struct spm_edge root[256];
};

#define SPM_TRIE_MAX_NODES (1 << 24)

int spm_trie_add(struct spm_trie *t, const char *s, size_t len,
		 int32_t value);
void spm_trie_free(struct spm_trie *t);

static inline size_t spm_trie_slot(uint32_t key, size_t mask)
{
	return (size_t)((key * 0x9e3779b97f4a7c15u) >> 40) & mask;
}

/* The edge from node by byte c, or NULL. */
static inline const struct spm_edge *spm_trie_edge(const struct spm_trie *t,
						   int32_t node,
						   unsigned char c)
{
	uint32_t k = ((uint32_t)node << 8 | c) + 1;
	size_t i;

	if (!t->mask)
		return NULL;
	if (node == 0 && t->has_root)
		return t->root[c].key ? &t->root[c] : NULL;
	for (i = spm_trie_slot(k, t->mask); t->edge[i].key;
	     i = (i + 1) & t->mask)
		if (t->edge[i].key == k)
			return &t->edge[i];
	return NULL;
}

/* The child of node by byte c, or -1. */
static inline int32_t spm_trie_next(const struct spm_trie *t, int32_t node,
				    unsigned char c)
{
	const struct spm_edge *e = spm_trie_edge(t, node, c);

	return e ? e->child : -1;
}

/* In the unigram trie, an edge's value with this bit is a user-defined
 * piece's, whose score is in node_score (ids stay below 2^30). */
#define SPM_USER_EDGE (1 << 30)

/* Copies each node's value into the edge that leads to it. */
void spm_trie_finish(struct spm_trie *t);
/* Copies the root's edges, once they are final, into t->root: the first
 * byte of every walk is then a direct look-up. */
void spm_trie_root(struct spm_trie *t);

/*
 * The longest key that s [n] begins with (its length, its value in
 * *value), or 0 if none.
 */
size_t spm_trie_longest(const struct spm_trie *t, const char *s, size_t n,
			int32_t *value);

/* ---- the precompiled charsmap (spm_charsmap.c) -------------------------- */

/*
 * A blob: a uint32 (little-endian) size of the trie in bytes, the trie (a
 * darts-clone double array of 32-bit units), then the normalised strings,
 * each NUL-terminated, that the trie's values index.
 */
struct spm_charsmap {
	const uint8_t *units;   /* nunits little-endian uint32s */
	size_t nunits;
	const char *strings;
	size_t nstrings;
	uint8_t first[256];     /* 1: the byte can begin a source string */
};

/* Checks the blob's layout; with an empty blob, an empty map. */
int spm_charsmap_init(struct spm_charsmap *c, const uint8_t *blob,
		      size_t len);
/*
 * The longest source string that s [n] begins with, among the first 32
 * matches (as SentencePiece looks): its length (0 if none), and in *to
 * and *tolen the normalised string.
 */
size_t spm_charsmap_match(const struct spm_charsmap *c, const char *s,
			  size_t n, const char **to, size_t *tolen);

/* ---- the normaliser (spm_norm.c) ---------------------------------------- */

struct spm_norm {
	struct spm_charsmap map;
	int add_dummy_prefix, remove_extra_whitespaces, escape_whitespaces;
	int suffix;             /* trainer's treat_whitespace_as_suffix */
	int present;            /* a denormaliser: the model has one */
};

/*
 * Appends the normalised text of s [n] to out (after out->n = 0); user,
 * when not NULL, holds the user-defined symbols, kept as they are.
 * from, when not NULL, gets (after from->n = 0) two values for each byte
 * of out: the start and the end of the bytes of s it comes from (a space
 * the normaliser adds, an empty span where it stands).
 */
int spm_normalize(const struct spm_norm *nm, const struct spm_trie *user,
		  const char *s, size_t n, struct bpe_text *out,
		  struct bpe_ids *from);

/* The byte length of the UTF-8 character that starts with byte c, as
 * SentencePiece counts it (by the lead byte alone). */
static inline size_t spm_char_len(unsigned char c)
{
	return "\1\1\1\1\1\1\1\1\1\1\1\1\2\2\3\4"[c >> 4];
}

/* ---- the model ---------------------------------------------------------- */

enum { SPM_NORMAL = 1, SPM_UNKNOWN = 2, SPM_CONTROL = 3,
       SPM_USER_DEFINED = 4, SPM_UNUSED = 5, SPM_BYTE = 6 };
enum { SPM_UNIGRAM = 1, SPM_BPE = 2, SPM_WORD = 3, SPM_CHAR = 4 };

struct spm_piece {
	size_t off;             /* its bytes in struct spm's bytes */
	uint32_t len;
	float score;
	int type;
};

/* (left id, right id) + 1 as one key, and the piece their texts make. */
struct spm_pair {
	uint64_t key;
	int32_t id;
};
struct spm_merge;

/* One piece of an encoding: an id and the normalised text it covers. */
struct spm_tok {
	int32_t id;
	uint32_t off, len;      /* in the normalised line */
};

struct spm {
	uint8_t *data;                  /* a copy of the file */
	int n;
	struct spm_piece *piece;
	struct bpe_text bytes;
	int type;                       /* SPM_UNIGRAM ... */
	int byte_fallback;
	int32_t unk_id;                 /* the unknown piece (the type) */
	int32_t special[4];             /* enum spm_special */
	int32_t byte_id[256];
	float min_score, max_score;     /* of normal pieces */
	struct bpe_text unk_surface;
	struct spm_norm norm, denorm;
	struct strmap pieces;          /* normal, user-defined, unused */
	struct strmap reserved;        /* unknown, control, byte */
	struct spm_trie trie;           /* unigram: the pieces but unused */
	double *node_score;             /* unigram: per trie node, its piece's */
	struct spm_trie user;           /* the user-defined pieces */
	struct spm_pair *pairs;         /* BPE: ids' pairs -> their join */
	size_t pairmask, npairs;
	int32_t ascii_id[128];          /* BPE: an ASCII character's piece */
	int has_user;

	/* scratch of spm_encode */
	struct bpe_text line;           /* the normalised line */
	struct bpe_ids from;            /* spm_encode_spans: its origins */
	struct spm_tok *tok;
	size_t ntok, tokcap;
	void *work;                     /* the model type's own */
	size_t workcap;
	struct spm_merge *heap;         /* BPE: the pairs to merge */
	size_t nheap, heapcap;
	struct strmap revmerge;        /* BPE: unused piece -> left length */
};

static inline const char *spm_piece_bytes(const struct spm *m, int32_t id)
{
	return m->bytes.s + m->piece[id].off;
}

/* SentencePiece's PieceToId: a reserved piece, else a piece, else unk. */
int32_t spm_piece_to_id(const struct spm *m, const char *s, size_t len);

/* Appends a token; -1 if out of memory. */
int spm_tok_push(struct spm *m, int32_t id, size_t off, size_t len);
/* Scratch of at least bytes bytes in m->work. */
void *spm_work(struct spm *m, size_t bytes);

/* The tokens (m->tok) of the normalised line m->line, per model type. */
int spm_unigram(struct spm *m);
int spm_bpe(struct spm *m);
/* The BPE model's tables, made once the pieces are loaded. */
int spm_bpe_init(struct spm *m);

#endif
