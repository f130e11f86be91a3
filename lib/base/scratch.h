/*
 * scratch.h: a grow-only block of memory kept from call to call: a
 * batch's activations (tens to hundreds of megabytes) or a kernel's
 * packed panels, which would cost a page fault per 4 KiB if mapped
 * afresh every time.  The one such buffer of the library: a model's
 * training scratch, each thread's kernel slots (kern_scratch) and the
 * Transformer's batch workspace are all of this kind.
 */
#ifndef ATTN_SCRATCH_H
#define ATTN_SCRATCH_H

#include <stddef.h>

struct scratch {
	void *p;	/* 64-byte aligned, NULL before the first use */
	size_t size;	/* bytes, a multiple of 64 */
};

/*
 * s's block, at least bytes long: kept while big enough, else replaced
 * by a bigger one (contents undefined; the old one freed).  NULL with
 * err_msg() set when out of memory, s then empty.
 */
void *scratch_get(struct scratch *s, size_t bytes);
/* Frees s's block; s is empty again. */
void scratch_free(struct scratch *s);

#endif
