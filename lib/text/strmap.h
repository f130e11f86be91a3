/*
 * strmap.h: an open-addressing hash map from byte strings to int64
 * values, entries kept in the order added: the subword tokenizers' units,
 * merges and caches, and the import's YAML keys and vocabulary pieces.
 */
#ifndef ATTN_TEXT_STRMAP_H
#define ATTN_TEXT_STRMAP_H

#include <stddef.h>
#include <stdint.h>
#include "bpe.h"

struct strmap_ent {
	uint64_t hash;
	size_t off;             /* the key's bytes in keys */
	uint32_t len;
	int64_t val;
};
struct strmap {
	uint32_t *slot;         /* entry index + 1; 0 is empty */
	size_t mask;
	struct strmap_ent *ent;        /* in the order added */
	size_t n, cap;
	struct bpe_text keys;
};

int64_t *strmap_find(const struct strmap *m, const void *key, size_t len);
/* The value of key, added as 0 (and *added set) if absent; NULL if out of
 * memory. */
int64_t *strmap_put(struct strmap *m, const void *key, size_t len,
		     int *added);
void strmap_clear(struct strmap *m);
void strmap_free(struct strmap *m);

#endif
