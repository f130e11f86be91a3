/*
 * test_bpe.c: the subword tokenizer (bpe.h) and UTF-8 decoding (utf8.h):
 * pieces, merges worked out by hand, learning and applying against a naive
 * reference that recounts every pair after every merge, determinism, the
 * text format and its refusals, and byte-exact round trips of text in many
 * scripts, control characters and invalid UTF-8.
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "text/bpe_impl.h"
#include "base/errmsg.h"
#include "run_suite.h"
#include "base/utf8.h"

/* ---- helpers ------------------------------------------------------------ */

static struct bpe *learn_lines(const char *const *lines, int n, int repeat,
			       int vocab_size, double coverage)
{
	struct bpe_counter *c = bpe_counter_new();
	struct bpe *v;
	int i, r;

	ck_assert_ptr_nonnull(c);
	for (r = 0; r < repeat; r++)
		for (i = 0; i < n; i++)
			ck_assert_int_eq(bpe_counter_add(c, lines[i],
							 strlen(lines[i])), 0);
	v = bpe_learn(c, vocab_size, coverage);
	ck_assert_msg(v != NULL, "%s", err_msg());
	bpe_counter_free(c);
	return v;
}

/* The vocabulary in the text format, as a NUL-terminated string. */
static char *saved(const struct bpe *v)
{
	struct bpe_text t = { 0 };

	ck_assert_int_eq(bpe_save(v, &t), 0);
	ck_assert_int_eq(bpe_text_add(&t, "", 1), 0);
	return t.s;
}

/* The units of text, shown and separated by spaces. */
static char *shown(struct bpe *v, const char *text, size_t len)
{
	struct bpe_ids ids = { 0 };
	struct bpe_text t = { 0 };
	size_t i;

	ck_assert_int_eq(bpe_encode(v, text, len, &ids), 0);
	for (i = 0; i < ids.n; i++) {
		if (i)
			bpe_text_add(&t, " ", 1);
		ck_assert_int_eq(bpe_unit_show(v, ids.v[i], &t), 0);
	}
	bpe_text_add(&t, "", 1);
	bpe_ids_free(&ids);
	return t.s;
}

/* Encodes text into ids (cleared first) and checks that the ids are
 * units and decode to the same bytes. */
static void encode_checked(struct bpe *v, const char *text, size_t len,
			   struct bpe_ids *ids)
{
	struct bpe_text back = { 0 };
	size_t i;

	ids->n = 0;
	ck_assert_int_eq(bpe_encode(v, text, len, ids), 0);
	for (i = 0; i < ids->n; i++)
		if (ids->v[i] < BPE_BYTE0 || ids->v[i] >= bpe_size(v))
			ck_abort_msg("id %d at %zu", ids->v[i], i);
	ck_assert_int_eq(bpe_ids_push(ids, BPE_EOS), 0);
	ck_assert_int_eq(bpe_decode(v, ids->v, ids->n, &back), 0);
	ids->n--;
	ck_assert_msg(back.n == len && (!len || !memcmp(back.s, text, len)),
		      "round trip of %zu bytes gave %zu", len, back.n);
	bpe_text_free(&back);
}

static void assert_round_trip(struct bpe *v, const char *text, size_t len)
{
	struct bpe_ids ids = { 0 };

	encode_checked(v, text, len, &ids);
	bpe_ids_free(&ids);
}

/*
 * The vocabulary that learning made from "aaa aaa" and "ab ab" before the
 * dummy prefix (format version 1), written out by hand: a 260, ▁ 261,
 * b 262, aa 263, ab 264, aaa 265; with the header of `version`.
 */
static char *hand_vocab(int version)
{
	static const char specials[] = "0\t<pad>\tspecial\n1\t<s>\tspecial\n"
		"2\t</s>\tspecial\n3\t<unk>\tspecial\n";
	static const char units[] = "260\ta\tchar\n261\t▁\tchar\n"
		"262\tb\tchar\n263\taa\tmerge\ta a\n264\tab\tmerge\ta b\n"
		"265\taaa\tmerge\taa a\n";
	struct bpe_text t = { 0 };
	char line[32];
	int b, n;

	n = snprintf(line, sizeof(line), "attn-bpe %d 266\n", version);
	bpe_text_add(&t, line, n);
	bpe_text_add(&t, specials, sizeof(specials) - 1);
	for (b = 0; b < 256; b++) {
		n = snprintf(line, sizeof(line), "%d\t<0x%02X>\tbyte\n",
			     BPE_BYTE0 + b, b);
		bpe_text_add(&t, line, n);
	}
	bpe_text_add(&t, units, sizeof(units));         /* with the NUL */
	return t.s;
}

static struct bpe *hand_loaded(int version)
{
	char *text = hand_vocab(version);
	struct bpe *v = bpe_load(text, strlen(text));

	ck_assert_msg(v != NULL, "%s", err_msg());
	free(text);
	return v;
}

/* ---- UTF-8 -------------------------------------------------------------- */

START_TEST(utf8_strict)
{
	static const struct {
		const char *s;
		int len;
		uint32_t cp;
	} cases[] = {
		{ "A", 1, 0x41 },
		{ "\xc3\xb1", 2, 0xf1 },                /* ñ */
		{ "\xe2\x96\x81", 3, 0x2581 },
		{ "\xf0\x9f\x98\x80", 4, 0x1f600 },
		{ "\xf4\x8f\xbf\xbf", 4, 0x10ffff },
		{ "\x80", 0, 0x80 },                    /* lone continuation */
		{ "\xc0\x80", 0, 0xc0 },                /* overlong NUL */
		{ "\xc1\xbf", 0, 0xc1 },
		{ "\xe0\x80\x80", 0, 0xe0 },            /* overlong */
		{ "\xf0\x80\x80\x80", 0, 0xf0 },        /* overlong */
		{ "\xed\xa0\x80", 0, 0xed },            /* surrogate */
		{ "\xf4\x90\x80\x80", 0, 0xf4 },        /* above U+10FFFF */
		{ "\xf5\x80\x80\x80", 0, 0xf5 },
		{ "\xe2\x96", 0, 0xe2 },                /* truncated */
		{ "\xe2\x41\x81", 0, 0xe2 },            /* not a continuation */
	};
	uint32_t cp;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ck_assert_int_eq(utf8_decode((const unsigned char *)cases[i].s,
					     strlen(cases[i].s), &cp),
				 cases[i].len);
		ck_assert_uint_eq(cp, cases[i].cp);
	}
}
END_TEST

