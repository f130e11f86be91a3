/*
 * bleu_report.c: sacreBLEU 2.x's output forms.
 *
 *   text    "BLEU|nrefs:1|...|version:V = 48.5 82.4/50.0/45.5/37.5 (BP = ...)"
 *           several metrics aligned at their '='
 *   json    json.dumps(indent=1) of name, score, signature, verbose_score
 *           and the signature's fields (several metrics: a JSON array)
 *   -b      the score alone
 *   several systems: tabulate's "fancy_grid" table and the signatures, or
 *           a JSON array (json.dumps(indent=4)) of the systems' results
 *
 * Numbers go through printf's %.Nf, which rounds the binary value half to
 * even exactly as Python's format() does.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "bleu.h"
#include "base/utf8.h"

#define SIG_MAX 512
#define NAME_MAX_ 32

void bleu_json_float(FILE *f, double x)
{
	char buf[64], digits[32];
	int p, e, nd = 0;

	if (!isfinite(x)) {
		fputs(isnan(x) ? "NaN" : x > 0 ? "Infinity" : "-Infinity", f);
		return;
	}
	/* the shortest digits that read back as x, as repr() finds them */
	for (p = 1; p <= 17; p++) {
		snprintf(buf, sizeof buf, "%.*e", p - 1, x);
		if (strtod(buf, NULL) == x)
			break;
	}
	if (buf[0] == '-')
		fputc('-', f);
	for (const char *s = buf + (buf[0] == '-'); *s != 'e'; s++)
		if (*s != '.')
			digits[nd++] = *s;
	e = atoi(strchr(buf, 'e') + 1);
	if (e < -4 || e >= 16) {
		fprintf(f, "%c", digits[0]);
		if (nd > 1)
			fprintf(f, ".%.*s", nd - 1, digits + 1);
		fprintf(f, "e%c%02d", e < 0 ? '-' : '+', abs(e));
	} else if (e < 0) {
		fprintf(f, "0.%0*d%.*s", -e - 1, 0, nd, digits);
	} else {
		for (int i = 0; i <= e; i++)
			fputc(i < nd ? digits[i] : '0', f);
		fprintf(f, ".%.*s", nd > e + 1 ? nd - e - 1 : 1,
			nd > e + 1 ? digits + e + 1 : "0");
	}
}

/* A JSON string; with ascii, non-ASCII as \\uXXXX (json.dumps' default). */
static void bleu_json_string(FILE *f, const char *s, int ascii)
{
	const unsigned char *p = (const unsigned char *)s;

	fputc('"', f);
	for (; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p == '\n')
			fputs("\\n", f);
		else if (*p == '\t')
			fputs("\\t", f);
		else if (*p < 0x20)
			fprintf(f, "\\u%04x", *p);
		else if (*p >= 0x80 && ascii) {
			uint32_t c;
			int n = utf8_decode(p, strlen((const char *)p), &c);

			/* a byte that is not UTF-8 (a file name) stands for itself */
			if (c >= 0x10000)
				fprintf(f, "\\u%04x\\u%04x", 0xd800 + ((c - 0x10000) >> 10),
					0xdc00 + ((c - 0x10000) & 0x3ff));
			else
				fprintf(f, "\\u%04x", c);
			p += n ? n - 1 : 0;
		} else {
			fputc(*p, f);
		}
	}
	fputc('"', f);
}

/* Code points in a UTF-8 string: the width tabulate gives it. */
static int width_of(const char *s, size_t len)
{
	int w = 0;

	for (size_t i = 0; i < len; i++)
		w += ((unsigned char)s[i] & 0xc0) != 0x80;
	return w;
}

static void score_text(char *buf, size_t size, int width, double score)
{
	snprintf(buf, size, "%.*f", width, score);
}

void bleu_sentence_head(const struct bleu_report *o, const struct metric *m,
			const struct sig_info *si, char *buf, size_t size)
{
	char name[NAME_MAX_], sig[SIG_MAX];

	metric_name(m, name, sizeof name);
	metric_signature(m, si, o->short_sig, sig, sizeof sig);
	snprintf(buf, size, "%s|%s", name, sig);
}

