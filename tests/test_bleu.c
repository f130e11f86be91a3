/*
 * test_bleu.c: BLEU, chrF and their significance tests against values
 * worked out by hand (precisions, brevity penalties, smoothing, clipping),
 * against the published numbers of sacreBLEU's README and test suite, and
 * the tokenisers against outputs of the original regular expressions.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/bleu.h"
#include "base/rng.h"
#include "run_suite.h"
#include "base/unicode_cat.h"

/* ---- helpers ---- */

/* A UTF-8 literal as code points (kept alive in a small ring). */
static struct bleu_str S(const char *s)
{
	static struct bleu_buf ring[16];
	static int next;
	struct bleu_buf *b = &ring[next++ % 16];
	size_t bad;

	b->n = 0;
	if (bleu_utf8_decode(s, strlen(s), b, &bad) != 0)	/* no ck_assert: see pass_words */
		ck_abort_msg("bad UTF-8 literal \"%s\"", s);
	return (struct bleu_str){ b->c, b->n };
}

/* A UTF-8 literal as text. */
static struct bleu_text U(const char *s)
{
	return (struct bleu_text){ s, strlen(s) };
}

/* The words of the passes' tokenisation of line (UTF-8 kept in *o). */
static void pass_words(enum bleu_tokenizer t, const char *line, struct bleu_bytes *o,
		       struct bleu_words *w)
{
	/* plain checks: Check writes down every assertion that passes, and
	 * this runs for many thousands of lines */
	static struct bleu_buf cps, tmp;
	int ok;

	o->n = 0;
	ok = bleu_tokenize(t, S(line), &cps, &tmp) == 0 &&
	     bleu_utf8_encode(cps.c, cps.n, o) == 0 &&
	     bleu_split((struct bleu_text){ o->s, o->n }, w) == 0;
	if (!ok)
		ck_abort_msg("the passes failed on \"%s\"", line);
}

/* The tokenised line joined by single spaces (static buffer). */
static const char *tok(enum bleu_tokenizer t, const char *line)
{
	static char out[1024];
	struct bleu_bytes o = { 0 };
	struct bleu_words w = { 0 };
	size_t n = 0;

	pass_words(t, line, &o, &w);
	for (size_t i = 0; i < w.n; i++) {
		if (i)
			out[n++] = ' ';
		memcpy(out + n, w.w[i].s, w.w[i].n);
		n += w.w[i].n;
	}
	out[n] = 0;
	bleu_bytes_free(&o);
	bleu_words_free(&w);
	return out;
}

static const struct bleu_cfg bleu_default = { BLEU_TOK_13A, 0, BLEU_SMOOTH_EXP, -1, 0 };
static const struct chrf_cfg chrf_default = { 6, 0, 2, 0, 0, 0 };

/* Corpus statistics of hyps against nref reference sets (n lines each). */
static void corpus(struct metric *m, const char *const *hyp, const char *const *refs,
		   int n, int nref, int64_t *sum)
{
	int64_t *st = calloc(m->nstats, sizeof *st);

	memset(sum, 0, m->nstats * sizeof *sum);
	for (int i = 0; i < n; i++) {
		struct bleu_text r[4];
		int k = 0;

		for (int j = 0; j < nref; j++)
			if (refs[j * n + i][0])
				r[k++] = U(refs[j * n + i]);
		ck_assert_int_eq(metric_segment(m, U(hyp[i]), r, k, st), 0);
		for (int s = 0; s < m->nstats; s++)
			sum[s] += st[s];
	}
	free(st);
}

static double bleu_of(const struct bleu_cfg *cfg, const int64_t *correct,
		      const int64_t *total, int64_t hyp_len, int64_t ref_len)
{
	int64_t st[BLEU_NSTATS] = { hyp_len, ref_len };
	struct bleu_score s;

	memcpy(st + 2, correct, 4 * sizeof *st);
	memcpy(st + 6, total, 4 * sizeof *st);
	bleu_compute(cfg, st, &s);
	return s.score;
}

#define EPS 1e-9

/* ---- BLEU formula ---- */

START_TEST(test_precisions_no_smoothing_needed)
{
	/* sacreBLEU's test_scoring: all orders match, no brevity penalty */
	struct bleu_cfg c = bleu_default;
	double want = 100 * pow(0.9 * 0.875 * (5.0 / 6) * 0.75, 0.25);

	ck_assert_double_eq_tol(bleu_of(&c, (int64_t[]){ 9, 7, 5, 3 },
					(int64_t[]){ 10, 8, 6, 4 }, 11, 11), want, EPS);
	ck_assert_double_eq_tol(want, 83.75922397, 1e-8);
}
END_TEST

START_TEST(test_smooth_exp)
{
	/* orders 2 and 3 unmatched: 1/(2*2) and 1/(4*1); order 4 has no n-gram */
	struct bleu_cfg c = bleu_default;
	int64_t cor[4] = { 2, 0, 0, 0 }, tot[4] = { 3, 2, 1, 1 };
	double p[4] = { 2.0 / 3, 1.0 / 4, 1.0 / 4, 1.0 / 8 };

	ck_assert_double_eq_tol(bleu_of(&c, cor, tot, 3, 3),
				100 * pow(p[0] * p[1] * p[2] * p[3], 0.25), EPS);
	tot[3] = 0;	/* no 4-grams: that precision is 0, and so the score */
	ck_assert_double_eq_tol(bleu_of(&c, cor, tot, 3, 3), 0.0, EPS);
	c.effective_order = 1;	/* ... unless the mean stops at order 3 */
	ck_assert_double_eq_tol(bleu_of(&c, cor, tot, 3, 3),
				100 * cbrt(p[0] * p[1] * p[2]), EPS);
}
END_TEST

START_TEST(test_smooth_floor)
{
	struct bleu_cfg c = bleu_default;
	int64_t cor[4] = { 2, 1, 0, 0 }, tot[4] = { 3, 2, 1, 1 };

	c.smooth = BLEU_SMOOTH_FLOOR;
	ck_assert_double_eq_tol(bleu_of(&c, cor, tot, 3, 3),
				100 * pow(2.0 / 3 * 0.5 * 0.1 * 0.1, 0.25), EPS);
	c.smooth_value = 0.5;
	ck_assert_double_eq_tol(bleu_of(&c, cor, tot, 3, 3),
				100 * pow(2.0 / 3 * 0.5 * 0.5 * 0.5, 0.25), EPS);
	/* sacreBLEU's degenerate cases: no match at all scores 0 */
	c.smooth_value = 0.1;
	ck_assert_double_eq(bleu_of(&c, (int64_t[]){ 0, 0, 0, 0 },
				    (int64_t[]){ 4, 4, 2, 1 }, 0, 1), 0.0);
	ck_assert_double_eq(bleu_of(&c, (int64_t[]){ 0, 0, 0, 0 },
				    (int64_t[]){ 0, 0, 0, 0 }, 0, 0), 0.0);
	c.smooth_value = 0.0;	/* floor 0 at an unmatched order: 0 */
	ck_assert_double_eq_tol(bleu_of(&c, (int64_t[]){ 6, 5, 4, 0 },
					(int64_t[]){ 6, 5, 4, 3 }, 6, 6), 0.0, EPS);
}
END_TEST

