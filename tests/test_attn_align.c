/*
 * test_attn_align.c: word alignments from attention (attn_align.h) on
 * hand-made weights: units joined to words (merged units that carry the space,
 * byte units, a lone space, </s>), the mass of a word's units summed,
 * the choice of layers and heads, ties, words that put no mass on any
 * source word, more links by share, and the refusals.  The expected
 * Pharaoh strings are worked out by hand in the comments.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/errmsg.h"
#include "bytes_vocab.h"
#include "run_suite.h"
#include "text/attn_align.h"


/* The ids of s in bytes_vocab, then </s>; their count. */
static int byte_ids(const char *s, int32_t *ids)
{
	int n = 0;

	while (*s)
		ids[n++] = BPE_BYTE0 + (unsigned char)*s++;
	ids[n++] = BPE_EOS;
	return n;
}

START_TEST(units_joined_to_words)
{
	static const char *const corpus[] = { "ab ab ab cd cd" };
	struct bpe_counter *c = bpe_counter_new();
	struct bpe *v;
	struct vocab *b = bytes_vocab(), *vv;
	struct bpe_ids ids = { 0 };
	struct bpe_text t = { 0 };
	int32_t bid[16];
	int word[16], n, i;
	/* " ab  c" + </s>: space, a, b, space, space, c, </s> */
	static const int want[] = { -1, 0, 0, -1, -1, 1, -1 };

	ck_assert_int_eq(bpe_counter_add(c, corpus[0], strlen(corpus[0])),
			 0);
	v = bpe_learn(c, 1000, 1.0);
	ck_assert_ptr_nonnull(v);
	/* merged units: "ab", "▁ab", "▁cd" (the space leads the unit) */
	ck_assert_int_eq(bpe_encode(v, "ab ab cd", 8, &ids), 0);
	ck_assert_uint_eq(ids.n, 3);
	ck_assert_int_eq(bpe_unit_show(v, ids.v[1], &t), 0);
	ck_assert_mem_eq(t.s, "\xe2\x96\x81" "ab", 5);
	bpe_ids_push(&ids, BPE_EOS);
	t.n = 0;
	ck_assert_int_eq(bpe_save(v, &t), 0);
	vv = vocab_load(t.s, t.n);
	ck_assert_ptr_nonnull(vv);
	ck_assert_int_eq(align_unit_words(vv, ids.v, 4, word), 0);
	ck_assert_int_eq(word[0], 0);
	ck_assert_int_eq(word[1], 1);
	ck_assert_int_eq(word[2], 2);
	ck_assert_int_eq(word[3], -1);
	/* byte units: a lone space has no word, a word's bytes share one */
	n = byte_ids(" ab  c", bid);
	ck_assert_int_eq(n, 7);
	ck_assert_int_eq(align_unit_words(b, bid, n, word), 0);
	for (i = 0; i < n; i++)
		ck_assert_msg(word[i] == want[i], "unit %d: word %d, not %d",
			      i, word[i], want[i]);
	bid[0] = 5000;
	ck_assert_int_eq(align_unit_words(b, bid, 1, word), -1);
	bpe_counter_free(c);
	bpe_ids_free(&ids);
	bpe_text_free(&t);
	bpe_free(v);
	vocab_free(vv);
	vocab_free(b);
}
END_TEST

/*
 * Source "ab c" </s>: units a b _ c </s>, words ab (0) and c (1).
 * Target "x yz" </s>: units x _ y z </s>, words x (0) and yz (1).
 * Two layers of two heads: attw [2, 2, 5, 5], rows the target units,
 * columns the source units.  Per plane, the masses by words:
 *
 *	plane	x on ab, c	yz on ab, c
 *	(0,0)	.6, .4		.8, .5
 *	(0,1)	0, 1		0, 2
 *	(1,0)	.5, .5		0, 0
 *	(1,1)	0, 0		.5, 1
 *
 * Plane (0,0) alone is the test of summing: x's best unit is c (.4 over
 * .3 and .3), and y's is c (.4 over .2 and .1), but the words x and yz
 * go to ab; and the target's space unit, with all its mass on c, must
 * count for no word (else x would go to c).  The columns of the space
 * and of </s> carry mass that no word gets.
 */
