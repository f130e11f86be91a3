/*
 * linejoin.h: a line split into sentences (tokenize; text/sentsplit.h)
 * travels as one frame a sentence, all with the line's frame number,
 * each with these records (doc/FORMAT.md):
 *
 *	line.part  i32 [2]  {k, n}: sentence k (from 0) of n (n >= 2)
 *	line.gap   u8       on k >= 1: the spaces between sentences k - 1
 *	                    and k; left out when there are none
 *
 * The spaces that begin and end the line belong to its first and last
 * sentences, as to a whole line.  A frame without line.part is a whole
 * line.  The programs that write text (decode, beam, tokenize -d) give
 * each frame's text to the joiner, which puts the line back: text, gap,
 * text, ...  Whatever a program changes in a frame's text (spans put
 * back, say) it changes before linejoin_text.
 */
#ifndef ATTN_LINEJOIN_H
#define ATTN_LINEJOIN_H

#include <stdint.h>
#include "stream/stream.h"
#include "text/bpe.h"
#include "text/sentsplit.h"
#include "text/vocab.h"

/* Writes the line.* records of sentence k of the n (n >= 2) of line
 * cut as span, into frame `frame` (not its end). */
int linejoin_put(struct tsr_writer *w, uint64_t frame, const char *line,
		 const struct sent_span *span, long k, long n);

/* The line being put back. */
struct linejoin {
	long k, n;		/* the part due next, of n; n 0: none open */
	uint64_t number;	/* the open line's frame number */
	struct bpe_text text;	/* the line so far */
	struct bpe_text align;	/* its word alignment so far */
	long src_words, tgt_words;	/* the words of its parts so far */
	double score;		/* the sum of its parts' scores */
	long len;		/* and of their lengths */
	int part;		/* the last frame was a part (not a line) */
};

/*
 * Takes frame f: 1 when it ends its line (a whole line, or the last
 * part), 0 when more parts follow, -1 (err_msg()) for a line.* record of
 * the wrong type or value, or a part out of its line's order.  A new
 * line empties text, align and the sums.
 */
int linejoin_frame(struct linejoin *j, const struct frame *f);
/* Appends the frame's gap and its text s [n] to j->text.  0, or -1 when
 * out of memory. */
int linejoin_text(struct linejoin *j, const struct frame *f, const char *s,
		  size_t n);
/* Appends a part's Pharaoh alignment a [n] ("i-j ...") to j->align, its
 * words moved past those of the parts before; src_words and tgt_words
 * are the part's own (words ids [...] make: words_of). */
int linejoin_align(struct linejoin *j, const char *a, size_t n,
		   long src_words, long tgt_words);
/* The number of words (attn_align.h's) of ids [n] in v; -1 if no
 * memory. */
long linejoin_words(const struct vocab *v, const int32_t *ids, int n);
/* At the end of the stream: -1 (err_msg()) if a line is still open. */
int linejoin_end(const struct linejoin *j);
void linejoin_free(struct linejoin *j);

#endif
