/*
 * links.c: guided alignment's unit links from word links (Pharaoh);
 * see align.h.
 */
#include <stdlib.h>
#include <string.h>
#include "align.h"
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

/* M [TW, SW] = 1 at the line's links (target word, source word). */
static int parse(const char *line, size_t len, char *M, int SW, int TW)
{
	const char *p = line, *end = line + len, *at;
	long i, j;

	for (;;) {
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		if (p == end)
			return 0;
		at = p;
		if ((i = number(&p, end)) < 0 || p == end || *p++ != '-' ||
		    (j = number(&p, end)) < 0 ||
		    (p < end && *p != ' ' && *p != '\t')) {
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
		M[(size_t)j * SW + i] = 1;
	}
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

int align_unit_links(const struct vocab *sv, const int32_t *src, int S,
		     const struct vocab *tv, const int32_t *tgt, int T,
		     const char *line, size_t len, int32_t **out,
		     size_t *cap, size_t *n)
{
	int *sw = malloc((S + 1) * sizeof *sw);
	int *tw = malloc((T + 1) * sizeof *tw);
	char *M = NULL;
	int SW = 0, TW = 0, s, t, i, rc = -1;
	size_t before;

	*n = 0;
	if (!sw || !tw || S < 1) {
		err_set(S < 1 ? "no source ids" : "out of memory");
		goto out;
	}
	if (align_unit_words(sv, src, S, sw) < 0 ||
	    align_unit_words(tv, tgt, T, tw) < 0)
		goto out;
	for (i = 0; i < S; i++)
		SW = sw[i] + 1 > SW ? sw[i] + 1 : SW;
	for (i = 0; i < T; i++)
		TW = tw[i] + 1 > TW ? tw[i] + 1 : TW;
	if (!(M = calloc((size_t)SW * TW + 1, 1))) {
		err_set("out of memory");
		goto out;
	}
	if (parse(line, len, M, SW, TW) < 0)
		goto out;
	for (t = 0; t < T; t++) {
		before = *n;
		for (s = 0; tw[t] >= 0 && s < S; s++)
			if (sw[s] >= 0 && M[(size_t)tw[t] * SW + sw[s]] &&
			    push(out, cap, n, s, t) < 0)
				goto out;
		if (*n == before && push(out, cap, n, S - 1, t) < 0)
			goto out;
	}
	rc = 0;
out:
	free(sw);
	free(tw);
	free(M);
	return rc;
}