static const float attw[2][2][5][5] = {
	{ {	{ .3f, .3f, 0, .4f, 0 },
		{ 0, 0, 0, 1, 0 },
		{ .2f, .1f, 0, .4f, .3f },
		{ .5f, 0, 0, .1f, .4f },
		{ 0, 0, 0, 1, 0 } },
	  {	{ 0, 0, 0, 1, 0 },
		{ 1, 0, 0, 0, 0 },
		{ 0, 0, 0, 1, 0 },
		{ 0, 0, 0, 1, 0 },
		{ 1, 0, 0, 0, 0 } } },
	{ {	{ .5f, 0, 0, .5f, 0 },
		{ 0, 0, 0, 0, 1 },
		{ 0, 0, 0, 0, 1 },
		{ 0, 0, 0, 0, 1 },
		{ 1, 0, 0, 0, 0 } },
	  {	{ 0, 0, .5f, 0, .5f },
		{ 0, 0, 0, 1, 0 },
		{ 0, .5f, 0, .5f, 0 },
		{ 0, 0, 0, .5f, .5f },
		{ 0, 0, 0, 1, 0 } } },
};

/* The alignment of the example above under o, as a string (NULL on an
 * error, err_msg()). */
static char *align_example_opts(const struct align_opts *o)
{
	struct vocab *v = bytes_vocab();
	struct bpe_text t = { 0 };
	int32_t src[8], tgt[8];
	int S = byte_ids("ab c", src), T = byte_ids("x yz", tgt);
	char *s;

	ck_assert_int_eq(S, 5);
	ck_assert_int_eq(T, 5);
	if (align_words(v, src, S, v, tgt, T, &attw[0][0][0][0], 2, 2, o,
			&t) < 0) {
		vocab_free(v);
		bpe_text_free(&t);
		return NULL;
	}
	s = strndup(t.s ? t.s : "", t.n);
	vocab_free(v);
	bpe_text_free(&t);
	return s;
}

static char *align_example(uint64_t layers, uint64_t heads, double share)
{
	struct align_opts o = { .layers = layers, .heads = heads,
				.min_share = share };

	return align_example_opts(&o);
}

static void expect(uint64_t layers, uint64_t heads, double share,
		   const char *want)
{
	char *got = align_example(layers, heads, share);

	ck_assert_msg(got != NULL, "%s", err_msg());
	ck_assert_msg(!strcmp(got, want), "layers %#llx heads %#llx share "
		      "%g: '%s', not '%s'", (unsigned long long)layers,
		      (unsigned long long)heads, share, got, want);
	free(got);
}

START_TEST(planes_chosen)
{
	/* (0,0): x and yz to ab, their units' masses summed */
	expect(1, 1, 0, "0-0 0-1");
	/* (0,1): both to c */
	expect(1, 2, 0, "1-0 1-1");
	/* (1,0): x ties .5 and .5, the first (ab) wins; yz has no mass on
	 * any source word, no link */
	expect(2, 1, 0, "0-0");
	/* (1,1): x has no mass on a word (only on the space and </s>) */
	expect(2, 2, 0, "1-1");
	/* layer 0, both heads: x .6 and 1.4, yz .8 and 2.5 */
	expect(1, 0, 0, "1-0 1-1");
	/* layer 1: x ties .5 and .5 (ab), yz .5 and 1 (c) */
	expect(2, 0, 0, "0-0 1-1");
	/* head 0 of both layers: x 1.1 and .9, yz .8 and .5 */
	expect(0, 1, 0, "0-0 0-1");
	/* all four: x 1.1 and 1.9, yz 1.3 and 3.5 */
	expect(0, 0, 0, "1-0 1-1");
	expect(3, 3, 0, "1-0 1-1");
}
END_TEST

