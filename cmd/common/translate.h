/*
 * translate.h: the programs decode, beam and score over a stream of
 * frames that hold the decoder's memory (from attend): hypotheses found
 * by search (search.h), or the probability of given targets, printed as
 * text for people or added to the frames as records.
 */
#ifndef ATTN_TRANSLATE_H
#define ATTN_TRANSLATE_H

#include <getopt.h>
#include "run/search.h"

struct translate_opts {
	const char *model;
	int batch;
	struct search_opts search;
	int tensors;		/* frames out, not text */
	int moses;		/* n-best lines: i ||| text ||| score */
	int normalize;		/* score: per target token */
	int align;		/* score: Pharaoh word alignment */
	int bf16;		/* decode, beam: the Transformer decoder's
				   products in bf16 (model.h's dec_bf16) */
};

/*
 * getopt_long for decode, beam and score: -m, -b, -h and -V as
 * filter_getopt (the model needed), -a, -c and -t into o.  Returns the
 * program's other options one by one, then -1 at their end.
 */
int translate_getopt(int argc, char **argv, const char *shortopts,
		     const struct option *longopts, void (*usage)(void),
		     struct translate_opts *o);

/* decode and beam: stdin to stdout.  0, -1 (err_msg()) or TSR_EPIPE;
 * with o->bf16, -1 at once for a recurrent model or where bf16 products
 * cannot be made (gemm_packed.h). */
int translate_run(const struct translate_opts *o);
/* score: the same, for frames with tgt.ids. */
int score_run(const struct translate_opts *o);

#endif
