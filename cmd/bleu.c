/*
 * bleu: BLEU and chrF of detokenised text, as sacreBLEU 2.x computes them,
 * with sacreBLEU's option names.  See bleu(1).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>
#include "eval/bleu.h"
#include "common/opt.h"
#include "common/prog.h"

#define MAX_METRICS 2

static const char sig_version[] = "attn-" ATTN_VERSION;

static void usage(void)
{
	printf("usage: %s [options] REF [REF2 ...] < HYP\n"
	       "       %s [options] REF [REF2 ...] -i SYS [SYS2 ...]\n"
	       "Scores detokenised hypotheses (one per line) against references, as sacreBLEU.\n"
	       "\n"
	       "  -m, --metrics bleu|chrf ...   metrics (default: bleu)\n"
	       "  -i, --input FILE ...          systems from files (default: standard input,\n"
	       "                                tab-separated columns are systems)\n"
	       "  -sl, --sentence-level         one score per line (BLEU: effective order)\n"
	       "  -f, --format json|text        output form (default: json)\n"
	       "  -b, --score-only              print the score alone\n"
	       "  -w, --width N                 decimals of scores (default: 1)\n"
	       "  -sh, --short                  short signatures\n"
	       "BLEU:\n"
	       "  -tok, --tokenize 13a|intl|char|none   tokeniser (default: 13a)\n"
	       "  -lc, --lowercase              case-insensitive\n"
	       "  -s, --smooth-method exp|floor|add-k|none   smoothing (default: exp)\n"
	       "  -sv, --smooth-value X         for floor (default 0.1) and add-k (default 1)\n"
	       "chrF:\n"
	       "  -cc, --chrf-char-order N      character order (default: 6)\n"
	       "  -cw, --chrf-word-order N      word order (default: 0; 2 is chrF++)\n"
	       "  --chrf-beta N                 recall weight (default: 2)\n"
	       "  --chrf-whitespace             keep spaces in character n-grams\n"
	       "  --chrf-lowercase              case-insensitive\n"
	       "  --chrf-eps-smoothing          chrF++.py's smoothing instead of effective order\n"
	       "Paired significance tests (the first system is the baseline):\n"
	       "  -pbs, --paired-bs             bootstrap resampling\n"
	       "  -pbsn, --paired-bs-n N        resamples (default: 1000)\n"
	       "  -par, --paired-ar             approximate randomisation\n"
	       "  -parn, --paired-ar-n N        trials (default: 10000)\n"
	       "\n"
	       "  --threads N                   threads of the kernels (no "
	       "effect: bleu has none)\n"
	       "  -h, --help                    this help\n"
	       "  -V, --version                 the version\n",
	       progname, progname);
	prog_help_exit();
}

enum {
	OPT_TOK = 256, OPT_LC, OPT_SV, OPT_SL, OPT_SH, OPT_PBS, OPT_PAR,
	OPT_PBSN, OPT_PARN, OPT_CC, OPT_CW, OPT_BETA, OPT_WS, OPT_CLC, OPT_EPS,
};

static const struct option longopts[] = {
	{ "metrics", required_argument, NULL, 'm' },
	{ "input", required_argument, NULL, 'i' },
	{ "sentence-level", no_argument, NULL, OPT_SL },
	{ "sl", no_argument, NULL, OPT_SL },
	{ "format", required_argument, NULL, 'f' },
	{ "score-only", no_argument, NULL, 'b' },
	{ "width", required_argument, NULL, 'w' },
	{ "short", no_argument, NULL, OPT_SH },
	{ "sh", no_argument, NULL, OPT_SH },
	{ "tokenize", required_argument, NULL, OPT_TOK },
	{ "tok", required_argument, NULL, OPT_TOK },
	{ "lowercase", no_argument, NULL, OPT_LC },
	{ "lc", no_argument, NULL, OPT_LC },
	{ "smooth-method", required_argument, NULL, 's' },
	{ "smooth-value", required_argument, NULL, OPT_SV },
	{ "sv", required_argument, NULL, OPT_SV },
	{ "chrf-char-order", required_argument, NULL, OPT_CC },
	{ "cc", required_argument, NULL, OPT_CC },
	{ "chrf-word-order", required_argument, NULL, OPT_CW },
	{ "cw", required_argument, NULL, OPT_CW },
	{ "chrf-beta", required_argument, NULL, OPT_BETA },
	{ "chrf-whitespace", no_argument, NULL, OPT_WS },
	{ "chrf-lowercase", no_argument, NULL, OPT_CLC },
	{ "chrf-eps-smoothing", no_argument, NULL, OPT_EPS },
	{ "paired-bs", no_argument, NULL, OPT_PBS },
	{ "pbs", no_argument, NULL, OPT_PBS },
	{ "paired-ar", no_argument, NULL, OPT_PAR },
	{ "par", no_argument, NULL, OPT_PAR },
	{ "paired-bs-n", required_argument, NULL, OPT_PBSN },
	{ "pbsn", required_argument, NULL, OPT_PBSN },
	{ "paired-ar-n", required_argument, NULL, OPT_PARN },
	{ "parn", required_argument, NULL, OPT_PARN },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	PROG_LONGOPTS,
	{ NULL, 0, NULL, 0 },
};

struct args {
	struct bleu_cfg bleu;
	struct chrf_cfg chrf;
	struct bleu_report out;
	enum metric_kind metric[MAX_METRICS];
	int nmetric, sentence;
	char test;		/* 0, 'b' or 'a' */
	int bs_n, ar_n;
	const char **inputs;
	int ninputs;
};

