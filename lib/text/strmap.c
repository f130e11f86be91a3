/*
 * strmap.c: the hash map of strmap.h, from byte strings to int64, for
 * the tokenizer's units, merges, pair counts and piece cache.  Entries stay
 * in the order they were added, which makes iteration deterministic.
 */
#include <stdlib.h>
#include <string.h>
#include "strmap.h"
#include "base/errmsg.h"

static uint64_t hash_bytes(const unsigned char *p, size_t len)
{
	const uint64_t k = 0x9e3779b97f4a7c15u;
	uint64_t h = len * k, w;

	for (; len >= 8; p += 8, len -= 8) {
		memcpy(&w, p, 8);
		h = (h ^ w) * k;
		h ^= h >> 29;
	}
	w = 0;
	if (len)	/* an empty key may be NULL, which memcpy must not get */
		memcpy(&w, p, len);
	h = (h ^ w) * k;
	h ^= h >> 32;
	h *= 0xd6e8feb86659fd93u;
	return h ^ h >> 32;
}

static int key_eq(const struct strmap *m, const struct strmap_ent *e,
		  uint64_t h, const void *key, size_t len)
{
	return e->hash == h && e->len == len &&
	       (!len || memcmp(m->keys.s + e->off, key, len) == 0);
}

int64_t *strmap_find(const struct strmap *m, const void *key, size_t len)
{
	uint64_t h;
	size_t i;
	struct strmap_ent *e;

	if (!m->slot)
		return NULL;
	h = hash_bytes(key, len);
	for (i = h & m->mask; m->slot[i]; i = (i + 1) & m->mask) {
		e = &m->ent[m->slot[i] - 1];
		if (key_eq(m, e, h, key, len))
			return &e->val;
	}
	return NULL;
}

/* Doubles the slot table (keeping it at most half full). */
static int grow_slots(struct strmap *m)
{
	size_t size = m->slot ? 2 * (m->mask + 1) : 64, i, j;
	uint32_t *slot = calloc(size, sizeof(*slot));

	if (!slot || m->n >= UINT32_MAX / 2) {
		free(slot);
		err_set("out of memory");
		return -1;
	}
	for (i = 0; i < m->n; i++) {
		for (j = m->ent[i].hash & (size - 1); slot[j];
		     j = (j + 1) & (size - 1))
			;
		slot[j] = i + 1;
	}
	free(m->slot);
	m->slot = slot;
	m->mask = size - 1;
	return 0;
}

int64_t *strmap_put(struct strmap *m, const void *key, size_t len,
		     int *added)
{
	uint64_t h = hash_bytes(key, len);
	size_t i, cap;
	struct strmap_ent *e;

	if (added)
		*added = 0;
	if (len > UINT32_MAX) {
		err_set("map key of %zu bytes", len);
		return NULL;
	}
	if (2 * (m->n + 1) > (m->slot ? m->mask + 1 : 0) && grow_slots(m) < 0)
		return NULL;
	for (i = h & m->mask; m->slot[i]; i = (i + 1) & m->mask) {
		e = &m->ent[m->slot[i] - 1];
		if (key_eq(m, e, h, key, len))
			return &e->val;
	}
	if (m->n == m->cap) {
		cap = m->cap ? 2 * m->cap : 32;
		e = realloc(m->ent, cap * sizeof(*e));
		if (!e) {
			err_set("out of memory");
			return NULL;
		}
		m->ent = e;
		m->cap = cap;
	}
	e = &m->ent[m->n];
	e->hash = h;
	e->off = m->keys.n;
	e->len = len;
	e->val = 0;
	if (bpe_text_add(&m->keys, key, len) < 0)
		return NULL;
	m->slot[i] = ++m->n;
	if (added)
		*added = 1;
	return &e->val;
}

void strmap_clear(struct strmap *m)
{
	if (m->slot)
		memset(m->slot, 0, (m->mask + 1) * sizeof(*m->slot));
	m->n = 0;
	m->keys.n = 0;
}

void strmap_free(struct strmap *m)
{
	free(m->slot);
	free(m->ent);
	bpe_text_free(&m->keys);
	memset(m, 0, sizeof(*m));
}
