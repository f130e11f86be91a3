/*
 * heap.h: how the programs (and the benches, which time what the
 * programs do) have glibc keep the memory they free.
 *
 * A program works in batches whose buffers (a decoder's key-value caches
 * and logits, the stages' frames) are freed and allocated again at much
 * the same sizes, batch after batch.  By default glibc gives a block
 * larger than its mmap threshold (128 KB at first, rising to what is
 * freed, 32 MB at most) pages of its own, unmapped when freed, and gives
 * the top of the heap back past its trim threshold: each batch then
 * faults its buffers in afresh, page by page, and a fault is dear in a
 * virtual machine.  So blocks up to 32 MB come from the heap and the heap
 * is never trimmed: what a batch frees, the next reuses.  On an AMD EPYC
 * (Zen 5) guest, one thread: the base Transformer's greedy translation
 * of 32 sentences (bench_transformer's) faulted about 38,000 pages a
 * batch and went from 1,418 to 1,821 tokens/s in int8, 970 to 1,163 in
 * f32; beam and decode over 512 dev verses with the shipped model took
 * 0.78 and 0.83 of the CPU time (farm-bench, medians of 5 paired runs),
 * for a peak of memory 50 and 30 MB higher (254 and 312 MB): freed
 * blocks are kept, not always reused at other sizes.
 */
#ifndef ATTN_HEAP_H
#define ATTN_HEAP_H

#include <malloc.h>

static inline void heap_keep_freed(void)
{
	mallopt(M_MMAP_THRESHOLD, 32 << 20);	/* glibc's largest */
	mallopt(M_TRIM_THRESHOLD, 1 << 30);
}

#endif