static void add_metric(struct args *a, const char *name)
{
	enum metric_kind k;

	if (strcmp(name, "bleu") == 0)
		k = METRIC_BLEU;
	else if (strcmp(name, "chrf") == 0)
		k = METRIC_CHRF;
	else
		usage_error("unknown metric '%s' (want bleu or chrf)", name);
	for (int i = 0; i < a->nmetric; i++)
		if (a->metric[i] == k)
			return;
	a->metric[a->nmetric++] = k;
}

/*
 * sacreBLEU's -i and -m take every word that follows them; getopt takes
 * one.  Rewrites "-i a b" as "-i a -i b" (and "-m bleu chrf" alike: -m
 * takes only metric names, so a reference after it stays a reference).
 */
static char **expand_lists(int *argc, char **argv)
{
	char **out = malloc((2 * *argc + 1) * sizeof *out);
	int n = 0;

	if (!out)
		die("out of memory");
	for (int i = 0; i < *argc; i++) {
		char *opt = argv[i];
		int input = !strcmp(opt, "-i") || !strcmp(opt, "--input");
		int metrics = !strcmp(opt, "-m") || !strcmp(opt, "--metrics");

		if (!strcmp(opt, "--")) {
			while (i < *argc)
				out[n++] = argv[i++];
			break;
		}
		out[n++] = argv[i];
		if (!input && !metrics)
			continue;
		if (i + 1 < *argc)	/* the option's own argument */
			out[n++] = argv[++i];
		while (i + 1 < *argc && argv[i + 1][0] != '-' &&
		       (input || !strcmp(argv[i + 1], "bleu") || !strcmp(argv[i + 1], "chrf"))) {
			out[n++] = opt;
			out[n++] = argv[++i];
		}
	}
	out[n] = NULL;
	*argc = n;
	return out;
}

