/* attn_align.c: word alignments from attention; see attn_align.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <ctype.h>
#include "attn_align.h"
#include "base/errmsg.h"

/* align_unit_words; with text, the units' text is appended to it. */
static int unit_words(const struct vocab *v, const int32_t *ids, int n,
		      int *word, struct bpe_text *text)
{
	struct bpe_text own = { 0 }, *t = text ? text : &own;
	int i, w = -1, in_word = 0;
	size_t k;

	for (i = 0; i < n; i++) {
		if (!text)
			t->n = 0;
		k = t->n;
		if (vocab_decode_units(v, &ids[i], 1, t) < 0) {
			bpe_text_free(&own);
			return -1;
		}
		word[i] = -1;
		for (; k < t->n; k++) {
			if (t->s[k] == ' ' || t->s[k] == '\t') {
				in_word = 0;
				continue;
			}
			if (!in_word)
				w++;
			in_word = 1;
			if (word[i] < 0)
				word[i] = w;
		}
	}
	bpe_text_free(&own);
	return 0;
}

int align_unit_words(const struct vocab *v, const int32_t *ids, int n,
		     int *word)
{
	return unit_words(v, ids, n, word, NULL);
}

/* The length of the punctuation that s [n] starts with (0 if none), or
 * with end, that it ends with: ASCII, and the quotes U+2018..U+201F. */
static size_t punct(const unsigned char *s, size_t n, int end)
{
	const unsigned char *q;

	if (n >= 3) {
		q = end ? s + n - 3 : s;
		if (q[0] == 0xe2 && q[1] == 0x80 && q[2] >= 0x98 &&
		    q[2] <= 0x9f)
			return 3;
	}
	if (n >= 1) {
		q = end ? s + n - 1 : s;
		if (*q < 0x80 && *q > ' ' && !isalnum(*q))
			return 1;
	}
	return 0;
}

/* skip[w] for each of the TW words of text t: in o's unlinked list. */
static void mark_unlinked(const struct bpe_text *t,
			  const struct align_opts *o, char *skip, int TW)
{
	const unsigned char *s = (const unsigned char *)t->s;
	size_t k = 0, a, b, m;
	int w, i;

	for (w = 0; w < TW; w++) {
		while (k < t->n && (s[k] == ' ' || s[k] == '\t'))
			k++;
		for (a = k; k < t->n && s[k] != ' ' && s[k] != '\t'; k++)
			;
		b = k;
		while ((m = punct(s + a, b - a, 0)) > 0)
			a += m;
		while ((m = punct(s + a, b - a, 1)) > 0)
			b -= m;
		skip[w] = 0;
		for (i = 0; i < o->n_unlinked; i++)
			if (strlen(o->unlinked[i]) == b - a &&
			    !strncasecmp(o->unlinked[i], (const char *)s + a,
					 b - a))
				skip[w] = 1;
	}
}

static int pair_cmp(const void *pa, const void *pb)
{
	const int *a = pa, *b = pb;

	return a[0] != b[0] ? a[0] - b[0] : a[1] - b[1];
}

/* The words' count: one more than the greatest of word[n]. */
static int word_count(const int *word, int n)
{
	int i, m = 0;

	for (i = 0; i < n; i++)
		if (word[i] + 1 > m)
			m = word[i] + 1;
	return m;
}

/* on[i] for each of n layers or heads: chosen by mask (0: all); -1 (err)
 * if the mask chooses one >= n. */
static int chosen(uint64_t mask, int n, const char *what, int *on)
{
	int i;

	for (i = 0; i < 64; i++)
		if (mask >> i & 1 && i >= n) {
			err_set("%s %d chosen, the attention has %d %ss",
				what, i, n, what);
			return -1;
		}
	for (i = 0; i < n; i++)
		on[i] = !mask || (i < 64 && mask >> i & 1);
	return 0;
}

/* A [TW, SW + 1] += the mass of plane a [T, S], by words, unit t's from
 * row t + shift; column SW the mass on units of no word. */
static void add_plane(double *A, int SW, const float *a, const int *tw,
		      int T, const int *sw, int S, int shift)
{
	int t, s;

	for (t = 0; t + shift < T; t++)
		if (tw[t] >= 0)
			for (s = 0; s < S; s++)
				A[(size_t)tw[t] * (SW + 1) +
				  (sw[s] >= 0 ? sw[s] : SW)] +=
					a[(size_t)(t + shift) * S + s];
}