START_TEST(test_smooth_add_k)
{
	/* orders 2..4 get k added to matches and totals */
	struct bleu_cfg c = bleu_default;
	int64_t cor[4] = { 2, 0, 0, 0 }, tot[4] = { 3, 2, 1, 1 };

	c.smooth = BLEU_SMOOTH_ADD_K;
	ck_assert_double_eq_tol(bleu_of(&c, cor, tot, 3, 3),
				100 * pow(2.0 / 3 * (1.0 / 3) * 0.5 * 0.5, 0.25), EPS);
	c.smooth_value = 2;
	ck_assert_double_eq_tol(bleu_of(&c, cor, tot, 3, 3),
				100 * pow(2.0 / 3 * 0.5 * (2.0 / 3) * (2.0 / 3), 0.25), EPS);
	/* nothing matched: 0 whatever k adds */
	ck_assert_double_eq(bleu_of(&c, (int64_t[]){ 0, 0, 0, 0 }, tot, 3, 3), 0.0);
}
END_TEST

START_TEST(test_smooth_none)
{
	struct bleu_cfg c = bleu_default;

	c.smooth = BLEU_SMOOTH_NONE;
	ck_assert_double_eq_tol(bleu_of(&c, (int64_t[]){ 2, 1, 0, 0 },
					(int64_t[]){ 3, 2, 1, 1 }, 3, 3), 0.0, EPS);
	ck_assert_double_eq_tol(bleu_of(&c, (int64_t[]){ 3, 2, 1, 1 },
					(int64_t[]){ 3, 2, 1, 1 }, 3, 3), 100.0, EPS);
}
END_TEST

START_TEST(test_brevity_penalty)
{
	struct bleu_cfg c = bleu_default;
	int64_t all[4] = { 4, 3, 2, 1 };
	struct bleu_score s;
	int64_t st[BLEU_NSTATS] = { 4, 8, 4, 3, 2, 1, 4, 3, 2, 1 };

	/* shorter than the reference: exp(1 - 8/4) */
	ck_assert_double_eq_tol(bleu_of(&c, all, all, 4, 8), 100 * exp(-1.0), EPS);
	/* longer: no penalty */
	ck_assert_double_eq_tol(bleu_of(&c, all, all, 4, 3), 100.0, EPS);
	bleu_compute(&c, st, &s);
	ck_assert_double_eq_tol(s.bp, exp(-1.0), EPS);
	ck_assert_double_eq_tol(s.ratio, 0.5, EPS);
	st[0] = 0;	/* an empty hypothesis */
	bleu_compute(&c, st, &s);
	ck_assert_double_eq(s.bp, 0.0);
}
END_TEST

START_TEST(test_closest_ref_len)
{
	ck_assert_int_eq(bleu_closest_ref_len(5, (int64_t[]){ 6, 4 }, 2), 4);
	ck_assert_int_eq(bleu_closest_ref_len(5, (int64_t[]){ 4, 6 }, 2), 4);
	ck_assert_int_eq(bleu_closest_ref_len(5, (int64_t[]){ 9, 6, 2 }, 3), 6);
	ck_assert_int_eq(bleu_closest_ref_len(0, (int64_t[]){ 3 }, 1), 3);
}
END_TEST

/* ---- BLEU statistics of segments ---- */

/*
 * Default BLEU's statistics of the segment hyp against its nref
 * references: want is the hypothesis's length, the reference length,
 * then the matches and the totals of 1- to 4-grams.
 */
static void assert_bleu_stats(const char *hyp, const char *const *refs,
			      int nref, const int64_t *want)
{
	int64_t sum[BLEU_NSTATS];
	struct metric m;

	ck_assert_int_eq(metric_init(&m, METRIC_BLEU, &bleu_default, NULL), 0);
	corpus(&m, &hyp, refs, 1, nref, sum);
	for (int i = 0; i < BLEU_NSTATS; i++)
		ck_assert_msg(sum[i] == want[i], "statistic %d: %lld, want %lld",
			      i, (long long)sum[i], (long long)want[i]);
	metric_free(&m);
}

START_TEST(test_ngram_statistics)
{
	/* sacreBLEU's test_statistics */
	const char *ref[] = { "I am a symbol string sequence a a" };

	assert_bleu_stats("am I am a character sequence", ref, 1,
			  (int64_t[]){ 6, 8, 4, 2, 1, 0, 6, 5, 4, 3 });
}
END_TEST

/* The count of the n-gram at a[i..i+n) in b[0..len). */
static int64_t naive_count(const uint32_t *a, size_t i, int n, const uint32_t *b, size_t len)
{
	int64_t c = 0;

	for (size_t j = 0; j + n <= len; j++)
		c += memcmp(a + i, b + j, n * sizeof *a) == 0;
	return c;
}

/*
 * The n-gram table against counting by hand, segment after segment in one
 * table: short segments of few words (their n-grams found among children),
 * long ones of many (hashed), and code points (nsym 0, hashed).
 */