void bleu_report_sentence(FILE *f, const struct bleu_report *o,
			  const struct metric *m, const int64_t *stats, const char *head)
{
	char verbose[256], sc[64];

	score_text(sc, sizeof sc, o->width, metric_score(m, stats));
	if (o->score_only) {
		fprintf(f, "%s\n", sc);
		return;
	}
	metric_verbose(m, stats, verbose, sizeof verbose);
	fprintf(f, "%s = %s%s%s\n", head, sc, *verbose ? " " : "", verbose);
}

static void json_single(FILE *f, const struct bleu_report *o, const struct metric *m,
			const int64_t *sum, const struct sig_info *si)
{
	char name[NAME_MAX_], sig[SIG_MAX], verbose[256], sc[64];

	metric_name(m, name, sizeof name);
	metric_signature(m, si, 0, sig, sizeof sig);
	metric_verbose(m, sum, verbose, sizeof verbose);
	score_text(sc, sizeof sc, o->width, metric_score(m, sum));
	fputs("{\n \"name\": ", f);
	bleu_json_string(f, name, 0);
	fputs(",\n \"score\": ", f);
	bleu_json_float(f, strtod(sc, NULL));
	fputs(",\n \"signature\": ", f);
	bleu_json_string(f, sig, 0);
	if (*verbose) {
		fputs(",\n \"verbose_score\": ", f);
		bleu_json_string(f, verbose, 0);
	}
	/* the signature's fields, each "key:value" */
	for (char *p = sig, *q; p; p = q) {
		char *colon = strchr(p, ':');

		q = strchr(p, '|');
		if (q)
			*q++ = 0;
		*colon = 0;
		fputs(",\n ", f);
		bleu_json_string(f, p, 0);
		fputs(": ", f);
		bleu_json_string(f, colon + 1, 0);
	}
	fputs("\n}", f);
}

void bleu_report_single(FILE *f, const struct bleu_report *o,
			const struct metric *ms, int nm, int64_t *const *sums,
			const struct sig_info *si)
{
	char name[NAME_MAX_], sig[SIG_MAX], verbose[256], sc[64];
	int k, w = 0;

	if (o->json && !o->score_only) {
		if (nm > 1)
			fputs("[\n", f);
		for (k = 0; k < nm; k++) {
			if (k)
				fputs(",\n", f);
			json_single(f, o, &ms[k], sums[k], si);
		}
		fputs(nm > 1 ? "\n]\n" : "\n", f);
		return;
	}
	if (o->score_only && o->json && nm > 1) {
		/* what sacreBLEU prints: the scores as a JSON array */
		fputs("[\n", f);
		for (k = 0; k < nm; k++)
			fprintf(f, "%.*f%s\n", o->width, metric_score(&ms[k], sums[k]),
				k + 1 < nm ? "," : "");
		fputs("]\n", f);
		return;
	}
	/* several metrics are right-aligned at their '=' */
	for (int pass = 0; pass < 2; pass++) {
		for (k = 0; k < nm; k++) {
			int left;

			metric_name(&ms[k], name, sizeof name);
			metric_signature(&ms[k], si, o->short_sig, sig, sizeof sig);
			left = width_of(name, strlen(name)) + 1 + width_of(sig, strlen(sig));
			if (pass == 0) {
				w = left > w ? left : w;
				continue;
			}
			score_text(sc, sizeof sc, o->width, metric_score(&ms[k], sums[k]));
			if (o->score_only) {
				fprintf(f, "%s\n", sc);
				continue;
			}
			metric_verbose(&ms[k], sums[k], verbose, sizeof verbose);
			fprintf(f, "%*s%s|%s = %s%s%s\n", w - left, "", name, sig, sc,
				*verbose ? " " : "", verbose);
		}
	}
}

/* ---- several systems ---- */

struct table {
	int ncols, nrows;
	const char **cell;	/* (nrows + 1) x ncols, row 0 the header; may hold '\n' */
	int *width;
};

#define CELL_MAX 128

