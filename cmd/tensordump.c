/*
 * tensordump: shows the records of tensor streams, one line each, checks a
 * stream, converts between streams and their text form, and draws the
 * attention of frames as pictures.
 */
#include <errno.h>
#include <fnmatch.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include "text/vocab.h"
#include "common/opt.h"
#include "common/prog.h"
#include "common/vocab.h"
#include "stream/stream.h"
#include "text/svg.h"
#include "stream/tsr_text.h"

enum mode { LIST, CHECK, TEXT, FROM_TEXT, PICTURE };

static struct {
	enum mode mode;
	int stats;
	size_t values;          /* how many values to show; SIZE_MAX: all */
	char **names;           /* fnmatch patterns, any may match */
	int nnames;
	uint64_t frame_lo, frame_hi;
	int zlib;               /* -z: -1 keeps what the text says */
	int header;
	uint64_t limit;
	const char *svg;        /* --svg: the pictures' file name */
	const char *model;      /* -m: the vocabularies of the labels */
	int layer, head;        /* of a Transformer's attention; -1: default */
	int unterminated;       /* take streams without an end mark */
} opt = { .frame_hi = UINT64_MAX, .zlib = -1, .header = 1,
	  .limit = TSR_DEFAULT_LIMIT, .layer = -1, .head = -1 };

enum { OPT_LAYER = 256, OPT_HEAD, OPT_UNTERMINATED };

static void usage(void)
{
	printf("usage: %s [-cst] [-v[N]] [-n PATTERN] [-f N[-M]] [FILE ...]\n"
	       "       %s -r [-z LEVEL] [FILE ...]\n"
	       "       %s -g OUT.svg [-m MODEL] [--layer L] [--head H] "
	       "[-f N[-M]] [FILE ...]\n"
	       "Shows the records of tensor streams (stdin when no FILE), "
	       "one line each:\n"
	       "frame, name, dtype, shape, bytes, stored bytes, flags.\n\n"
	       "  -s, --stats          add min, max, mean, std (of the finite "
	       "values), NaN and Inf counts\n"
	       "  -v, --values[=N]     show the first N values (default 8; "
	       "all: every value)\n"
	       "  -n, --name=PATTERN   only records whose name matches "
	       "(fnmatch; repeatable)\n"
	       "  -f, --frame=N[-M]    only frames N to M (M empty: to the "
	       "end)\n"
	       "  -H, --no-header      no column header line\n"
	       "  -c, --check          check whole streams; print a summary; "
	       "exit 0 or 1\n"
	       "  -t, --text           print the records in the text form\n"
	       "  -r, --from-text      read the text form, write a stream to "
	       "stdout\n"
	       "  -z, --zlib=LEVEL     with -r: compress every record at LEVEL "
	       "(0: none)\n"
	       "  -l, --limit=BYTES    largest payload to accept (default "
	       "4 GiB)\n"
	       "      --unterminated   take a stream without its end mark "
	       "(older files)\n"
	       "  -g, --svg=FILE       draw each frame's att.weights as an SVG "
	       "heat map into FILE;\n"
	       "                       '#' in FILE: the frame number (one "
	       "file per frame); -: stdout\n"
	       "  -m, --model=FILE     label with the units of the model's "
	       "vocabularies (default: ids)\n"
	       "      --layer=L        a Transformer's layer (default: the "
	       "last)\n"
	       "      --head=H         a Transformer's head (default: the mean "
	       "of the layer's heads)\n"
	       "      --threads=N      threads of the kernels (default: "
	       "ATTN_THREADS or all)\n"
	       "  -h, --help           this help\n"
	       "  -V, --version        the version\n", progname, progname,
	       progname);
	prog_help_exit();
}

