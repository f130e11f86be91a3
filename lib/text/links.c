/*
 * links.c: guided alignment's unit links from word links (Pharaoh);
 * see attn_align.h.
 */
#include <stdlib.h>
#include <string.h>
#include "attn_align.h"
#include "base/errmsg.h"

/* A number of decimal digits at *p (before end), or -1. */
static long number(const char **p, const char *end)
{
	long v = 0;
	const char *s = *p;

	if (s >= end || *s < '0' || *s > '9')
		return -1;
	for (; s < end && *s >= '0' && *s <= '9'; s++)
		if ((v = v * 10 + (*s - '0')) > 1L << 30)
			return -1;
	*p = s;
	return v;
}

/* A byte between words, as align(1) reads words: CRLF lines too. */
static int is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* The line's links (source word, target word), *n of them, in *lk
 * (malloc'd); each word checked against the pair's SW and TW words. */
static int parse(const char *line, size_t len, int SW, int TW, long **lk,
		 size_t *n)
{
	const char *p = line, *end = line + len, *at;
	size_t cap = 0;
	long i, j, *q;

	*lk = NULL;
	*n = 0;
	for (;;) {
		while (p < end && is_space(*p))
			p++;
		if (p == end)
			return 0;
		at = p;
		if ((i = number(&p, end)) < 0 || p == end || *p++ != '-' ||
		    (j = number(&p, end)) < 0 || (p < end && !is_space(*p))) {
			err_set("'%.*s' at byte %ld is not a link i-j",
				(int)(p - at + (p < end)), at,
				(long)(at - line) + 1);
			return -1;
		}
		if (i >= SW || j >= TW) {
			err_set("link %ld-%ld: the pair has %d source and %d "
				"target words", i, j, SW, TW);
			return -1;
		}
		if (*n == cap) {
			cap = cap ? 2 * cap : 64;
			if (!(q = realloc(*lk, cap * 2 * sizeof *q))) {
				err_set("out of memory");
				return -1;
			}
			*lk = q;
		}
		(*lk)[2 * *n] = i;
		(*lk)[2 * *n + 1] = j;
		(*n)++;
	}
}

/*
 * The words of text [len] (runs of bytes that are not spaces, from 0):
 * word[u] for each of the n units by its span (span [2 u], [2 u + 1]),
 * the word of its span's first byte that is not a space, or -1 (a span
 * of spaces, or empty).  The text's word count, or -1 (err_msg()).
 */
static int span_words(const char *text, size_t len, const int32_t *span,
		      int n, int *word)
{
	size_t k, nw = 0, cap = 0, *start = NULL, *q;
	int u, rc = -1;

	for (k = 0; k < len; k++) {
		if (is_space(text[k]) || (k && !is_space(text[k - 1])))
			continue;
		if (nw == cap) {
			cap = cap ? 2 * cap : 64;
			if (!(q = realloc(start, cap * sizeof *q))) {
				err_set("out of memory");
				goto out;
			}
			start = q;
		}
		start[nw++] = k;
	}
	if (nw > INT32_MAX) {
		err_set("%zu words", nw);
		goto out;
	}
	for (u = 0; u < n; u++) {
		size_t a = (size_t)span[2 * u], b = (size_t)span[2 * u + 1];
		size_t lo = 0, hi = nw;

		if (span[2 * u] < 0 || a > b || b > len) {
			err_set("unit %d: span %d..%d outside the text of %zu "
				"bytes", u, (int)span[2 * u],
				(int)span[2 * u + 1], len);
			goto out;
		}
		while (a < b && is_space(text[a]))
			a++;
		word[u] = -1;
		if (a == b)
			continue;
		while (hi - lo > 1) {   /* the last word starting <= a */
			size_t mid = lo + (hi - lo) / 2;

			if (start[mid] <= a)
				lo = mid;
			else
				hi = mid;
		}
		word[u] = (int)lo;
	}
	rc = (int)nw;
out:
	free(start);
	return rc;
}

static int push(int32_t **out, size_t *cap, size_t *n, int s, int t)
{
	if (*n == *cap) {
		size_t c = *cap ? 2 * *cap : 256;
		int32_t *q = realloc(*out, c * 2 * sizeof *q);

		if (!q) {
			err_set("out of memory");
			return -1;
		}
		*out = q;
		*cap = c;
	}
	(*out)[2 * *n] = s;
	(*out)[2 * *n + 1] = t;
	(*n)++;
	return 0;
}

int align_unit_links(const char *src, size_t src_len, const int32_t *sspan,
		     int S, const char *tgt, size_t tgt_len,
		     const int32_t *tspan, int T, const char *line, size_t len,
		     int32_t **out, size_t *cap, size_t *n)
{
	int *sw = malloc((S + 1) * sizeof *sw);
	int *tw = malloc((T + 1) * sizeof *tw);
	int *mark = NULL, SW, TW, s, t, rc = -1;
	size_t *first = NULL, nl = 0, k, before;
	long *lk = NULL, *by = NULL;

	*n = 0;
	if (!sw || !tw || S < 1) {
		err_set(S < 1 ? "no source ids" : "out of memory");
		goto out;
	}
	if ((SW = span_words(src, src_len, sspan, S, sw)) < 0 ||
	    (TW = span_words(tgt, tgt_len, tspan, T, tw)) < 0 ||
	    parse(line, len, SW, TW, &lk, &nl) < 0)
		goto out;
	/* the links by target word: by [first [j] .. first [j + 1]) */
	mark = malloc(((size_t)SW + 1) * sizeof *mark);
	first = calloc((size_t)TW + 2, sizeof *first);
	by = malloc((nl + 1) * sizeof *by);
	if (!mark || !first || !by) {
		err_set("out of memory");
		goto out;
	}
	for (k = 0; k < nl; k++)
		first[lk[2 * k + 1] + 2]++;
	for (t = 0; t < TW; t++)
		first[t + 2] += first[t + 1];
	for (k = 0; k < nl; k++)
		by[first[lk[2 * k + 1] + 1]++] = lk[2 * k];
	for (s = 0; s < SW; s++)
		mark[s] = -1;
	for (t = 0; t < T; t++) {
		before = *n;
		if (tw[t] >= 0)
			for (k = first[tw[t]]; k < first[tw[t] + 1]; k++)
				mark[by[k]] = t;
		for (s = 0; tw[t] >= 0 && s < S; s++)
			if (sw[s] >= 0 && mark[sw[s]] == t &&
			    push(out, cap, n, s, t) < 0)
				goto out;
		if (*n == before && push(out, cap, n, S - 1, t) < 0)
			goto out;
	}
	rc = 0;
out:
	free(sw);
	free(tw);
	free(mark);
	free(first);
	free(by);
	free(lk);
	return rc;
}
