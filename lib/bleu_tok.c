/*
 * bleu_tok.c: sacreBLEU's tokenisers for BLEU.  Each regular expression of
 * the originals is a pass that rewrites the line, matching as Python's
 * re.sub does: left to right, never overlapping; the words are then what
 * str.split() finds in the result.
 *
 *   13a   mteval-v13a.pl: unescapes &quot; &amp; &lt; &gt;, removes
 *         <skipped>, splits off ASCII punctuation and symbols, and periods
 *         and commas except between digits, and a dash after a digit.
 *   intl  mteval-v14.pl --international-tokenization: splits off Unicode
 *         punctuation (P*) unless it has a digit (N*) on both sides,
 *         and every symbol (S*).
 *   char  every non-space character is a word.
 *   none  words as they are.
 */
#include <string.h>
#include "bleu.h"
#include "unicode_cat.h"

static const char *const names[] = {
	[BLEU_TOK_13A] = "13a", [BLEU_TOK_INTL] = "intl",
	[BLEU_TOK_CHAR] = "char", [BLEU_TOK_NONE] = "none",
};

const char *bleu_tok_name(enum bleu_tokenizer t)
{
	return names[t];
}

int bleu_tok_parse(const char *name)
{
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (strcmp(name, names[i]) == 0)
			return i;
	return -1;
}

typedef int (*class_fn)(uint32_t c);

/* The passes are inlined with their classes: a call per character was most
 * of the time spent scoring. */
#define PASS static inline __attribute__((always_inline))

static int is_digit(uint32_t c) { return c >= '0' && c <= '9'; }
static int not_digit(uint32_t c) { return !is_digit(c); }
static int is_period_comma(uint32_t c) { return c == '.' || c == ','; }
static int is_dash(uint32_t c) { return c == '-'; }
static int is_punct(uint32_t c) { return ucat_flags(c) & UCAT_P; }
static int not_number(uint32_t c) { return !(ucat_flags(c) & UCAT_N); }
static int is_symbol(uint32_t c) { return ucat_flags(c) & UCAT_S; }
static int any_char(uint32_t c) { (void)c; return 1; }

/* mteval-v13a's [\{-\~\[-\` -\&\(-\+\:-\@\/] */
static int is_13a_punct(uint32_t c)
{
	return (c >= '{' && c <= '~') || (c >= '[' && c <= '`') ||
	       (c >= ' ' && c <= '&') || (c >= '(' && c <= '+') ||
	       (c >= ':' && c <= '@') || c == '/';
}

/* s/(A)/ $1 /g */
PASS int pad_one(const struct bleu_buf *in, struct bleu_buf *out, class_fn a)
{
	out->n = 0;
	if (bleu_buf_reserve(out, 3 * in->n) < 0)
		return -1;
	for (size_t i = 0; i < in->n; i++) {
		if (a(in->c[i])) {
			out->c[out->n++] = ' ';
			out->c[out->n++] = in->c[i];
			out->c[out->n++] = ' ';
		} else {
			out->c[out->n++] = in->c[i];
		}
	}
	return 0;
}

/*
 * s/(A)(B)/$1 $2 /g when space_after, else s/(A)(B)/ $1 $2/g.
 */
PASS int split_pair(const struct bleu_buf *in, struct bleu_buf *out,
		      class_fn a, class_fn b, int space_after)
{
	size_t i = 0;

	out->n = 0;
	if (bleu_buf_reserve(out, 2 * in->n) < 0)
		return -1;
	while (i < in->n) {
		if (i + 1 < in->n && a(in->c[i]) && b(in->c[i + 1])) {
			if (!space_after)
				out->c[out->n++] = ' ';
			out->c[out->n++] = in->c[i];
			out->c[out->n++] = ' ';
			out->c[out->n++] = in->c[i + 1];
			if (space_after)
				out->c[out->n++] = ' ';
			i += 2;
		} else {
			out->c[out->n++] = in->c[i++];
		}
	}
	return 0;
}

/* In place, str.replace(pat, rep): rep is one character, or none if 0. */
static void replace_all(struct bleu_buf *b, const char *pat, uint32_t rep)
{
	size_t m = strlen(pat), i = 0, o = 0;

	while (i < b->n) {
		size_t k = 0;

		while (k < m && i + k < b->n && b->c[i + k] == (unsigned char)pat[k])
			k++;
		if (k == m) {
			if (rep)
				b->c[o++] = rep;
			i += m;
		} else {
			b->c[o++] = b->c[i++];
		}
	}
	b->n = o;
}

static void swap(struct bleu_buf *a, struct bleu_buf *b)
{
	struct bleu_buf t = *a;

	*a = *b;
	*b = t;
}

/* Whether the line holds any character of class a (to skip a pass). */
PASS int has(const struct bleu_buf *b, class_fn a)
{
	for (size_t i = 0; i < b->n; i++)
		if (a(b->c[i]))
			return 1;
	return 0;
}

static int is_amp_lt(uint32_t c) { return c == '&' || c == '<'; }

static int tok_13a(struct bleu_buf *out, struct bleu_buf *tmp)
{
	/*
	 * mteval also joins "-\n" and turns "\n" into a space; a line here
	 * holds no newline.
	 */
	if (has(out, is_amp_lt)) {
		replace_all(out, "<skipped>", 0);
		replace_all(out, "&quot;", '"');
		replace_all(out, "&amp;", '&');
		replace_all(out, "&lt;", '<');
		replace_all(out, "&gt;", '>');
	}
	/* " {} ".format(line): a period at either end meets a non-digit */
	if (bleu_buf_reserve(out, 2) < 0)
		return -1;
	memmove(out->c + 1, out->c, out->n * sizeof *out->c);
	out->c[0] = ' ';
	out->c[out->n + 1] = ' ';
	out->n += 2;
	if (pad_one(out, tmp, is_13a_punct) < 0)
		return -1;
	if (has(tmp, is_period_comma)) {
		if (split_pair(tmp, out, not_digit, is_period_comma, 1) < 0 ||
		    split_pair(out, tmp, is_period_comma, not_digit, 0) < 0)
			return -1;
	}
	if (has(tmp, is_dash))
		return split_pair(tmp, out, is_digit, is_dash, 1);
	swap(out, tmp);
	return 0;
}

static int tok_intl(struct bleu_buf *out, struct bleu_buf *tmp)
{
	if (split_pair(out, tmp, not_number, is_punct, 1) < 0 ||
	    split_pair(tmp, out, is_punct, not_number, 0) < 0 ||
	    pad_one(out, tmp, is_symbol) < 0)
		return -1;
	swap(out, tmp);
	return 0;
}

int bleu_tokenize(enum bleu_tokenizer t, struct bleu_str s,
		  struct bleu_buf *out, struct bleu_buf *tmp)
{
	out->n = 0;
	if (bleu_buf_reserve(out, s.n) < 0)
		return -1;
	if (s.n)
		memcpy(out->c, s.c, s.n * sizeof *s.c);
	out->n = s.n;
	switch (t) {
	case BLEU_TOK_13A:
		return tok_13a(out, tmp);
	case BLEU_TOK_INTL:
		return tok_intl(out, tmp);
	case BLEU_TOK_CHAR:
		/* " ".join(line): the spaces only separate; split() drops them */
		if (pad_one(out, tmp, any_char) < 0)
			return -1;
		swap(out, tmp);
		return 0;
	case BLEU_TOK_NONE:
		return 0;
	}
	return 0;
}