static void parse_frames(char *s)
{
	char *dash = strchr(s, '-');

	if (dash)
		*dash = 0;
	opt.frame_lo = opt_int(s, "--frame", 0, LLONG_MAX);
	opt.frame_hi = !dash ? opt.frame_lo : !dash[1] ? UINT64_MAX :
		       (uint64_t)opt_int(dash + 1, "--frame", 0, LLONG_MAX);
	if (opt.frame_hi < opt.frame_lo)
		usage_error("--frame: an empty range");
}

static int wanted(const struct tensor *t)
{
	if (t->frame < opt.frame_lo || t->frame > opt.frame_hi)
		return 0;
	if (!opt.nnames)
		return 1;
	for (int i = 0; i < opt.nnames; i++)
		if (fnmatch(opt.names[i], t->name, 0) == 0)
			return 1;
	return 0;
}

/* ---- the listing -------------------------------------------------------- */

static void print_header(void)
{
	printf("%6s  %-20s %-5s %-14s %10s %10s  %-*s", "#frame", "name",
	       "dtype", "shape", "bytes", "stored", opt.stats ? 8 : 0, "flags");
	if (opt.stats)
		printf(" %12s %12s %12s %12s %6s %6s", "min", "max", "mean",
		       "std", "nan", "inf");
	putchar('\n');
}

static void print_stats(const struct tensor *t)
{
	size_t size = dtype_size(t->dtype), n = t->nbytes / size;
	double lo = INFINITY, hi = -INFINITY, sum = 0, sq = 0, mean, var;
	uint64_t nan = 0, inf = 0, finite = 0;
	float buf[256];

	/* Two passes over f32 copies (exact for every dtype but f64 and
	 * large i64, where the statistics do not need the last bits). */
	for (int pass = 0; pass < 2; pass++) {
		mean = finite ? sum / finite : 0;
		for (size_t i = 0; i < n; i += 256) {
			size_t k = n - i < 256 ? n - i : 256;
			to_f32(buf, (const char *)t->data + i * size, k,
			       t->dtype);
			for (size_t j = 0; j < k; j++) {
				double v = buf[j];
				if (t->dtype == DT_F64)
					memcpy(&v, (const char *)t->data +
					       (i + j) * 8, 8);
				if (!isfinite(v)) {
					if (pass == 0)
						*(isnan(v) ? &nan : &inf) += 1;
					continue;
				}
				if (pass == 0) {
					lo = v < lo ? v : lo;
					hi = v > hi ? v : hi;
					sum += v;
					finite++;
				} else {
					sq += (v - mean) * (v - mean);
				}
			}
		}
	}
	var = finite ? sq / finite : 0;
	if (finite)
		printf(" %12.6g %12.6g %12.6g %12.6g", lo, hi, mean, sqrt(var));
	else
		printf(" %12s %12s %12s %12s", "-", "-", "-", "-");
	printf(" %6" PRIu64 " %6" PRIu64, nan, inf);
}

static void print_values(const struct tensor *t)
{
	size_t size = dtype_size(t->dtype), n = t->nbytes / size;
	size_t show = n < opt.values ? n : opt.values;
	char buf[64];

	fputs("       ", stdout);
	for (size_t i = 0; i < show; i++) {
		tsr_text_value(buf, sizeof buf, (const char *)t->data + i * size,
			       t->dtype);
		printf(" %s", buf);
	}
	if (show < n)
		printf(" ... (%zu more)", n - show);
	putchar('\n');
}

static void list_record(const struct tensor *t, const struct tsr_recinfo *in)
{
	char shape[8 * 21 + 3], flags[16];
	int k = 0;

	shape[k++] = '[';
	for (int i = 0; i < t->rank; i++)
		k += sprintf(shape + k, i ? ",%" PRIu64 : "%" PRIu64, t->dim[i]);
	strcpy(shape + k, "]");
	snprintf(flags, sizeof flags, "%s%s%s",
		 in->flags & TSR_FLAG_ZLIB ? "zlib" : "",
		 in->flags == (TSR_FLAG_ZLIB | TSR_FLAG_END_FRAME) ? "," : "",
		 in->flags & TSR_FLAG_END_FRAME ? "end" : "");
	printf("%6" PRIu64 "  %-20s %-5s %-14s %10zu %10" PRIu64 "  %-*s",
	       t->frame, t->name, dtype_name(t->dtype), shape, t->nbytes,
	       in->stored, opt.stats ? 8 : 0, in->flags ? flags : "-");
	if (opt.stats)
		print_stats(t);
	putchar('\n');
	if (opt.values && t->nbytes)
		print_values(t);
}