START_TEST(test_ngram_table_naive)
{
	enum { NREF = 2, ORDER = 4 };
	static uint32_t hyp[500], ref[NREF][500];
	struct ngram_table *t = ngram_new();
	struct rng r;

	ck_assert_ptr_nonnull(t);
	rng_seed(&r, 11);
	for (int seg = 0; seg < 40; seg++) {
		int big = seg % 5 == 4, cps = seg % 7 == 6;
		size_t len = big ? 400 + rng_below(&r, 100) : rng_below(&r, 40);
		uint32_t nsym = big ? 300 : 1 + rng_below(&r, 8);
		size_t rlen[NREF];
		int64_t total[ORDER], match[ORDER], rtotal[ORDER], correct[ORDER];
		int64_t want_match[NREF][ORDER], want_correct[ORDER] = { 0 };
		int ok = 1;

		/* hypothesis ids 0..nsym-1 each used (as word_ids gives them),
		 * references of those and unknown words */
		for (size_t i = 0; i < len; i++)
			hyp[i] = i < nsym ? i : rng_below(&r, nsym);
		if (len < nsym)
			nsym = len;
		for (int k = 0; k < NREF; k++) {
			rlen[k] = big ? 400 : rng_below(&r, 40);
			for (size_t i = 0; i < rlen[k]; i++)
				ref[k][i] = rng_below(&r, 8) == 0 ? WORD_UNKNOWN :
					    nsym ? (uint32_t)rng_below(&r, nsym) : 0;
			if (big)	/* long shared runs */
				memcpy(ref[k] + 50, hyp + 100, 200 * sizeof *hyp);
		}
		if (cps)	/* code points: any values */
			for (size_t i = 0; i < len; i++)
				hyp[i] += 0x10000;
		for (int k = 0; k < NREF && cps; k++)
			for (size_t i = 0; i < rlen[k]; i++)
				ref[k][i] += 0x10000;
		for (int n = 1; n <= ORDER; n++) {
			for (int k = 0; k < NREF; k++)
				want_match[k][n - 1] = 0;
			for (size_t i = 0; i + n <= len; i++) {
				int64_t h = naive_count(hyp, i, n, hyp, len), mx = 0;

				/* each distinct n-gram once: at its first place */
				if (naive_count(hyp, i, n, hyp, i + n - 1) > 0)
					continue;
				for (int k = 0; k < NREF; k++) {
					int64_t c = naive_count(hyp, i, n, ref[k], rlen[k]);

					want_match[k][n - 1] += c < h ? c : h;
					mx = c > mx ? c : mx;
				}
				want_correct[n - 1] += mx < h ? mx : h;
			}
		}
		ck_assert_int_eq(ngram_load(t, hyp, len, cps ? 0 : nsym, ORDER, total), 0);
		for (int k = 0; k < NREF; k++) {
			ngram_match(t, ref[k], rlen[k], match, rtotal);
			for (int n = 1; n <= ORDER; n++)
				ok &= match[n - 1] == want_match[k][n - 1] &&
				      rtotal[n - 1] == (rlen[k] >= (size_t)n ? (int64_t)(rlen[k] - n + 1) : 0);
		}
		ngram_clipped(t, correct);
		for (int n = 1; n <= ORDER; n++)
			ok &= correct[n - 1] == want_correct[n - 1] &&
			      total[n - 1] == (len >= (size_t)n ? (int64_t)(len - n + 1) : 0);
		if (!ok)
			ck_abort_msg("segment %d (%zu symbols, %u distinct): counts differ",
				     seg, len, nsym);
	}
	ngram_free(t);
}
END_TEST

/* Word ids: equal words share one, others differ, whatever their length. */
START_TEST(test_word_ids)
{
	/* words of 1 to 20 bytes that differ only in their middle byte
	 * (a short word's key covers all of it, a long one's is a hash) */
	static const char *const hyp[] = {
		"a", "ab", "abc", "aXc", "abcd", "abXd", "abcde", "abXde", "abcdefgh",
		"abcdXfgh", "abcdefghi", "abcdXfghi", "abcdefghijklmnopqrst",
		"abcdefghijXlmnopqrst", "\u00e9t\u00e9", "\u00e9t\u00e8", "ab",
		"abcdefghi", "a",
	};
	static const char *const ref[] = {
		"abcdefghi", "abcdYfghi", "\u00e9t\u00e9", "ab", "abcdefghijklmnopqrst",
		"abcdefghijklmnopqrsu", "abcdefgh", "abcdXfgh", "b", "abXd",
	};
	enum { NH = sizeof hyp / sizeof hyp[0], NR = sizeof ref / sizeof ref[0] };
	struct word_ids *w = word_ids_new();
	struct bleu_words hw = { 0 }, rw = { 0 };
	struct bleu_buf hid = { 0 }, rid = { 0 };

	ck_assert_ptr_nonnull(w);
	for (int i = 0; i < NH; i++)
		ck_assert_int_eq(bleu_words_push(&hw, U(hyp[i])), 0);
	for (int i = 0; i < NR; i++)
		ck_assert_int_eq(bleu_words_push(&rw, U(ref[i])), 0);
	ck_assert_int_eq(word_ids_load(w, &hw, &hid), 0);
	ck_assert_int_eq(word_ids_count(w), NH - 3);
	for (int i = 0; i < NH; i++) {
		int first;

		for (first = 0; strcmp(hyp[first], hyp[i]); first++)
			;
		ck_assert_uint_eq(hid.c[i], hid.c[first]);
		for (int k = 0; k < NH; k++)
			if (strcmp(hyp[k], hyp[i]))
				ck_assert_uint_ne(hid.c[i], hid.c[k]);
	}
	ck_assert_int_eq(word_ids_lookup(w, &rw, &rid), 0);
	for (int i = 0; i < NR; i++) {
		uint32_t want = WORD_UNKNOWN;

		for (int k = 0; k < NH; k++)
			if (!strcmp(hyp[k], ref[i]))
				want = hid.c[k];
		ck_assert_uint_eq(rid.c[i], want);
	}
	/* a new hypothesis forgets the old one's words */
	hw.n = 1;
	ck_assert_int_eq(word_ids_load(w, &hw, &hid), 0);
	ck_assert_int_eq(word_ids_lookup(w, &rw, &rid), 0);
	ck_assert_uint_eq(rid.c[0], WORD_UNKNOWN);
	word_ids_free(w);
	bleu_words_free(&hw);
	bleu_words_free(&rw);
	bleu_buf_free(&hid);
	bleu_buf_free(&rid);
}
END_TEST

/*
 * Word ids of words ending at a page's end (read byte by byte) and of the
 * same words amid other bytes (read eight at a time): the same ids; words
 * that differ by trailing NUL bytes (a length apart) differ.
 */
START_TEST(test_word_ids_page_end)
{
	static const char words[][8] = { "a", "ab", "abcdefg", "abcdefgh", "x" };
	static const size_t len[] = { 1, 2, 7, 8, 1 };
	enum { NW = sizeof len / sizeof len[0] };
	char *page = aligned_alloc(4096, (NW + 1) * 4096);
	char *mid = page + NW * 4096 + 100;
	struct word_ids *w = word_ids_new();
	struct bleu_words hw = { 0 }, rw = { 0 };
	struct bleu_buf hid = { 0 }, rid = { 0 };

	ck_assert_ptr_nonnull(page);
	ck_assert_ptr_nonnull(w);
	memset(page, 'z', (NW + 1) * 4096);
	for (int i = 0; i < NW; i++) {
		char *end = page + (i + 1) * 4096 - len[i];

		memcpy(end, words[i], len[i]);
		memcpy(mid + 16 * i, words[i], len[i]);
		ck_assert_int_eq(bleu_words_push(&hw, (struct bleu_text){ end, len[i] }), 0);
		ck_assert_int_eq(bleu_words_push(&rw, (struct bleu_text){ mid + 16 * i, len[i] }), 0);
	}
	ck_assert_int_eq(word_ids_load(w, &hw, &hid), 0);
	ck_assert_int_eq(word_ids_count(w), NW);
	ck_assert_int_eq(word_ids_lookup(w, &rw, &rid), 0);
	for (int i = 0; i < NW; i++)
		ck_assert_uint_eq(rid.c[i], hid.c[i]);
	/* "a\0" is not "a" (first page's end) nor "a" followed by 'z' */
	mid[1000] = 'a';
	mid[1001] = 0;
	rw.n = 0;
	ck_assert_int_eq(bleu_words_push(&rw, (struct bleu_text){ mid + 1000, 2 }), 0);
	ck_assert_int_eq(bleu_words_push(&rw, (struct bleu_text){ mid + 1000, 1 }), 0);
	ck_assert_int_eq(bleu_words_push(&rw, (struct bleu_text){ page + 4096 - 1, 1 }), 0);
	ck_assert_int_eq(word_ids_lookup(w, &rw, &rid), 0);
	ck_assert_uint_eq(rid.c[0], WORD_UNKNOWN);
	ck_assert_uint_eq(rid.c[1], hid.c[0]);
	ck_assert_uint_eq(rid.c[2], hid.c[0]);
	word_ids_free(w);
	bleu_words_free(&hw);
	bleu_words_free(&rw);
	bleu_buf_free(&hid);
	bleu_buf_free(&rid);
	free(page);
}
END_TEST

