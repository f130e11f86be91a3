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
#include "prog.h"

/*
 * A batch also holds at most FILTER_TOKENS x batch padded tokens (its
 * sentences times the longest source), a batch of one always allowed: one
 * long line then goes alone instead of padding a whole batch to its length.
 */
#define FILTER_TOKENS 100
/*
 * And in the stages whose work is per padded token (pad_cut: embed,
 * encode, attend) at most FILTER_STAGE_TOKENS, a batch of one always
 * allowed: a layer's activations for 512 rows stay in a core's L2 from
 * one sub-layer to the next.  encode, one thread, against the budget of
 * 100 x 64 (AMD EPYC Zen 5, 1 MB L2): the Bible model 0.875 of the CPU
 * time, its int8 export 0.713, the Firefox-shaped student 0.961, a
 * Transformer-base (d 512) 1.00; 256 gave no more, 1024 less.
 */
#define FILTER_STAGE_TOKENS 512

/*
 * The limits a user sets on the programs that read streams (options
 * --max-input, --window-mem, --limit, --force; FILTER_LONGOPTS):
 * - max_input: source units per sentence, </s> not counted.  A longer
 *   source is cut to its first max_input units and </s> in every record
 *   indexed by source position (src.ids, src.emb, enc.out, att.keys,
 *   att.*.k, att.*.v), with a warning naming the line; the default, 1024,
 *   is four times the longest sentences of usual training data, and
 *   bounds encode's time and memory (quadratic in the length) per line.
 * - window_mem: a window also ends once the frames read into it hold
 *   this many bytes (default 64 MiB), whatever the batch size.
 * - limit: the largest record payload the reader accepts (doc/FORMAT.md).
 * - force: a binary stream written to a terminal (refused otherwise).
 * - unterminated: input that ends without the stream's end mark is
 *   taken as a whole stream, silently (refused otherwise: the program
 *   that wrote it stopped early; tsr_reader_set_unterminated).
 */
struct filter_limits {
	int max_input;
	uint64_t window_mem;
	uint64_t limit;
	int force;
	int unterminated;
};
extern struct filter_limits filter_lim;

#define FILTER_MAX_INPUT 1024
#define FILTER_WINDOW_MEM ((uint64_t)64 << 20)
#define FILTER_BATCH_MAX 65536

enum {
	OPT_MAX_INPUT = 0x4100, OPT_WINDOW_MEM, OPT_LIMIT, OPT_FORCE,
	OPT_UNTERMINATED
};
#define UNTERMINATED_LONGOPT \
	{ "unterminated", no_argument, NULL, OPT_UNTERMINATED }
/* The options of filter_lim and prog.h's, for a getopt_long table. */
#define FILTER_LONGOPTS \
	{ "max-input", required_argument, NULL, OPT_MAX_INPUT }, \
	{ "window-mem", required_argument, NULL, OPT_WINDOW_MEM }, \
	{ "limit", required_argument, NULL, OPT_LIMIT }, \
	{ "force", no_argument, NULL, OPT_FORCE }, \
	UNTERMINATED_LONGOPT, \
	PROG_LONGOPTS

/* The lines of --help for FILTER_LONGOPTS. */
#define FILTER_HELP \
	"      --max-input=N    cut sources to N units (default 1024), " \
	"with a warning\n" \
	"      --window-mem=BYTES  frames read ahead, at most (default " \
	"64M)\n" \
	"      --limit=BYTES    largest record accepted (default 4G)\n" \
	"      --threads=N      threads of the kernels (default: " \
	"ATTN_THREADS or all)\n" \
	"      --force          write a stream even to a terminal\n" \
	UNTERMINATED_HELP
#define UNTERMINATED_HELP \
	"      --unterminated   take input without the stream's end mark " \
	"(older files)\n"
#define FILTER_USAGE \
	"[--max-input N] [--window-mem BYTES] [--limit BYTES]\n" \
	"       [--threads N] [--force] [--unterminated]"

struct filter {
	int batch;		/* frames per batch, at most */
	/* A window's frames f, cut into nb batches sorted by length: batch
	 * b is f [start[b]] to f [start[b + 1] - 1] (start[0] = 0), its
	 * sources no longer than those of batch b + 1; slot[i] is frame i's
	 * place in the window.  Run the batches the last (the longest)
	 * first, so that a stage's workspace is allocated once at its
	 * largest, not grown batch by batch. */
	int (*process)(void *ctx, struct frame **f, const int *slot,
		       const int *start, int nb);
	/* Every frame of a window, in input order; may return TSR_EPIPE. */
	int (*emit)(void *ctx, struct frame *f, int slot);
	/* After each window's frames: makes them reach the reader, so that
	 * -b 1 answers line by line.  0, -1 or TSR_EPIPE. */
	int (*flush)(void *ctx);
	void *ctx;
	/* A batch also ends where the next frame would make its padded
	 * tokens more than FILTER_PAD times its tokens (a batch of one
	 * always allowed): for the stages whose work is per padded token
	 * (embed, encode, attend), not the search's, whose work is per
	 * sentence and step. */
	int pad_cut;
};
/* UI strings of 1 to 90 pieces sorted in windows of 1024 and cut in 64s
 * padded 30% (ui-en-de dev.en, 2000 lines); cut so, 4% in 55 batches for
 * 32, and encode's time went with the padded tokens. */
#define FILTER_PAD 1.1

/* Frames per window for a batch size (at most FILTER_BATCH_MAX). */
int filter_window(int batch);

/*
 * The reader of path ("-": stdin) with filter_lim's limit, compressed
 * records kept as stored and checked as they are read, a piece at a
 * time (TSR_RAW_CHECKED): a record a program only passes on is never
 * inflated in memory, and a damaged one is refused by the first stage
 * that reads it, naming the record and its frame, whether the stage
 * uses it or not.  NULL with err_msg().
 */
struct tsr_reader *filter_reader(const char *path);
/* The writer of a stream on stdout, refusing a terminal unless forced.
 * A program closes it with tsr_writer_finish when it did all it had to
 * (the end mark), with tsr_writer_close on an error. */
struct tsr_writer *filter_writer(void);
/* tsr_writer_finish when rc is 0, else tsr_writer_close (no end mark,
 * so that the next stage fails too); returns rc, or the close's failure
 * when rc was 0. */
int filter_writer_end(struct tsr_writer *w, int rc);
/* Writes the record name, dtype [n] at data (not copied), into frame,
 * with the end flag if end: tsr_write's answer. */
int filter_write_vec(struct tsr_writer *w, const char *name, int dtype,
		     const void *data, size_t n, uint64_t frame, int end);

/* Runs fl over every frame of r, the sources cut to filter_lim.max_input
 * and the windows bounded by window_mem.  0, -1 (err_msg()) or
 * TSR_EPIPE. */
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
 * *batch, FILTER_LONGOPTS into filter_lim; -h (usage()), -V and an
 * unknown option answered here.  Returns
 * the program's other options one by one, then -1 at their end, having
 * refused a missing -m (when need_model) and any argument left over.
 */
int filter_getopt(int argc, char **argv, const char *shortopts,
		  const struct option *longopts, void (*usage)(void),
		  const char **model, int *batch, int need_model);

/*
 * The whole main of embed and encode (stage s, STAGE_EMBED or
 * STAGE_ENCODE), after prog_init: options -m, -b (default 64),
 * FILTER_LONGOPTS, -h and -V, then the stage.
 */
int filter_stage_main(int argc, char **argv, enum stage s);

#endif
