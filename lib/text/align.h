/*
 * align.h: hard word alignments from attention weights, in the Pharaoh
 * format ("i-j" pairs of source and target word positions, from 0,
 * separated by spaces).  Words are the text's space-separated words, not
 * subword units: a unit belongs to the word of its first non-space byte
 * (a unit that starts with U+2581 starts a new word), and units that have
 * no such byte (</s>, a lone space) belong to none.
 */
#ifndef ATTN_ALIGN_H
#define ATTN_ALIGN_H

#include <stdint.h>
#include "bpe.h"

/* word[i] (>= 0, or -1: no word) for each of the n ids. */
int align_unit_words(const struct bpe *v, const int32_t *ids, int n,
		     int *word);

/*
 * Appends the alignment of target ids tgt [T] to source ids src [S] under
 * the attention weights attw [P, T, S] (the mean of the P planes is used;
 * the Transformer's caller passes its last layer's heads): each target
 * word unit is linked to the source word unit it attends to most.  Pairs
 * are sorted, each once.
 */
int align_pharaoh(const struct bpe *sv, const int32_t *src, int S,
		  const struct bpe *tv, const int32_t *tgt, int T,
		  const float *attw, int P, struct bpe_text *out);

#endif
