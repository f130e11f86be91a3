/*
 * score: log p(target | source) of every frame's tgt.ids under the model,
 * given the memory (from attend): the sum over the target's tokens, </s>
 * included, in nats; one line per frame.  Or the word alignment that the
 * attention gives, or with --tensors att.weights and hyp.score added.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include "common/filter.h"
#include "common/prog.h"
#include "common/translate.h"

static void usage(void)
{
	printf("usage: %s -m MODEL [-n] [-A [--layers L] [--heads H] "
	       "[--min-share X]\n"
	       "       [--unlinked WORDS] [--null] [--shift] [--cover] | -t] "
	       "[-b N]\n"
	       "       " FILTER_USAGE " < memory.tsr\n"
	       "Prints log p(tgt.ids | source) in nats, one line per "
	       "frame.\n\n"
	       "  -m, --model=FILE     the model file\n"
	       "  -n, --normalize      per target id (</s> included), not "
	       "the sum\n"
	       "  -A, --align          print the hard word alignment "
	       "(Pharaoh: i-j ...)\n"
	       "      --layers=L       layers averaged: 'all' or 0,1,... "
	       "(default all)\n"
	       "      --heads=H        heads of each (default all)\n"
	       "      --min-share=X    also link source words with X of "
	       "the mass (default 0)\n"
	       "      --unlinked=WORDS target words left without a link "
	       "(the,of,...)\n"
	       "      --null           no link where the source's </s> "
	       "has the most mass\n"
	       "                       (the default of a model trained "
	       "with guided alignment,\n"
	       "                       whose guided head -A reads unless "
	       "--layers or --heads)\n"
	       "      --shift          a unit's attention from the step "
	       "that reads it, not\n"
	       "                       the one that predicts it "
	       "(guided_shift=1)\n"
	       "      --cover          also link each source word left "
	       "without a link to the\n"
	       "                       target word of most mass on it "
	       "(to project markup)\n"
	       "  -t, --tensors        frames out: att.weights, hyp.score "
	       "added\n"
	       "  -b, --batch=N        sentences per batch (default 64, at "
	       "most 65536;\n"
	       "                       results do not depend on it)\n"
	       FILTER_HELP
	       "  -h, --help           this help\n"
	       "  -V, --version        the version\n", progname);
	prog_help_exit();
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "normalize", no_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		TRANSLATE_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	struct translate_opts o = { .batch = 64 };

	prog_init(argc, argv);
	search_opts_default(&o.search);
	while (translate_getopt(argc, argv, "m:nAtb:hV", longopts, usage,
				&o) != -1)
		o.normalize = 1;	/* -n, its one option */
	check_write(score_run(&o));
	return 0;
}
