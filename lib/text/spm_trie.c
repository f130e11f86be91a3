/*
 * spm_trie.c: a trie of byte strings whose edges live in one hash table
 * keyed by (node, byte): one probe per byte of input however many
 * children a node has, for the unigram lattice and the user-defined
 * symbols' longest match.
 */
#include <stdlib.h>
#include <string.h>
#include "spm_impl.h"
#include "base/errmsg.h"

static int grow_edges(struct spm_trie *t)
{
	size_t slots = t->mask ? 2 * (t->mask + 1) : 1024, i, j;
	uint64_t *key = calloc(slots, sizeof(*key)), h;
	int32_t *child = malloc(slots * sizeof(*child));

	if (!key || !child) {
		free(key);
		free(child);
		err_set("out of memory");
		return -1;
	}
	for (i = 0; t->mask && i <= t->mask; i++) {
		if (!t->key[i])
			continue;
		h = t->key[i] * 0x9e3779b97f4a7c15u;
		for (j = (size_t)(h >> 32) & (slots - 1); key[j];
		     j = (j + 1) & (slots - 1))
			;
		key[j] = t->key[i];
		child[j] = t->child[i];
	}
	free(t->key);
	free(t->child);
	t->key = key;
	t->child = child;
	t->mask = slots - 1;
	return 0;
}

static int32_t new_node(struct spm_trie *t)
{
	int32_t *v;
	int cap;

	if (t->nnodes == t->cap) {
		if (t->cap > (1 << 29)) {
			err_set("out of memory");
			return -1;
		}
		cap = t->cap ? 2 * t->cap : 256;
		if (!(v = realloc(t->value, cap * sizeof(*v)))) {
			err_set("out of memory");
			return -1;
		}
		t->value = v;
		t->cap = cap;
	}
	t->value[t->nnodes] = -1;
	return t->nnodes++;
}

int spm_trie_add(struct spm_trie *t, const char *s, size_t len,
		 int32_t value)
{
	int32_t node = 0, next;
	uint64_t k, h;
	size_t i, j;

	if (!t->nnodes && new_node(t) < 0)
		return -1;
	for (i = 0; i < len; i++, node = next) {
		if ((next = spm_trie_next(t, node, (unsigned char)s[i])) >= 0)
			continue;
		if ((t->nedges + 1) * 4 > (t->mask + 1) * 3 &&
		    grow_edges(t) < 0)
			return -1;
		if ((next = new_node(t)) < 0)
			return -1;
		k = ((uint64_t)node << 8 | (unsigned char)s[i]) + 1;
		h = k * 0x9e3779b97f4a7c15u;
		for (j = (size_t)(h >> 32) & t->mask; t->key[j];
		     j = (j + 1) & t->mask)
			;
		t->key[j] = k;
		t->child[j] = next;
		t->nedges++;
	}
	t->value[node] = value;
	return 0;
}

size_t spm_trie_longest(const struct spm_trie *t, const char *s, size_t n,
			int32_t *value)
{
	int32_t node = 0;
	size_t i, best = 0;

	if (!t->nnodes)
		return 0;
	for (i = 0; i < n; i++) {
		if ((node = spm_trie_next(t, node, (unsigned char)s[i])) < 0)
			break;
		if (t->value[node] >= 0) {
			best = i + 1;
			*value = t->value[node];
		}
	}
	return best;
}

void spm_trie_free(struct spm_trie *t)
{
	free(t->key);
	free(t->child);
	free(t->value);
	memset(t, 0, sizeof(*t));
}