/* ---- pieces ------------------------------------------------------------- */

/* Cuts text into pieces with bpe_piece_len and joins them with '|'. */
static char *cut(const char *text, size_t len)
{
	struct bpe_text t = { 0 };
	size_t i, n;

	for (i = 0; i < len; i += n) {
		n = bpe_piece_len(text + i, len - i);
		ck_assert(n >= 1 && n <= len - i);
		if (i)
			bpe_text_add(&t, "|", 1);
		bpe_text_add(&t, text + i, n);
	}
	bpe_text_add(&t, "", 1);
	return t.s;
}

START_TEST(pieces_by_hand)
{
	static const char *const cases[][2] = {
		{ "a  b\tc", "a| | b|\t|c" },
		{ " \xc2\xbfQu\xc3\xa9 tal?\xc2\xbb 12ab ",
		  " \xc2\xbf|Qu\xc3\xa9| tal|?\xc2\xbb| 12|ab| " },
		{ "x..y", "x|..|y" },
		{ "A1-2", "A|1|-|2" },
		{ "  ", " | " },
		{ "\r\r", "\r|\r" },
		{ " \r", " |\r" },
		/* invalid bytes are letters; U+2581 too, C1 controls not */
		{ "a\xff" "b \xe2\x96\x81x", "a\xff" "b| \xe2\x96\x81x" },
		{ "a\xc2\x85" "b", "a|\xc2\x85|b" },
		/* combining marks stay with their letter */
		{ " e\xcc\x81t\xcc\xa3", " e\xcc\x81t\xcc\xa3" },
		{ "\xe2\x80\x94word\xe2\x80\xa6",
		  "\xe2\x80\x94|word|\xe2\x80\xa6" },
	};
	size_t i;
	char *s;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		s = cut(cases[i][0], strlen(cases[i][0]));
		ck_assert_str_eq(s, cases[i][1]);
		free(s);
	}
	s = cut("a\0b", 3);                     /* NUL is a control */
	ck_assert_mem_eq(s, "a|\0|b", 6);
	free(s);
}
END_TEST

/* ---- learning by hand --------------------------------------------------- */

/*
 * The corpus "aaa aaa" and "ab ab", worked out by hand.
 *
 * Pieces, with the dummy prefix: " aaa" 2, " ab" 2.  Characters: a 8,
 * space 4, b 2; by count: a (260), space (261), b (262).
 *
 * Pairs: (▁,a) 4 (one in each word), (a,a) 4, (a,b) 2.
 * 1. A tie at 4: left units " " < "a" in byte order, so (▁,a) -> "▁a"
 *    263.  " aaa" is [▁a a a], " ab" [▁a b].  Pairs: (▁a,a) 2, (a,a) 2,
 *    (▁a,b) 2.
 * 2. A tie at 2: left " a" < "a", then right "a" < "b": (▁a,a) -> "▁aa"
 *    264.  Pairs: (▁aa,a) 2, (▁a,b) 2.
 * 3. Left " a" < " aa": (▁a,b) -> "▁ab" 265.
 * 4. (▁aa,a) 2 -> "▁aaa" 266.  No pair is left: 267 units.
 */
START_TEST(learn_by_hand)
{
	static const char *const corpus[] = { "aaa aaa", "ab ab" };
	static const char *const want =
		"260\ta\tchar\n"
		"261\t▁\tchar\n"
		"262\tb\tchar\n"
		"263\t▁a\tmerge\t▁ a\n"
		"264\t▁aa\tmerge\t▁a a\n"
		"265\t▁ab\tmerge\t▁a b\n"
		"266\t▁aaa\tmerge\t▁aa a\n";
	struct bpe *v = learn_lines(corpus, 2, 1, 1000, 1.0);
	char *text = saved(v), *tail;
	char *s;

	ck_assert_int_eq(bpe_size(v), 267);
	ck_assert_int_eq(bpe_merges(v), 4);
	ck_assert(strncmp(text, "attn-bpe 2 267\n0\t<pad>\tspecial\n1\t<s>\t"
			  "special\n2\t</s>\tspecial\n3\t<unk>\tspecial\n"
			  "4\t<0x00>\tbyte\n", 90) == 0);
	tail = strstr(text, "259\t<0xFF>\tbyte\n");
	ck_assert_ptr_nonnull(tail);
	ck_assert_str_eq(tail + strlen("259\t<0xFF>\tbyte\n"), want);
	/* Applying, by hand: the line is " aaa ab aaaa aaaaa b"; " aaaa" is
	 * [▁a a a a] after (▁,a), [▁aa a a] after (▁a,a), then (▁aa,a)
	 * joins [▁aaa a]; there is no (a,a).  The first word is spelt as
	 * the others. */
	s = shown(v, "aaa ab aaaa aaaaa b", 19);
	ck_assert_str_eq(s, "▁aaa ▁ab ▁aaa a ▁aaa a a ▁ b");
	free(s);
	free(text);
	bpe_free(v);
}
END_TEST

/* A vocabulary of version 1, made before the dummy prefix, applies and
 * saves as it did: the units that learning by hand gave then. */