/* Character ids: in order of first appearance, over all of Unicode; a
 * reference's characters the hypothesis lacks are unknown. */
START_TEST(test_char_ids)
{
	const uint32_t hyp[] = { 'a', 0x10FFFF, 'a', 0, 0x4E2D, 0x10FFFF };
	const uint32_t want[] = { 0, 1, 0, 2, 3, 1 };
	const uint32_t ref[] = { 0x4E2D, 'b', 0, 0x10FFFE, 'a' };
	const uint32_t rwant[] = { 3, WORD_UNKNOWN, 2, WORD_UNKNOWN, 0 };
	struct char_ids *c = char_ids_new();
	struct bleu_buf ids = { 0 };

	ck_assert_ptr_nonnull(c);
	ck_assert_int_eq(char_ids_load(c, hyp, 6, &ids), 0);
	ck_assert_int_eq(char_ids_count(c), 4);
	ck_assert_uint_eq(ids.n, 6);
	ck_assert_mem_eq(ids.c, want, sizeof want);
	ck_assert_int_eq(char_ids_lookup(c, ref, 5, &ids), 0);
	ck_assert_uint_eq(ids.n, 5);
	ck_assert_mem_eq(ids.c, rwant, sizeof rwant);
	/* the next hypothesis forgets this one */
	ck_assert_int_eq(char_ids_load(c, ref, 2, &ids), 0);
	ck_assert_int_eq(char_ids_count(c), 2);
	ck_assert_int_eq(char_ids_lookup(c, hyp, 2, &ids), 0);
	ck_assert_uint_eq(ids.c[0], WORD_UNKNOWN);
	ck_assert_uint_eq(ids.c[1], WORD_UNKNOWN);
	char_ids_free(c);
	bleu_buf_free(&ids);
}
END_TEST

START_TEST(test_multi_reference_clipping)
{
	/* "the" x4: one reference has it twice, the other once: clip at 2;
	 * "the cat" matches in the second; lengths 3 and 2: 3 is closer to 4 */
	const char *refs[] = { "the the dog", "the cat" };

	assert_bleu_stats("the the the cat", refs, 2,
			  (int64_t[]){ 4, 3, 3, 2, 0, 0, 4, 3, 2, 1 });
}
END_TEST

START_TEST(test_degenerate_segments)
{
	const char *empty[] = { "" }, *one[] = { "hello" }, *other[] = { "bye" };
	int64_t sum[BLEU_NSTATS];
	struct bleu_cfg eff = bleu_default;
	struct metric m, ms;

	eff.effective_order = 1;
	ck_assert_int_eq(metric_init(&m, METRIC_BLEU, &bleu_default, NULL), 0);
	ck_assert_int_eq(metric_init(&ms, METRIC_BLEU, &eff, NULL), 0);
	corpus(&m, empty, one, 1, 1, sum);
	ck_assert_int_eq(sum[0], 0);
	ck_assert_int_eq(sum[1], 1);
	ck_assert_double_eq(metric_score(&m, sum), 0.0);
	/* no matches */
	corpus(&m, other, one, 1, 1, sum);
	ck_assert_double_eq(metric_score(&m, sum), 0.0);
	/* one word, matched: corpus BLEU has no 2-grams (0), sentence BLEU
	 * stops at order 1 (100) */
	corpus(&m, one, one, 1, 1, sum);
	ck_assert_double_eq_tol(metric_score(&m, sum), 0.0, EPS);
	ck_assert_double_eq_tol(metric_score(&ms, sum), 100.0, EPS);
	metric_free(&m);
	metric_free(&ms);
}
END_TEST

/* ---- published sacreBLEU numbers ---- */

static const char *readme_hyp[] = {
	"The dog bit the man.", "It wasn't surprising.", "The man had just bitten him.",
};
static const char *readme_refs[] = {
	"The dog bit the man.", "It was not unexpected.", "The man bit him first.",
	"The dog had bit the man.", "No one was surprised.", "The man had bitten the dog.",
};

START_TEST(test_readme_corpus)
{
	struct { enum bleu_tokenizer tok; double want; } cases[] = {
		{ BLEU_TOK_13A, 48.530827 }, { BLEU_TOK_NONE, 49.1919566 },
		{ BLEU_TOK_INTL, 43.91623493 },
	};
	int64_t sum[BLEU_NSTATS];
	char verbose[256];

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct bleu_cfg c = bleu_default;
		struct metric m;

		c.tok = cases[i].tok;
		ck_assert_int_eq(metric_init(&m, METRIC_BLEU, &c, NULL), 0);
		corpus(&m, readme_hyp, readme_refs, 3, 2, sum);
		ck_assert_double_eq_tol(metric_score(&m, sum), cases[i].want, 1e-6);
		if (c.tok == BLEU_TOK_13A) {
			metric_verbose(&m, sum, verbose, sizeof verbose);
			ck_assert_str_eq(verbose, "82.4/50.0/45.5/37.5 (BP = 0.943 "
					 "ratio = 0.944 hyp_len = 17 ref_len = 18)");
		}
		metric_free(&m);
	}
}
END_TEST

START_TEST(test_readme_chrf_and_variable_refs)
{
	const char *var_refs[] = {
		"", "It was not unexpected.", "The man bit him first.",
		"The dog had bit the man.", "No one was surprised.", "The man had bitten the dog.",
	};
	int64_t sum[BLEU_NSTATS], csum[18];
	char verbose[256];
	struct metric m;

	ck_assert_int_eq(metric_init(&m, METRIC_CHRF, NULL, &chrf_default), 0);
	corpus(&m, readme_hyp, readme_refs, 3, 2, csum);
	ck_assert_double_eq_tol(metric_score(&m, csum), 59.73, 0.005);
	metric_free(&m);
	ck_assert_int_eq(metric_init(&m, METRIC_BLEU, &bleu_default, NULL), 0);
	corpus(&m, readme_hyp, var_refs, 3, 2, sum);
	metric_verbose(&m, sum, verbose, sizeof verbose);
	ck_assert_double_eq_tol(metric_score(&m, sum), 29.44, 0.005);
	ck_assert_str_eq(verbose, "82.4/42.9/27.3/12.5 (BP = 0.889 ratio = 0.895 "
			 "hyp_len = 17 ref_len = 19)");
	metric_free(&m);
}
END_TEST

