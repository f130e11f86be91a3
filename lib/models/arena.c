/* arena.c: scratch laid out in one allocation; see arena.h. */
#include <stdlib.h>
#include <string.h>
#include "arena.h"
#include "base/errmsg.h"
#include "base/scratch.h"

void *arena_take(struct arena *a, size_t bytes)
{
	void *p = a->base ? a->base + a->used : NULL;

	a->used += (bytes + 63) & ~(size_t)63;
	return p;
}

float *arena_floats(struct arena *a, size_t n)
{
	return arena_take(a, sizeof(float) * n);
}

int arena_alloc(struct arena *a)
{
	/* a multiple of the alignment, as aligned_alloc wants */
	size_t bytes = a->used ? a->used : 64;

	a->base = aligned_alloc(64, bytes);
	if (!a->base) {
		err_set("out of memory (%zu bytes of scratch)", bytes);
		return -1;
	}
	memset(a->base, 0, bytes);
	a->used = 0;
	return 0;
}

int arena_in(struct arena *a, struct scratch *s, size_t zero_from)
{
	size_t bytes = a->used ? a->used : 64;

	if (!(a->base = scratch_get(s, bytes)))
		return -1;
	if (zero_from < bytes)
		memset(a->base + zero_from, 0, bytes - zero_from);
	a->used = 0;
	return 0;
}