START_TEST(more_links_by_share)
{
	/* all four planes: x's shares 1.1/3 = .37 and .63, yz's 1.3/4.8 =
	 * .27 and .73 */
	expect(0, 0, .3, "0-0 1-0 1-1");
	expect(0, 0, .25, "0-0 0-1 1-0 1-1");
	expect(0, 0, .75, "1-0 1-1");
	/* a share of 1 links the best only; (1,0): x's tie, both at .5 */
	expect(0, 0, 1, "1-0 1-1");
	expect(2, 1, .5, "0-0 1-0");
}
END_TEST

static void text_is(const struct bpe_text *t, const char *want)
{
	ck_assert_msg(t->n == strlen(want) && !memcmp(t->s, want, t->n),
		      "'%.*s', not '%s'", (int)t->n, t->s, want);
}

/* The alignment of the example under o is want. */
static void expect_opts(const struct align_opts *o, const char *want)
{
	char *got = align_example_opts(o);

	ck_assert_msg(got != NULL, "%s", err_msg());
	ck_assert_str_eq(got, want);
	free(got);
}

START_TEST(cover_every_source_word)
{
	static const char *const yz[] = { "yz" };
	struct align_opts o = { .layers = 1, .heads = 1, .cover = 1 };

	/* (0,0): x and yz go to ab; c, without a link, to the target word
	 * of most mass on it: x .4, yz .5 */
	expect_opts(&o, "0-0 0-1 1-1");
	/* layer 0: both to c; ab gets yz (.8 against x's .6) */
	o.heads = 0;
	expect_opts(&o, "0-1 1-0 1-1");
	/* (0,1): both to c; ab has no mass from either: no link */
	o.heads = 2;
	expect_opts(&o, "1-0 1-1");
	/* (1,0): x ties on ab and c (ab), yz has no mass on a word; c gets
	 * x, the only word with mass on it */
	o.layers = 2;
	o.heads = 1;
	expect_opts(&o, "0-0 1-0");
	/* all four: both to c; ab would get yz (1.3 against x's 1.1), but
	 * an unlinked word takes no link: x */
	o.layers = o.heads = 0;
	expect_opts(&o, "0-1 1-0 1-1");
	o.unlinked = yz;
	o.n_unlinked = 1;
	expect_opts(&o, "0-0 1-0");
}
END_TEST

START_TEST(no_words)
{
	struct align_opts o = { 0 };
	struct vocab *v = bytes_vocab();
	struct bpe_text t = { 0 };
	int32_t src[8], tgt[8];
	float a[2 * 5] = { .5f, .5f, 0, 0, 0, 0, 0, 0, 0, 1 };
	int S = byte_ids("ab c", src), T = byte_ids(" ", tgt);

	/* target " " </s>: no word, no link */
	ck_assert_int_eq(align_words(v, src, S, v, tgt, T, a, 1, 1, &o, &t),
			 0);
	ck_assert_uint_eq(t.n, 0);
	/* source </s> alone: no word to link to */
	T = byte_ids("x", tgt);
	ck_assert_int_eq(T, 2);
	S = byte_ids("", src);
	ck_assert_int_eq(align_words(v, src, S, v, tgt, T, a, 1, 1, &o, &t),
			 0);
	ck_assert_uint_eq(t.n, 0);
	bpe_text_free(&t);
	vocab_free(v);
}
END_TEST

/* Target "“The, Of” oft" </s>, every unit on the source's c: the three
 * words go to c unless listed; the punctuation and quotes around a word
 * and its case do not count, its letters do. */
START_TEST(unlinked_words)
{
	static const char *const fw[] = { "the", "of" }, *const oft[] = {
		"OFT" }, *const punct[] = { "the," };
	static const char tgt_text[] = "\xe2\x80\x9cThe, Of\xe2\x80\x9d oft";
	struct align_opts o = { 0 };
	struct vocab *v = bytes_vocab();
	struct bpe_text t = { 0 };
	int32_t src[8], tgt[32];
	float a[32 * 5] = { 0 };
	int S = byte_ids("ab c", src), T = byte_ids(tgt_text, tgt), i;

	for (i = 0; i < T; i++)
		a[i * S + 3] = 1;
	ck_assert_int_eq(align_words(v, src, S, v, tgt, T, a, 1, 1, &o, &t),
			 0);
	text_is(&t, "1-0 1-1 1-2");
	o.unlinked = fw;
	o.n_unlinked = 2;
	t.n = 0;
	ck_assert_int_eq(align_words(v, src, S, v, tgt, T, a, 1, 1, &o, &t),
			 0);
	text_is(&t, "1-2");
	o.unlinked = oft;
	o.n_unlinked = 1;
	t.n = 0;
	ck_assert_int_eq(align_words(v, src, S, v, tgt, T, a, 1, 1, &o, &t),
			 0);
	text_is(&t, "1-0 1-1");
	o.unlinked = punct;
	t.n = 0;
	ck_assert_int_eq(align_words(v, src, S, v, tgt, T, a, 1, 1, &o, &t),
			 0);
	text_is(&t, "1-0 1-1 1-2");
	bpe_text_free(&t);
	vocab_free(v);
}
END_TEST