START_TEST(test_sentence_bleu_issue98)
{
	/* sacreBLEU's test_sentence_bleu, effective order */
	struct {
		enum bleu_smooth sm;
		double sv;
		int lc;
		enum bleu_tokenizer tok;
		double want;
	} cases[] = {
		{ BLEU_SMOOTH_EXP, -1, 0, BLEU_TOK_13A, 8.493 },
		{ BLEU_SMOOTH_NONE, -1, 0, BLEU_TOK_13A, 0.0 },
		{ BLEU_SMOOTH_FLOOR, -1, 0, BLEU_TOK_13A, 4.51688 },
		{ BLEU_SMOOTH_FLOOR, 0.5, 0, BLEU_TOK_13A, 10.10 },
		{ BLEU_SMOOTH_ADD_K, -1, 0, BLEU_TOK_13A, 14.882 },
		{ BLEU_SMOOTH_ADD_K, 2, 0, BLEU_TOK_13A, 21.389 },
		{ BLEU_SMOOTH_EXP, -1, 0, BLEU_TOK_NONE, 7.347 },
		{ BLEU_SMOOTH_EXP, -1, 0, BLEU_TOK_INTL, 8.493 },
		{ BLEU_SMOOTH_EXP, -1, 0, BLEU_TOK_CHAR, 40.8759 },
		{ BLEU_SMOOTH_EXP, -1, 1, BLEU_TOK_CHAR, 42.0267 },
	};
	const char *ref[] = { "producţia de zahăr brut se exprimă în zahăr alb;" };
	const char *hyp[] = { "Producția de zahăr primă va fi exprimată în ceea ce privește zahărul alb;" };
	int64_t sum[BLEU_NSTATS];

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct bleu_cfg c = { cases[i].tok, cases[i].lc, cases[i].sm, cases[i].sv, 1 };
		struct metric m;

		ck_assert_int_eq(metric_init(&m, METRIC_BLEU, &c, NULL), 0);
		corpus(&m, hyp, ref, 1, 1, sum);
		ck_assert_double_eq_tol(metric_score(&m, sum), cases[i].want, 1e-3);
		metric_free(&m);
	}
}
END_TEST

START_TEST(test_chrf_published)
{
	/* sacreBLEU's test_chrf (beta 3): eps smoothing, effective order,
	 * whitespace kept; and sentence chrF (beta 2, eps smoothing) */
	struct {
		const char *hyp, *ref;
		int beta, eps, ws;
		double want;
	} cases[] = {
		{ "abcdefg", "hijklmnop", 3, 1, 0, 0.0 },
		{ "", "reference", 3, 1, 0, 0.0 },
		{ "aa", "ab", 3, 1, 0, 8.3333 },
		{ "a", "a", 3, 1, 0, 16.6667 },
		{ "a b c", "abc", 3, 1, 0, 50.0 },
		{ " risk assessment must be made of those who are qualified and expertise in the sector - these are the scientists .",
		  "risk assessment has to be undertaken by those who are qualified and expert in that area - that is the scientists .",
		  3, 1, 0, 63.361730 },
		{ "Niemand hat die Absicht, eine Mauer zu errichten",
		  "Niemand hat die Absicht, eine Mauer zu errichten", 3, 1, 0, 100.0 },
		{ "a", "a", 3, 0, 0, 100.0 },
		{ "aa", "ab", 3, 0, 0, 25.0 },
		{ "a b c", "abc", 3, 0, 0, 100.0 },
		{ "Die Beziehung zwischen Obama und Netanjahu ist nicht gerade freundlich.",
		  "Das Verhältnis zwischen Obama und Netanyahu ist nicht gerade freundschaftlich.",
		  3, 0, 1, 67.3481606 },
		{ "Co nás nejvíc trápí, protože lékaři si vybírají, kdo bude žít a kdo zemře.",
		  "Nejvíce smutní jsme z toho, že musíme rozhodovat o tom, kdo bude žít a kdo zemře.",
		  2, 1, 0, 39.14078509 },
		{ "Lapali po dechu, jejich životy skončily dřív, než skutečně začaly.",
		  "Lapali po dechu a pak jejich život skončil - dřív, než skutečně mohl začít, připomněli.",
		  2, 1, 0, 57.15704367 },
	};
	int64_t sum[18];

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct chrf_cfg c = { 6, 0, cases[i].beta, 0, cases[i].ws, cases[i].eps };
		struct metric m;

		ck_assert_int_eq(metric_init(&m, METRIC_CHRF, NULL, &c), 0);
		corpus(&m, &cases[i].hyp, &cases[i].ref, 1, 1, sum);
		ck_assert_double_eq_tol(metric_score(&m, sum), cases[i].want, 1e-4);
		metric_free(&m);
	}
}
END_TEST

START_TEST(test_chrf_by_hand)
{
	/* "ab" vs "abc", word order 1: chars 1: 2/2 matched of 2 and 3,
	 * chars 2: 1 of 1 and 2, chars 3: reference only (not counted);
	 * words "ab" vs "abc": 0 of 1 and 1 */
	struct chrf_cfg c = { 3, 1, 2, 0, 0, 0 };
	const char *hyp[] = { "ab" }, *ref[] = { "abc" };
	int64_t want[] = { 2, 3, 2, 1, 2, 1, 0, 1, 0, 1, 1, 0 }, sum[12];
	double p = (1 + 1 + 0) / 3.0, r = (2.0 / 3 + 0.5 + 0) / 3;
	struct metric m;
	char name[16];

	ck_assert_int_eq(metric_init(&m, METRIC_CHRF, NULL, &c), 0);
	corpus(&m, hyp, ref, 1, 1, sum);
	ck_assert_mem_eq(sum, want, sizeof want);
	ck_assert_double_eq_tol(metric_score(&m, sum), 100 * 5 * p * r / (4 * p + r), EPS);
	metric_name(&m, name, sizeof name);
	ck_assert_str_eq(name, "chrF2+");
	metric_free(&m);
}
END_TEST

START_TEST(test_chrf_best_reference)
{
	/* of two references the one with the better F-score gives the stats */
	const char *hyp[] = { "abc" }, *refs[] = { "xyz", "abc" };
	int64_t sum[18];
	struct metric m;

	ck_assert_int_eq(metric_init(&m, METRIC_CHRF, NULL, &chrf_default), 0);
	corpus(&m, hyp, refs, 1, 2, sum);
	ck_assert_double_eq_tol(metric_score(&m, sum), 100.0, EPS);
	metric_free(&m);
}
END_TEST

