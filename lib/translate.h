/*
 * translate.h: the programs decode, beam and score over a stream of
 * frames that hold the decoder's memory (from attend): hypotheses found
 * by search (search.h), or the probability of given targets, printed as
 * text for people or added to the frames as records.
 */
#ifndef ATTN_TRANSLATE_H
#define ATTN_TRANSLATE_H

#include "search.h"

struct translate_opts {
	const char *model;
	int batch;
	struct search_opts search;
	int tensors;		/* frames out, not text */
	int moses;		/* n-best lines: i ||| text ||| score */
	int normalize;		/* score: per target token */
	int align;		/* score: Pharaoh word alignment */
};

/* decode and beam: stdin to stdout.  0, -1 (err_msg()) or TSR_EPIPE. */
int translate_run(const struct translate_opts *o);
/* score: the same, for frames with tgt.ids. */
int score_run(const struct translate_opts *o);

#endif
