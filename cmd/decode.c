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
#include "common/opt.h"
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
	       "  -b, --batch=N        sentences per batch (default 64, at "
	       "most 65536;\n"
	       "                       results do not depend on it)\n"
	       "  -a, --max-len-a=A    at most A*S+B target ids, </s> "
	       "included (default 2)\n"
	       "  -c, --max-len-b=B    (default 10)\n"
	       "  -A, --align          add ' ||| ' and the word alignment "
	       "(Pharaoh: i-j ...)\n"
	       "      --scores         add ' ||| ' and log p(translation) "
	       "in nats, the sum\n"
	       "      --normalize      the score per target id (</s> "
	       "included), not the sum\n"
	       "  -t, --tensors        frames out: hyp.ids, att.weights, "
	       "hyp.score added\n"
	       "      --block-repeats=N  no phrase of 1 to N units three "
	       "times in a row\n"
	       "                       (default 0: none blocked)\n"
	       "      --min-len=N      a non-empty source's translation has "
	       "at least N units\n"
	       "                       (default 1: never empty; 0: as the "
	       "model says)\n"
	       "      --matmul=PREC    f32 (default) or bf16: the "
	       "Transformer decoder's\n"
	       "                       products' inputs rounded to "
	       "bfloat16 (AVX512_BF16)\n"
	       "      --kv=PREC        f32 (default) or f16: the "
	       "Transformer decoder's\n"
	       "                       attention keys and values kept "
	       "in float16\n"
	       "      --shortlist      score only each sentence's shortlist "
	       "of target units\n"
	       "                       (train-step --shortlist makes it)\n"
	       FILTER_HELP
	       "  -h, --help           this help\n"
	       "  -V, --version        the version\n", progname);
	exit(0);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "max-len-a", required_argument, NULL, 'a' },
		{ "max-len-b", required_argument, NULL, 'c' },
		{ "scores", no_argument, NULL, OPT_SCORES },
		{ "normalize", no_argument, NULL, OPT_NORMALIZE },
		{ "matmul", required_argument, NULL, OPT_MATMUL },
		{ "kv", required_argument, NULL, OPT_KV },
		{ "block-repeats", required_argument, NULL,
		  OPT_BLOCK_REPEATS },
		{ "min-len", required_argument, NULL, OPT_MIN_LEN },
		{ "shortlist", no_argument, NULL, OPT_SHORTLIST },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		TRANSLATE_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	struct translate_opts o = { .batch = 64 };
	int c;

	prog_init(argc, argv);
	search_opts_default(&o.search);
	while ((c = translate_getopt(argc, argv, "m:b:a:c:tAhV", longopts,
				     usage, &o)) != -1)
		if (c == OPT_MATMUL)
			o.bf16 = opt_half(optarg, "--matmul", "bf16");
		else if (c == OPT_KV)
			o.kv_f16 = opt_half(optarg, "--kv", "f16");
		else	/* OPT_SHORTLIST, the other */
			o.shortlist = 1;
	check_write(translate_run(&o));
	return 0;
}
