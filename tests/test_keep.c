/*
 * test_keep.c: what is kept as written (keep.h).  The spans of each kind
 * in lines worked out by hand, the tricky ends (a URL's full stop, an
 * unopened bracket, "a.m.", a sentence's "."), --keep regexes and their
 * refusals, masking, and restoring: by a copied name, through word
 * links, at the end; each span once, whatever the translation.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include "base/errmsg.h"
#include "run_suite.h"
#include "text/keep.h"

/* The spans of line found with kinds (and k's regexes), joined by '|'. */
static const char *spans_of(struct keep *k, const char *line)
{
	static char buf[1024];
	struct keep_span *sp = NULL;
	size_t cap = 0, n, i, o = 0;

	ck_assert_int_eq(keep_find(k, line, strlen(line), &sp, &cap, &n), 0);
	buf[0] = 0;
	for (i = 0; i < n; i++) {
		size_t len = sp[i].end - sp[i].start;

		ck_assert(sp[i].end > sp[i].start);
		ck_assert(i == 0 || sp[i].start >= sp[i - 1].end);
		ck_assert(o + len + 2 < sizeof buf);
		if (i)
			buf[o++] = '|';
		memcpy(buf + o, line + sp[i].start, len);
		o += len;
		buf[o] = 0;
	}
	free(sp);
	return buf;
}

/* Lines and their spans (joined by '|'), worked out by hand, with the
 * kinds looked for. */
static const struct {
	unsigned kinds;
	const char *line, *spans;
} cases[] = {
	{ KEEP_ALL, "Vea https://a.es/x.",
	  "https://a.es/x" },
	{ KEEP_ALL, "(en www.a.es/b) y",
	  "www.a.es/b" },
	{ KEEP_ALL, "ver http://w.org/f_(x), no",
	  "http://w.org/f_(x)" },
	{ KEEP_ALL, "«https://a.es/»",
	  "https://a.es/" },
	{ KEEP_ALL, "a ana.g@uni.edu.",
	  "ana.g@uni.edu" },
	{ KEEP_ALL, "x@y no, a@b.c no, @z no",
	  "" },
	{ KEEP_ALL, "www. no, http:// no",
	  "" },
	/* a kind switched off is not found */
	{ KEEP_ALL & ~KEEP_URL, "Vea https://a.es",
	  "" },
	{ KEEP_ALL, "subió un 3.5% hoy",
	  "3.5%" },
	{ KEEP_ALL, "cuesta 1.234,56 € hoy",
	  "1.234,56 €" },
	{ KEEP_ALL, "a -12 grados, +34 900 400 004.",
	  "-12|+34 900 400 004" },
	{ KEEP_ALL, "a las 10:30 del 2025-01-31.",
	  "10:30|2025-01-31" },
	{ KEEP_ALL, "el 31/01/2025, $25 y 50 %",
	  "31/01/2025|$25|50 %" },
	{ KEEP_ALL, "el 1º y la 2ª",
	  "1º|2ª" },
	/* the sentence's full stop, "a.m.", digits inside a word */
	{ KEEP_ALL, "en 2025. A las 9 a.m. mp3 H2O v2",
	  "2025|9" },
	{ KEEP_ALL & ~KEEP_NUMBER, "a 5 y 6",
	  "" },
	{ KEEP_ALL, "Ejecute /usr/bin/env.",
	  "/usr/bin/env" },
	{ KEEP_ALL, "en C:\\Temp y ~/a.txt, ./b ../c",
	  "C:\\Temp|~/a.txt|./b|../c" },
	{ KEEP_ALL, "y/o, km / h, a/b",
	  "" },
	{ KEEP_ALL, "use `make -j2 check` ya",
	  "`make -j2 check`" },
	{ KEEP_ALL, "`%s', expected `)' or `%c'",
	  "%s|%c" },
	{ KEEP_ALL, "`don't` y `git commit -a`",
	  "`don't`|`git commit -a`" },
	{ KEEP_ALL, "un ` solo",
	  "" },
	{ KEEP_ALL, "`` vacío",
	  "" },
	{ KEEP_ALL, "%s y %1$d y %-5.2f y %lu y %%",
	  "%s|%1$d|%-5.2f|%lu|%%" },
	{ KEEP_ALL, "Qt %1 y %L2; el % no",
	  "%1|%L2" },
	{ KEEP_ALL, "GCC %qD, %q+F, %wu, %<int x%> y %<",
	  "%qD|%q+F|%wu|%<int x%>|%<" },
	{ KEEP_ALL, "{} y $(ARG1)",
	  "{}|$(ARG1)" },
	{ KEEP_ALL, "Hola {name}, {{count}} y {0}",
	  "{name}|{{count}}|{0}" },
	{ KEEP_ALL, "{n, plural, one {# día} other {# días}}",
	  "{n, plural, one {# día} other {# días}}" },
	{ KEEP_ALL, "{ no } y { abierto",
	  "" },
	{ KEEP_ALL, "$HOME, ${PATH}, $ solo",
	  "$HOME|${PATH}" },
	/* a URL inside backticks is the backticks' span */
	{ KEEP_ALL, "`curl https://a.es`.",
	  "`curl https://a.es`" },
};

