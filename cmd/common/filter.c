/* filter.c: windows, batches and input order for the programs, and
 * their common options; see filter.h. */
#include <fcntl.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "base/errmsg.h"
#include "filter.h"
#include "kernels/kernels.h"
#include "modelid.h"
#include "opt.h"
#include "prog.h"

struct filter_limits filter_lim = {
	FILTER_MAX_INPUT, FILTER_WINDOW_MEM, TSR_DEFAULT_LIMIT, 0, 0
};

int filter_window(int batch)
{
	return batch > 1 ? 16 * batch : 1;
}

/* The source length of a frame: what batches are sorted by. */
static uint64_t source_length(const struct frame *f)
{
	static const char *const names[] = { "src.ids", "src.emb", "enc.out" };
	size_t i;

	for (i = 0; i < sizeof names / sizeof names[0]; i++) {
		const struct tensor *t = frame_head(f, names[i]);

		if (t && t->rank >= 1)
			return t->dim[0];
	}
	return 0;
}

/* The records indexed by source position (doc/MODELS.md), [S, ...]. */
static int by_source(const char *name)
{
	static const char *const pat[] = {
		"src.ids", "src.emb", "enc.out", "att.keys", "att.*.k",
		"att.*.v"
	};
	size_t i;

	for (i = 0; i < sizeof pat / sizeof pat[0]; i++)
		if (fnmatch(pat[i], name, 0) == 0)
			return 1;
	return 0;
}

/*
 * A source of more than max units (and </s>) cut to its first max and
 * </s>: the rows of every record indexed by source position, src.ids'
 * last id moved to the end (src.ids ends with </s>, doc/FORMAT.md).
 * 0, or -1 if there is no memory to inflate a record to cut.
 */
static int cut_input(struct frame *f, int max)
{
	uint64_t S = source_length(f), keep = (uint64_t)max + 1;
	int i;

	if (S <= keep)
		return 0;
	for (i = 0; i < f->n; i++) {
		struct tensor *t = &f->rec[i];
		size_t row;

		if (t->rank < 1 || t->dim[0] != S || !by_source(t->name))
			continue;
		if (tsr_inflate(t) < 0)
			return -1;
		row = t->nbytes / S;
		if (strcmp(t->name, "src.ids") == 0 && t->dtype == DT_I32)
			((int32_t *)t->data)[keep - 1] =
				((int32_t *)t->data)[S - 1];
		t->dim[0] = keep;
		t->nbytes = keep * row;
	}
	warnx_("line %llu: %llu units cut to %d (--max-input)",
	       (unsigned long long)f->number + 1,
	       (unsigned long long)S - 1, max);
	return 0;
}

/* The bytes a frame holds, records kept as stored (filter_reader)
 * counted as inflated: what the frame takes once the stage has looked
 * its records up. */
static uint64_t frame_bytes(const struct frame *f)
{
	uint64_t b = 0;
	int i;

	for (i = 0; i < f->n; i++)
		b += f->rec[i].nbytes;
	return b;
}

struct keyed {
	uint64_t len;
	int slot;
};

static int keyed_cmp(const void *pa, const void *pb)
{
	const struct keyed *a = pa, *b = pb;

	if (a->len != b->len)
		return a->len < b->len ? -1 : 1;
	return a->slot - b->slot;
}

/*
 * Runs a window: its frames sorted by length and cut into batches, each
 * of at most fl->batch frames and FILTER_TOKENS x fl->batch units
 * (FILTER_STAGE_TOKENS with pad_cut), padding included; then the frames
 * given back in input order.  start
 * has room for n + 1 entries, fp and slot for n.
 */
/*
 * After the window's batches failed: the batches go by length, so the
 * frame whose error was given may come after others that fail too
 * ("frame 84 has no record ..." where every frame lacks it).  Each frame
 * is tried alone, in input order, and the first to fail gives the
 * message; when every frame of the window fails, the message says so.
 * If none fails alone, the batches' own message stands.  -1.
 */
static int first_failure(const struct filter *fl, struct frame *win, int n,
			 struct frame **fp, int *slot, int *start)
{
	char msg[512];
	int i, first = -1, failed = 0;