START_TEST(version_1_as_before)
{
	struct bpe *v = hand_loaded(1), *w = hand_loaded(2);
	char *text = hand_vocab(1), *again = saved(v), *s;

	ck_assert_str_eq(again, text);
	/* " aaaa" is (a,a) twice, [▁ aa aa]; " aaaaa" is [▁ aa aa a]
	 * after (a,a), then (aa,a) joins the last two. */
	s = shown(v, "aaa ab aaaa aaaaa b", 19);
	ck_assert_str_eq(s, "aaa ▁ ab ▁ aa aa ▁ aa aaa ▁ b");
	free(s);
	/* the same units under the header of version 2: the line starts
	 * with a space */
	s = shown(w, "aaa ab", 6);
	ck_assert_str_eq(s, "▁ aaa ▁ ab");
	free(s);
	free(again);
	again = saved(w);
	ck_assert(strncmp(again, "attn-bpe 2 266\n", 15) == 0);
	ck_assert_str_eq(again + 15, text + 15);
	free(again);
	free(text);
	bpe_free(v);
	bpe_free(w);
}
END_TEST

/* The vocabulary size caps characters, then merges. */
START_TEST(learn_size_limits)
{
	static const char *const corpus[] = { "aaa aaa", "ab ab" };
	struct bpe_counter *c;
	struct bpe *v;
	char *s;

	v = learn_lines(corpus, 2, 1, 264, 1.0);
	ck_assert_int_eq(bpe_size(v), 264);
	ck_assert_int_eq(bpe_merges(v), 1);
	bpe_free(v);
	v = learn_lines(corpus, 2, 1, 261, 1.0);    /* room for "a" only */
	ck_assert_int_eq(bpe_size(v), 261);
	s = shown(v, "ab", 2);
	ck_assert_str_eq(s, "<0x20> a <0x62>");
	free(s);
	bpe_free(v);
	/* Coverage: a is 8 of 14 characters, so 0.5 keeps a alone. */
	v = learn_lines(corpus, 2, 1, 1000, 0.5);
	s = shown(v, "a b", 3);
	ck_assert_str_eq(s, "<0x20> a <0x20> <0x62>");
	free(s);
	bpe_free(v);
	c = bpe_counter_new();
	ck_assert_ptr_null(bpe_learn(c, 259, 1.0));
	bpe_counter_free(c);
}
END_TEST

/* ---- a naive reference: strings, recounting after every merge ----------- */

#define NAIVE_MAX 64            /* symbols of a word, bytes of a unit */

struct sym {
	char s[NAIVE_MAX];      /* the unit's bytes; NUL-free corpora */
	int byte;               /* a byte unit: never merges */
};
struct nword {
	struct sym sym[NAIVE_MAX];
	int n;
	long freq;
};
struct npair {
	const struct sym *a;    /* the pair a[0] a[1], in some word */
	long count;
};
struct naive {
	struct nword w[512];
	int nw;
	char merge[1024][2][NAIVE_MAX];
	int nmerge;
};

/* The symbols of a piece before merging: characters that v has as char
 * units (looked up by their display, as a person would), else bytes. */
static void naive_symbols(const struct bpe *v, const char *s, size_t n,
			  struct nword *w)
{
	uint32_t cp;
	size_t i;
	int len, k;

	w->n = 0;
	for (i = 0; i < n; i += len) {
		len = utf8_decode((const unsigned char *)s + i, n - i, &cp);
		ck_assert_int_lt(w->n + 4, NAIVE_MAX);
		if (len && (s[i] == ' ' ? bpe_unit_find(v, "▁", 3)
				       : bpe_unit_find(v, s + i, len)) >=
				   BPE_FIRST_UNIT) {
			memcpy(w->sym[w->n].s, s + i, len);
			w->sym[w->n].s[len] = '\0';
			w->sym[w->n++].byte = 0;
			continue;
		}
		len = len ? len : 1;
		for (k = 0; k < len; k++) {
			w->sym[w->n].s[0] = s[i + k];
			w->sym[w->n].s[1] = '\0';
			w->sym[w->n++].byte = 1;
		}
	}
}

/* Replaces every (l, r) by l r joined, left to right. */
static void naive_apply(struct nword *w, const char *l, const char *r)
{
	int i, j = 0;

	for (i = 0; i < w->n; i++, j++) {
		w->sym[j] = w->sym[i];
		if (i + 1 < w->n && !w->sym[i].byte && !w->sym[i + 1].byte &&
		    !strcmp(w->sym[i].s, l) && !strcmp(w->sym[i + 1].s, r)) {
			ck_assert_int_lt(strlen(l) + strlen(r), NAIVE_MAX);
			strcat(w->sym[j].s, r);
			i++;
		}
	}
	w->n = j;
}

static int naive_is_unit(const struct bpe *v, const struct naive *nv,
			 const char *l, const char *r)
{
	char joined[2 * NAIVE_MAX];
	struct nword w;
	int i;

	snprintf(joined, sizeof(joined), "%s%s", l, r);
	naive_symbols(v, joined, strlen(joined), &w);
	if (w.n == 1 && !w.sym[0].byte)
		return 1;               /* a character */
	for (i = 0; i < nv->nmerge; i++)
		if (strlen(nv->merge[i][0]) + strlen(nv->merge[i][1]) ==
			    strlen(joined) &&
		    !strncmp(joined, nv->merge[i][0], strlen(nv->merge[i][0])) &&
		    !strcmp(joined + strlen(nv->merge[i][0]), nv->merge[i][1]))
			return 1;
	return 0;
}

/* Does pair p come before pair q: more frequent, then bytes of left,
 * then of right. */
static int naive_before(const struct npair *p, const struct npair *q)
{
	int c;

	if (p->count != q->count)
		return p->count > q->count;
	if ((c = strcmp(p->a[0].s, q->a[0].s)))
		return c < 0;
	return strcmp(p->a[1].s, q->a[1].s) < 0;
}

/* The line with the dummy prefix, " LINE" (not empty), into buf. */
static const char *prefixed(const char *line, char *buf, size_t size)
{
	ck_assert(*line && strlen(line) + 2 <= size);
	buf[0] = ' ';
	strcpy(buf + 1, line);
	return buf;
}