START_TEST(spans_of_each_kind)
{
	struct keep k = { 0, NULL, 0 };

	k.kinds = cases[_i].kinds;
	ck_assert_str_eq(spans_of(&k, cases[_i].line), cases[_i].spans);
}
END_TEST

START_TEST(regexes)
{
	struct keep k = { KEEP_NUMBER, NULL, 0 };

	ck_assert_int_eq(keep_add_regex(&k, "IB [0-9]+"), 0);
	ck_assert_int_eq(keep_add_regex(&k, "ACME( Corp)?"), 0);
	ck_assert(k.kinds & KEEP_REGEX);
	/* a regex before a number; the longer of two at one byte */
	ck_assert_str_eq(spans_of(&k, "vuelo IB 3166 de ACME Corp a las 9"),
			 "IB 3166|ACME Corp|9");
	ck_assert_str_eq(spans_of(&k, "ACMEACME"), "ACME|ACME");
	ck_assert_int_eq(keep_add_regex(&k, "(unclosed"), -1);
	ck_assert(strstr(err_msg(), "(unclosed"));
	ck_assert_int_eq(keep_add_regex(&k, ".*"), -1);
	ck_assert(strstr(err_msg(), "empty string"));
	ck_assert_int_eq(keep_add_regex(&k, "x?"), -1);
	ck_assert_int_eq(k.nre, 2);
	/* one that matches the whole line: the line is one span */
	ck_assert_int_eq(keep_add_regex(&k, "^.+$"), 0);
	ck_assert_str_eq(spans_of(&k, "todo 1 2"), "todo 1 2");
	keep_free(&k);
	ck_assert_int_eq(keep_kind_bit("url", 3), KEEP_URL);
	ck_assert_int_eq(keep_kind_bit("placeholder", 11), KEEP_PLACEHOLDER);
	ck_assert_int_eq(keep_kind_bit("urls", 4), 0);
}
END_TEST

/* Masks line (all kinds) by mode into masked; bytes and pos kept. */
static void mask(const char *line, enum keep_mode mode, struct bpe_text *m,
		 struct bpe_text *b, struct bpe_ids *p)
{
	struct keep k = { KEEP_ALL, NULL, 0 };
	struct keep_span *sp = NULL;
	size_t cap = 0, n;

	ck_assert_int_eq(keep_find(&k, line, strlen(line), &sp, &cap, &n), 0);
	ck_assert_int_eq(keep_mask(line, strlen(line), sp, n, mode, m, b, p),
			 0);
	ck_assert_int_eq(bpe_text_add(m, "", 1), 0);   /* a C string */
	m->n--;
	free(sp);
}

