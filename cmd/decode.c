/*
 * decode: greedy decoding (MODELS.md, Decoding) of every frame's memory
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

enum { OPT_MATMUL = 256 };

static void usage(void)
{
	printf("usage: %s -m MODEL [-t] [-b N] [-a A] [-c B] [--matmul PREC] "
	       "< memory.tsr\n"
	       "Greedy decoding: one line of text per frame.\n\n"
	       "  -m, --model=FILE     the model file\n"
	       "  -b, --batch=N        sentences per batch (default 64; "
	       "results do not depend on it)\n"
	       "  -a, --max-len-a=A    at most A*S+B target ids, </s> "
	       "included (default 2)\n"
	       "  -c, --max-len-b=B    (default 10)\n"
	       "  -t, --tensors        frames out: hyp.ids, att.weights, "
	       "hyp.score added\n"
	       "      --matmul=PREC    f32 (default) or bf16: the "
	       "Transformer decoder's\n"
	       "                       products' inputs rounded to "
	       "bfloat16 (AVX512_BF16)\n"
	       "  -h, --help           this help\n"
	       "  -V, --version        the version\n", progname);
	exit(0);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "model", required_argument, NULL, 'm' },
		{ "batch", required_argument, NULL, 'b' },
		{ "max-len-a", required_argument, NULL, 'a' },
		{ "max-len-b", required_argument, NULL, 'c' },
		{ "tensors", no_argument, NULL, 't' },
		{ "matmul", required_argument, NULL, OPT_MATMUL },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct translate_opts o = { .batch = 64 };

	prog_init(argc, argv);
	search_opts_default(&o.search);
	while (translate_getopt(argc, argv, "m:b:a:c:thV", longopts, usage,
				&o) != -1)
		o.bf16 = opt_bf16(optarg, "--matmul");	/* its one option */
	check_write(translate_run(&o));
	return 0;
}
