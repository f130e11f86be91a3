/*
 * bleu_corpus.c: reading the hypotheses and references, and the segment
 * statistics of a whole corpus.  Lines are read as sacreBLEU reads them
 * (UTF-8, each right-stripped), but invalid UTF-8 is an error naming the
 * file, line and byte rather than a crash.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "bleu.h"
#include "err.h"

/* Room for `more` lines. */
static int lines_reserve(struct bleu_lines *l, size_t more)
{
	size_t cap;
	size_t *end;

	if (l->cap - l->n >= more)
		return 0;
	cap = l->cap ? l->cap : 256;
	while (cap - l->n < more)
		cap *= 2;
	end = realloc(l->end, cap * sizeof *end);
	if (!end) {
		err_set("out of memory for %zu lines", cap);
		return -1;
	}
	l->end = end;
	l->cap = cap;
	return 0;
}

/* Appends a line. */
static int bleu_lines_push(struct bleu_lines *l, struct bleu_str line)
{
	if (lines_reserve(l, 1) < 0 || bleu_buf_reserve(&l->text, line.n) < 0)
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

/* All of f, in *buf (malloc'd), its length in *len. */
static int read_all(FILE *f, const char *name, char **buf, size_t *len)
{
	struct stat st;
	size_t cap = 1 << 16, n = 0, got;
	char *b = NULL, *p;

	/* a file's size at once, a pipe's as it comes */
	if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0)
		cap = (size_t)st.st_size + 1;
	for (;;) {
		if (n == cap || !b) {
			if (b)
				cap *= 2;
			if (!(p = realloc(b, cap))) {
				free(b);
				err_set("%s: out of memory for %zu bytes", name, cap);
				return -1;
			}
			b = p;
		}
		got = fread(b + n, 1, cap - n, f);
		n += got;
		if (got == 0)
			break;
	}
	if (ferror(f)) {
		free(b);
		err_set("%s: read error", name);
		return -1;
	}
	*buf = b;
	*len = n;
	return 0;
}

int bleu_lines_read(struct bleu_lines *l, FILE *f, const char *name)
{
	char *buf;
	size_t len, bad;
	int rc = 0;

	if (read_all(f, name, &buf, &len) < 0)
		return -1;
	/* a code point per byte at most */
	if (bleu_buf_reserve(&l->text, len) < 0) {
		free(buf);
		return -1;
	}
	for (size_t i = 0; i < len && rc == 0;) {
		char *nl = memchr(buf + i, '\n', len - i);
		size_t n = nl ? (size_t)(nl - (buf + i)) : len - i, start = l->text.n;

		rc = bleu_utf8_decode(buf + i, n, &l->text, &bad);
		if (rc > 0)
			err_set("%s: line %zu: invalid UTF-8 (byte 0x%02x at column %zu)",
				name, l->n + 1, (unsigned char)buf[i + bad], bad + 1);
		else if (rc == 0 && (rc = lines_reserve(l, 1)) == 0) {
			l->text.n = start + bleu_rstrip((struct bleu_str){ l->text.c + start,
								l->text.n - start });
			l->end[l->n++] = l->text.n;
		}
		i += n + 1;
	}
	free(buf);
	return rc ? -1 : 0;
}

int bleu_lines_columns(struct bleu_lines *l, const char *name,
		       struct bleu_lines **cols, int *ncols)
{
	struct bleu_lines *c = NULL;
	size_t tabs = 0;
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
	/* one system (the usual case): the lines as they are */
	for (size_t k = 0; nc == 1 && k < l->text.n; k++)
		tabs += l->text.c[k] == '\t';
	if (nc == 1 && tabs == 0) {
		c[0] = *l;
		memset(l, 0, sizeof *l);
		*cols = c;
		*ncols = 1;
		return 0;
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
	bleu_lines_free(l);
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
