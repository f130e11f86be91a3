/*
 * bleu_corpus.c: reading the hypotheses and references, and the segment
 * statistics of a whole corpus.  Lines are read as sacreBLEU reads them
 * (UTF-8, each right-stripped), but invalid UTF-8 is an error naming the
 * file, line and byte rather than a crash.  They stay UTF-8, in the one
 * buffer the file was read into.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "bleu.h"
#include "base/errmsg.h"

/* Room for `more` lines. */
static int lines_reserve(struct bleu_lines *l, size_t more)
{
	size_t *end = bleu_grow(l->end, &l->cap, l->n, more, sizeof *end, "lines");

	if (!end)
		return -1;
	l->end = end;
	return 0;
}

/* Appends a line. */
static int bleu_lines_push(struct bleu_lines *l, struct bleu_text line)
{
	if (lines_reserve(l, 1) < 0 || bleu_bytes_reserve(&l->text, line.n) < 0)
		return -1;
	memcpy(l->text.s + l->text.n, line.s, line.n);
	l->text.n += line.n;
	l->end[l->n++] = l->text.n;
	return 0;
}

struct bleu_text bleu_line(const struct bleu_lines *l, size_t i)
{
	size_t start = i ? l->end[i - 1] : 0;

	return (struct bleu_text){ l->text.s + start, l->end[i] - start };
}

void bleu_lines_free(struct bleu_lines *l)
{
	bleu_bytes_free(&l->text);
	free(l->end);
	memset(l, 0, sizeof *l);
}

/* All of f into b. */
static int read_all(FILE *f, const char *name, struct bleu_bytes *b)
{
	struct stat st;
	size_t got;

	/* a file's size at once (and one more byte to see its end), a
	 * pipe's as it comes */
	if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
	    bleu_bytes_reserve(b, (size_t)st.st_size + 1) < 0)
		goto nomem;
	do {
		if (bleu_bytes_reserve(b, 1 << 16) < 0)
			goto nomem;
		got = fread(b->s + b->n, 1, b->cap - b->n, f);
		b->n += got;
	} while (got > 0);
	if (ferror(f)) {
		err_set("%s: read error: %s", name, strerror(errno ? errno : EIO));
		return -1;
	}
	return 0;
nomem:
	err_prefix("%s", name);
	return -1;
}

int bleu_lines_read(struct bleu_lines *l, FILE *f, const char *name)
{
	size_t len, bad, o = 0;
	char *buf;

	if (read_all(f, name, &l->text) < 0)
		return -1;
	buf = l->text.s;
	len = l->text.n;
	/* each line checked, stripped and moved up to the previous one's end */
	for (size_t i = 0; i < len;) {
		char *nl = memchr(buf + i, '\n', len - i);
		size_t n = nl ? (size_t)(nl - (buf + i)) : len - i, kept;

		if (bleu_utf8_check(buf + i, n, &bad)) {
			err_set("%s: line %zu: invalid UTF-8 (byte 0x%02x at column %zu)",
				name, l->n + 1, (unsigned char)buf[i + bad], bad + 1);
			return -1;
		}
		if (lines_reserve(l, 1) < 0)
			return -1;
		kept = bleu_rstrip((struct bleu_text){ buf + i, n });
		memmove(buf + o, buf + i, kept);
		o += kept;
		l->end[l->n++] = o;
		i += n + 1;
	}
	l->text.n = o;
	return 0;
}

int bleu_lines_columns(struct bleu_lines *l, const char *name,
		       struct bleu_lines **cols, int *ncols)
{
	struct bleu_lines *c = NULL;
	int nc = 1;

	if (l->n > 0) {
		struct bleu_text s = bleu_line(l, 0);

		for (size_t k = 0; k < s.n; k++)
			nc += s.s[k] == '\t';
	}
	c = calloc(nc, sizeof *c);
	if (!c) {
		err_set("out of memory");
		return -1;
	}
	/* one system (the usual case): the lines as they are */
	if (nc == 1 && (l->text.n == 0 || !memchr(l->text.s, '\t', l->text.n))) {
		c[0] = *l;
		memset(l, 0, sizeof *l);
		*cols = c;
		*ncols = 1;
		return 0;
	}
	for (size_t i = 0; i < l->n; i++) {
		struct bleu_text s = bleu_line(l, i);
		size_t start = 0;
		int col = 0;

		for (size_t k = 0; k <= s.n; k++) {
			struct bleu_text field;

			if (k < s.n && s.s[k] != '\t')
				continue;
			if (col == nc) {
				col++;
				break;
			}
			field = (struct bleu_text){ s.s + start, k - start };
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
	struct bleu_text *r = malloc(nref * sizeof *r);
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
