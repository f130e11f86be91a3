/*
 * bleu_corpus.c: reading the hypotheses and references, and the segment
 * statistics of a whole corpus.  Lines are read as sacreBLEU reads them
 * (UTF-8, each right-stripped), but invalid UTF-8 is an error naming the
 * file, line and byte rather than a crash.
 */
#include <stdlib.h>
#include <string.h>
#include "bleu.h"
#include "err.h"

/* Appends a line. */
static int bleu_lines_push(struct bleu_lines *l, struct bleu_str line)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 256;
		size_t *end = realloc(l->end, cap * sizeof *end);

		if (!end) {
			err_set("out of memory for %zu lines", cap);
			return -1;
		}
		l->end = end;
		l->cap = cap;
	}
	if (bleu_buf_reserve(&l->text, line.n) < 0)
		return -1;
	if (line.n)
		memcpy(l->text.c + l->text.n, line.c, line.n * sizeof *line.c);
	l->text.n += line.n;
	l->end[l->n++] = l->text.n;
	return 0;
}

struct bleu_str bleu_line(const struct bleu_lines *l, size_t i)
{
	size_t start = i ? l->end[i - 1] : 0;

	return (struct bleu_str){ l->text.c + start, l->end[i] - start };
}

void bleu_lines_free(struct bleu_lines *l)
{
	bleu_buf_free(&l->text);
	free(l->end);
	memset(l, 0, sizeof *l);
}

int bleu_lines_read(struct bleu_lines *l, FILE *f, const char *name)
{
	struct bleu_buf line = { 0 };
	char *buf = NULL;
	size_t cap = 0, bad;
	ssize_t len;
	int rc = 0;

	while (rc == 0 && (len = getline(&buf, &cap, f)) >= 0) {
		if (len > 0 && buf[len - 1] == '\n')
			len--;
		line.n = 0;
		rc = bleu_utf8_decode(buf, len, &line, &bad);
		if (rc > 0)
			err_set("%s: line %zu: invalid UTF-8 (byte 0x%02x at column %zu)",
				name, l->n + 1, (unsigned char)buf[bad], bad + 1);
		else if (rc == 0)
			rc = bleu_lines_push(l, (struct bleu_str){ line.c,
					     bleu_rstrip((struct bleu_str){ line.c, line.n }) });
	}
	if (rc == 0 && ferror(f)) {
		err_set("%s: read error", name);
		rc = -1;
	}
	bleu_buf_free(&line);
	free(buf);
	return rc ? -1 : 0;
}

int bleu_lines_columns(const struct bleu_lines *l, const char *name,
		       struct bleu_lines **cols, int *ncols)
{
	struct bleu_lines *c = NULL;
	int nc = 1;

	if (l->n > 0) {
		struct bleu_str s = bleu_line(l, 0);

		for (size_t k = 0; k < s.n; k++)
			nc += s.c[k] == '\t';
	}
	c = calloc(nc, sizeof *c);
	if (!c) {
		err_set("out of memory");
		return -1;
	}
	for (size_t i = 0; i < l->n; i++) {
		struct bleu_str s = bleu_line(l, i);
		size_t start = 0;
		int col = 0;

		for (size_t k = 0; k <= s.n; k++) {
			struct bleu_str field;

			if (k < s.n && s.c[k] != '\t')
				continue;
			if (col == nc) {
				col++;
				break;
			}
			field = (struct bleu_str){ s.c + start, k - start };
			field.n = bleu_rstrip(field);
			if (bleu_lines_push(&c[col++], field) < 0)
				goto fail;
			start = k + 1;
		}
		if (col != nc) {
			err_set("%s: line %zu: %s tab-separated fields than line 1 "
				"(%d: one per system)", name, i + 1,
				col > nc ? "more" : "fewer", nc);
			goto fail;
		}
	}
	*cols = c;
	*ncols = nc;
	return 0;
fail:
	for (int k = 0; k < nc; k++)
		bleu_lines_free(&c[k]);
	free(c);
	return -1;
}

int bleu_corpus_stats(struct metric *m, const struct bleu_lines *hyp,
		      const struct bleu_lines *refs, int nref,
		      int64_t *stats, int *nrefs)
{
	struct bleu_str *r = malloc(nref * sizeof *r);
	int used = 0;

	if (!r) {
		err_set("out of memory");
		return -1;
	}
	for (size_t i = 0; i < hyp->n; i++) {
		int k = 0;

		for (int j = 0; j < nref; j++) {
			r[k] = bleu_line(&refs[j], i);
			k += r[k].n > 0;
		}
		if (k == 0) {
			err_set(nref == 1 ? "line %zu: empty reference" :
				"line %zu: every reference is empty", i + 1);
			free(r);
			return -1;
		}
		if (i == 0)
			used = k;
		else if (used != k)
			used = -1;
		if (metric_segment(m, bleu_line(hyp, i), r, k, stats + i * m->nstats) < 0) {
			err_prefix("line %zu", i + 1);
			free(r);
			return -1;
		}
	}
	*nrefs = used;
	free(r);
	return 0;
}