START_TEST(test_chrf_split_punct)
{
	struct bleu_words in = { 0 }, out = { 0 };
	const char *want[] = { "(hi", ")", "a", "\"", "quote", "x.y", "?",
			       "é", ".", "é", ".", "é" };

	ck_assert_int_eq(bleu_split(U("(hi) a \"quote x.y ? é. é .é"), &in), 0);
	ck_assert_int_eq(chrf_split_punct(&in, &out), 0);
	ck_assert_int_eq(out.n, 12);
	for (size_t i = 0; i < out.n; i++) {
		ck_assert_int_eq(out.w[i].n, strlen(want[i]));
		ck_assert_mem_eq(out.w[i].s, want[i], out.w[i].n);
	}
	bleu_words_free(&in);
	bleu_words_free(&out);
}
END_TEST

/* ---- tokenisers and text ---- */

START_TEST(test_tokenizer_13a)
{
	/* outputs of mteval-v13a's expressions run with Python's re */
	ck_assert_str_eq(tok(BLEU_TOK_13A, "It costs $3.50, isn't it?"),
			 "It costs $ 3.50 , isn't it ?");
	ck_assert_str_eq(tok(BLEU_TOK_13A, "He said &quot;no&quot; &amp;amp; left.<skipped>"),
			 "He said \" no \" & amp ; left .");
	ck_assert_str_eq(tok(BLEU_TOK_13A, "pages 10-20, 1,000.5 items."),
			 "pages 10 - 20 , 1,000.5 items .");
	ck_assert_str_eq(tok(BLEU_TOK_13A, "x.,y a..b 1990."), "x . , y a . . b 1990 .");
	ck_assert_str_eq(tok(BLEU_TOK_13A, ""), "");
}
END_TEST

START_TEST(test_tokenizer_intl)
{
	ck_assert_str_eq(tok(BLEU_TOK_INTL, "«Hola», dijo: 3,5 € ¿sí?"),
			 "« Hola » , dijo : 3,5 € ¿ sí ?");
	ck_assert_str_eq(tok(BLEU_TOK_INTL, "a.b 1.5 end."), "a . b 1.5 end .");
	/* mteval-v14's quirk: a number's final period stays */
	ck_assert_str_eq(tok(BLEU_TOK_INTL, "1990."), "1990.");
}
END_TEST

START_TEST(test_tokenizer_char_none)
{
	ck_assert_str_eq(tok(BLEU_TOK_CHAR, "ab c\u00e9"), "a b c \u00e9");
	ck_assert_str_eq(tok(BLEU_TOK_NONE, "  a,b\tc  "), "a,b c");
}
END_TEST

/* Whether the one-pass words of line are those of the passes, split. */
static int same_words(enum bleu_tokenizer t, const char *line)
{
	static struct bleu_bytes o, tmp;
	static struct bleu_buf cps;
	static struct bleu_words want, got;
	int same;

	pass_words(t, line, &o, &want);
	if (bleu_tokenize_words(t, U(line), &got, &cps, &tmp) != 0)
		return 0;
	same = want.n == got.n;
	for (size_t i = 0; same && i < want.n; i++)
		same = want.w[i].n == got.w[i].n &&
		       memcmp(want.w[i].s, got.w[i].s, want.w[i].n) == 0;
	return same;
}

START_TEST(test_tokenize_words_varied)
{
	static const char *const lines[] = {
		"It costs $3.50, isn't it? (Yes!) [no] {maybe} <b>bold</b>",
		"a!b\"c#d$e%f&g'h(i)j*k+l,m-n.o/p:q;r<s=t>u?v@w[x\\y]z^_`{|}~",
		"1,000.50 1.2.3 1..2 1...2 1....2 .5 5. ,5 5, 5,. .,5 3-4 3--4 -3 a-b x-",
		"10-20 1990. 1990.. a.b a..b a...b .a. ..a.. x.,y ,,., 2,,3 2.,3",
		"&quot;hi&quot; &amp;amp; &lt;tag&gt; &amp;lt; <skip<skipped>ped> &quo &",
		"\t tabs\tand\vvertical\f  spaces \x1c\x1f\u00a0nbsp\u3000ideo ",
		"«Hola», dijo: 3,5 € ¿sí? ¡Olé! Ça coûte 2½ €… — «mais» 10–20 ١٢٣.٤",
		"x²+y² = z² ・ 中文，测试。 (١٫٥) £5.00 ¥ © ® ™ ‰ † ‡ • ‐‑‒–—― ¶§",
		"İstanbul ΣΑΣ σας ß ﬁ ǅ ‘quotes’ “double” ‚low„ ‹›  ‹ › 〈〉",
		"..., ., ,. -.- 9.-9 9-.9 9.a a.9 ,9, 9,9,9 9.9.9 .9.9. -9- 9-9-9",
		"", " ", ".", "-", "5", "&", "$", "٣", "²", "¿", "!5", ".٣", "٣.", "a.٣",
	};
	/* the characters that matter to some tokeniser, and letters */
	static const char *const alphabet[] = {
		"a", "1", ".", ",", "-", " ", "(", "\u00b2", "\u00bf",
	};
	enum { NA = sizeof alphabet / sizeof alphabet[0], LEN = 5 };
	char buf[64], wide[128];

	for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++)
		for (int t = BLEU_TOK_13A; t <= BLEU_TOK_NONE; t++)
			ck_assert_msg(same_words(t, lines[i]), "%s: \"%s\"",
				      bleu_tok_name(t), lines[i]);
	/* every string of up to LEN of them: every run of periods and
	 * commas between every pair of neighbours */
	for (int len = 1; len <= LEN; len++) {
		int code[LEN] = { 0 };

		for (;;) {
			int k;

			buf[0] = 0;
			for (k = 0; k < len; k++)
				strcat(buf, alphabet[code[k]]);
			/* alone, and between long plain words (the eight-byte
			 * steps) */
			snprintf(wide, sizeof wide, "Longwords%s9digits99 x'yyyyyyy z", buf);
			for (int t = BLEU_TOK_13A; t <= BLEU_TOK_INTL; t++) {
				if (!same_words(t, buf))
					ck_abort_msg("%s: \"%s\"", bleu_tok_name(t), buf);
				if (!same_words(t, wide))
					ck_abort_msg("%s: \"%s\"", bleu_tok_name(t), wide);
			}
			for (k = 0; k < len && ++code[k] == NA; k++)
				code[k] = 0;
			if (k == len)
				break;
		}
	}
}
END_TEST

