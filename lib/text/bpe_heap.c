/*
 * bpe_heap.c: a binary heap of small fixed-size entries, ordered by a
 * caller's function: the pairs to merge when learning and when applying.
 */
#include <stdlib.h>
#include <string.h>
#include "bpe_impl.h"
#include "base/errmsg.h"

#define AT(h, i) ((h)->a + (i) * (h)->size)

int bpe_heap_push(struct bpe_heap *h, const void *e)
{
	size_t i, up, cap;
	char *a;

	if (h->n == h->cap) {
		cap = h->cap ? 2 * h->cap : 64;
		a = realloc(h->a, cap * h->size);
		if (!a) {
			err_set("out of memory");
			return -1;
		}
		h->a = a;
		h->cap = cap;
	}
	for (i = h->n++; i > 0; i = up) {
		up = (i - 1) / 2;
		if (!h->before(e, AT(h, up), h->ctx))
			break;
		memcpy(AT(h, i), AT(h, up), h->size);
	}
	memcpy(AT(h, i), e, h->size);
	return 0;
}

void bpe_heap_pop(struct bpe_heap *h, void *top)
{
	const char *last;
	size_t i = 0, c;

	memcpy(top, h->a, h->size);
	last = AT(h, --h->n);
	while ((c = 2 * i + 1) < h->n) {
		if (c + 1 < h->n && h->before(AT(h, c + 1), AT(h, c), h->ctx))
			c++;
		if (!h->before(AT(h, c), last, h->ctx))
			break;
		memcpy(AT(h, i), AT(h, c), h->size);
		i = c;
	}
	memmove(AT(h, i), last, h->size);
}

void bpe_heap_free(struct bpe_heap *h)
{
	free(h->a);
	h->a = NULL;
	h->n = h->cap = 0;
}