START_TEST(refused)
{
	ck_assert_ptr_null(align_example(4, 0, 0));
	ck_assert_str_eq(err_msg(), "layer 2 chosen, the attention has 2 "
			 "layers");
	ck_assert_ptr_null(align_example(1, 1ull << 63, 0));
	ck_assert_str_eq(err_msg(), "head 63 chosen, the attention has 2 "
			 "heads");
}
END_TEST

/* Guided alignment's links (align_unit_links) by the units' spans in
 * the input's words: the reproducer of issue 45 by hand, where an <unk>
 * (decoded " ⁇ ", which split "cat" in two) is unit 4 of "cat". */
START_TEST(unit_links_by_spans)
{
	/* t h e ▁ <unk> a t ▁ s a t </s> of "the cat sat": the ▁ pieces
	 * stand for the spaces, </s> for nothing */
	static const char src[] = "the cat sat", tgt[] = "el gato\r";
	static const int32_t ss[] = { 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6,
				      6, 7, 7, 8, 8, 9, 9, 10, 10, 11,
				      11, 11 };
	/* ▁el (the dummy prefix and e l) ▁ga to, the CR, </s> */
	static const int32_t ts[] = { 0, 2, 2, 5, 5, 7, 7, 8, 8, 8 };
	/* 1-1: cat's 4 5 6 to ga to (1 2); the rest to 11, the </s> */
	static const int32_t want[] = { 11, 0, 4, 1, 5, 1, 6, 1, 4, 2, 5, 2,
					6, 2, 11, 3, 11, 4 };
	int32_t *out = NULL;
	size_t cap = 0, n;
	const char *line = "1-1\r";

	ck_assert_int_eq(align_unit_links(src, 11, ss, 12, tgt, 8, ts, 5,
					  line, strlen(line), &out, &cap,
					  &n), 0);
	ck_assert_uint_eq(n, 9);
	for (size_t k = 0; k < 2 * n; k++)
		ck_assert_msg(out[k] == want[k], "value %zu: %d, not %d", k,
			      out[k], want[k]);
	/* three source words, two target words: 3-0 and 0-2 are past them */
	ck_assert_int_eq(align_unit_links(src, 11, ss, 12, tgt, 8, ts, 5,
					  "3-0", 3, &out, &cap, &n), -1);
	ck_assert_str_eq(err_msg(), "link 3-0: the pair has 3 source and 2 "
			 "target words");
	ck_assert_int_eq(align_unit_links(src, 11, ss, 12, tgt, 8, ts, 5,
					  "0-2", 3, &out, &cap, &n), -1);
	/* a span past the text */
	ck_assert_int_eq(align_unit_links(src, 10, ss, 12, tgt, 8, ts, 5,
					  "0-0", 3, &out, &cap, &n), -1);
	ck_assert_ptr_nonnull(strstr(err_msg(), "outside the text"));
	free(out);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("align");
	TCase *tc = tcase_create("align");

	tcase_add_test(tc, units_joined_to_words);
	tcase_add_test(tc, planes_chosen);
	tcase_add_test(tc, more_links_by_share);
	tcase_add_test(tc, cover_every_source_word);
	tcase_add_test(tc, no_words);
	tcase_add_test(tc, unlinked_words);
	tcase_add_test(tc, refused);
	tcase_add_test(tc, unit_links_by_spans);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
