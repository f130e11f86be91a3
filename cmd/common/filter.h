/*
 * filter.h: what the model programs share.  Frames are read in windows,
 * each window sorted by source length and handed to the model in batches
 * (so padding is small), then given back in input order, so output frame
 * (or line) N always belongs to input frame N and no result depends on
 * the batch size.
 */
#ifndef ATTN_FILTER_H
#define ATTN_FILTER_H

#include <getopt.h>
#include "models/model.h"
#include "stream/stream.h"

/*
 * A batch also holds at most FILTER_TOKENS x batch padded tokens (its
 * sentences times the longest source), a batch of one always allowed: one
 * long line then goes alone instead of padding a whole batch to its length.
 */
#define FILTER_TOKENS 100

struct filter {
	int batch;		/* frames per batch, at most */
	/* One batch of n frames; slot[i] is frame i's place in its window. */
	int (*process)(void *ctx, struct frame **f, const int *slot, int n);
	/* Every frame of a window, in input order; may return TSR_EPIPE. */
	int (*emit)(void *ctx, struct frame *f, int slot);
	void *ctx;
};

/* Frames per window for a batch size. */
int filter_window(int batch);

/* Runs fl over every frame of r.  0, -1 (err_msg()) or TSR_EPIPE. */
int filter_run(const struct filter *fl, struct tsr_reader *r);

/* The pipeline's stages, by name: "embed", "encode", "attend". */
enum stage { STAGE_EMBED, STAGE_ENCODE, STAGE_ATTEND };

/*
 * The work of the programs embed, encode and attend: the model at
 * model_path applied to every frame of stdin, frames out on stdout.
 */
int filter_stage(const char *model_path, enum stage s, int batch);

/*
 * getopt_long for the model programs: -m FILE into *model, -b N into
 * *batch; -h (usage()), -V and an unknown option answered here.  Returns
 * the program's other options one by one, then -1 at their end, having
 * refused a missing -m (when need_model) and any argument left over.
 */
int filter_getopt(int argc, char **argv, const char *shortopts,
		  const struct option *longopts, void (*usage)(void),
		  const char **model, int *batch, int need_model);

/*
 * The main of embed and encode, after prog_init: options -m, -b (default
 * 64), -h and -V (longopts: the program keeps its table), then stage s.
 */
int filter_stage_main(int argc, char **argv, const struct option *longopts,
		      void (*usage)(void), enum stage s);

#endif