static void parse_args(int argc, char **argv, struct args *a)
{
	const char *env;
	int c;

	memset(a, 0, sizeof *a);
	a->bleu = (struct bleu_cfg){ BLEU_TOK_13A, 0, BLEU_SMOOTH_EXP, -1, 0 };
	a->chrf = (struct chrf_cfg){ 6, 0, 2, 0, 0, 0 };
	a->out = (struct bleu_report){ 1, 0, 1, 0, sig_version };
	a->bs_n = 1000;
	a->ar_n = 10000;
	a->inputs = calloc(argc, sizeof *a->inputs);
	if (!a->inputs)
		die("out of memory");
	while ((c = prog_getopt(argc, argv, "m:i:f:bw:s:hV", longopts,
				1)) != -1) {
		switch (c) {
		case 'm': add_metric(a, optarg); break;
		case 'i': a->inputs[a->ninputs++] = optarg; break;
		case OPT_SL: a->sentence = 1; break;
		case 'f':
			if (strcmp(optarg, "json") && strcmp(optarg, "text"))
				usage_error("-f: want json or text, not '%s'", optarg);
			a->out.json = !strcmp(optarg, "json");
			break;
		case 'b': a->out.score_only = 1; break;
		case 'w': a->out.width = opt_int(optarg, "-w", 0, 17); break;
		case OPT_SH: a->out.short_sig = 1; break;
		case OPT_TOK:
			if (bleu_tok_parse(optarg) < 0)
				usage_error("-tok: want 13a, intl, char or none, not '%s'", optarg);
			a->bleu.tok = bleu_tok_parse(optarg);
			break;
		case OPT_LC: a->bleu.lowercase = 1; break;
		case 's':
			if (bleu_smooth_parse(optarg) < 0)
				usage_error("-s: want exp, floor, add-k or none, not '%s'", optarg);
			a->bleu.smooth = bleu_smooth_parse(optarg);
			break;
		case OPT_SV:
			a->bleu.smooth_value = opt_number(optarg, "-sv");
			if (!(a->bleu.smooth_value >= 0))
				usage_error("option -sv: '%s' is below 0", optarg);
			break;
		case OPT_CC:
			a->chrf.char_order = opt_int(optarg, "-cc", 0,
						     NGRAM_MAX_ORDER);
			break;
		case OPT_CW:
			a->chrf.word_order = opt_int(optarg, "-cw", 0,
						     NGRAM_MAX_ORDER);
			break;
		case OPT_BETA: a->chrf.beta = opt_int(optarg, "--chrf-beta", 0, 1000); break;
		case OPT_WS: a->chrf.whitespace = 1; break;
		case OPT_CLC: a->chrf.lowercase = 1; break;
		case OPT_EPS: a->chrf.eps_smoothing = 1; break;
		case OPT_PBS: case OPT_PAR:
			if (a->test && a->test != (c == OPT_PBS ? 'b' : 'a'))
				usage_error("--paired-bs and --paired-ar exclude each other");
			a->test = c == OPT_PBS ? 'b' : 'a';
			break;
		case OPT_PBSN:
			a->bs_n = opt_int(optarg, "--paired-bs-n", 1, 100000000);
			break;
		case OPT_PARN:
			a->ar_n = opt_int(optarg, "--paired-ar-n", 1, 100000000);
			break;
		case 'h': usage(); break;
		case 'V': prog_version(); break;
		}
	}
	if (a->chrf.char_order + a->chrf.word_order == 0)
		usage_error("chrF needs a character or word order above 0");
	if (a->nmetric == 0)
		add_metric(a, "bleu");
	/* as sacreBLEU, SACREBLEU_FORMAT overrides -f */
	env = getenv("SACREBLEU_FORMAT");
	if (env && (!strcasecmp(env, "json") || !strcasecmp(env, "text")))
		a->out.json = !strcasecmp(env, "json");
	if (a->sentence && a->nmetric > 1)
		usage_error("only one metric at sentence level");
	if (a->sentence && a->test)
		usage_error("no significance tests at sentence level");
	/* sacreBLEU: sentence BLEU always uses the effective order */
	a->bleu.effective_order = a->sentence;
}

static void read_file(const char *name, struct bleu_lines *l)
{
	FILE *f = fopen(name, "r");

	if (!f)
		die("%s: %s", name, strerror(errno));
	if (bleu_lines_read(l, f, name) < 0)
		die_err();
	fclose(f);
}

static char *xstrdup(const char *s)
{
	char *p = strdup(s);

	if (!p)
		die("out of memory");
	return p;
}

