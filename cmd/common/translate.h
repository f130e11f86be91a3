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
#include "text/attn_align.h"

struct translate_opts {
	const char *model;
	int batch;
	struct search_opts search;
	int tensors;		/* frames out, not text */
	int moses;		/* n-best lines: i ||| text ||| F0= raw ||| score */
	int scores;		/* decode, beam: ||| the score on each line */
	int normalize;		/* scores per target id, not their sum */
	int align;		/* Pharaoh word alignment */
	struct align_opts al;	/* what -A averages and links (attn_align.h) */
	int al_given;		/* any of --layers, --heads, --min-share,
				   --unlinked, --null, --shift, --cover */
	int planes_given;	/* --layers or --heads */
	int bf16;		/* decode, beam: the Transformer decoder's
				   products in bf16 (arch.h's dec_opts) */
	int kv_f16;		/* decode, beam: its attention's keys and
				   values in f16 (arch.h's dec_opts) */
	int kv_given;		/* --kv was given: else f16 for an int8
				   export, f32 otherwise */
	int beam;		/* beam (not decode): the model's beam size
				   and length penalty apply */
	unsigned given;		/* SEARCH_GIVEN_*: options the user gave,
				   which the model's settings leave */
	int shortlist;		/* decode, beam: the output layer over
				   each sentence's shortlist
				   (shortlist.h); 0: as the model's
				   dec_shortlist says, -1: never */
	int progress;		/* --progress: lines done on stderr (as
				   when stderr is a terminal) */
	int no_keep;		/* decode, beam: src.keep not put back */
};

/* The options of decode, beam and score: long-only ones, and the table
 * entries the three share (with FILTER_LONGOPTS). */
enum { OPT_SCORES = 0x4200, OPT_NORMALIZE, OPT_MATMUL, OPT_BLOCK_REPEATS,
       OPT_SHORTLIST, OPT_KV, OPT_MIN_LEN, OPT_NO_SHORTLIST, OPT_PROGRESS,
       OPT_NO_KEEP };
/* The options of the alignment (into o->al). */
enum { OPT_LAYERS = 0x4300, OPT_HEADS, OPT_MIN_SHARE, OPT_UNLINKED,
       OPT_NULL, OPT_SHIFT, OPT_COVER };
#define TRANSLATE_LONGOPTS \
	{ "model", required_argument, NULL, 'm' }, \
	{ "batch", required_argument, NULL, 'b' }, \
	{ "tensors", no_argument, NULL, 't' }, \
	{ "align", no_argument, NULL, 'A' }, \
	{ "layers", required_argument, NULL, OPT_LAYERS }, \
	{ "heads", required_argument, NULL, OPT_HEADS }, \
	{ "min-share", required_argument, NULL, OPT_MIN_SHARE }, \
	{ "unlinked", required_argument, NULL, OPT_UNLINKED }, \
	{ "null", no_argument, NULL, OPT_NULL }, \
	{ "shift", no_argument, NULL, OPT_SHIFT }, \
	{ "cover", no_argument, NULL, OPT_COVER }, \
	FILTER_LONGOPTS

/* The options decode and beam share, for their tables and --help. */
#define SEARCH_LONGOPTS \
	{ "max-len-a", required_argument, NULL, 'a' }, \
	{ "max-len-b", required_argument, NULL, 'c' }, \
	{ "scores", no_argument, NULL, OPT_SCORES }, \
	{ "normalize", no_argument, NULL, OPT_NORMALIZE }, \
	{ "matmul", required_argument, NULL, OPT_MATMUL }, \
	{ "kv", required_argument, NULL, OPT_KV }, \
	{ "block-repeats", required_argument, NULL, OPT_BLOCK_REPEATS }, \
	{ "min-len", required_argument, NULL, OPT_MIN_LEN }, \
	{ "shortlist", no_argument, NULL, OPT_SHORTLIST }, \
	{ "no-shortlist", no_argument, NULL, OPT_NO_SHORTLIST }, \
	{ "progress", no_argument, NULL, OPT_PROGRESS }, \
	{ "no-keep", no_argument, NULL, OPT_NO_KEEP }, \
	{ "help", no_argument, NULL, 'h' }, \
	{ "version", no_argument, NULL, 'V' }, \
	TRANSLATE_LONGOPTS
#define SEARCH_HELP \
	"  -a, --max-len-a=A    at most A*S+B target ids, </s> " \
	"included (default 2)\n" \
	"  -c, --max-len-b=B    (default 10)\n" \
	"  -A, --align          add ' ||| ' and the word alignment " \
	"(Pharaoh: i-j ...)\n" \
	"      --scores         add ' ||| ' and log p(translation) " \
	"in nats, the sum\n" \
	"      --normalize      the score per target id (</s> " \
	"included), not the sum\n" \
	"  -t, --tensors        frames out: hyp.ids, att.weights, " \
	"hyp.score added\n" \
	"      --block-repeats=N  no phrase of 1 to N units three " \
	"times in a row\n" \
	"                       (default 0: none blocked)\n" \
	"      --min-len=N      a non-empty source's translation has " \
	"at least N units\n" \
	"                       (default 1: never empty; 0: as the " \
	"model says)\n" \
	"      --matmul=PREC    f32 (default) or bf16: the " \
	"Transformer decoder's\n" \
	"                       products' inputs rounded to " \
	"bfloat16 (AVX512_BF16)\n" \
	"      --kv=PREC        f32 or f16: the Transformer " \
	"decoder's attention keys\n" \
	"                       and values kept in float16 " \
	"(default: f16 for an int8\n" \
	"                       export, f32 otherwise)\n" \
	"      --shortlist      score only each sentence's shortlist " \
	"of target units\n" \
	"                       (train-step --shortlist makes it; " \
	"a Marian model\n" \
	"                       imported with its own: by default)\n" \
	"      --no-shortlist   the full vocabulary, whatever the " \
	"model says\n" \
	"      --progress       lines done and their rate on standard " \
	"error, every\n" \
	"                       10 s (every second, on one line, when it " \
	"is a terminal)\n" \
	"      --no-keep        the spans tokenize kept (src.keep) not " \
	"put back: the\n" \
	"                       translation as the model wrote it\n" \
	FILTER_HELP \
	"  -h, --help           this help\n" \
	"  -V, --version        the version\n"

/*
 * getopt_long for decode, beam and score: -m, -b, -h, -V and
 * FILTER_LONGOPTS as filter_getopt (the model needed); -a, -c, -t, -A,
 * --scores, --normalize, --block-repeats, --min-len, --matmul, --kv,
 * --shortlist and the alignment's options into o.  Returns the program's other options one by one, then
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
