/*
 * encode: the pipeline's stage that runs the encoder over src.emb: enc.out [S, D].
 * Frames in on stdin, the same frames with enc.out added on stdout.
 */
#include "common/filter.h"
#include "common/prog.h"

int main(int argc, char **argv)
{
	prog_init(argc, argv);
	return filter_stage_main(argc, argv, STAGE_ENCODE);
}
