/*
 * embed: the pipeline's stage that looks up the source embeddings of src.ids: src.emb [S, E].
 * Frames in on stdin, the same frames with src.emb added on stdout.
 */
#include "common/filter.h"
#include "common/prog.h"

int main(int argc, char **argv)
{
	prog_init(argc, argv);
	return filter_stage_main(argc, argv, STAGE_EMBED);
}