/* The systems: -i files, or the tab-separated columns of standard input. */
static int read_systems(const struct args *a, struct bleu_lines **sys, char ***names)
{
	struct bleu_lines in = { 0 };
	char name[64];
	int n = 0;

	if (a->ninputs == 0) {
		if (bleu_lines_read(&in, stdin, "standard input") < 0 ||
		    bleu_lines_columns(&in, "standard input", sys, &n) < 0)
			die_err();
		bleu_lines_free(&in);
		if (!(*names = calloc(n, sizeof **names)))
			die("out of memory");
		for (int s = 0; s < n; s++) {
			snprintf(name, sizeof name, "System %d", a->test ? s : s + 1);
			(*names)[s] = xstrdup(a->test && s == 0 ? "Baseline" : name);
		}
		return n;
	}
	*sys = calloc(a->ninputs, sizeof **sys);
	*names = calloc(a->ninputs, sizeof **names);
	if (!*sys || !*names)
		die("out of memory");
	for (int i = 0; i < a->ninputs; i++) {
		int dup = 0;

		for (int k = 0; k < i; k++)
			dup |= !strcmp(a->inputs[k], a->inputs[i]);
		if (dup && a->test && !strcmp(a->inputs[0], a->inputs[i]))
			continue;	/* the baseline again among the systems */
		if (dup)
			die("%s: given twice", a->inputs[i]);
		read_file(a->inputs[i], &(*sys)[n]);
		if (a->test && n == 0) {
			if (asprintf(&(*names)[n], "Baseline: %s", a->inputs[i]) < 0)
				die("out of memory");
		} else {
			(*names)[n] = xstrdup(a->inputs[i]);
		}
		n++;
	}
	return n;
}

static void check_lengths(const struct bleu_lines *sys, char **names, int nsys,
			  const struct args *a, const struct bleu_lines *refs,
			  char **ref_names, int nref)
{
	for (int s = 0; s < nsys; s++) {
		const char *what = a->ninputs ? names[s] : "standard input";
		size_t empty = 0;

		if (sys[s].n == 0)
			die("%s: no lines to score", what);
		for (int r = 0; r < nref; r++)
			if (refs[r].n != sys[s].n)
				die("%s has %zu lines but %s has %zu", what, sys[s].n,
				    ref_names[r], refs[r].n);
		for (size_t i = 0; i < sys[s].n; i++)
			empty += bleu_line(&sys[s], i).n == 0;
		if (empty)
			warnx_("warning: %s: %zu of %zu hypotheses are empty (they score 0)",
			       nsys > 1 ? names[s] : what, empty, sys[s].n);
	}
}

static int finish(void)
{
	check_write(prog_flush_stdout());
	return 0;
}

static uint64_t seed_of(const char **text)
{
	const char *env = getenv("SACREBLEU_SEED");
	char *end;
	unsigned long long v;

	*text = "12345";
	if (!env)
		return 12345;
	if (!strcasecmp(env, "none")) {
		*text = "none";
		return (uint64_t)time(NULL) ^ (uint64_t)getpid() << 32;
	}
	errno = 0;
	v = strtoull(env, &end, 10);
	if (errno || *env == 0 || *end)
		die("SACREBLEU_SEED: want an integer or None, not '%s'", env);
	*text = env;
	return v;
}

static void sentence_level(struct metric *m, const struct args *a,
			   const struct bleu_lines *hyp, const struct bleu_lines *refs,
			   int nref, char **ref_names)
{
	int64_t *stats = malloc(hyp->n * m->nstats * sizeof *stats);
	struct sig_info si = { 0, NULL, 0, NULL, sig_version };
	char head[1024];
	int head_nrefs = -1;	/* what head was made for */

	if (!stats)
		die("out of memory");
	if (bleu_corpus_stats(m, hyp, refs, nref, stats, &si.nrefs) < 0) {
		if (nref == 1)
			err_prefix("%s", ref_names[0]);
		die_err();
	}
	for (size_t i = 0; i < hyp->n; i++) {
		si.nrefs = 0;
		for (int r = 0; r < nref; r++)
			si.nrefs += bleu_line(&refs[r], i).n > 0;
		if (si.nrefs != head_nrefs) {
			bleu_sentence_head(&a->out, m, &si, head, sizeof head);
			head_nrefs = si.nrefs;
		}
		bleu_report_sentence(stdout, &a->out, m, stats + i * m->nstats, head);
	}
	free(stats);
}