/*
 * Learns merges from the pieces of lines with the dummy prefix (cut by
 * bpe_piece_len, tested by hand above), from the characters of v, by the
 * rules of bpe.h, counting every pair afresh before every merge.
 */
static void naive_learn(struct naive *nv, const struct bpe *v,
			const char *const *lines, int nlines)
{
	static struct npair pairs[4096];
	struct npair best;
	struct nword w;
	size_t off, n, len;
	const char *line;
	char buf[256];
	int i, j, k, np;

	nv->nw = nv->nmerge = 0;
	for (i = 0; i < nlines; i++) {
		line = prefixed(lines[i], buf, sizeof(buf));
		len = strlen(line);
		for (off = 0; off < len; off += n) {
			n = bpe_piece_len(line + off, len - off);
			naive_symbols(v, line + off, n, &w);
			for (j = 0; j < nv->nw; j++)
				if (nv->w[j].n == w.n &&
				    !memcmp(nv->w[j].sym, w.sym,
					    w.n * sizeof(w.sym[0])))
					break;
			if (j == nv->nw) {
				ck_assert_int_lt(nv->nw, 512);
				nv->w[nv->nw] = w;
				nv->w[nv->nw++].freq = 0;
			}
			nv->w[j].freq++;
		}
	}
	for (;;) {
		np = 0;
		for (i = 0; i < nv->nw; i++)
			for (j = 0; j + 1 < nv->w[i].n; j++) {
				const struct sym *a = &nv->w[i].sym[j];

				if (a[0].byte || a[1].byte)
					continue;
				for (k = 0; k < np; k++)
					if (!strcmp(pairs[k].a[0].s, a[0].s) &&
					    !strcmp(pairs[k].a[1].s, a[1].s))
						break;
				if (k == np) {
					ck_assert_int_lt(np, 4096);
					pairs[np].a = a;
					pairs[np++].count = 0;
				}
				pairs[k].count += nv->w[i].freq;
			}
		best.count = 0;
		for (k = 0; k < np; k++) {
			if (pairs[k].count < 2 ||
			    (best.count && !naive_before(&pairs[k], &best)))
				continue;
			if (!naive_is_unit(v, nv, pairs[k].a[0].s,
					   pairs[k].a[1].s))
				best = pairs[k];
		}
		if (best.count == 0)
			break;
		ck_assert_int_lt(nv->nmerge, 1024);
		strcpy(nv->merge[nv->nmerge][0], best.a[0].s);
		strcpy(nv->merge[nv->nmerge][1], best.a[1].s);
		for (i = 0; i < nv->nw; i++)
			naive_apply(&nv->w[i], nv->merge[nv->nmerge][0],
				    nv->merge[nv->nmerge][1]);
		nv->nmerge++;
	}
}

/* Appends a unit's bytes as the text format shows them. */
static void show_sym(struct bpe_text *t, const struct sym *y)
{
	char hex[8];
	const char *s;

	if (y->byte) {
		snprintf(hex, sizeof(hex), "<0x%02X>", (unsigned char)y->s[0]);
		bpe_text_add(t, hex, 6);
		return;
	}
	for (s = y->s; *s; s++)
		if (*s == ' ')
			bpe_text_add(t, "▁", 3);
		else
			bpe_text_add(t, s, 1);
}

/* A random line over a small alphabet, so that pairs repeat. */
static void random_line(char *buf, size_t size, uint64_t *seed)
{
	static const char *const alphabet[] = {
		"a", "b", "a", "b", "c", " ", " ", "\xc3\xa9", ".", "1",
		"\t", "\xff",
	};
	size_t n, len = 0;
	const char *c;

	*seed = *seed * 6364136223846793005u + 1442695040888963407u;
	n = 5 + (*seed >> 33) % 30;
	while (n--) {
		*seed = *seed * 6364136223846793005u + 1442695040888963407u;
		c = alphabet[(*seed >> 33) % 12];
		ck_assert(len + strlen(c) < size);
		memcpy(buf + len, c, strlen(c));
		len += strlen(c);
	}
	buf[len] = '\0';
}

/* Learning and applying agree with the naive reference on random text. */
START_TEST(learn_apply_naive)
{
	static struct naive nv;
	char buf[32][128], pbuf[130], *text, *got;
	const char *lines[32], *line;
	struct bpe_text want = { 0 }, merges = { 0 };
	uint64_t seed = 12345 + _i;
	struct nword w;
	size_t off, n, len;
	int i, k;

	for (i = 0; i < 32; i++) {
		random_line(buf[i], sizeof(buf[i]), &seed);
		lines[i] = buf[i];
	}
	struct bpe *v = learn_lines(lines, 24, 1, 100000, 1.0);

	naive_learn(&nv, v, lines, 24);
	ck_assert_int_eq(bpe_merges(v), nv.nmerge);
	ck_assert_int_gt(nv.nmerge, 10);
	for (k = 0; k < nv.nmerge; k++) {
		char num[16];

		snprintf(num, sizeof(num), "\n%d\t", bpe_size(v) - nv.nmerge + k);
		bpe_text_add(&merges, num, strlen(num));
		struct sym y;

		strcpy(y.s, nv.merge[k][0]);
		strcat(y.s, nv.merge[k][1]);
		y.byte = 0;
		show_sym(&merges, &y);
		bpe_text_add(&merges, "\tmerge\t", 7);
		strcpy(y.s, nv.merge[k][0]);
		show_sym(&merges, &y);
		bpe_text_add(&merges, " ", 1);
		strcpy(y.s, nv.merge[k][1]);
		show_sym(&merges, &y);
	}
	bpe_text_add(&merges, "\n", 2);
	text = saved(v);
	line = strstr(text, "\tmerge\t");
	while (line[-1] != '\n')
		line--;
	ck_assert_str_eq(line - 1, merges.s);
	/* Seed 12345 blocks a merge (its bytes are a unit already). */

	/* Applying: every line, trained or not, piece by piece. */
	for (i = 0; i < 32; i++) {
		line = prefixed(lines[i], pbuf, sizeof(pbuf));
		len = strlen(line);
		want.n = 0;
		for (off = 0; off < len; off += n) {
			n = bpe_piece_len(line + off, len - off);
			naive_symbols(v, line + off, n, &w);
			for (k = 0; k < nv.nmerge; k++)
				naive_apply(&w, nv.merge[k][0], nv.merge[k][1]);
			for (k = 0; k < w.n; k++) {
				if (want.n)
					bpe_text_add(&want, " ", 1);
				show_sym(&want, &w.sym[k]);
			}
		}
		bpe_text_add(&want, "", 1);
		got = shown(v, lines[i], strlen(lines[i]));
		ck_assert_str_eq(got, want.s);
		free(got);
		assert_round_trip(v, lines[i], strlen(lines[i]));
	}
	bpe_text_free(&want);
	bpe_text_free(&merges);
	free(text);
	bpe_free(v);
}
END_TEST