START_TEST(test_lowercase)
{
	struct bleu_buf out = { 0 };
	struct bleu_str want = S("οδος σας i\u0307i σ");

	struct bleu_buf cps = { 0 }, low = { 0 };
	struct bleu_bytes utf8 = { 0 };
	static const char *const cases[][2] = {
		{ "ΟΔΟΣ ΣΑΣ İi Σ", "οδος σας i\u0307i σ" },
		{ "The CAT, 3 ÉTÉS", "the cat, 3 étés" },
		{ "AΣ AΣb", "aς aσb" },		/* final sigma after ASCII */
		{ "Plain ASCII @[Z]", "plain ascii @[z]" },
		{ "", "" },
	};

	ck_assert_int_eq(bleu_lower(S("ΟΔΟΣ ΣΑΣ İi Σ"), &out), 0);
	ck_assert_int_eq(out.n, want.n);
	ck_assert_mem_eq(out.c, want.c, want.n * sizeof *want.c);
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		ck_assert_int_eq(bleu_lower_utf8(U(cases[i][0]), &cps, &low, &utf8), 0);
		ck_assert_int_eq(utf8.n, strlen(cases[i][1]));
		ck_assert_mem_eq(utf8.s, cases[i][1], utf8.n);
	}
	bleu_buf_free(&out);
	bleu_buf_free(&cps);
	bleu_buf_free(&low);
	bleu_bytes_free(&utf8);
}
END_TEST

START_TEST(test_utf8_and_space)
{
	struct bleu_buf b = { 0 };
	size_t bad = 0;

	ck_assert_int_eq(bleu_utf8_decode("ab\xc3\x28", 4, &b, &bad), 1);
	ck_assert_int_eq(bad, 2);
	ck_assert_int_eq(bleu_utf8_decode("\xed\xa0\x80", 3, &b, &bad), 1);	/* surrogate */
	ck_assert_int_eq(bleu_utf8_decode("\xc0\xaf", 2, &b, &bad), 1);	/* overlong */
	ck_assert_int_eq(bleu_utf8_check("abcdefgh\xc3\xa9ij\xf0\x9f\x98\x80", 16, &bad), 0);
	ck_assert_int_eq(bleu_utf8_check("abcdefghij\xed\xa0\x80", 13, &bad), 1);
	ck_assert_int_eq(bad, 10);
	ck_assert_int_eq(bleu_utf8_check("\xf4\x90\x80\x80", 4, &bad), 1);	/* past U+10FFFF */
	ck_assert_int_eq(bad, 0);
	ck_assert_int_eq(bleu_utf8_check("ab\xe2\x82", 4, &bad), 1);	/* cut short */
	ck_assert_int_eq(bad, 2);
	/* encoding is decoding's inverse, at every length's bounds */
	{
		static const uint32_t cp[] = { 0, 0x7f, 0x80, 0x7ff, 0x800, 0xffff,
					       0x10000, 0x10ffff, 0xe9, 0x20ac };
		struct bleu_bytes e = { 0 };

		ck_assert_int_eq(bleu_utf8_encode(cp, 10, &e), 0);
		ck_assert_int_eq(e.n, 1 + 1 + 2 + 2 + 3 + 3 + 4 + 4 + 2 + 3);
		ck_assert_mem_eq(e.s + e.n - 5, "\xc3\xa9\xe2\x82\xac", 5);
		b.n = 0;
		ck_assert_int_eq(bleu_utf8_decode(e.s, e.n, &b, &bad), 0);
		ck_assert_int_eq(b.n, 10);
		ck_assert_mem_eq(b.c, cp, sizeof cp);
		bleu_bytes_free(&e);
	}
	ck_assert(bleu_isspace(0x3000) && bleu_isspace(0x85) && bleu_isspace(0x1f));
	ck_assert(!bleu_isspace(0x200b) && !bleu_isspace('a'));
	ck_assert_int_eq(bleu_rstrip(U("a b \t\r\u3000")), 3);
	ck_assert_int_eq(bleu_rstrip(U("\u00e9\xc2\x85\u00a0")), 2);
	ck_assert_int_eq(bleu_rstrip(U("\u3000")), 0);
	ck_assert(ucat_flags('!') & UCAT_P);
	ck_assert(ucat_flags(0x20ac) & UCAT_S);		/* euro sign */
	ck_assert(ucat_flags(0x663) & UCAT_N);		/* Arabic-Indic three */
	ck_assert_int_eq(ucat_flags('a') & (UCAT_P | UCAT_S | UCAT_N), 0);
	bleu_buf_free(&b);
}
END_TEST

/* ---- output ---- */

static const char *json_float(double x)
{
	static char buf[64];
	FILE *f = fmemopen(buf, sizeof buf, "w");

	bleu_json_float(f, x);
	fclose(f);
	return buf;
}

START_TEST(test_json_float_is_python_repr)
{
	ck_assert_str_eq(json_float(48.5), "48.5");
	ck_assert_str_eq(json_float(100.0), "100.0");
	ck_assert_str_eq(json_float(0.0), "0.0");
	ck_assert_str_eq(json_float(0.0001), "0.0001");
	ck_assert_str_eq(json_float(0.00001), "1e-05");
	ck_assert_str_eq(json_float(1.0 / 10001), "9.999000099990002e-05");
	ck_assert_str_eq(json_float(20.7965), "20.7965");
	ck_assert_str_eq(json_float(1e16), "1e+16");
}
END_TEST

START_TEST(test_signatures)
{
	struct bleu_cfg b = bleu_default;
	struct chrf_cfg c = chrf_default;
	struct sig_info si = { 1, NULL, 0, NULL, "V" };
	struct metric m;
	char sig[256];

	b.smooth = BLEU_SMOOTH_FLOOR;
	ck_assert_int_eq(metric_init(&m, METRIC_BLEU, &b, NULL), 0);
	metric_signature(&m, &si, 0, sig, sizeof sig);
	ck_assert_str_eq(sig, "nrefs:1|case:mixed|eff:no|tok:13a|smooth:floor[0.10]|version:V");
	si = (struct sig_info){ -1, "bs", 1000, "12345", "V" };
	metric_signature(&m, &si, 1, sig, sizeof sig);
	ck_assert_str_eq(sig, "#:var|bs:1000|rs:12345|c:mixed|e:no|tok:13a|s:floor[0.10]|v:V");
	metric_free(&m);
	c.word_order = 2;
	c.lowercase = 1;
	ck_assert_int_eq(metric_init(&m, METRIC_CHRF, NULL, &c), 0);
	si = (struct sig_info){ 2, NULL, 0, NULL, "V" };
	metric_signature(&m, &si, 0, sig, sizeof sig);
	ck_assert_str_eq(sig, "nrefs:2|case:lc|eff:yes|nc:6|nw:2|space:no|version:V");
	metric_free(&m);
}
END_TEST

/* ---- significance ---- */

START_TEST(test_p_value_and_ci)
{
	double st[4] = { 0.5, 2.0, 3.0, 1.0 }, sc[40], mean, ci;

	ck_assert_double_eq(sig_p_value(st, 4, 1.0), 3.0 / 5);	/* 2 above, +1 */
	ck_assert_double_eq(sig_p_value(st, 4, 5.0), 1.0 / 5);
	for (int i = 0; i < 40; i++)
		sc[i] = 39 - i;		/* 0..39 reversed */
	sig_estimate_ci(sc, 40, &mean, &ci);
	ck_assert_double_eq_tol(mean, 19.5, EPS);
	ck_assert_double_eq_tol(ci, 0.5 * (38 - 1), EPS);	/* indices 1 and 38 */
}
END_TEST

