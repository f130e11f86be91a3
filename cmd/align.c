/*
 * align: a word aligner as a filter: fast_align's reparameterised IBM
 * Model 2 (lib/align/em.h), trained by EM in both directions on the
 * pairs it reads and symmetrised, or loaded from a model file it saved.
 * Prints one line of Pharaoh links ("i-j", source word first, from 0) per
 * pair.  See align(1).
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include "align/bitext.h"
#include "align/em.h"
#include "align/symmetrize.h"
#include "align/wamodel.h"
#include "base/outfile.h"
#include "common/opt.h"
#include "common/prog.h"

/* Pairs aligned at a time with a loaded model. */
#define CHUNK 4096

static struct {
	int sym, quiet, train_only;
	double threshold;
	const char *save, *model;
	struct wa_em_opts em;
	int fold;
} opt = {
	.sym = WA_SYM_GDFA,
	.threshold = 0.5,
	.em = { .iterations = 5, .diagonal = 1, .optimize = 1, .tension = 4,
		.p0 = 0.08, .alpha = 0.01 },
	.fold = 1,
};

static void usage(void)
{
	printf("usage: %s [options] SOURCE TARGET\n"
	       "       %s [options] < PAIRS\n"
	       "Word alignment: trains fast_align's IBM Model 2 (a diagonal "
	       "prior) by EM in both\ndirections on the sentence pairs (SOURCE "
	       "and TARGET line by line, or PAIRS'\nlines \"source ||| "
	       "target\"), then prints each pair's links, \"i-j\" (source\n"
	       "word i, target word j, whitespace words from 0), one line per "
	       "pair.\n\n"
	       "  -s, --symmetrize=H    grow-diag-final-and (default), "
	       "intersect, union,\n"
	       "                        forward (each target word to a "
	       "source word), reverse,\n"
	       "                        or posterior (the links whose two "
	       "directions'\n"
	       "                        posteriors average at least "
	       "--threshold)\n"
	       "      --threshold=T     posterior's threshold, 0.5 to 1 "
	       "(default 0.5)\n"
	       "  -o, --save=FILE       save the trained model to FILE "
	       "(replaced atomically)\n"
	       "  -m, --model=FILE      align with a saved model: no training\n"
	       "  -t, --train-only      train and save (-o), print no "
	       "alignments\n"
	       "  -I, --iterations=N    EM iterations (default 5)\n"
	       "  -H, --hmm=N           then N iterations of the HMM model "
	       "(Vogel et al. 1996;\n"
	       "                        default 0): links that depend on "
	       "the one before\n"
	       "  -T, --tension=X       the diagonal tension to start from "
	       "(default 4)\n"
	       "      --fixed-tension   keep the tension (default: "
	       "re-estimated by each M-step)\n"
	       "  -p, --null-prob=P     the NULL word's prior p0 (default "
	       "0.08)\n"
	       "      --no-diagonal     IBM Model 1: a uniform prior, no "
	       "tension\n"
	       "  -a, --alpha=X         variational Bayes with a Dirichlet "
	       "prior X on t\n"
	       "                        (default 0.01; 0: plain EM)\n"
	       "  -f, --fold            one lexicon entry for a word in any "
	       "case and with\n"
	       "                        punctuation at its ends (the default; "
	       "positions stay\n"
	       "                        the text's words)\n"
	       "      --no-fold         an entry for each word as written "
	       "(fast_align's way)\n"
	       "  -q, --quiet           no progress on standard error\n"
	       "      --threads=N       threads of the E-step and the "
	       "alignment (default:\n"
	       "                        ATTN_THREADS or all); results are the "
	       "same for any N\n"
	       "  -h, --help            this help\n"
	       "  -V, --version         the version\n",
	       progname, progname);
	prog_help_exit();
}

enum { OPT_FIXED = 0x4400, OPT_NO_DIAG, OPT_NO_FOLD, OPT_THRESHOLD };

static const struct option longopts[] = {
	{ "symmetrize", required_argument, NULL, 's' },
	{ "threshold", required_argument, NULL, OPT_THRESHOLD },
	{ "save", required_argument, NULL, 'o' },
	{ "model", required_argument, NULL, 'm' },
	{ "train-only", no_argument, NULL, 't' },
	{ "iterations", required_argument, NULL, 'I' },
	{ "hmm", required_argument, NULL, 'H' },
	{ "tension", required_argument, NULL, 'T' },
	{ "fixed-tension", no_argument, NULL, OPT_FIXED },
	{ "null-prob", required_argument, NULL, 'p' },
	{ "no-diagonal", no_argument, NULL, OPT_NO_DIAG },
	{ "alpha", required_argument, NULL, 'a' },
	{ "fold", no_argument, NULL, 'f' },
	{ "no-fold", no_argument, NULL, OPT_NO_FOLD },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	PROG_LONGOPTS,
	{ NULL, 0, NULL, 0 },
};

/* ---- input ------------------------------------------------------------ */