/* The same counts give the same vocabulary, whatever the order of lines
 * (and so of the hash tables inside). */
START_TEST(learn_deterministic)
{
	char buf[64][128], *a, *b;
	const char *fwd[64], *rev[64];
	uint64_t seed = 99;
	struct bpe *v;
	int i;

	for (i = 0; i < 64; i++) {
		random_line(buf[i], sizeof(buf[i]), &seed);
		fwd[i] = rev[63 - i] = buf[i];
	}
	v = learn_lines(fwd, 64, 1, 400, 1.0);
	a = saved(v);
	bpe_free(v);
	v = learn_lines(rev, 64, 1, 400, 1.0);
	b = saved(v);
	bpe_free(v);
	ck_assert_str_eq(a, b);
	free(a);
	free(b);
}
END_TEST

/* ---- the text format ---------------------------------------------------- */

static const char *const varied[] = {
	"En el principio crió Dios los cielos y la tierra.",
	"¿Qué tal? «Bien», dijo Ñandú — ¡sí!",
	"Привет, мир! Съешь же ещё этих мягких французских булок.",
	"日本語のテキスト、漢字とかなの混在。",
	"مرحبا بالعالم، هذا نص عربي.",
	"שלום עולם",
	"नमस्ते दुनिया, यह हिंदी है।",
	"สวัสดีชาวโลก",
	"안녕하세요 세계",
	"Ελληνικά: καλημέρα κόσμε",
	"emoji 👍🏽 family 👨‍👩‍👧 flag 🇪🇸 ✨",
	"combining e\xcc\x81 a\xcc\x88\xcc\xa3 Z\xcd\x91\xcd\x97",
	"controls \x01\x02\x1b[0m \x7f and C1 \xc2\x85\xc2\x9f",
	"tabs\tin\t\ttext\t",
	"CRLF line\r",
	"invalid \xff\xfe \xc0\x80 \xed\xa0\x80 \xf4\x90\x80\x80 cut \xe2\x96",
	"the marker itself ▁ and ▁▁x y▁",
	"  two leading, three trailing   ",
	" ",
	"",
	"a",
	"1234567890 3.14159 1,000,000",
	"\xef\xbb\xbf" "BOM and zero\xe2\x80\x8bwidth",
};
#define NVARIED (int)(sizeof(varied) / sizeof(varied[0]))

START_TEST(text_format_round_trip)
{
	struct bpe *v = learn_lines(varied, NVARIED, 3, 600, 0.95), *w;
	struct bpe_ids a = { 0 }, b = { 0 };
	char *text = saved(v), *again;
	int i, id;

	ck_assert(strncmp(text, "attn-bpe 2 ", 11) == 0);
	w = bpe_load(text, strlen(text));
	ck_assert_msg(w != NULL, "%s", err_msg());
	again = saved(w);
	ck_assert_str_eq(text, again);
	ck_assert_int_eq(bpe_size(w), bpe_size(v));
	ck_assert_int_eq(bpe_merges(w), bpe_merges(v));
	for (i = 0; i < NVARIED; i++) {
		a.n = b.n = 0;
		ck_assert_int_eq(bpe_encode(v, varied[i], strlen(varied[i]), &a),
				 0);
		ck_assert_int_eq(bpe_encode(w, varied[i], strlen(varied[i]), &b),
				 0);
		ck_assert_uint_eq(a.n, b.n);
		ck_assert(a.n == 0 || !memcmp(a.v, b.v, a.n * sizeof(*a.v)));
	}
	/* Every unit is found again by its display. */
	for (id = 0; id < bpe_size(v); id++) {
		struct bpe_text t = { 0 };

		ck_assert_int_eq(bpe_unit_show(v, id, &t), 0);
		ck_assert_int_eq(bpe_unit_find(v, t.s, t.n), id);
		bpe_text_free(&t);
	}
	ck_assert_int_eq(bpe_unit_find(v, "no such unit", 12), -1);
	/* No final newline is fine too. */
	bpe_free(w);
	w = bpe_load(text, strlen(text) - 1);
	ck_assert_ptr_nonnull(w);
	bpe_free(w);
	bpe_ids_free(&a);
	bpe_ids_free(&b);
	free(text);
	free(again);
	bpe_free(v);
}
END_TEST

/* Replaces the first `old` in text by `new`; the result is malloc'ed. */
static char *edit(const char *text, const char *old, const char *new)
{
	const char *at = strstr(text, old);
	char *out;

	ck_assert_ptr_nonnull(at);
	out = malloc(strlen(text) + strlen(new) + 1);
	memcpy(out, text, at - text);
	strcpy(out + (at - text), new);
	strcat(out, at + strlen(old));
	return out;
}