/* n segments of BLEU statistics: system a matches everything, b half */
static void make_stats(int64_t *a, int64_t *b, int n)
{
	for (int i = 0; i < n; i++) {
		int64_t full[BLEU_NSTATS] = { 4, 4, 4, 3, 2, 1, 4, 3, 2, 1 };
		int64_t half[BLEU_NSTATS] = { 4, 4, 2, 1, 0, 0, 4, 3, 2, 1 };

		memcpy(a + i * BLEU_NSTATS, full, sizeof full);
		memcpy(b + i * BLEU_NSTATS, i % 2 ? half : full, sizeof full);
	}
}

START_TEST(test_paired_tests)
{
	enum { N = 50 };
	int64_t a[N * BLEU_NSTATS], b[N * BLEU_NSTATS];
	struct sig_result bl, sys, sys2;
	struct metric m;

	ck_assert_int_eq(metric_init(&m, METRIC_BLEU, &bleu_default, NULL), 0);
	make_stats(a, b, N);
	/* a system against itself: every resample is identical, p = 1/(n+1) */
	ck_assert_int_eq(sig_paired_bs(&m, a, a, N, 200, 12345, &bl, &sys), 0);
	ck_assert_double_eq_tol(sys.p_value, 1.0 / 201, EPS);
	ck_assert_double_eq_tol(bl.score, 100.0, EPS);
	ck_assert_double_eq_tol(bl.mean, 100.0, EPS);	/* every resample: 100 */
	ck_assert_double_eq_tol(bl.ci, 0.0, EPS);
	ck_assert(bl.p_value < 0);
	/* a clear difference: significant, the system's mean near its score */
	ck_assert_int_eq(sig_paired_bs(&m, a, b, N, 200, 12345, &bl, &sys), 0);
	ck_assert_double_eq_tol(sys.p_value, 1.0 / 201, EPS);
	ck_assert(fabs(sys.mean - sys.score) < 3 && sys.ci > 0 && sys.ci < 20);
	/* the same seed, the same draws */
	ck_assert_int_eq(sig_paired_bs(&m, a, b, N, 200, 12345, NULL, &sys2), 0);
	ck_assert_double_eq(sys.mean, sys2.mean);
	ck_assert_int_eq(sig_paired_ar(&m, a, b, N, 500, 12345, &sys), 0);
	ck_assert_double_eq_tol(sys.p_value, 1.0 / 501, EPS);
	ck_assert(sys.ci < 0);
	/* each better on five segments of fifty: the same score, and most
	 * random swaps make a difference: far from significant */
	for (int i = 0; i < N; i++) {
		int64_t part[BLEU_NSTATS] = { 4, 4, 3, 2, 1, 0, 4, 3, 2, 1 };

		memcpy(a + i * BLEU_NSTATS, part, sizeof part);
		memcpy(b + i * BLEU_NSTATS, part, sizeof part);
		if (i % 10 == 0)
			a[i * BLEU_NSTATS + 2] = 4;
		if (i % 10 == 5)
			b[i * BLEU_NSTATS + 2] = 4;
	}
	ck_assert_int_eq(sig_paired_ar(&m, a, b, N, 500, 12345, &sys), 0);
	ck_assert(sys.p_value > 0.5);
	ck_assert_int_eq(sig_paired_bs(&m, a, b, N, 200, 12345, NULL, &sys), 0);
	ck_assert(sys.p_value > 0.05);
	metric_free(&m);
}
END_TEST

/* The bootstrap's resamples are rng_below's draws: a plain reimplementation
 * gives the same mean and interval, to the bit. */
START_TEST(test_bootstrap_draws)
{
	enum { N = 37, S = 40 };
	int64_t a[N * BLEU_NSTATS], b[N * BLEU_NSTATS], acc[BLEU_NSTATS];
	double scores[S], mean, ci;
	struct sig_result bl, sys;
	struct metric m;
	struct rng r;

	ck_assert_int_eq(metric_init(&m, METRIC_BLEU, &bleu_default, NULL), 0);
	make_stats(a, b, N);
	for (int i = 0; i < N; i++)	/* segments that differ */
		b[i * BLEU_NSTATS + 2 + i % 4] -= i % 3 == 0;
	ck_assert_int_eq(sig_paired_bs(&m, a, b, N, S, 777, &bl, &sys), 0);
	rng_seed(&r, 777);
	for (int s = 0; s < S; s++) {
		memset(acc, 0, sizeof acc);
		for (int i = 0; i < N; i++) {
			uint64_t j = rng_below(&r, N);

			for (int k = 0; k < BLEU_NSTATS; k++)
				acc[k] += b[j * BLEU_NSTATS + k];
		}
		scores[s] = metric_score(&m, acc);
	}
	sig_estimate_ci(scores, S, &mean, &ci);
	ck_assert_double_eq(sys.mean, mean);
	ck_assert_double_eq(sys.ci, ci);
	metric_free(&m);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("bleu");
	TCase *t = tcase_create("bleu");

	tcase_add_test(t, test_precisions_no_smoothing_needed);
	tcase_add_test(t, test_smooth_exp);
	tcase_add_test(t, test_smooth_floor);
	tcase_add_test(t, test_smooth_add_k);
	tcase_add_test(t, test_smooth_none);
	tcase_add_test(t, test_brevity_penalty);
	tcase_add_test(t, test_closest_ref_len);
	tcase_add_test(t, test_ngram_statistics);
	tcase_add_test(t, test_ngram_table_naive);
	tcase_add_test(t, test_word_ids);
	tcase_add_test(t, test_char_ids);
	tcase_add_test(t, test_word_ids_page_end);
	tcase_add_test(t, test_multi_reference_clipping);
	tcase_add_test(t, test_degenerate_segments);
	tcase_add_test(t, test_readme_corpus);
	tcase_add_test(t, test_readme_chrf_and_variable_refs);
	tcase_add_test(t, test_sentence_bleu_issue98);
	tcase_add_test(t, test_chrf_published);
	tcase_add_test(t, test_chrf_by_hand);
	tcase_add_test(t, test_chrf_best_reference);
	tcase_add_test(t, test_chrf_split_punct);
	tcase_add_test(t, test_tokenizer_13a);
	tcase_add_test(t, test_tokenizer_intl);
	tcase_add_test(t, test_tokenizer_char_none);
	tcase_add_test(t, test_tokenize_words_varied);
	tcase_add_test(t, test_lowercase);
	tcase_add_test(t, test_utf8_and_space);
	tcase_add_test(t, test_json_float_is_python_repr);
	tcase_add_test(t, test_signatures);
	tcase_add_test(t, test_p_value_and_ci);
	tcase_add_test(t, test_paired_tests);
	tcase_add_test(t, test_bootstrap_draws);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	return run_suite(suite());
}