/* ---- the text form ------------------------------------------------------ */

/* The zlib level that makes exactly the stored bytes, or 0. */
static int zlib_level(const struct tensor *t, const struct tsr_recinfo *in)
{
	const unsigned char *z = in->stored_bytes;
	/* The header's FLEVEL bits narrow the search. */
	static const int from[4] = { 1, 2, 6, 7 }, to[4] = { 1, 5, 6, 9 };
	int fl = in->stored >= 2 ? z[1] >> 6 : 0, found = 0;
	uLongf cap = compressBound(t->nbytes), n;
	unsigned char *buf = malloc(cap);

	if (!buf)
		die("out of memory");
	for (int level = from[fl]; level <= to[fl] && !found; level++) {
		n = cap;
		if (compress2(buf, &n, t->data, t->nbytes, level) == Z_OK &&
		    n == in->stored && memcmp(buf, z, n) == 0)
			found = level;
	}
	free(buf);
	return found;
}

static void text_record(const struct tensor *t, const struct tsr_recinfo *in)
{
	struct tsr_text_attr a = { .frame = t->frame, .flags = in->flags };
	size_t head = 32 + 8 * t->rank + strlen(t->name);
	int natural = (64 - (in->offset + head) % 64) % 64;

	/* The padding a writer starting where this stream started would
	 * choose is left out; any other is kept, for an exact round trip. */
	a.pad = in->pad == natural ? -1 : in->pad;
	if (in->flags & TSR_FLAG_ZLIB)
		a.level = zlib_level(t, in);
	if (tsr_text_print(stdout, t, &a) < 0)
		die_stdout();
	if (in->flags & TSR_FLAG_END_FRAME)
		putchar('\n');
}

/* ---- reading streams ---------------------------------------------------- */

/* The reader of path with the options' limit; dies if there is none.
 * It takes input without an end mark: the_end() judges it. */
static struct tsr_reader *open_stream(const char *path)
{
	struct tsr_reader *r = tsr_reader_path(path);

	if (!r)
		die_err();
	tsr_reader_set_limit(r, opt.limit);
	tsr_reader_set_unterminated(r, 1);
	return r;
}

/*
 * At the end of r's input, after `frames` frames, the last numbered
 * `last`: 0, or -1 (err_msg()) for a stream that lacks its end mark,
 * unless --unterminated, or unless it is a model file, which has none:
 * one frame, numbered 0, without the model.id of the pipeline's frames
 * (model, alignment model and annex files, exports).
 */
static int the_end(const struct tsr_reader *r, uint64_t frames,
		   uint64_t last, int model_id)
{
	if (opt.unterminated || (!tsr_reader_marks(r, NULL) && frames == 1 &&
				 last == 0 && !model_id))
		return 0;
	return tsr_reader_ended(r);
}

/* Shows the end marks r has read since *seen of them: a comment line in
 * the listing and the text form of every record (not of those -n or -f
 * choose). */
static void show_marks(const struct tsr_reader *r, uint64_t *seen)
{
	uint64_t count, marks = tsr_reader_marks(r, &count);

	if (marks == *seen)
		return;
	*seen = marks;
	if ((opt.mode == LIST || opt.mode == TEXT) && !opt.nnames &&
	    opt.frame_lo == 0 && opt.frame_hi == UINT64_MAX)
		printf("# end mark: the stream ended normally after %" PRIu64
		       " frames\n", count);
}