START_TEST(text_format_refused)
{
	static const struct {
		const char *old, *new, *msg;
	} cases[] = {
		{ "attn-bpe 1 266", "attn-bpe 3 266", "line 1:" },
		{ "attn-bpe 1 266", "attn-bpe 12 266", "line 1:" },
		{ "attn-bpe 1 266", "attn-bpe 1266", "line 1:" },
		{ "attn-bpe 1 266", "attn-bpe 1  266", "line 1:" },
		{ "attn-bpe 1 266", "attn-bpe 2", "line 1:" },
		{ "attn-bpe 1 266", "attn-bpe 1 26x", "line 1:" },
		{ "attn-bpe 1 266", "attn-bpe 1 259", "line 1:" },
		{ "attn-bpe 1 266", "attn-bpe 1 267", "ends after 266 of 267" },
		{ "attn-bpe 1 266", "attn-bpe 1 265", "line 267: more lines" },
		{ "1\t<s>\tspecial", "1\t<S>\tspecial", "line 3: expected the special" },
		{ "\n7\t<0x03>", "\n8\t<0x03>", "line 9: expected id 7" },
		{ "<0x03>\tbyte", "<0x04>\tbyte", "line 9: expected the byte" },
		{ "\tb\tchar", "\tbc\tchar", "line 264: 'bc' cannot be" },
		{ "\tb\tchar", "\t\x01\tchar", "line 264: '\x01' cannot be" },
		{ "\tb\tchar", "\t\xe2\x96\x81\xe2\x96\x81\tchar", "cannot be" },
		{ "\tb\tchar", "\ta\tchar", "line 264: unit 'a' twice" },
		{ "\tb\tchar", "\tb\tletter", "line 264: expected 'char'" },
		{ "\tb\tchar", "\tb", "line 264: expected id, unit and kind" },
		{ "aa\tmerge\ta a", "aa\tmerge\ta  a", "line 265: merge parts" },
		{ "aa\tmerge\ta a", "ab\tmerge\ta a", "line 265: the unit is not" },
		{ "aa\tmerge\ta a", "aa\tmerge\ta <0x61>", "not defined above" },
		{ "ab\tmerge\ta b", "ab\tmerge\ta b\textra", "line 266: expected" },
		{ "ab\tmerge\ta b", "aa\tmerge\ta a", "line 266: unit 'aa' twice" },
		{ "aa\tmerge\ta a", "aaa\tmerge\ta aa", "line 265: merge of a unit" },
		/* an empty part, looked up before any other merge (the
		 * lookup of an empty key once passed NULL to memcpy) */
		{ "aa\tmerge\ta a", "aa\tmerge\t a", "line 265: merge of a unit" },
	};
	char *text = hand_vocab(1), *bad;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		bad = edit(text, cases[i].old, cases[i].new);
		ck_assert_msg(bpe_load(bad, strlen(bad)) == NULL, "case %zu", i);
		ck_assert_msg(strstr(err_msg(), cases[i].msg),
			      "case %zu: '%s' lacks '%s'", i, err_msg(),
			      cases[i].msg);
		free(bad);
	}
	ck_assert_ptr_null(bpe_load("", 0));
	ck_assert_ptr_null(bpe_load(text, 40));
	free(text);
}
END_TEST

/* ---- round trips -------------------------------------------------------- */

START_TEST(round_trip_varied)
{
	static const char nul[] = "NUL\0in\0the\0middle\0";
	/* a rich vocabulary, one that leaves rare characters to bytes, one
	 * of bytes alone, and one of version 1 */
	struct bpe *v[4] = {
		learn_lines(varied, NVARIED, 3, 2000, 1.0),
		learn_lines(varied, NVARIED, 3, 600, 0.5),
		learn_lines(varied, NVARIED, 3, BPE_FIRST_UNIT, 1.0),
		hand_loaded(1),
	};
	int i, k;

	ck_assert_int_gt(bpe_merges(v[0]), 100);
	ck_assert_int_eq(bpe_size(v[2]), BPE_FIRST_UNIT);
	for (k = 0; k < 4; k++) {
		for (i = 0; i < NVARIED; i++)
			assert_round_trip(v[k], varied[i], strlen(varied[i]));
		assert_round_trip(v[k], nul, sizeof(nul) - 1);
		bpe_free(v[k]);
	}
}
END_TEST

/* BPE-dropout: p 0 is bpe_encode, p 1 the characters alone, and between
 * them segmentations that vary with the draws, decode to the same text,
 * and repeat for the same seed. */
static void encode_dropped(struct bpe *v, const char *text, double p,
			   struct rng *r, struct bpe_ids *ids)
{
	struct bpe_text back = { 0 };

	ids->n = 0;
	ck_assert_int_eq(bpe_encode_dropout(v, text, strlen(text), ids, p, r),
			 0);
	ck_assert_int_eq(bpe_ids_push(ids, BPE_EOS), 0);
	ck_assert_int_eq(bpe_decode(v, ids->v, ids->n, &back), 0);
	ids->n--;
	ck_assert_msg(back.n == strlen(text) && !memcmp(back.s, text, back.n),
		      "dropout %g: the round trip of \"%s\" failed", p, text);
	bpe_text_free(&back);
}