int main(int argc, char **argv)
{
	/* static: what the program holds lives until it exits */
	static struct args a;
	static struct bleu_lines *refs, *sys;
	static struct metric ms[MAX_METRICS];
	static struct sig_result *res;
	static struct sig_info si[MAX_METRICS];
	static int64_t **stats, *sums[MAX_METRICS];
	static char **names, **ref_names, **expanded;
	const char *seed_text = NULL;
	uint64_t seed = 0;
	int nref, nsys, nm, nrefs_used = 0;
	size_t n;

	prog_init(argc, argv);
	argv = expanded = expand_lists(&argc, argv);
	parse_args(argc, argv, &a);
	nref = argc - optind;
	if (nref < 1)
		usage_error("no reference file given");
	ref_names = argv + optind;
	refs = calloc(nref, sizeof *refs);
	if (!refs)
		die("out of memory");
	for (int r = 0; r < nref; r++)
		read_file(ref_names[r], &refs[r]);
	nsys = read_systems(&a, &sys, &names);
	check_lengths(sys, names, nsys, &a, refs, ref_names, nref);
	if (a.sentence && nsys > 1)
		die("sentence level scores one system, not %d", nsys);
	if (a.test && nsys < 2)
		die("a paired test needs two or more systems (-i BASELINE SYS ..., "
		    "or tab-separated columns)");

	/* sacreBLEU: one system in sorted metric order, paired tests as given */
	nm = a.nmetric;
	if (!a.test && nm == 2 && a.metric[0] == METRIC_CHRF) {
		a.metric[0] = METRIC_BLEU;
		a.metric[1] = METRIC_CHRF;
	}
	for (int k = 0; k < nm; k++)
		if (metric_init(&ms[k], a.metric[k], &a.bleu, &a.chrf) < 0)
			die_err();
	if (a.sentence) {
		sentence_level(&ms[0], &a, &sys[0], refs, nref, ref_names);
		return finish();
	}

	n = sys[0].n;
	stats = calloc((size_t)nsys * nm, sizeof *stats);
	res = calloc((size_t)nsys * nm, sizeof *res);
	if (!stats || !res)
		die("out of memory");
	for (int s = 0; s < nsys; s++)
		for (int k = 0; k < nm; k++) {
			int64_t *st = stats[s * nm + k] = malloc(n * ms[k].nstats * sizeof **stats);

			if (!st)
				die("out of memory");
			if (bleu_corpus_stats(&ms[k], &sys[s], refs, nref, st, &nrefs_used) < 0) {
				if (nref == 1)
					err_prefix("%s", ref_names[0]);
				die_err();
			}
		}
	if (a.test)
		seed = seed_of(&seed_text);
	for (int k = 0; k < nm; k++) {
		si[k] = (struct sig_info){ nrefs_used, NULL, 0, seed_text, sig_version };
		if (a.test) {
			si[k].test = a.test == 'b' ? "bs" : "ar";
			si[k].test_n = a.test == 'b' ? a.bs_n : a.ar_n;
		}
		if (!(sums[k] = calloc(ms[k].nstats, sizeof **sums)))
			die("out of memory");
	}

	if (nsys == 1) {
		for (int k = 0; k < nm; k++)
			for (size_t i = 0; i < n * ms[k].nstats; i++)
				sums[k][i % ms[k].nstats] += stats[k][i];
		bleu_report_single(stdout, &a.out, ms, nm, sums, si);
		return finish();
	}
	for (int s = 0; s < nsys; s++)
		for (int k = 0; k < nm; k++) {
			struct sig_result *r = &res[s * nm + k];
			const int64_t *bl = stats[k], *st = stats[s * nm + k];
			int rc = 0;

			if (a.test == 'b' && s > 0)
				rc = sig_paired_bs(&ms[k], bl, st, n, a.bs_n, seed,
						   s == 1 ? &res[k] : NULL, r);
			else if (a.test == 'a' && s > 0)
				rc = sig_paired_ar(&ms[k], bl, st, n, a.ar_n, seed, r);
			if (rc < 0)
				die_err();
			if (!a.test || s == 0) {
				memset(sums[k], 0, ms[k].nstats * sizeof **sums);
				for (size_t i = 0; i < n * ms[k].nstats; i++)
					sums[k][i % ms[k].nstats] += st[i];
				r->score = metric_score(&ms[k], sums[k]);
				r->p_value = -1;
			}
		}
	bleu_report_systems(stdout, &a.out, &(struct bleu_systems){
		nsys, nm, (const char *const *)names, ms, res, si, a.test,
		a.test == 'b' ? a.bs_n : a.ar_n });
	return finish();
}
