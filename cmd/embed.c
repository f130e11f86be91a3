/*
 * embed: the pipeline's stage that looks up the source embeddings of src.ids: src.emb [S, E].
 * Frames in on stdin, the same frames with src.emb added on stdout.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include "common/filter.h"
#include "common/prog.h"

static void usage(void)
{
	printf("usage: %s -m MODEL [-b N]\n"
	       "       " FILTER_USAGE " < in.tsr > out.tsr\n"
	       "Adds src.emb to every frame (src.ids in), for the model's "
	       "architecture.\n\n"
	       "  -m, --model=FILE     the model file\n"
	       "  -b, --batch=N        sentences per batch (default 64, at "
	       "most 65536;\n"
	       "                       results do not depend on it)\n"
	       FILTER_HELP
	       "  -h, --help           this help\n"
	       "  -V, --version        the version\n", progname);
	exit(0);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "model", required_argument, NULL, 'm' },
		{ "batch", required_argument, NULL, 'b' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		FILTER_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};

	prog_init(argc, argv);
	return filter_stage_main(argc, argv, longopts, usage, STAGE_EMBED);
}