/*
 * Pairs (v, w) of the links of A [TW, SW + 1] under o into pair; their
 * count.  The sums over the planes stand for the means: dividing all by
 * |P| changes neither the greatest nor the shares.
 */
static int links(const double *A, int TW, int SW, const struct align_opts *o,
		 const char *skip, int *pair)
{
	int w, v, best, np = 0;

	for (w = 0; w < TW; w++) {
		const double *r = A + (size_t)w * (SW + 1);
		double total = 0;

		for (best = 0, v = 0; v < SW; v++) {
			total += r[v];
			if (r[v] > r[best])
				best = v;
		}
		if (SW == 0 || total <= 0 || skip[w] ||
		    (o->null && r[SW] > r[best]))
			continue;
		for (v = 0; v < SW; v++)
			if (v == best || (o->min_share > 0 &&
					  r[v] >= o->min_share * total)) {
				pair[2 * np] = v;
				pair[2 * np + 1] = w;
				np++;
			}
	}
	return np;
}

/*
 * With align_opts.cover: appends to the np pairs of links() a link for
 * each source word none of them reaches, to the target word (not skipped)
 * of most mass on it, if any; the new count.  linked [SW] is scratch.
 */
static int cover(const double *A, int TW, int SW, const char *skip,
		 int *pair, int np, char *linked)
{
	int k, v, w, got;

	memset(linked, 0, SW);
	for (k = 0; k < np; k++)
		linked[pair[2 * k]] = 1;
	for (v = 0; v < SW; v++) {
		if (linked[v])
			continue;
		for (got = -1, w = 0; w < TW; w++)
			if (!skip[w] && A[(size_t)w * (SW + 1) + v] > 0 &&
			    (got < 0 || A[(size_t)w * (SW + 1) + v] >
					A[(size_t)got * (SW + 1) + v]))
				got = w;
		if (got >= 0) {
			pair[2 * np] = v;
			pair[2 * np + 1] = got;
			np++;
		}
	}
	return np;
}

int align_words(const struct vocab *sv, const int32_t *src, int S,
		const struct vocab *tv, const int32_t *tgt, int T,
		const float *attw, int L, int H, const struct align_opts *o,
		struct bpe_text *out)
{
	int *sw = malloc((S + 1) * sizeof *sw);
	int *tw = malloc((T + 1) * sizeof *tw);
	int *lon = malloc((L + 1) * sizeof *lon);
	int *hon = malloc((H + 1) * sizeof *hon);
	int *pair = NULL;
	char *skip = NULL, *linked = NULL;
	double *A = NULL;
	struct bpe_text text = { 0 };
	size_t plane = (size_t)T * S;
	int SW, TW, l, h, i, np, rc = -1;
	char buf[32];

	if (!sw || !tw || !lon || !hon) {
		err_set("out of memory");
		goto out;
	}
	if (chosen(o->layers, L, "layer", lon) < 0 ||
	    chosen(o->heads, H, "head", hon) < 0 ||
	    align_unit_words(sv, src, S, sw) < 0 ||
	    unit_words(tv, tgt, T, tw, &text) < 0)
		goto out;
	SW = word_count(sw, S);
	TW = word_count(tw, T);
	A = calloc((size_t)TW * (SW + 1) + 1, sizeof *A);
	pair = malloc(((size_t)TW * SW + 1) * 2 * sizeof *pair);
	skip = malloc(TW + 1);
	linked = malloc(SW + 1);
	if (!A || !pair || !skip || !linked) {
		err_set("out of memory");
		goto out;
	}
	for (l = 0; l < L; l++)
		for (h = 0; h < H; h++)
			if (lon[l] && hon[h])
				add_plane(A, SW, attw + ((size_t)l * H + h) *
					  plane, tw, T, sw, S, o->shift != 0);
	mark_unlinked(&text, o, skip, TW);
	np = links(A, TW, SW, o, skip, pair);
	if (o->cover)
		np = cover(A, TW, SW, skip, pair, np, linked);
	qsort(pair, np, 2 * sizeof *pair, pair_cmp);
	for (i = 0; i < np; i++) {
		int n = snprintf(buf, sizeof buf, "%s%d-%d", out->n ? " " : "",
				 pair[2 * i], pair[2 * i + 1]);

		if (bpe_text_add(out, buf, n) < 0)
			goto out;
	}
	rc = 0;
out:
	free(sw);
	free(tw);
	free(lon);
	free(hon);
	free(A);
	free(pair);
	free(skip);
	free(linked);
	bpe_text_free(&text);
	return rc;
}
