/*
 * bitext.h: sentence pairs as word ids, for the word aligner: side 0 the
 * source, side 1 the target, each in its own vocabulary (wordvocab.h).
 * Pair p's words on side s are ids[s][off[s][p] .. off[s][p + 1]).
 */
#ifndef ATTN_BITEXT_H
#define ATTN_BITEXT_H

#include <stdint.h>
#include "wordvocab.h"

/* Words a line may have, at most: a pair's work grows with the product
 * of its lengths. */
#define WA_MAX_WORDS 4096

struct wa_bitext {
	int n;			/* pairs */
	int cap;
	int64_t *off[2];	/* [n + 1] each */
	int32_t *ids[2];	/* -1: a word the vocabulary lacks */
	size_t nids[2], idcap[2];
};

/* Pair p's length on side s. */
static inline int wa_len(const struct wa_bitext *b, int s, int p)
{
	return (int)(b->off[s][p + 1] - b->off[s][p]);
}
/* Pair p's words on side s. */
static inline const int32_t *wa_words(const struct wa_bitext *b, int s, int p)
{
	return b->ids[s] + b->off[s][p];
}

/*
 * Appends the pair of lines line[0] [len[0]] and line[1] [len[1]], their
 * words looked up in v[0] and v[1] (added with add; fold: wordvocab.h).
 * 0, or -1 (err_msg()) when out of memory or when a line has more than
 * WA_MAX_WORDS words (the message names the side: "source", "target").
 */
int wa_bitext_add(struct wa_bitext *b, struct wa_vocab *const v[2],
		  const char *const line[2], const size_t len[2], int fold,
		  int add);
/* Empties b, keeping its memory. */
void wa_bitext_clear(struct wa_bitext *b);
void wa_bitext_free(struct wa_bitext *b);

#endif