START_TEST(dropout)
{
	static const char *const ascii[] = {
		"the cat sat on the mat", "a catalogue of cats",
		"matters that matter", "on and on and on",
	};
	struct bpe *v = learn_lines(ascii, 4, 5, BPE_FIRST_UNIT + 60, 1.0);
	struct bpe_ids a = { 0 }, b = { 0 };
	struct rng r, r2;
	size_t full = 0, none = 0, some = 0;
	int differ = 0;

	ck_assert_int_gt(bpe_merges(v), 10);
	rng_seed(&r, 7);
	for (int i = 0; i < 4; i++) {
		const char *t = ascii[i];

		/* p 0: bpe_encode's ids, no draws */
		encode_checked(v, t, strlen(t), &b);
		encode_dropped(v, t, 0, NULL, &a);
		ck_assert_int_eq(a.n, b.n);
		ck_assert(!memcmp(a.v, b.v, a.n * sizeof *a.v));
		full += b.n;
		/* p 1: every character a unit, the spaces and the dummy
		 * prefix each a ▁ (ASCII: one character a byte) */
		encode_dropped(v, t, 1, &r, &a);
		ck_assert_int_eq(a.n, strlen(t) + 1);
		none += a.n;
	}
	ck_assert_int_lt(full, none);
	/* p 0.3: between the two on average; draws differ; a seed
	 * repeats its draws */
	for (int k = 0; k < 50; k++)
		for (int i = 0; i < 4; i++) {
			encode_dropped(v, ascii[i], 0.3, &r, &a);
			some += a.n;
			if (k == 0)
				continue;
			encode_dropped(v, ascii[i], 0.3, &r, &b);
			differ |= a.n != b.n ||
				  memcmp(a.v, b.v, a.n * sizeof *a.v);
		}
	ck_assert(differ);
	ck_assert_uint_gt(some, 50 * full);
	ck_assert_uint_lt(some, 50 * none);
	rng_seed(&r, 11);
	rng_seed(&r2, 11);
	encode_dropped(v, ascii[1], 0.5, &r, &a);
	encode_dropped(v, ascii[1], 0.5, &r2, &b);
	ck_assert_int_eq(a.n, b.n);
	ck_assert(!memcmp(a.v, b.v, a.n * sizeof *a.v));
	bpe_ids_free(&a);
	bpe_ids_free(&b);
	bpe_free(v);
}
END_TEST

/* Every byte value, and random byte strings. */
START_TEST(round_trip_bytes)
{
	struct bpe *v = learn_lines(varied, NVARIED, 3, 1000, 1.0);
	char buf[512];
	uint64_t seed = 7;
	int i, k;

	for (i = 0; i < 256; i++)
		buf[i] = i;
	assert_round_trip(v, buf, 256);
	for (k = 0; k < 200; k++) {
		for (i = 0; i < (int)sizeof(buf); i++) {
			seed = seed * 6364136223846793005u + 1;
			buf[i] = seed >> 56;
		}
		assert_round_trip(v, buf, 1 + k * 2);
	}
	bpe_free(v);
}
END_TEST

/* A piece of a megabyte: merged in O(n log n), not cached, exact; with
 * the dummy prefix (version 2) too, which puts ▁ before it. */
START_TEST(long_piece)
{
	struct bpe *v = hand_loaded(1 + _i);
	struct bpe_ids ids = { 0 };
	size_t n = 1 << 20, i, p = _i;  /* p: the ▁ in front */
	char *big = malloc(n);

	memset(big, 'a', n);
	/* (a,a) left to right pairs every a; (aa,a) then finds none. */
	encode_checked(v, big, n, &ids);
	ck_assert_uint_eq(ids.n, p + n / 2);
	ck_assert(!p || ids.v[0] == 261);
	for (i = p; i < ids.n && ids.v[i] == 263; i++)
		;
	ck_assert_uint_eq(i, ids.n);
	big[n - 1] = 'b';                       /* ... aa aa a b -> aa ab */
	encode_checked(v, big, n, &ids);
	ck_assert_uint_eq(ids.n, p + n / 2);
	ck_assert_int_eq(ids.v[ids.n - 2], 263);
	ck_assert_int_eq(ids.v[ids.n - 1], 264);
	free(big);
	bpe_ids_free(&ids);
	bpe_free(v);
}
END_TEST

START_TEST(decode_rules)
{
	struct bpe *v = hand_loaded(1);
	/* <s> aaa ▁ <pad> ab <unk> <0x0A> </s> a */
	const int32_t ids[] = { 1, 265, 261, 0, 264, 3, BPE_BYTE0 + 10, 2, 260 };
	const int32_t bad[] = { 265, 266 }, neg[] = { -1 };
	struct bpe_text t = { 0 };

	ck_assert_int_eq(bpe_decode(v, ids, 9, &t), 0);
	ck_assert_uint_eq(t.n, 10);
	ck_assert_mem_eq(t.s, "aaa ab\xef\xbf\xbd\n", 10);
	t.n = 0;
	ck_assert_int_eq(bpe_decode(v, ids, 0, &t), 0);
	ck_assert_uint_eq(t.n, 0);
	ck_assert_int_eq(bpe_decode(v, bad, 2, &t), -1);
	ck_assert_str_eq(err_msg(), "id 266 at position 1 is outside the "
			 "vocabulary of 266 units");
	ck_assert_int_eq(bpe_decode(v, neg, 1, &t), -1);
	/* no prefix: a leading space is kept */
	t.n = 0;
	ck_assert_int_eq(bpe_decode(v, &ids[2], 3, &t), 0);
	ck_assert_uint_eq(t.n, 3);
	ck_assert_mem_eq(t.s, " ab", 3);
	bpe_text_free(&t);
	bpe_free(v);
}
END_TEST

/* Version 2 removes the one space of the prefix: the first byte that the
 * call writes, if it is a space, whatever unit it comes from; units that
 * write nothing before it do not count. */