static int dump(const char *path)
{
	struct tsr_reader *r = open_stream(path);
	struct tsr_recinfo in;
	struct tensor t;
	uint64_t records = 0, frames = 0, last = 0, marks = 0;
	int end, ended = 1, model_id = 0, rc;

	/* -c needs no values: each record is checked a piece at a time,
	 * within its stored size in memory, not its declared one */
	if (opt.mode == CHECK)
		tsr_reader_set_raw(r, TSR_RAW_CHECKED);
	while ((rc = tsr_read(r, &t, &end)) == 1) {
		show_marks(r, &marks);
		tsr_read_info(r, &in);
		/* A frame starts after an end flag or where the number
		 * changes (doc/FORMAT.md, Frames). */
		if (ended || t.frame != last)
			frames++;
		records++;
		last = t.frame;
		ended = end;
		model_id |= !strcmp(t.name, "model.id");
		if (wanted(&t) && opt.mode == LIST)
			list_record(&t, &in);
		else if (wanted(&t) && opt.mode == TEXT)
			text_record(&t, &in);
		tensor_free(&t);
	}
	show_marks(r, &marks);
	if (rc == 0)
		rc = the_end(r, frames, last, model_id);
	if (rc < 0)
		warnx_("%s", err_msg());
	else if (opt.mode == CHECK)
		printf("%s: %" PRIu64 " records in %" PRIu64 " frames, ok, "
		       "%" PRIu64 " end mark%s\n", tsr_reader_label(r),
		       records, frames, marks, marks == 1 ? "" : "s");
	tsr_reader_free(r);
	return rc;
}

/* ---- pictures ----------------------------------------------------------- */

/*
 * The labels of n positions from the ids record `name` of f: the units of
 * the model's vocabulary (-m), or the ids as numbers.  NULL when the frame
 * has no such record: the picture then numbers the positions.
 */
static char **labels(const struct frame *f, const char *name, uint64_t n,
		     int target)
{
	const struct tensor *t = frame_find(f, name);
	const int32_t *id;
	struct bpe_text s = { 0 };
	struct vocab *v;
	char **label;

	if (!t)
		return NULL;
	if (t->dtype != DT_I32 || t->rank != 1 || t->dim[0] != n)
		die("frame %" PRIu64 ": %s is not i32 [%" PRIu64 "], as "
		    "att.weights needs", f->number, name, n);
	if (!(label = calloc(n, sizeof *label)))
		die("out of memory");
	id = t->data;
	v = opt.model ? vocab_model(opt.model, target) : NULL;
	for (uint64_t i = 0; i < n; i++) {
		s.n = 0;
		if (!v) {
			char num[16];
			int k = snprintf(num, sizeof num, "%" PRId32, id[i]);
			bpe_text_add(&s, num, k);
		} else if (id[i] < 0 || id[i] >= vocab_size(v)) {
			die("frame %" PRIu64 ": %s: id %" PRId32 " is not in "
			    "%s's %s vocabulary", f->number, name, id[i],
			    opt.model, target ? "target" : "source");
		} else {
			vocab_unit_show(v, id[i], &s);
		}
		if (bpe_text_add(&s, "", 1) < 0 || !(label[i] = strdup(s.s)))
			die("out of memory");
	}
	bpe_text_free(&s);
	return label;
}

static void free_labels(char **label, uint64_t n)
{
	for (uint64_t i = 0; label && i < n; i++)
		free(label[i]);
	free(label);
}

/*
 * The [T, S] plane of att.weights to draw, into plane: the record itself
 * for the recurrent models; for the Transformer's [L, H, T, S], the head
 * --head of layer --layer, by default the mean of the last layer's heads.
 * Writes the title.  -1 (err_msg() set) when there is no such plane.
 */
