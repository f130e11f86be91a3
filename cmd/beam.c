/*
 * beam: beam search (doc/MODELS.md, Decoding) of every frame's memory (from
 * attend), with the GNMT length penalty; -k 1 is exactly decode.  Prints
 * the best translation, one line per frame, or the n best in Moses'
 * format, or with --tensors adds hyp.ids, att.weights and hyp.score.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include "common/filter.h"
#include "common/opt.h"
#include "common/prog.h"
#include "common/translate.h"

/* Beams wider than this are a typo: the search holds k^2 candidates. */
#define BEAM_MAX 1000

static void usage(void)
{
	printf("usage: %s -m MODEL [-k K] [-l ALPHA] [-n N | -t] [-A] "
	       "[--scores [--normalize]]\n"
	       "       [-b N] [-a A] [-c B] [--block-repeats N] [--min-len N] "
	       "[--matmul PREC]\n"
	       "       [--kv PREC] [--shortlist]\n"
	       "       " FILTER_USAGE " < memory.tsr\n"
	       "Beam search: one line of text per frame.\n\n"
	       "  -m, --model=FILE     the model file\n"
	       "  -k, --beam=K         beam size (default 5, at most 1000)\n"
	       "  -l, --alpha=ALPHA    length penalty ((5+len)/6)^ALPHA "
	       "(default 1.0)\n"
	       "  -n, --nbest=N        the N best: i ||| text ||| F0= logp "
	       "||| logp/penalty\n"
	       "  -b, --batch=N        sentences per batch (default 16, at "
	       "most 65536;\n"
	       "                       results do not depend on it)\n"
	       SEARCH_HELP, progname);
	prog_help_exit();
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "beam", required_argument, NULL, 'k' },
		{ "alpha", required_argument, NULL, 'l' },
		{ "nbest", required_argument, NULL, 'n' },
		SEARCH_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	struct translate_opts o = { .batch = 16, .beam = 1 };
	int c;

	prog_init(argc, argv);
	search_opts_default(&o.search);
	o.search.k = 5;
	o.search.alpha = 1.0;	/* chosen on dev: doc/decoding.md */
	while ((c = translate_getopt(argc, argv, "m:k:l:n:b:a:c:tAhV",
				     longopts, usage, &o)) != -1)
		switch (c) {
		case 'k':
			o.given |= SEARCH_GIVEN_K;
			o.search.k = opt_int(optarg, "--beam", 1, BEAM_MAX);
			break;
		case 'l':
			o.given |= SEARCH_GIVEN_ALPHA;
			o.search.alpha = opt_number(optarg, "--alpha");
			break;
		case 'n':
			o.search.nbest = opt_int(optarg, "--nbest", 1,
						 BEAM_MAX);
			o.moses = 1;
			break;
		}
	if (o.moses && o.tensors)
		usage_error("--nbest and --tensors do not go together");
	if (o.moses && o.scores)
		usage_error("--nbest lines have their scores: no --scores");
	if (o.search.nbest > o.search.k)
		usage_error("--nbest %d is more than the beam (-k %d)",
			    o.search.nbest, o.search.k);
	check_write(translate_run(&o));
	return 0;
}
