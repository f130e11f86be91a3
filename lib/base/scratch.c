/* scratch.c: a grow-only block kept from call to call; see scratch.h. */
#include <stdint.h>
#include <stdlib.h>
#include "errmsg.h"
#include "scratch.h"

void *scratch_get(struct scratch *s, size_t bytes)
{
	size_t size;

	if (bytes <= s->size && s->p)
		return s->p;
	scratch_free(s);
	/* a multiple of the alignment, as aligned_alloc wants */
	size = bytes < SIZE_MAX - 63 ? (bytes + 63) / 64 * 64 : 0;
	if (!size)
		size = bytes ? 0 : 64;
	if (!size || !(s->p = aligned_alloc(64, size))) {
		err_set("out of memory (%zu bytes of scratch)", bytes);
		return NULL;
	}
	s->size = size;
	return s->p;
}

void scratch_free(struct scratch *s)
{
	free(s->p);
	s->p = NULL;
	s->size = 0;
}