static int att_plane(const struct frame *f, const struct tensor *a,
		     float *plane, char *title, size_t cap)
{
	const float *w = a->data;
	uint64_t L, H, T = a->dim[a->rank - 2], S = a->dim[a->rank - 1];
	uint64_t l, plane_n = T * S;

	if (a->rank == 2) {
		if (opt.layer >= 0 || opt.head >= 0) {
			err_set("frame %" PRIu64 ": att.weights is [T,S], of a "
				"recurrent model: no --layer or --head",
				f->number);
			return -1;
		}
		memcpy(plane, w, plane_n * sizeof *plane);
		snprintf(title, cap, "frame %" PRIu64, f->number);
		return 0;
	}
	L = a->dim[0];
	H = a->dim[1];
	l = opt.layer >= 0 ? (uint64_t)opt.layer : L - 1;
	if (l >= L || (opt.head >= 0 && (uint64_t)opt.head >= H)) {
		err_set("frame %" PRIu64 ": att.weights has %" PRIu64 " layers "
			"of %" PRIu64 " heads: no layer %" PRIu64 ", head %d",
			f->number, L, H, l, opt.head);
		return -1;
	}
	w += l * H * plane_n;
	if (opt.head >= 0) {
		memcpy(plane, w + opt.head * plane_n, plane_n * sizeof *plane);
		snprintf(title, cap, "frame %" PRIu64 ", layer %" PRIu64
			 ", head %d", f->number, l, opt.head);
		return 0;
	}
	for (uint64_t i = 0; i < plane_n; i++) {
		double sum = 0;
		for (uint64_t h = 0; h < H; h++)
			sum += w[h * plane_n + i];
		plane[i] = sum / H;
	}
	snprintf(title, cap, "frame %" PRIu64 ", layer %" PRIu64 ", mean of "
		 "%" PRIu64 " heads", f->number, l, H);
	return 0;
}

/* The file of frame n's picture: '#' in --svg's name is the number. */
static char *picture_path(uint64_t n)
{
	const char *hash = strchr(opt.svg, '#');
	char *path;

	if (!hash)
		return strdup(opt.svg);
	if (asprintf(&path, "%.*s%" PRIu64 "%s", (int)(hash - opt.svg),
		     opt.svg, n, hash + 1) < 0)
		return NULL;
	return path;
}

/*
 * Draws the attention of frame f, if it has att.weights: 1 if it did, 0
 * if not, -1 (err_msg() set) on an error, having freed what it took, so
 * that the caller frees the rest and exits.
 */
static int picture(const struct frame *f)
{
	const struct tensor *a = frame_find(f, "att.weights");
	struct svg_heatmap h;
	char title[128], *path = NULL, **src = NULL, **tgt = NULL;
	const char *tname;
	uint64_t T, S;
	float *plane = NULL;
	FILE *out = NULL;
	int rc = -1;

	if (!a)
		return 0;
	if (a->dtype != DT_F32 || (a->rank != 2 && a->rank != 4)) {
		err_set("frame %" PRIu64 ": att.weights is not f32 [T,S] or "
			"[L,H,T,S]", f->number);
		return -1;
	}
	T = a->dim[a->rank - 2];
	S = a->dim[a->rank - 1];
	if (!T || !S || T > INT_MAX / S || (a->rank == 4 && !a->dim[0]) ||
	    (a->rank == 4 && !a->dim[1])) {
		err_set("frame %" PRIu64 ": att.weights is empty or too large "
			"to draw", f->number);
		return -1;
	}
	if (!(plane = malloc(T * S * sizeof *plane)) ||
	    !(path = picture_path(f->number))) {
		err_set("out of memory");
		goto out;
	}
	if (att_plane(f, a, plane, title, sizeof title) < 0)
		goto out;
	tname = frame_find(f, "hyp.ids") ? "hyp.ids" : "tgt.ids";
	src = labels(f, "src.ids", S, 0);
	tgt = labels(f, tname, T, 1);
	h = (struct svg_heatmap){
		.w = plane, .rows = T, .cols = S,
		.row_label = (const char *const *)tgt,
		.col_label = (const char *const *)src, .title = title,
	};
	out = strcmp(path, "-") == 0 ? stdout : fopen(path, "w");
	if (!out) {
		err_set("%s: %s", path, strerror(errno));
		goto out;
	}
	if (svg_heatmap(out, &h) < 0) {
		err_prefix("%s", path);
		goto out;
	}
	if (fflush(out) != 0) {
		err_set("%s: %s", path, strerror(errno));
		goto out;
	}
	rc = 1;
out:
	if (out && out != stdout && fclose(out) != 0 && rc == 1) {
		err_set("%s: %s", path, strerror(errno));
		rc = -1;
	}
	free(path);
	free(plane);
	free_labels(src, S);
	free_labels(tgt, T);
	return rc;
}