static int cell_width(const char *s)
{
	int w = 0;

	for (const char *line = s, *nl; line; line = nl ? nl + 1 : NULL) {
		int lw;

		nl = strchr(line, '\n');
		lw = width_of(line, nl ? (size_t)(nl - line) : strlen(line));
		if (lw > w)
			w = lw;
	}
	return w;
}

static int cell_lines(const char *s)
{
	int n = 1;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/* Line k of cell s (empty past its end), aligned in width w, with padding. */
static void put_line(FILE *f, const char *s, int k, int w, int right)
{
	size_t len;
	int pad, lpad;

	for (; k > 0 && s; k--) {
		s = strchr(s, '\n');
		if (s)
			s++;
	}
	if (!s)
		s = "";
	len = strchr(s, '\n') ? (size_t)(strchr(s, '\n') - s) : strlen(s);
	pad = w - width_of(s, len);
	lpad = right ? pad : pad / 2;
	fprintf(f, " %*s%.*s%*s ", lpad, "", (int)len, s, pad - lpad, "");
}

static void rule(FILE *f, const struct table *t, const char *l, const char *fill,
		 const char *mid, const char *r)
{
	fputs(l, f);
	for (int c = 0; c < t->ncols; c++) {
		for (int i = 0; i < t->width[c] + 2; i++)
			fputs(fill, f);
		fputs(c + 1 < t->ncols ? mid : r, f);
	}
	fputc('\n', f);
}

/* tabulate's fancy_grid: first column right-aligned, the others centred */
static void table_print(FILE *f, struct table *t)
{
	for (int c = 0; c < t->ncols; c++) {
		/* a header gets two spaces of room beyond its text */
		t->width[c] = cell_width(t->cell[c]) + 2;
		for (int r = 1; r <= t->nrows; r++)
			if (cell_width(t->cell[r * t->ncols + c]) > t->width[c])
				t->width[c] = cell_width(t->cell[r * t->ncols + c]);
	}
	rule(f, t, "╒", "═", "╤", "╕");
	for (int r = 0; r <= t->nrows; r++) {
		int h = 1;

		for (int c = 0; c < t->ncols; c++)
			if (cell_lines(t->cell[r * t->ncols + c]) > h)
				h = cell_lines(t->cell[r * t->ncols + c]);
		for (int k = 0; k < h; k++) {
			fputs("│", f);
			for (int c = 0; c < t->ncols; c++) {
				put_line(f, t->cell[r * t->ncols + c], k, t->width[c], c == 0);
				fputs("│", f);
			}
			fputc('\n', f);
		}
		if (r == 0)
			rule(f, t, "╞", "═", "╪", "╡");
		else if (r < t->nrows)
			rule(f, t, "├", "─", "┼", "┤");
	}
	rule(f, t, "╘", "═", "╧", "╛");
}

static void json_result(FILE *f, const struct sig_result *r, char test)
{
	fputs("{\n            \"score\": ", f);
	bleu_json_float(f, r->score);
	fputs(",\n            \"p_value\": ", f);
	if (r->p_value < 0)
		fputs("null", f);
	else
		bleu_json_float(f, r->p_value);
	fputs(",\n            \"mean\": ", f);
	if (test == 'b')
		bleu_json_float(f, r->mean);
	else
		fputs("null", f);
	fputs(",\n            \"ci\": ", f);
	if (test == 'b')
		bleu_json_float(f, r->ci);
	else
		fputs("null", f);
	fputs("\n        }", f);
}

static void json_systems(FILE *f, const struct bleu_report *o, const struct bleu_systems *s)
{
	char name[NAME_MAX_], sc[64];

	fputs("[\n", f);
	for (int i = 0; i < s->nsys; i++) {
		fputs("    {\n        \"system\": ", f);
		bleu_json_string(f, s->names[i], 1);
		for (int k = 0; k < s->nm; k++) {
			const struct sig_result *r = &s->res[i * s->nm + k];

			metric_name(&s->ms[k], name, sizeof name);
			fputs(",\n        ", f);
			bleu_json_string(f, name, 1);
			fputs(": ", f);
			if (s->test) {
				json_result(f, r, s->test);
			} else {
				score_text(sc, sizeof sc, o->width, r->score);
				bleu_json_string(f, sc, 1);
			}
		}
		fprintf(f, "\n    }%s\n", i + 1 < s->nsys ? "," : "");
	}
	fputs("]\n", f);
}

static void explain(FILE *f, const struct bleu_systems *s)
{
	char head[128];
	int n;

	n = snprintf(head, sizeof head, "Paired %s test with %d %s",
		     s->test == 'b' ? "bootstrap resampling" : "approximate randomization",
		     s->test_n, s->test == 'b' ? "resampling trials" : "trials");
	fprintf(f, "%.*s\n%s\n%.*s\n", n, "----------------------------------------"
		"--------------------------------------------------------", head, n,
		"--------------------------------------------------------"
		"----------------------------------------");
	fprintf(f, " - Every system is compared with %s.\n", s->names[0]);
	if (s->test == 'b')
		fputs("   Each cell: the system's score (the mean of its bootstrap resamples\n"
		      "   ± half the width of their central 95%).\n", f);
	else
		fputs("   Each cell: the system's score.\n", f);
	fputs("\n - p is the estimated chance of a score difference at least this large\n"
	      "   if the two systems' outputs came from one and the same process.\n"
	      "   \"*\" marks p <= 0.05: the difference is unlikely to be chance.\n"
	      "   A significant difference says the systems differ, not which is better.\n"
	      "\n - The resamples come from this program's own seeded generator: the\n"
	      "   method is sacreBLEU's, the draws are not numpy's.\n\n", f);
}

void bleu_report_systems(FILE *f, const struct bleu_report *o,
			 const struct bleu_systems *s)
{
	struct table t;
	char name[NAME_MAX_], sig[SIG_MAX], *arena, *buf;
	int ncells;

	if (o->json) {
		json_systems(f, o, s);
		return;
	}
	t.ncols = 1 + s->nm;
	t.nrows = s->nsys;
	ncells = (t.nrows + 1) * t.ncols;
	t.cell = calloc(ncells, sizeof *t.cell);
	t.width = calloc(t.ncols, sizeof *t.width);
	arena = malloc(ncells * CELL_MAX);
	if (!t.cell || !t.width || !arena) {
		fputs("out of memory\n", f);
		goto done;
	}
	t.cell[0] = "System";
	for (int k = 0; k < s->nm; k++) {
		buf = arena + k * CELL_MAX;
		metric_name(&s->ms[k], name, sizeof name);
		snprintf(buf, CELL_MAX, "%s%s", name, s->test == 'b' ? " (μ ± 95% CI)" : "");
		t.cell[1 + k] = buf;
	}
	for (int i = 0; i < s->nsys; i++) {
		t.cell[(i + 1) * t.ncols] = s->names[i];
		for (int k = 0; k < s->nm; k++) {
			const struct sig_result *r = &s->res[i * s->nm + k];
			int n, c = (i + 1) * t.ncols + 1 + k;

			buf = arena + c * CELL_MAX;
			n = snprintf(buf, CELL_MAX, "%.*f", o->width, r->score);
			if (s->test == 'b')
				n += snprintf(buf + n, CELL_MAX - n, " (%.*f ± %.*f)",
					      o->width, r->mean, o->width, r->ci);
			if (s->test && r->p_value >= 0)
				snprintf(buf + n, CELL_MAX - n, "\n(p = %.4f)%s",
					 r->p_value, r->p_value > 0.05 ? "" : "*");
			t.cell[c] = buf;
		}
	}
	table_print(f, &t);
	fputc('\n', f);
	if (s->test)
		explain(f, s);
	fputs("-----------------\nMetric signatures\n-----------------\n", f);
	for (int k = 0; k < s->nm; k++) {
		metric_name(&s->ms[k], name, sizeof name);
		metric_signature(&s->ms[k], &s->si[k], o->short_sig, sig, sizeof sig);
		fprintf(f, " - %-10s %s\n", name, sig);
	}
done:
	free(t.cell);
	free(t.width);
	free(arena);
}
