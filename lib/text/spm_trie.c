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
	struct spm_edge *e = calloc(slots, sizeof(*e));

	if (!e) {
		err_set("out of memory");
		return -1;
	}
	for (i = 0; t->mask && i <= t->mask; i++) {
		if (!t->edge[i].key)
			continue;
		for (j = spm_trie_slot(t->edge[i].key, slots - 1); e[j].key;
		     j = (j + 1) & (slots - 1))
			;
		e[j] = t->edge[i];
	}
	free(t->edge);
	t->edge = e;
	t->mask = slots - 1;
	return 0;
}

static int32_t new_node(struct spm_trie *t)
{
	int32_t *v;
	int cap;

	if (t->nnodes == SPM_TRIE_MAX_NODES) {
		err_set("more than %d trie nodes: pieces too many or too long",
			SPM_TRIE_MAX_NODES);
		return -1;
	}
	if (t->nnodes == t->cap) {
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
	uint32_t k;
	size_t i, j;

	if (!t->nnodes && new_node(t) < 0)
		return -1;
	for (i = 0; i < len; i++, node = next) {
		if ((next = spm_trie_next(t, node, (unsigned char)s[i])) >= 0)
			continue;
		if ((t->nedges + 1) * 2 > t->mask + 1 &&
		    grow_edges(t) < 0)
			return -1;
		if ((next = new_node(t)) < 0)
			return -1;
		k = ((uint32_t)node << 8 | (unsigned char)s[i]) + 1;
		for (j = spm_trie_slot(k, t->mask); t->edge[j].key;
		     j = (j + 1) & t->mask)
			;
		t->edge[j].key = k;
		t->edge[j].child = next;
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

void spm_trie_finish(struct spm_trie *t)
{
	size_t i;

	for (i = 0; t->mask && i <= t->mask; i++)
		if (t->edge[i].key)
			t->edge[i].value = t->value[t->edge[i].child];
}

void spm_trie_root(struct spm_trie *t)
{
	const struct spm_edge *e;
	int c;

	t->has_root = 0;
	for (c = 0; c < 256; c++) {
		e = spm_trie_edge(t, 0, (unsigned char)c);
		if (e)
			t->root[c] = *e;
		else
			memset(&t->root[c], 0, sizeof(t->root[c]));
	}
	t->has_root = 1;
}

void spm_trie_free(struct spm_trie *t)
{
	free(t->edge);
	free(t->value);
	memset(t, 0, sizeof(*t));
}