	snprintf(msg, sizeof msg, "%s", err_msg());
	start[0] = 0;
	start[1] = 1;
	for (i = 0; i < n && (first < 0 || failed == i); i++) {
		fp[0] = &win[i];
		slot[0] = i;
		if (fl->process(fl->ctx, fp, slot, start, 1) < 0) {
			if (first < 0) {
				first = i;
				snprintf(msg, sizeof msg, "%s", err_msg());
			}
			failed++;
		}
	}
	if (first == 0 && failed == n && n > 1)
		err_set("%s, nor has any of the %d frames read", msg, n);
	else
		err_set("%s", msg);
	return -1;
}

static int run_window(const struct filter *fl, struct frame *win, int n,
		      struct keyed *key, int *start, struct frame **fp,
		      int *slot)
{
	uint64_t tokens = (uint64_t)FILTER_TOKENS * fl->batch, sum;
	int i, lo, b, nb = 0, rc;

	if (fl->pad_cut && tokens > FILTER_STAGE_TOKENS)
		tokens = FILTER_STAGE_TOKENS;

	for (i = 0; i < n; i++) {
		key[i].len = source_length(&win[i]);
		key[i].slot = i;
	}
	qsort(key, n, sizeof *key, keyed_cmp);
	for (lo = 0; lo < n; lo += b) {
		/* sorted by length: the last one taken is the longest */
		sum = key[lo].len;
		for (b = 1; b < fl->batch && lo + b < n; b++) {
			uint64_t len = key[lo + b].len;

			if ((uint64_t)(b + 1) * len > tokens ||
			    (fl->pad_cut &&
			     (double)(b + 1) * len > FILTER_PAD * (sum + len)))
				break;
			sum += len;
		}
		start[nb++] = lo;
	}
	start[nb] = n;
	for (i = 0; i < n; i++) {
		slot[i] = key[i].slot;
		fp[i] = &win[slot[i]];
	}
	if (fl->process(fl->ctx, fp, slot, start, nb) < 0)
		return first_failure(fl, win, n, fp, slot, start);
	for (i = 0; i < n; i++) {
		if ((rc = fl->emit(fl->ctx, &win[i], i)) < 0)
			return rc;
		frame_clear(&win[i]);
	}
	return fl->flush(fl->ctx);
}

/*
 * After a read error (a stream cut short, a damaged record): the window's
 * n whole frames, read before it, still go out, so that output line N is
 * still input line N's up to the damage; the read error stays the
 * message (the window's own failure, if any, is the lesser news).
 */
static void run_read_window(const struct filter *fl, struct frame *win,
			    int n, struct keyed *key, int *start,
			    struct frame **fp, int *slot)
{
	char *msg = strdup(err_msg());

	run_window(fl, win, n, key, start, fp, slot);
	if (msg)
		err_set("%s", msg);
	free(msg);
}

int filter_write_vec(struct tsr_writer *w, const char *name, int dtype,
		     const void *data, size_t n, uint64_t frame, int end)
{
	struct tensor t;

	memset(&t, 0, sizeof t);
	strcpy(t.name, name);
	t.dtype = dtype;
	t.rank = 1;
	t.dim[0] = n;
	t.data = (void *)data;
	t.nbytes = n * dtype_size(dtype);
	return tsr_write(w, &t, frame, end);
}

int filter_run(const struct filter *fl, struct tsr_reader *r)
{
	int W = filter_window(fl->batch), n = 0, rc = 0, i;
	uint64_t bytes = 0;
	struct frame *win = calloc(W, sizeof *win);
	struct keyed *key = malloc(W * sizeof *key);
	int *start = malloc((W + 1) * sizeof *start);
	struct frame **fp = malloc(W * sizeof *fp);
	int *slot = malloc(W * sizeof *slot);

	if (!win || !key || !start || !fp || !slot) {
		err_set("out of memory for a window of %d frames", W);
		rc = -1;
		goto out;
	}
	for (;;) {
		int got = tsr_read_frame(r, &win[n]);

		if (got < 0) {	/* the frames before the damage still go out */
			rc = -1;
			if (n > 0)
				run_read_window(fl, win, n, key, start, fp,
						slot);
			break;
		}
		if (got == 1) {
			if (cut_input(&win[n], filter_lim.max_input) < 0) {
				rc = -1;
				break;
			}
			bytes += frame_bytes(&win[n++]);
		}
		if (n == W || bytes >= filter_lim.window_mem ||
		    (got == 0 && n > 0)) {
			rc = run_window(fl, win, n, key, start, fp, slot);
			if (rc < 0)
				break;
			n = 0;
			bytes = 0;
		}
		if (got == 0)
			break;
	}
out:
	for (i = 0; win && i < W; i++)
		frame_free(&win[i]);
	free(win);
	free(key);
	free(start);
	free(fp);
	free(slot);
	return rc;
}