struct input {
	FILE *f[2];		/* SOURCE and TARGET, or f[1] NULL: pairs */
	const char *name[2];
	char *line[2];
	size_t cap[2];
	long long lineno;
};

static FILE *open_in(const char *path)
{
	FILE *f = fopen(path, "r");

	if (!f)
		die("%s: %s", path, strerror(errno));
	return f;
}

static ssize_t get_line(struct input *in, int k)
{
	ssize_t n;

	errno = 0;
	n = getline(&in->line[k], &in->cap[k], in->f[k]);
	/* the end only when feof says so: getline also fails with ENOMEM
	 * on a line too long for memory, error flag unset */
	if (n < 0 && (ferror(in->f[k]) || !feof(in->f[k])))
		die("%s: line %lld: %s", in->name[k], in->lineno + 1,
		    strerror(errno ? errno : EIO));
	if (n > 0 && in->line[k][n - 1] == '\n')
		in->line[k][--n] = 0;
	return n;
}

/* The next pair into s [len[0]] and s [len[1]]: 1, or 0 at the end. */
static int next_pair(struct input *in, const char *s[2], size_t len[2])
{
	ssize_t n[2];

	if (!in->f[1]) {
		char *sep;

		if ((n[0] = get_line(in, 0)) < 0)
			return 0;
		in->lineno++;
		if (!(sep = strstr(in->line[0], "|||")))
			die("%s: line %lld: no \"|||\" between source and "
			    "target", in->name[0], in->lineno);
		s[0] = in->line[0];
		len[0] = sep - in->line[0];
		s[1] = sep + 3;
		len[1] = n[0] - (s[1] - in->line[0]);
		return 1;
	}
	n[0] = get_line(in, 0);
	n[1] = get_line(in, 1);
	if ((n[0] < 0) != (n[1] < 0)) {
		int k = n[0] < 0;	/* the longer file */
		long long shorter = in->lineno;

		/* lineno counts the longer file's lines now (get_line's
		 * errors name them) */
		for (in->lineno++; get_line(in, k) >= 0; in->lineno++)
			;
		die("%s has %lld lines but %s has %lld: the files must pair "
		    "line for line", in->name[k], in->lineno,
		    in->name[!k], shorter);
	}
	if (n[0] < 0)
		return 0;
	in->lineno++;
	for (int k = 0; k < 2; k++) {
		s[k] = in->line[k];
		len[k] = n[k];
	}
	return 1;
}

/* Appends the pair to b, or dies naming the file and line (the target's
 * file for a target line too long). */
static void add_pair(struct input *in, struct wa_bitext *b,
		     struct wa_vocab *const v[2], const char *s[2],
		     size_t len[2], int fold, int add)
{
	const char *name = in->name[0];

	if (wa_bitext_add(b, v, s, len, fold, add) == 0)
		return;
	if (in->f[1] && strncmp(err_msg(), "target", 6) == 0)
		name = in->name[1];
	die("%s: line %lld: %s", name, in->lineno, err_msg());
}

/* ---- output ----------------------------------------------------------- */

static void print_links(const struct wa_bitext *b, const struct wa_links *l)
{
	for (int p = 0; p < b->n; p++) {
		const int32_t *ij = l->ij + 2 * l->off[p];

		for (int k = 0; k < l->count[p]; k++)
			printf(k ? " %d-%d" : "%d-%d", (int)ij[2 * k],
			       (int)ij[2 * k + 1]);
		if (putchar('\n') == EOF)
			die_stdout();
	}
}

static void align_print(const struct wa_model *m, const struct wa_bitext *b)
{
	struct wa_links l;

	if (wa_align_bitext(m, b, opt.sym, opt.threshold, &l) < 0)
		die_err();
	print_links(b, &l);
	wa_links_free(&l);
}

/* ---- training --------------------------------------------------------- */

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

struct progress {
	const char *dir;
	double start;
};

static void report(void *ctx, const struct wa_em_report *r)
{
	struct progress *p = ctx;

	if (opt.quiet)
		return;
	if (r->hmm)
		fprintf(stderr, "%s: %s: HMM iteration %d of %d: perplexity "
			"%.2f (%.1f s)\n", progname, p->dir, r->iteration,
			opt.em.hmm_iterations,
			r->words ? exp(-r->log_lik / r->words) : 0,
			now() - p->start);
	else
		fprintf(stderr, "%s: %s: iteration %d of %d: perplexity %.2f, "
			"tension %.3f (%.1f s)\n", progname, p->dir,
			r->iteration, opt.em.iterations,
			r->words ? exp(-r->log_lik / r->words) : 0,
			r->tension, now() - p->start);
}

static void train(struct wa_model *m, const struct wa_bitext *b)
{
	static const char *const dirs[2] = { "forward", "reverse" };
	double start = now();

	if (!opt.quiet)
		fprintf(stderr, "%s: %d pairs, %zu source and %zu target words; "
			"vocabularies of %d and %d\n", progname, b->n,
			b->nids[0], b->nids[1], m->vocab[0].n, m->vocab[1].n);
	for (int k = 0; k < 2; k++) {
		struct progress p = { dirs[k], now() };

		if (wa_em_train(&m->dir[k], b, k, m->vocab[k].n,
				m->vocab[!k].n, &opt.em, report, &p) < 0)
			die_err();
	}
	if (!opt.quiet)
		fprintf(stderr, "%s: trained in %.1f s\n", progname,
			now() - start);
	if (opt.save && wa_model_save(m, opt.save) < 0)
		die_err();
}

