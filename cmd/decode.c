/*
 * decode: greedy decoding (doc/MODELS.md, Decoding) of every frame's memory
 * (from attend): the most probable token at each step, the lowest id of
 * equal ones, until </s> or the maximum length.  Prints the detokenised
 * translation, one line per frame, or with --tensors adds hyp.ids,
 * att.weights and hyp.score to the frames.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include "common/filter.h"
#include "common/prog.h"
#include "common/translate.h"

static void usage(void)
{
	printf("usage: %s -m MODEL [-t | -A] [--scores [--normalize]] [-b N] "
	       "[-a A] [-c B]\n"
	       "       [--block-repeats N] [--min-len N] [--matmul PREC] "
	       "[--kv PREC]\n"
	       "       [--shortlist]\n"
	       "       " FILTER_USAGE " < memory.tsr\n"
	       "Greedy decoding: one line of text per frame.\n\n"
	       "  -m, --model=FILE     the model file\n"
	       "  -b, --batch=N        sentences per batch (default 32, at "
	       "most 65536;\n"
	       "                       results do not depend on it)\n"
	       SEARCH_HELP, progname);
	prog_help_exit();
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		SEARCH_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	/* 32, not the other programs' 64: a greedy step reads every
	 * sentence's cross-attention keys and values, and 32 sentences'
	 * stay in a 1 MB L2 from step to step where 64 do not (the
	 * Firefox-shaped student, 2,000 lines: 0.91 of the CPU time; the
	 * Bible model's int8 export 0.94, its f32 1.00; Transformer-base
	 * int8 1.01, f32 1.04; doc/results.md) */
	struct translate_opts o = { .batch = 32 };

	prog_init(argc, argv);
	search_opts_default(&o.search);
	while (translate_getopt(argc, argv, "m:b:a:c:tAhV", longopts, usage,
				&o) != -1)
		;	/* no options of its own */
	check_write(translate_run(&o));
	return 0;
}