struct stage_ctx {
	const struct model *m;
	struct model_id id;
	enum stage s;
	struct tsr_writer *w;
};

/* Frames fb [n], one batch, through stage c. */
static int stage_batch(const struct stage_ctx *c, struct frame **fb, int n)
{
	const struct arch *a = c->m->arch;

	return c->s == STAGE_EMBED ? a->embed(c->m, fb, n) :
	       c->s == STAGE_ENCODE ? a->encode(c->m, fb, n) :
	       a->attend(c->m, fb, n);
}

/* A window's batches dealt to the threads whole (as search_deal.c deals
 * the search's): each thread runs its batches' kernels serially, and the
 * threads meet once a window, not at every product of every batch. */
struct stage_deal {
	const struct stage_ctx *c;
	struct frame **f;
	const int *start;
	int nb;
	char (*msg)[256];	/* [nb]: a batch's error, "" when none */
};

static void stage_task(void *ctx, int64_t lo, int64_t hi)
{
	struct stage_deal *d = ctx;

	for (int64_t x = lo; x < hi; x++) {
		int b = d->nb - 1 - (int)x;	/* the longest first */

		if (stage_batch(d->c, d->f + d->start[b],
				d->start[b + 1] - d->start[b]) < 0)
			snprintf(d->msg[b], sizeof d->msg[b], "%s",
				 err_msg()[0] ? err_msg() : "failed");
	}
}

static int stage_process(void *arg, struct frame **f, const int *slot,
			 const int *start, int nb)
{
	const struct stage_ctx *c = arg;
	struct stage_deal d = { c, f, start, nb, NULL };
	int i, rc = 0;

	for (i = 0; i < start[nb]; i++)
		if (model_id_frame(f[i], &c->id) < 0)
			return -1;
	if (c->s == STAGE_EMBED)
		for (i = 0; i < start[nb]; i++)
			if (model_check_ids(f[i], "src.ids", c->m->src_vocab,
					    "tokenize") < 0)
				return -1;
	if (nb >= 2 && kern_threads() >= 2)
		d.msg = calloc(nb, sizeof *d.msg);
	if (!d.msg) {	/* one batch, one thread (or no memory to deal) */
		for (int b = nb - 1; b >= 0 && rc == 0; b--)
			rc = stage_batch(c, f + start[b],
					 start[b + 1] - start[b]);
		return rc;
	}
	kern_parallel_each(nb, stage_task, &d);
	/* the error the batches one by one would have met first */
	for (int b = nb - 1; b >= 0 && rc == 0; b--)
		if (d.msg[b][0]) {
			err_set("%s", d.msg[b]);
			rc = -1;
		}
	free(d.msg);
	return rc;
}

static int stage_emit(void *arg, struct frame *f, int slot)
{
	const struct stage_ctx *c = arg;

	return tsr_write_frame(c->w, f);
}

static int stage_flush(void *arg)
{
	const struct stage_ctx *c = arg;

	return tsr_flush(c->w);
}

/*
 * A pipe between two stages holds 64 KB by default: a frame of the
 * decoder's keys and values (tens of KB) and a window of them (tens of
 * MB) pass through it in so many turns that each side sleeps and wakes
 * thousands of times.  Grown to 1 MB (the most a user may ask where
 * /proc/sys/fs/pipe-max-size is the default); on a file or a terminal,
 * or if refused, as it was.
 */
static void grow_pipe(int fd)
{
	(void)fcntl(fd, F_SETPIPE_SZ, 1 << 20);
}

struct tsr_reader *filter_reader(const char *path)
{
	struct tsr_reader *r = tsr_reader_path(path);

	if (strcmp(path, "-") == 0)
		grow_pipe(0);