/* Draws the chosen frames of every stream; one picture per file unless
 * the name has a '#'. */
static int pictures(char **files)
{
	struct frame f = { 0 };
	int drawn = 0, rc = 0, got;

	for (; *files && rc == 0; files++) {
		struct tsr_reader *r = open_stream(*files);

		while ((rc = tsr_read_frame(r, &f)) == 1) {
			if (f.number < opt.frame_lo || f.number > opt.frame_hi ||
			    !frame_find(&f, "att.weights"))
				continue;
			if (drawn && !strchr(opt.svg, '#')) {
				err_set("%s: frame %" PRIu64 " is a second "
					"picture: put '#' in the name for one "
					"file per frame, or choose one with -f",
					opt.svg, f.number);
				rc = -1;
				break;
			}
			if ((got = picture(&f)) < 0) {
				rc = -1;
				break;
			}
			drawn += got;
		}
		if (rc == 0 && !opt.unterminated)
			rc = tsr_reader_ended(r);
		if (rc < 0)
			warnx_("%s", err_msg());
		tsr_reader_free(r);
	}
	frame_free(&f);
	if (rc == 0 && !drawn)
		die("no frame with att.weights (from decode, beam or score "
		    "--tensors) to draw");
	return rc;
}

/* ---- writing streams ---------------------------------------------------- */

