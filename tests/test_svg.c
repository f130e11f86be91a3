/*
 * test_svg.c: the heat map of svg.h: the cells' greys worked out by hand
 * (clamping, NaN), their places, the labels in order and escaped, the
 * document well formed (a small XML checker: tags nest, attributes are
 * quoted, every '&' starts an entity), and the refusal of empty maps.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/errmsg.h"
#include "run_suite.h"
#include "text/svg.h"

/* The picture of h as a NUL-terminated string. */
static char *draw(const struct svg_heatmap *h)
{
	char *s = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&s, &n);

	ck_assert_ptr_nonnull(f);
	ck_assert_msg(svg_heatmap(f, h) == 0, "%s", err_msg());
	ck_assert_int_eq(fclose(f), 0);
	return s;
}

/* The text of the group <g id="ID" ...> up to its </g>. */
static char *group(const char *svg, const char *id)
{
	char open[64];
	const char *a, *b;

	snprintf(open, sizeof open, "<g id=\"%s\"", id);
	a = strstr(svg, open);
	ck_assert_msg(a != NULL, "no group %s", id);
	a = strchr(a, '>') + 1;
	b = strstr(a, "</g>");
	ck_assert_ptr_nonnull(b);
	return strndup(a, b - a);
}

/* The contents of the <text> elements of s, in order, joined by '|'. */
static char *texts(const char *s)
{
	char *out = calloc(strlen(s) + 1, 1);
	const char *p = s;

	while ((p = strstr(p, "<text")) != NULL) {
		const char *a = strchr(p, '>') + 1, *b = strstr(a, "</text>");
		if (*out)
			strcat(out, "|");
		strncat(out, a, b - a);
		p = b;
	}
	return out;
}

/* The fill="..." values of the <rect>s of s, in order, joined by ' '. */
static char *fills(const char *s, int *count)
{
	char *out = calloc(strlen(s) + 1, 1);
	const char *p = s;

	*count = 0;
	while ((p = strstr(p, "<rect")) != NULL) {
		const char *a = strstr(p, "fill=\"") + 6;
		if (*out)
			strcat(out, " ");
		strncat(out, a, strchr(a, '"') - a);
		p = a;
		++*count;
	}
	return out;
}

/* Asserts that the <text>s of svg's group id are want, joined by '|'. */
static void assert_texts(const char *svg, const char *id, const char *want)
{
	char *g = group(svg, id), *got = texts(g);

	ck_assert_str_eq(got, want);
	free(got);
	free(g);
}

/* Asserts that svg's cells are n <rect>s filled with want, in order. */
static void assert_fills(const char *svg, int n, const char *want)
{
	char *g = group(svg, "cells");
	int count;
	char *got = fills(g, &count);

	ck_assert_int_eq(count, n);
	ck_assert_str_eq(got, want);
	free(got);
	free(g);
}

/*
 * Checks that s is well formed as far as this picture needs: one root,
 * elements that nest, attribute values in quotes with no '<' in them,
 * and every '&' the start of one of XML's five entities.  Returns NULL or
 * what is wrong.
 */
static const char *xml_problem(const char *s)
{
	static const char *const entity[] = {
		"&amp;", "&lt;", "&gt;", "&quot;", "&apos;",
	};
	const char *stack[64];
	size_t len[64];
	int depth = 0, roots = 0;

	if (strncmp(s, "<?xml ", 6) == 0)
		s = strstr(s, "?>") + 2;
	for (; *s; s++) {
		if (*s == '&') {
			int ok = 0;
			for (int i = 0; i < 5; i++)
				ok |= strncmp(s, entity[i],
					      strlen(entity[i])) == 0;
			if (!ok)
				return "a bare '&'";
		} else if (*s == '>') {
			return "a '>' outside a tag";
		} else if (*s == '<' && s[1] == '/') {
			const char *name = s + 2;
			size_t n = strcspn(name, ">");
			if (!depth || n != len[depth - 1] ||
			    strncmp(name, stack[depth - 1], n) != 0)
				return "a closing tag that does not match";
			depth--;
			s = name + n;
		} else if (*s == '<') {
			const char *name = s + 1;
			size_t n = strcspn(name, " />");
			char quote = 0;
			for (s = name + n; *s && (quote || *s != '>'); s++) {
				if (quote && *s == '<')
					return "a '<' in an attribute";
				if (*s == quote)
					quote = 0;
				else if (!quote && (*s == '"' || *s == '\''))
					quote = *s;
				else if (!quote && *s == '=' &&
					 s[1] != '"' && s[1] != '\'')
					return "an attribute without quotes";
			}
			if (!*s)
				return "a tag that does not end";
			if (s[-1] != '/') {
				if (depth == 64)
					return "too deep";
				if (!depth)
					roots++;
				stack[depth] = name;
				len[depth++] = n;
			} else if (!depth) {
				roots++;
			}
		} else if (!depth && *s != '\n') {
			return "text outside the root";
		}
	}
	return depth ? "an element that is not closed"
	     : roots != 1 ? "not one root" : NULL;
}