/* Row i of src.keep.pos is (len, word, name, glue). */
static void row(const struct bpe_ids *p, size_t i, int len, int word,
		int name, int glue)
{
	const int32_t *r = p->v + KEEP_COLS * i;

	ck_assert_uint_ge(p->n, KEEP_COLS * (i + 1));
	ck_assert_int_eq(r[0], len);
	ck_assert_int_eq(r[1], word);
	ck_assert_int_eq(r[2], name);
	ck_assert_int_eq(r[3], glue);
}

/* hyp with the spans b, p back: a translation; as the masked source
 * when source. */
static const char *restore_as(const char *hyp, const struct bpe_text *b,
			      const struct bpe_ids *p, const char *links,
			      int source)
{
	static struct bpe_text out;

	out.n = 0;
	ck_assert_int_eq(keep_restore(hyp, strlen(hyp), b->s, b->n, p->v,
				      p->n / KEEP_COLS, links,
				      links ? strlen(links) : 0, source, &out),
			 0);
	ck_assert_int_eq(bpe_text_add(&out, "", 1), 0);
	return out.s;
}

static const char *restore(const char *hyp, const struct bpe_text *b,
			   const struct bpe_ids *p, const char *links)
{
	return restore_as(hyp, b, p, links, 0);
}

START_TEST(masked_and_restored_by_name)
{
	struct bpe_text m = { 0 }, b = { 0 };
	struct bpe_ids p = { 0 };

	/* "David" is in the line: the names skip it */
	mask("David paga 3.5% a las 10:30h.", KEEP_NAME, &m, &b, &p);
	ck_assert_str_eq(m.s, "David paga Moab a las Jacob h.");
	ck_assert_int_eq(b.n, strlen("3.5%10:30"));
	ck_assert_int_eq(p.n, 2 * KEEP_COLS);
	/* rows: length, word, name, glue (10:30h: a space after Jacob) */
	row(&p, 0, 4, 2, 0, 0);
	row(&p, 1, 5, 5, 2, 2);
	/* a span that starts the line is the first word */
	mask("10:30 ya", KEEP_NAME, &m, &b, &p);
	ck_assert_str_eq(m.s, "Moab ya");
	row(&p, 0, 5, 0, 0, 0);
	ck_assert_str_eq(restore("Moab now", &b, &p, NULL), "10:30 now");
	mask("David paga 3.5% a las 10:30h.", KEEP_NAME, &m, &b, &p);
	/* copied (one as "Moabites"); a second copy left out */
	ck_assert_str_eq(restore("David pays Moabites at Jacob, Jacob.", &b,
				 &p, NULL),
			 "David pays 3.5% at 10:30, .");
	ck_assert_str_eq(restore("David pays Jacob at Moab.", &b, &p, NULL),
			 "David pays 10:30 at 3.5%.");
	/* not copied: after the word linked to the name, else at the end */
	ck_assert_str_eq(restore("He paid, at noon.", &b, &p, "2-1 4-3"),
			 "He paid 3.5%, at noon. 10:30");
	ck_assert_str_eq(restore("He paid.", &b, &p, NULL),
			 "He paid. 3.5% 10:30");
	ck_assert_str_eq(restore("", &b, &p, NULL), "3.5% 10:30");
	bpe_text_free(&m);
	bpe_text_free(&b);
	bpe_ids_free(&p);
}
END_TEST

/* The masked line restored is the line, spaces and glue as they were
 * (by names: dropped spans come back after their word, not in it). */