/* ---- main ------------------------------------------------------------- */

static void parse_args(int argc, char **argv)
{
	int c, given = 0, threshold = 0;

	while ((c = prog_getopt(argc, argv, "s:o:m:tI:H:T:p:a:fqhV", longopts,
				0)) != -1) {
		switch (c) {
		case 's':
			if ((opt.sym = wa_sym_parse(optarg)) < 0)
				usage_error("option --symmetrize: '%s' is not "
					    "grow-diag-final-and, intersect, "
					    "union, forward, reverse or "
					    "posterior", optarg);
			break;
		case OPT_THRESHOLD:
			opt.threshold = opt_number(optarg, "--threshold");
			if (!(opt.threshold >= 0.5 && opt.threshold <= 1))
				usage_error("option --threshold: '%s' is not "
					    "from 0.5 to 1", optarg);
			threshold = 1;
			break;
		case 'o': opt.save = optarg; break;
		case 'm': opt.model = optarg; break;
		case 't': opt.train_only = 1; break;
		case 'I':
			opt.em.iterations = opt_int(optarg, "--iterations", 0,
						    1000);
			given = 1;
			break;
		case 'H':
			opt.em.hmm_iterations = opt_int(optarg, "--hmm", 0,
							1000);
			given = 1;
			break;
		case 'T':
			opt.em.tension = opt_number(optarg, "--tension");
			if (opt.em.tension < 0 || opt.em.tension > 1000)
				usage_error("option --tension: '%s' is not "
					    "from 0 to 1000", optarg);
			given = 1;
			break;
		case OPT_FIXED: opt.em.optimize = 0; given = 1; break;
		case 'p':
			opt.em.p0 = opt_number(optarg, "--null-prob");
			if (!(opt.em.p0 >= 0 && opt.em.p0 < 1))
				usage_error("option --null-prob: '%s' is not "
					    "in [0, 1)", optarg);
			given = 1;
			break;
		case OPT_NO_DIAG: opt.em.diagonal = 0; given = 1; break;
		case 'a':
			opt.em.alpha = opt_number(optarg, "--alpha");
			if (!(opt.em.alpha >= 0 && opt.em.alpha <= 1e6))
				usage_error("option --alpha: '%s' is not from "
					    "0 to 1e6", optarg);
			given = 1;
			break;
		case 'f': opt.fold = 1; given = 1; break;
		case OPT_NO_FOLD: opt.fold = 0; given = 1; break;
		case 'q': opt.quiet = 1; break;
		case 'h': usage(); break;
		case 'V': prog_version(); break;
		}
	}
	if (argc - optind != 0 && argc - optind != 2)
		usage_error("want SOURCE and TARGET, or pairs on standard "
			    "input, not %d file%s", argc - optind,
			    argc - optind == 1 ? "" : "s");
	if (opt.model && (opt.save || opt.train_only || given))
		usage_error("-m aligns with a saved model: no training "
			    "options, -o or -t");
	if (threshold && opt.sym != WA_SYM_POSTERIOR)
		usage_error("--threshold is the posterior heuristic's: give "
			    "-s posterior");
	if (opt.train_only && !opt.save)
		usage_error("--train-only without --save keeps nothing");
	/* refused before the training, not after it (outfile.h) */
	if (opt.save && outfile_check(opt.save) < 0)
		die_err();
}

int main(int argc, char **argv)
{
	static struct input in;
	static struct wa_model m;
	static struct wa_bitext b;
	struct wa_vocab *v[2] = { &m.vocab[0], &m.vocab[1] };
	const char *s[2];
	size_t len[2];

	prog_init(argc, argv);
	parse_args(argc, argv);
	if (argc - optind == 2) {
		for (int k = 0; k < 2; k++) {
			in.name[k] = argv[optind + k];
			in.f[k] = open_in(in.name[k]);
		}
	} else {
		in.name[0] = "<stdin>";
		in.f[0] = stdin;
	}
	if (opt.model) {
		if (wa_model_load(&m, opt.model) < 0)
			die_err();
		for (;;) {
			int more = 1;

			while (b.n < CHUNK && (more = next_pair(&in, s, len)))
				add_pair(&in, &b, v, s, len, m.fold, 0);
			align_print(&m, &b);
			wa_bitext_clear(&b);
			if (!more)
				break;
		}
	} else {
		m.fold = opt.fold;
		while (next_pair(&in, s, len))
			add_pair(&in, &b, v, s, len, opt.fold, 1);
		train(&m, &b);
		if (!opt.train_only)
			align_print(&m, &b);
	}
	check_write(prog_flush_stdout());
	return 0;
}