START_TEST(test_cells)
{
	/* Greys by hand: 255 (1 - w) rounded: 0.5 -> 127.5 -> 128 = 0x80,
	 * 0.25 -> 191.25 -> 191 = 0xbf, 0.9 -> 25.5 -> 26 = 0x1a; below 0
	 * clamps; NaN is red. */
	static const float w[2][4] = {
		{ 0, 1, 0.5f, 0.25f },
		{ 0.9f, NAN, -2, 1 },
	};
	struct svg_heatmap h = { .w = &w[0][0], .rows = 2, .cols = 4 };
	char *svg = draw(&h), *cells = group(svg, "cells");
	int x[8], y[8];
	const char *p = cells;

	assert_fills(svg, 8, "#ffffff #000000 #808080 #bfbfbf "
			     "#1a1a1a #ff0000 #ffffff #000000");
	/* Row by row, one cell's side apart, every cell the same size. */
	for (int i = 0; i < 8; i++) {
		int cw, ch;
		p = strstr(p, "<rect");
		ck_assert_int_eq(sscanf(p, "<rect x=\"%d\" y=\"%d\" width=\"%d\""
					" height=\"%d\"", &x[i], &y[i], &cw,
					&ch), 4);
		ck_assert_int_eq(cw, ch);
		ck_assert_int_gt(cw, 0);
		ck_assert_int_eq(x[i], x[0] + (i % 4) * cw);
		ck_assert_int_eq(y[i], y[0] + (i / 4) * cw);
		p++;
	}
	ck_assert_ptr_null(xml_problem(svg));
	ck_assert_ptr_nonnull(strstr(svg, "<g id=\"legend\">"));
	ck_assert_ptr_nonnull(strstr(svg, "url(#scale)"));
	free(cells);
	assert_texts(svg, "legend", "0|0.25|0.5|0.75|1");
	/* Unlabelled rows and columns are numbered from 0. */
	assert_texts(svg, "cols", "0|1|2|3");
	assert_texts(svg, "rows", "0|1");
	free(svg);
}
END_TEST

START_TEST(test_cells_past_one)
{
	/* Weights that are not a softmax's (Graves' window): black is the
	 * largest, 4, and the rest scale with it: 2 -> 127.5 -> 0x80, 1 ->
	 * 191.25 -> 0xbf; infinity and NaN do not set the scale (+inf
	 * clamps to black, NaN is red); the ticks go to 4. */
	static const float w[] = { 4, 2, 1, 0, INFINITY, NAN };
	struct svg_heatmap h = { .w = w, .rows = 2, .cols = 3 };
	char *svg = draw(&h);

	assert_fills(svg, 6, "#000000 #808080 #bfbfbf #ffffff #000000 "
			     "#ff0000");
	assert_texts(svg, "legend", "0|1|2|3|4");
	ck_assert_ptr_null(xml_problem(svg));
	free(svg);
}
END_TEST

START_TEST(test_labels_escaped)
{
	static const float w[2 * 3] = { 0.1f, 0.2f, 0.7f, 0.6f, 0.3f, 0.1f };
	static const char *const src[] = { "a<b", "R&D", "\"q'", };
	/* A label may be missing; a bad byte and a control character show
	 * as U+FFFD. */
	static const char *const tgt[] = { "</s>", NULL };
	static const char *const tgt2[] = { "\xe2\x96\x81" "de\x01", "x\xff" };
	struct svg_heatmap h = {
		.w = w, .rows = 2, .cols = 3, .row_label = tgt,
		.col_label = src, .title = "frame 7 <layer 1 & 2>",
	};
	char *svg = draw(&h);

	ck_assert_ptr_null(xml_problem(svg));
	assert_texts(svg, "cols", "a&lt;b|R&amp;D|&quot;q&apos;");
	assert_texts(svg, "rows", "&lt;/s&gt;|1");
	ck_assert_ptr_nonnull(strstr(svg,
		"<title>frame 7 &lt;layer 1 &amp; 2&gt;</title>"));
	free(svg);

	h.row_label = tgt2;
	h.title = NULL;
	svg = draw(&h);
	ck_assert_ptr_null(xml_problem(svg));
	ck_assert_ptr_null(strstr(svg, "<title>"));
	assert_texts(svg, "rows",
		     "\xe2\x96\x81" "de\xef\xbf\xbd|x\xef\xbf\xbd");
	free(svg);
}
END_TEST

