/*
 * translate.h: the programs decode, beam and score over a stream of
 * frames that hold the decoder's memory (from attend): hypotheses found
 * by search (search.h), or the probability of given targets, printed as
 * text for people or added to the frames as records.
 */
#ifndef ATTN_TRANSLATE_H
#define ATTN_TRANSLATE_H

#include <getopt.h>
#include "common/filter.h"
#include "run/search.h"
#include "text/align.h"

struct translate_opts {
	const char *model;
	int batch;
	struct search_opts search;
	int tensors;		/* frames out, not text */
	int moses;		/* n-best lines: i ||| text ||| F0= raw ||| score */
	int scores;		/* decode, beam: ||| the score on each line */
	int normalize;		/* scores per target id, not their sum */
	int align;		/* Pharaoh word alignment */
	struct align_opts al;	/* what -A averages and links (align.h) */
	int al_given;		/* any of --layers, --heads, --min-share,
				   --unlinked */
	int bf16;		/* decode, beam: the Transformer decoder's
				   products in bf16 (arch.h's dec_opts) */
	int kv_f16;		/* decode, beam: its attention's keys and
				   values in f16 (arch.h's dec_opts) */
	int shortlist;		/* decode, beam: the output layer over
				   each sentence's shortlist
				   (shortlist.h) */
};

/* The options of decode, beam and score: long-only ones, and the table
 * entries the three share (with FILTER_LONGOPTS). */
enum { OPT_SCORES = 0x4200, OPT_NORMALIZE, OPT_MATMUL, OPT_BLOCK_REPEATS,
       OPT_SHORTLIST, OPT_KV, OPT_MIN_LEN };
/* The options of the alignment (into o->al). */
enum { OPT_LAYERS = 0x4300, OPT_HEADS, OPT_MIN_SHARE, OPT_UNLINKED };
#define TRANSLATE_LONGOPTS \
	{ "model", required_argument, NULL, 'm' }, \
	{ "batch", required_argument, NULL, 'b' }, \
	{ "tensors", no_argument, NULL, 't' }, \
	{ "align", no_argument, NULL, 'A' }, \
	{ "layers", required_argument, NULL, OPT_LAYERS }, \
	{ "heads", required_argument, NULL, OPT_HEADS }, \
	{ "min-share", required_argument, NULL, OPT_MIN_SHARE }, \
	{ "unlinked", required_argument, NULL, OPT_UNLINKED }, \
	FILTER_LONGOPTS

/*
 * getopt_long for decode, beam and score: -m, -b, -h, -V and
 * FILTER_LONGOPTS as filter_getopt (the model needed); -a, -c, -t, -A,
 * --scores, --normalize, --block-repeats, --min-len and the alignment's
 * options into o.  Returns the program's other options one by one, then
 * -1 at their end, having
 * refused --tensors with --align or --scores, and the alignment's
 * options without --align.
 */
int translate_getopt(int argc, char **argv, const char *shortopts,
		     const struct option *longopts, void (*usage)(void),
		     struct translate_opts *o);

/* decode and beam: stdin to stdout.  0, -1 (err_msg()) or TSR_EPIPE;
 * with o->bf16, -1 at once for a recurrent model or where bf16 products
 * cannot be made (gemm_packed.h); with o->kv_f16, for a recurrent model;
 * with o->shortlist, for a model without one. */
int translate_run(const struct translate_opts *o);
/* score: the same, for frames with tgt.ids. */
int score_run(const struct translate_opts *o);

#endif
