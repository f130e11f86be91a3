/*
 * arena.h: scratch laid out in one allocation, for the models' batches
 * and decoders.  A layout function takes its arrays with arena_take()
 * twice: first from an arena without memory (base NULL), which only
 * measures, then from one with memory for what that pass took (used
 * back at 0), so the two passes can never disagree.  Every array starts
 * on a 64-byte boundary (the base is 64-byte aligned, every take a
 * multiple of 64 bytes).
 */
#ifndef ATTN_ARENA_H
#define ATTN_ARENA_H

#include <stddef.h>

struct arena {
	char *base;	/* NULL: a measuring pass */
	size_t used;	/* bytes taken so far */
};

/* bytes of a (NULL when measuring); used grows by bytes rounded up to 64 */
void *arena_take(struct arena *a, size_t bytes);
/* The same for n floats. */
float *arena_floats(struct arena *a, size_t n);
/* Memory (malloc'ed, zeroed) for what a measuring pass took, used set
 * back to 0; -1 with err_msg() set when out of memory. */
int arena_alloc(struct arena *a);
/*
 * The same in a kept block s (base/scratch.h, grown as needed), zeroed
 * from byte zero_from on (SIZE_MAX: not at all): a training batch's
 * activations, in the model's or the thread's block.  0, or -1 with
 * err_msg() set.
 */
struct scratch;
int arena_in(struct arena *a, struct scratch *s, size_t zero_from);

#endif