static int from_text(const char *path, struct tsr_writer *w)
{
	FILE *in = strcmp(path, "-") == 0 ? stdin : fopen(path, "r");
	struct tsr_text_reader *r;
	struct tsr_text_attr a;
	struct tensor t;
	int rc;

	if (!in) {
		warnx_("%s: %m", path);
		return -1;
	}
	r = tsr_text_open(in, in == stdin ? "<stdin>" : path);
	if (!r)
		die_err();
	while ((rc = tsr_text_read(r, &t, &a)) == 1) {
		int flags = a.flags;
		if (opt.zlib >= 0)
			flags = (flags & ~TSR_FLAG_ZLIB) |
				(opt.zlib ? TSR_FLAG_ZLIB : 0);
		tsr_writer_set_level(w, opt.zlib > 0 ? opt.zlib : a.level);
		check_write(tsr_write_ex(w, &t, a.frame, flags, a.pad));
		tensor_free(&t);
	}
	if (rc < 0)
		warnx_("%s", err_msg());
	tsr_text_close(r);
	if (in != stdin)
		fclose(in);
	return rc;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "stats", no_argument, NULL, 's' },
		{ "values", optional_argument, NULL, 'v' },
		{ "name", required_argument, NULL, 'n' },
		{ "frame", required_argument, NULL, 'f' },
		{ "no-header", no_argument, NULL, 'H' },
		{ "check", no_argument, NULL, 'c' },
		{ "text", no_argument, NULL, 't' },
		{ "from-text", no_argument, NULL, 'r' },
		{ "zlib", required_argument, NULL, 'z' },
		{ "limit", required_argument, NULL, 'l' },
		{ "unterminated", no_argument, NULL, OPT_UNTERMINATED },
		{ "svg", required_argument, NULL, 'g' },
		{ "model", required_argument, NULL, 'm' },
		{ "layer", required_argument, NULL, OPT_LAYER },
		{ "head", required_argument, NULL, OPT_HEAD },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		PROG_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	char *stdin_only[] = { "-", NULL };
	struct tsr_writer *w = NULL;
	char **files;
	int c, status = 0;

	prog_init(argc, argv);
	while ((c = prog_getopt(argc, argv, "sv::n:f:Hctrz:l:g:m:hV", longopts,
				0)) != -1) {
		switch (c) {
		case 's': opt.stats = 1; break;
		case 'v':
			/* -v all, -v 20: an optional argument must be
			 * attached (-vall), which reads "all" as a file;
			 * the next word is taken when it is one */
			if (!optarg && optind < argc &&
			    (!strcmp(argv[optind], "all") ||
			     (argv[optind][0] && strspn(argv[optind],
				"0123456789") == strlen(argv[optind]))))
				optarg = argv[optind++];
			opt.values = !optarg ? 8 : strcmp(optarg, "all") == 0
				   ? SIZE_MAX : (size_t)opt_int(optarg,
						"--values", 0, LLONG_MAX);
			if (!opt.values)
				opt.values = SIZE_MAX;
			break;
		case 'n':
			opt.names = realloc(opt.names, (opt.nnames + 1) *
					    sizeof *opt.names);
			if (!opt.names)
				die("out of memory");
			opt.names[opt.nnames++] = optarg;
			break;
		case 'f': parse_frames(optarg); break;
		case 'H': opt.header = 0; break;
		case 'c': opt.mode = CHECK; break;
		case 't': opt.mode = TEXT; break;
		case 'r': opt.mode = FROM_TEXT; break;
		case 'z':
			opt.zlib = opt_int(optarg, "--zlib", 0, 9);
			break;
		case 'l': opt.limit = opt_bytes(optarg, "--limit");
			break;
		case OPT_UNTERMINATED: opt.unterminated = 1; break;
		case 'g': opt.mode = PICTURE; opt.svg = optarg; break;
		case 'm': opt.model = optarg; break;
		case OPT_LAYER:
			opt.layer = opt_int(optarg, "--layer", 0, INT_MAX - 1);
			break;
		case OPT_HEAD:
			opt.head = opt_int(optarg, "--head", 0, INT_MAX - 1);
			break;
		case 'h': usage(); break;
		case 'V': prog_version(); break;
		}
	}
	if (opt.zlib >= 0 && opt.mode != FROM_TEXT)
		usage_error("--zlib goes with --from-text");
	if ((opt.model || opt.layer >= 0 || opt.head >= 0) &&
	    opt.mode != PICTURE)
		usage_error("--model, --layer and --head go with --svg");
	if (opt.svg && (opt.mode != PICTURE || opt.stats || opt.values ||
			opt.nnames))
		usage_error("--svg goes with --frame, --model, --layer, "
			    "--head and --limit only");
	files = optind < argc ? argv + optind : stdin_only;

	if (opt.mode == FROM_TEXT) {
		if (isatty(1))
			die("not writing a binary stream to a terminal");
		w = tsr_writer_fd(1, "<stdout>", 0);
		if (!w)
			die_err();
		for (; *files && status == 0; files++)
			status = from_text(*files, w);
		/* the end mark only after every record was read back */
		check_write(status ? tsr_writer_close(w) :
			    tsr_writer_finish(w));
		return status ? 1 : 0;
	}
	if (opt.mode == PICTURE)
		return pictures(files) ? 1 : 0;
	if (opt.mode == LIST && opt.header)
		print_header();
	if (opt.mode == TEXT)
		puts(TSR_TEXT_HEADER);
	/* A damaged stream stops there: what follows it is not trusted,
	 * and the exit status says so. */
	for (; *files && status == 0; files++)
		status = dump(*files);
	check_write(prog_flush_stdout());
	return status ? 1 : 0;
}