	if (r) {
		tsr_reader_set_limit(r, filter_lim.limit);
		tsr_reader_set_raw(r, TSR_RAW_CHECKED);
		tsr_reader_set_unterminated(r, filter_lim.unterminated);
	}
	return r;
}

struct tsr_writer *filter_writer(void)
{
	if (!filter_lim.force && isatty(1)) {
		err_set("<stdout>: not writing a binary stream to a terminal "
			"(--force writes it)");
		return NULL;
	}
	grow_pipe(1);
	return tsr_writer_fd(1, "<stdout>", 0);
}

int filter_writer_end(struct tsr_writer *w, int rc)
{
	int end = rc == 0 ? tsr_writer_finish(w) : tsr_writer_close(w);

	return rc == 0 ? end : rc;
}

int filter_stage(const char *model_path, enum stage s, int batch)
{
	struct stage_ctx c = { .s = s };
	struct filter fl = { batch, stage_process, stage_emit, stage_flush,
			     &c, 1 };
	struct tsr_reader *r = NULL;
	struct model *m = model_load(model_path, MODEL_LOAD_MAPPED, NULL);
	int rc = -1;

	if (!m)
		return -1;
	c.m = m;
	model_id_model(&c.id, m, model_path);
	r = filter_reader("-");
	c.w = r ? filter_writer() : NULL;
	if (r && c.w)
		rc = filter_run(&fl, r);
	if (c.w)
		rc = filter_writer_end(c.w, rc);
	tsr_reader_free(r);
	model_free(m);
	return rc;
}

int filter_getopt(int argc, char **argv, const char *shortopts,
		  const struct option *longopts, void (*usage)(void),
		  const char **model, int *batch, int need_model)
{
	int c;

	while ((c = prog_getopt(argc, argv, shortopts, longopts, 0)) != -1)
		switch (c) {
		case 'm':
			*model = optarg;
			break;
		case 'b':
			*batch = opt_int(optarg, "--batch", 1,
					FILTER_BATCH_MAX);
			break;
		case OPT_MAX_INPUT:
			filter_lim.max_input = opt_int(optarg, "--max-input",
						       1, 1 << 20);
			break;
		case OPT_WINDOW_MEM:
			filter_lim.window_mem = opt_bytes(optarg,
							  "--window-mem");
			break;
		case OPT_LIMIT:
			filter_lim.limit = opt_bytes(optarg, "--limit");
			break;
		case OPT_FORCE:
			filter_lim.force = 1;
			break;
		case OPT_UNTERMINATED:
			filter_lim.unterminated = 1;
			break;
		case 'h':
			usage();
			break;
		case 'V':
			prog_version();
			break;
		default:
			return c;
		}
	if (need_model && !*model)
		usage_error("no model: -m MODEL");
	if (optind < argc)
		usage_error("unexpected argument '%s'", argv[optind]);
	return -1;
}

/* The records embed and encode add, and from what, for their --help. */
static const struct {
	const char *out, *in;
} stage_records[] = {
	[STAGE_EMBED] = { "src.emb", "src.ids" },
	[STAGE_ENCODE] = { "enc.out", "src.emb" },
};
static enum stage main_stage;

static void stage_usage(void)
{
	printf("usage: %s -m MODEL [-b N]\n"
	       "       " FILTER_USAGE " < in.tsr > out.tsr\n"
	       "Adds %s to every frame (%s in), for the model's "
	       "architecture.\n\n"
	       "  -m, --model=FILE     the model file\n"
	       "  -b, --batch=N        sentences per batch (default 64, at "
	       "most 65536;\n"
	       "                       results do not depend on it)\n"
	       FILTER_HELP
	       "  -h, --help           this help\n"
	       "  -V, --version        the version\n", progname,
	       stage_records[main_stage].out, stage_records[main_stage].in);
	prog_help_exit();
}

int filter_stage_main(int argc, char **argv, enum stage s)
{
	static const struct option longopts[] = {
		{ "model", required_argument, NULL, 'm' },
		{ "batch", required_argument, NULL, 'b' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		FILTER_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	const char *model = NULL;
	int batch = 64;

	main_stage = s;
	while (filter_getopt(argc, argv, "m:b:hV", longopts, stage_usage,
			     &model, &batch, 1) != -1)
		;	/* no options of their own */
	check_write(filter_stage(model, s, batch));
	return 0;
}
