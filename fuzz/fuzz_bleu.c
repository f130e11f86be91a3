/*
 * fuzz_bleu.c: libFuzzer target for bleu's tokenisers and metrics (make
 * fuzz).  The first byte picks the tokeniser (13a, intl, char, none) and
 * lowercasing; the rest is a hypothesis and a reference separated by the
 * first newline.  The one-pass tokeniser (bleu_tokenize_words) must give
 * exactly the words of the pass-by-pass definition (bleu_tokenize, then
 * bleu_split); BLEU and chrF (and chrF++) of the pair must be numbers in
 * 0 .. 100, and 100 for the hypothesis against itself.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "eval/bleu.h"

/* The words of s by the definition: decode, tokenise, encode, split. */
static void slow_words(enum bleu_tokenizer t, struct bleu_text s,
		       struct bleu_bytes *enc, struct bleu_words *w)
{
	struct bleu_buf cps = { 0 }, out = { 0 }, tmp = { 0 };
	size_t bad;

	if (bleu_utf8_decode(s.s, s.n, &cps, &bad) != 0 ||
	    bleu_tokenize(t, (struct bleu_str){ cps.c, cps.n }, &out,
			  &tmp) < 0)
		abort();
	enc->n = 0;
	if (bleu_utf8_encode(out.c, out.n, enc) < 0 ||
	    bleu_split((struct bleu_text){ enc->s, enc->n }, w) < 0)
		abort();
	free(cps.c);
	free(out.c);
	free(tmp.c);
}

static void cross_check(enum bleu_tokenizer t, struct bleu_text s)
{
	struct bleu_words fast = { 0 }, slow = { 0 };
	struct bleu_bytes tmp = { 0 }, enc = { 0 };
	struct bleu_buf cps = { 0 };
	size_t i;

	if (bleu_tokenize_words(t, s, &fast, &cps, &tmp) < 0)
		abort();
	slow_words(t, s, &enc, &slow);
	if (fast.n != slow.n)
		abort();
	for (i = 0; i < fast.n; i++)
		if (fast.w[i].n != slow.w[i].n ||
		    memcmp(fast.w[i].s, slow.w[i].s, fast.w[i].n))
			abort();
	bleu_words_free(&fast);
	bleu_words_free(&slow);
	free(tmp.s);
	free(enc.s);
	free(cps.c);
}

/* The metric's score of hyp against ref (both non-empty). */
static double score(struct metric *m, struct bleu_text hyp,
		    struct bleu_text ref)
{
	int64_t stats[64];
	double x;

	if (m->nstats > 64 || metric_segment(m, hyp, &ref, 1, stats) < 0)
		abort();
	x = metric_score(m, stats);
	if (!(x >= 0 && x <= 100 + 1e-9))
		abort();
	return x;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bleu_cfg bc = { BLEU_TOK_13A, 0, BLEU_SMOOTH_EXP, -1, 0 };
	struct chrf_cfg cc = { 6, 0, 2, 0, 0, 0 };
	struct bleu_text hyp, ref;
	const char *s = (const char *)data + 1, *nl;
	size_t n, bad;
	struct metric m;
	int kind;

	if (size < 1)
		return 0;
	n = size - 1;
	if (bleu_utf8_check(s, n, &bad) != 0 || memchr(s, 0, n))
		return 0;
	bc.tok = data[0] & 3;
	bc.lowercase = data[0] >> 2 & 1;
	cc.lowercase = bc.lowercase;
	cc.word_order = data[0] >> 3 & 1 ? 2 : 0;
	cross_check(bc.tok, (struct bleu_text){ s, n });
	nl = memchr(s, '\n', n);
	hyp = (struct bleu_text){ s, nl ? (size_t)(nl - s) : n };
	ref = nl ? (struct bleu_text){ nl + 1, n - hyp.n - 1 } : hyp;
	if (!hyp.n || !ref.n)
		return 0;
	for (kind = METRIC_BLEU; kind <= METRIC_CHRF; kind++) {
		if (metric_init(&m, kind, &bc, &cc) < 0)
			abort();
		score(&m, hyp, ref);
		if (kind == METRIC_CHRF && bleu_rstrip(hyp) == hyp.n &&
		    fabs(score(&m, hyp, hyp) - 100) > 1e-9 &&
		    score(&m, hyp, hyp) != 0)
			abort();
		metric_free(&m);
	}
	return 0;
}