START_TEST(test_text_count)
{
	char *s = NULL;
	size_t n = 0;
	FILE *f;

	/* Characters, not bytes: an entity and U+2581 count one each. */
	ck_assert_int_eq(svg_text(NULL, "a<b"), 3);
	ck_assert_int_eq(svg_text(NULL, "\xe2\x96\x81" "de"), 3);
	ck_assert_int_eq(svg_text(NULL, "\xff\xfe"), 2);
	ck_assert_int_eq(svg_text(NULL, ""), 0);
	/* U+FFFE is no XML character; a surrogate's bytes are invalid. */
	f = open_memstream(&s, &n);
	ck_assert_int_eq(svg_text(f, "\xef\xbf\xbe|\xed\xa0\x80|\t&"), 8);
	fclose(f);
	ck_assert_str_eq(s, "\xef\xbf\xbd|\xef\xbf\xbd\xef\xbf\xbd"
			    "\xef\xbf\xbd|\xef\xbf\xbd&amp;");
	free(s);
}
END_TEST

START_TEST(test_widths)
{
	/* A longer label widens the margin by the same amount each time,
	 * and moves the grid, never the labels, off the picture. */
	static const float w[1] = { 0.5f };
	static const char *const label[3] = { "ab", "abcd", "abcdef" };
	const char *lab[1];
	struct svg_heatmap h = { .w = w, .rows = 1, .cols = 1,
				 .row_label = lab, .col_label = lab };
	int x[3], y[3], width[3];

	for (int k = 0; k < 3; k++) {
		char *svg, *cells;
		lab[0] = label[k];
		svg = draw(&h);
		cells = group(svg, "cells");
		ck_assert_int_eq(sscanf(strstr(cells, "<rect"),
					"<rect x=\"%d\" y=\"%d\"", &x[k], &y[k]),
				 2);
		ck_assert_int_eq(sscanf(strstr(svg, "<svg"), "<svg xmlns="
					"\"http://www.w3.org/2000/svg\" version="
					"\"1.1\" width=\"%d\"", &width[k]), 1);
		free(cells);
		free(svg);
	}
	ck_assert_int_gt(x[1], x[0]);
	ck_assert_int_eq(x[2] - x[1], x[1] - x[0]);
	ck_assert_int_eq(y[2] - y[1], y[1] - y[0]);
	ck_assert_int_eq(y[1] - y[0], x[1] - x[0]);
	ck_assert_int_eq(width[2] - width[1], x[2] - x[1]);
}
END_TEST

START_TEST(test_refuse)
{
	static const float w[1] = { 0 };
	struct svg_heatmap h = { .w = w, .rows = 0, .cols = 1 };
	FILE *f = fopen("/dev/null", "w");

	ck_assert_int_eq(svg_heatmap(f, &h), -1);
	ck_assert_ptr_nonnull(strstr(err_msg(), "0 x 1"));
	h.rows = 1;
	h.cols = -3;
	ck_assert_int_eq(svg_heatmap(f, &h), -1);
	h.cols = 1;
	ck_assert_int_eq(svg_heatmap(f, &h), 0);
	fclose(f);
	/* A write error is reported. */
	f = fopen("/dev/full", "w");
	ck_assert_ptr_nonnull(f);
	setvbuf(f, NULL, _IONBF, 0);
	ck_assert_int_eq(svg_heatmap(f, &h), -1);
	fclose(f);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("svg");
	TCase *tc = tcase_create("heatmap");

	tcase_add_test(tc, test_cells);
	tcase_add_test(tc, test_cells_past_one);
	tcase_add_test(tc, test_labels_escaped);
	tcase_add_test(tc, test_text_count);
	tcase_add_test(tc, test_widths);
	tcase_add_test(tc, test_refuse);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