START_TEST(round_trip)
{
	static const char *const lines[] = {
		"\033[0m x", "a  10:30\tb ", "x3.5% y", "(915)abc", "  ",
		"x.915 -3", "a-10:30,b", "%s:%d", "{0}/{1}", "a1b 2 3c",
		"for '%s' in `%s'", "'5's'",
		"A 1 B 2 C 3 D 4 E 5 F 6 G 7 H 8 I 9 J 10", "Moab 5 David 6",
	};
	struct bpe_text m = { 0 }, b = { 0 };
	struct bpe_ids p = { 0 };
	size_t i;

	for (i = 0; i < sizeof lines / sizeof *lines; i++) {
		mask(lines[i], KEEP_NAME, &m, &b, &p);
		ck_assert_str_eq(restore_as(m.s, &b, &p, NULL, 1), lines[i]);
	}
	bpe_text_free(&m);
	bpe_text_free(&b);
	bpe_ids_free(&p);
}
END_TEST

START_TEST(masked_and_restored_by_links)
{
	struct bpe_text m = { 0 }, b = { 0 };
	struct bpe_ids p = { 0 };

	mask("9:00 llega a las 10:30.", KEEP_DROP, &m, &b, &p);
	ck_assert_str_eq(m.s, " llega a las.");
	/* rows: 4 bytes, no word before it; 5 bytes, after word 2 */
	row(&p, 0, 4, -1, -1, 0);
	row(&p, 1, 5, 2, -1, 0);
	ck_assert_str_eq(restore("He arrives at.", &b, &p, "0-1 2-2"),
			 "9:00 He arrives at 10:30.");
	ck_assert_str_eq(restore("He arrives.", &b, &p, NULL),
			 "9:00 He arrives. 10:30");
	/* links past the translation's words: at the end */
	ck_assert_str_eq(restore("Yes", &b, &p, "2-7"), "9:00 Yes 10:30");
	bpe_text_free(&m);
	bpe_text_free(&b);
	bpe_ids_free(&p);
}
END_TEST

START_TEST(restore_refuses)
{
	struct bpe_text out = { 0 };
	int32_t pos[4] = { 3, 0, 0, 0 }, bad[4] = { 2, 0, -5, 0 };
	int32_t glue[4] = { 2, 0, -1, 4 }, far[4] = { 2, INT32_MAX, -1, 0 };
	int32_t near[4] = { 2, 0, -1, 0 };

	ck_assert_int_eq(keep_restore("a", 1, "xy", 2, pos, 1, NULL, 0, 0, &out),
			 -1);
	ck_assert(strstr(err_msg(), "src.keep has 2 bytes"));
	ck_assert_int_eq(keep_restore("a", 1, "xy", 2, bad, 1, NULL, 0, 0, &out),
			 -1);
	ck_assert_int_eq(keep_restore("a", 1, "xy", 2, glue, 1, NULL, 0, 0, &out),
			 -1);
	/* links that name a huge source word cost no memory for it */
	ck_assert_int_eq(keep_restore("a b c", 5, "xy", 2, near, 1,
				      "1073741823-2 0-1", 16, 0, &out), 0);
	ck_assert_int_eq(out.n, 8);
	ck_assert(!memcmp(out.s, "a b xy c", 8));
	out.n = 0;
	/* a source word past every link (a frame made by hand): the end */
	ck_assert_int_eq(keep_restore("a b", 3, "xy", 2, far, 1, "0-1", 3, 0,
				      &out), 0);
	ck_assert_int_eq(out.n, 6);
	ck_assert(!memcmp(out.s, "a b xy", 6));
	out.n = 0;
	ck_assert_int_eq(keep_restore("a b", 3, "xyz", 3, pos, 1, NULL, 0,
				      0, &out), 0);
	ck_assert_int_eq(out.n, 7);
	ck_assert(!memcmp(out.s, "a b xyz", 7));
	bpe_text_free(&out);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("keep");
	TCase *tc = tcase_create("keep");

	tcase_add_loop_test(tc, spans_of_each_kind, 0,
			    sizeof cases / sizeof *cases);
	tcase_add_test(tc, regexes);
	tcase_add_test(tc, masked_and_restored_by_name);
	tcase_add_test(tc, round_trip);
	tcase_add_test(tc, masked_and_restored_by_links);
	tcase_add_test(tc, restore_refuses);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