START_TEST(decode_prefix)
{
	static const struct {
		int32_t ids[5];
		int n;
		const char *want;
	} cases[] = {
		{ { 261, 264, 2 }, 3, "ab" },                   /* ▁ ab */
		{ { 261, 261, 260 }, 3, " a" },                 /* ▁ ▁ a */
		{ { BPE_BYTE0 + ' ', 260 }, 2, "a" },           /* <0x20> a */
		{ { 1, 0, 261, 260, 2 }, 5, "a" },              /* <s> <pad> */
		{ { 265, 261, 264 }, 3, "aaa ab" },             /* no space */
		{ { 3, 261 }, 2, "\xef\xbf\xbd " },             /* <unk> */
		{ { 261 }, 1, "" },
		{ { 2, 261 }, 2, "" },
		{ { BPE_BYTE0 + '\t', 261 }, 2, "\t " },
	};
	struct bpe *v = hand_loaded(2);
	struct bpe_text t = { 0 };
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		t.n = 0;
		ck_assert_int_eq(bpe_decode(v, cases[i].ids, cases[i].n, &t),
				 0);
		ck_assert_msg(t.n == strlen(cases[i].want) &&
			      !memcmp(t.s, cases[i].want, t.n),
			      "case %zu: '%.*s'", i, (int)t.n, t.s);
	}
	/* appended to text: only the text of this call loses its space */
	t.n = 0;
	bpe_text_add(&t, "x ", 2);
	ck_assert_int_eq(bpe_decode(v, cases[1].ids, 3, &t), 0);
	ck_assert_uint_eq(t.n, 4);
	ck_assert_mem_eq(t.s, "x  a", 4);
	/* the units as they stand keep it; a line keeps it out */
	t.n = 0;
	ck_assert_int_eq(bpe_decode_units(v, cases[0].ids, 3, &t), 0);
	ck_assert_uint_eq(t.n, 3);
	ck_assert_mem_eq(t.s, " ab", 3);
	ck_assert_int_eq(bpe_decode_line(v, cases[1].ids, 3, &t), 0);
	ck_assert_uint_eq(t.n, 2);
	ck_assert_mem_eq(t.s, " a", 2);
	bpe_text_free(&t);
	bpe_free(v);
}
END_TEST

/* A random line over an alphabet of edge cases: spaces first and last,
 * control characters, CR, NUL, invalid and cut UTF-8, the marker; empty
 * about one time in 16. */
static size_t edge_line(char *buf, size_t size, uint64_t *seed)
{
	static const char *const alphabet[] = {
		" ", " ", "  ", "\t", "\r", "\n", "\0", "\xff", "\xc3",
		"\xe2\x96\x81", "\xe2\x96", "a", "b", "ab", "Pa", "\xc3\xa9",
		".", "\xc2\xbf", "1", "\x7f", "\xc2\x85",
	};
	size_t n, len = 0, k;
	const char *c;

	*seed = *seed * 6364136223846793005u + 1442695040888963407u;
	n = (*seed >> 33) % 16;
	while (n--) {
		*seed = *seed * 6364136223846793005u + 1442695040888963407u;
		k = (*seed >> 33) % (sizeof(alphabet) / sizeof(alphabet[0]));
		c = alphabet[k];
		k = k == 6 ? 1 : strlen(c);     /* "\0" is one byte */
		ck_assert(len + k <= size);
		memcpy(buf + len, c, k);
		len += k;
	}
	return len;
}

/* Round trips of random lines in vocabularies with and without the
 * prefix; and with it, a line's first word is spelt as in the middle of
 * a line: the units of "z " W are those of "z" then those of W, for any
 * W that is not empty.  Without the prefix, "Pablo" would not be. */
START_TEST(round_trip_random_lines)
{
	static const char *const corpus[] = {
		"Pablo dijo a Pablo.", "y Pablo dijo: \xc2\xbf" "ab?",
		"ab ab. Pa", "\xc3\xa9" "ab Pablo 12", " Pablo", "\tPablo\r",
	};
	struct bpe *v[4] = {
		learn_lines(corpus, 6, 4, 1000, 1.0),
		learn_lines(corpus, 6, 4, BPE_FIRST_UNIT, 1.0),
		hand_loaded(2),
		hand_loaded(1),
	};
	struct bpe_ids a = { 0 }, b = { 0 }, z = { 0 };
	char buf[128], joined[130];
	uint64_t seed = 2026;
	size_t len;
	char *s;
	int i, k, mid = 0;

	s = shown(v[0], "Pablo dijo a Pablo.", 19);
	ck_assert_str_eq(s, "▁Pablo ▁dijo ▁a ▁Pablo .");
	free(s);
	for (i = 0; i < 3000; i++) {
		len = edge_line(buf, sizeof(buf), &seed);
		for (k = 0; k < 4; k++)
			assert_round_trip(v[k], buf, len);
		if (!len)
			continue;
		joined[0] = 'z';
		joined[1] = ' ';
		memcpy(joined + 2, buf, len);
		for (k = 0; k < 3; k++) {
			encode_checked(v[k], buf, len, &b);
			encode_checked(v[k], "z", 1, &z);
			encode_checked(v[k], joined, len + 2, &a);
			ck_assert_uint_eq(a.n, z.n + b.n);
			ck_assert(!memcmp(a.v, z.v, z.n * sizeof(*a.v)));
			ck_assert(!memcmp(a.v + z.n, b.v, b.n * sizeof(*a.v)));
			mid++;
		}
	}
	ck_assert_int_gt(mid, 7000);
	for (k = 0; k < 4; k++)
		bpe_free(v[k]);
	bpe_ids_free(&a);
	bpe_ids_free(&b);
	bpe_ids_free(&z);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("bpe");
	TCase *tc = tcase_create("bpe");

	tcase_add_test(tc, utf8_strict);
	tcase_add_test(tc, pieces_by_hand);
	tcase_add_test(tc, learn_by_hand);
	tcase_add_test(tc, version_1_as_before);
	tcase_add_test(tc, learn_size_limits);
	tcase_add_loop_test(tc, learn_apply_naive, 0, 8);
	tcase_add_test(tc, learn_deterministic);
	tcase_add_test(tc, text_format_round_trip);
	tcase_add_test(tc, text_format_refused);
	tcase_add_test(tc, round_trip_varied);
	tcase_add_test(tc, round_trip_bytes);
	tcase_add_loop_test(tc, long_piece, 0, 2);
	tcase_add_test(tc, decode_rules);
	tcase_add_test(tc, decode_prefix);
	tcase_add_test(tc, dropout);
	tcase_add_test(tc, round_trip_random_lines);
	tcase_set_timeout(tc, 30);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
