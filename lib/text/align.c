/* align.c: word alignments from attention; see align.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "align.h"
#include "base/errmsg.h"

int align_unit_words(const struct bpe *v, const int32_t *ids, int n,
		     int *word)
{
	struct bpe_text t = { 0 };
	int i, w = -1, in_word = 0;
	size_t k;

	for (i = 0; i < n; i++) {
		t.n = 0;
		if (bpe_decode(v, &ids[i], 1, &t) < 0) {
			bpe_text_free(&t);
			return -1;
		}
		word[i] = -1;
		for (k = 0; k < t.n; k++) {
			if (t.s[k] == ' ' || t.s[k] == '\t') {
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
	bpe_text_free(&t);
	return 0;
}

static int pair_cmp(const void *pa, const void *pb)
{
	const int *a = pa, *b = pb;

	return a[0] != b[0] ? a[0] - b[0] : a[1] - b[1];
}

int align_pharaoh(const struct bpe *sv, const int32_t *src, int S,
		  const struct bpe *tv, const int32_t *tgt, int T,
		  const float *attw, int P, struct bpe_text *out)
{
	int *sw = malloc((S + 1) * sizeof *sw), *tw = malloc((T + 1) *
							     sizeof *tw);
	int *pair = malloc(2 * (T + 1) * sizeof *pair);
	int t, j, p, np = 0, i, rc = -1;
	char buf[32];

	if (!sw || !tw || !pair) {
		err_set("out of memory");
		goto out;
	}
	if (align_unit_words(sv, src, S, sw) < 0 ||
	    align_unit_words(tv, tgt, T, tw) < 0)
		goto out;
	for (t = 0; t < T; t++) {
		float best = -1;
		int bj = -1;

		if (tw[t] < 0)
			continue;
		for (j = 0; j < S; j++) {
			float a = 0;

			if (sw[j] < 0)
				continue;
			for (p = 0; p < P; p++)
				a += attw[((size_t)p * T + t) * S + j];
			if (a > best) {
				best = a;
				bj = j;
			}
		}
		if (bj >= 0) {
			pair[2 * np] = sw[bj];
			pair[2 * np + 1] = tw[t];
			np++;
		}
	}
	qsort(pair, np, 2 * sizeof *pair, pair_cmp);
	for (i = 0; i < np; i++) {
		int n;

		if (i > 0 && pair[2 * i] == pair[2 * i - 2] &&
		    pair[2 * i + 1] == pair[2 * i - 1])
			continue;
		n = snprintf(buf, sizeof buf, "%s%d-%d", out->n ? " " : "",
			     pair[2 * i], pair[2 * i + 1]);
		if (bpe_text_add(out, buf, n) < 0)
			goto out;
	}
	rc = 0;
out:
	free(sw);
	free(tw);
	free(pair);
	return rc;
}
