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
 *
 * bleu_tokenize_words finds the same words in one pass (below), and is
 * what scoring uses; the passes are its definition and its test.
 */
#include <string.h>
#include "bleu.h"
#include "base/errmsg.h"
#include "base/unicode_cat.h"

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

/* mteval-v13a's unescaping of the SGML entities (and removal of <skipped>) */
static void unescape_13a(struct bleu_buf *b)
{
	/* mteval also joins "-\n" and turns "\n" into a space; a line here
	 * holds no newline */
	if (!has(b, is_amp_lt))
		return;
	replace_all(b, "<skipped>", 0);
	replace_all(b, "&quot;", '"');
	replace_all(b, "&amp;", '&');
	replace_all(b, "&lt;", '<');
	replace_all(b, "&gt;", '>');
}

static int tok_13a(struct bleu_buf *out, struct bleu_buf *tmp)
{
	unescape_13a(out);
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

/*
 * The same words in one pass.  Only a few classes of characters matter:
 *
 *   ALONE   a word of its own (13a's punctuation, intl's symbols)
 *   DASH    13a's '-': a word of its own after a digit
 *   PUNCT   13a's period and comma, intl's punctuation
 *   DIGIT   13a's [0-9], intl's numbers
 *   SPACE   what str.split() splits at
 *
 * The two passes around PUNCT, s/(non-digit)(P)/$1 $2 /g and then
 * s/(P)(non-digit)/ $1 $2/g, never match each other's spaces in a way
 * that depends on more than one maximal run of PUNCT characters c1..ck,
 * the character before it (X) and the one after it (Y).  Worked through
 * (each match consumes its second character, so the runs pair up):
 * every ci is a word of its own, except that c1 stays joined to X when
 * k = 1 and X and Y are digits, and ck stays joined to Y when Y is a digit
 * and k + (X is a digit) is even.  Where the line ends, 13a has its
 * padding space (a non-digit) and intl nothing (no match: as a digit).
 * tests/test_bleu.c checks this against the passes above.
 */
enum {
	C_DIGIT = 1, C_PUNCT = 2, C_ALONE = 4, C_DASH = 8, C_SPACE = 16,
	C_ENTITY = 32,		/* 13a's '&' and '<': unescaping to do */
};

static const unsigned char ascii_13a[128] = {
	['\t' ... '\r'] = C_SPACE, [0x1c ... ' '] = C_SPACE,
	['!' ... '%'] = C_ALONE, ['&'] = C_ALONE | C_ENTITY, ['(' ... '+'] = C_ALONE,
	['/'] = C_ALONE, [':' ... ';'] = C_ALONE, ['<'] = C_ALONE | C_ENTITY,
	['=' ... '@'] = C_ALONE, ['[' ... '`'] = C_ALONE, ['{' ... '~'] = C_ALONE,
	['-'] = C_DASH, ['.'] = C_PUNCT, [','] = C_PUNCT, ['0' ... '9'] = C_DIGIT,
};

/* ASCII's general categories: P* and S* interleave */
static const unsigned char ascii_intl[128] = {
	['\t' ... '\r'] = C_SPACE, [0x1c ... ' '] = C_SPACE, ['0' ... '9'] = C_DIGIT,
	['!' ... '#'] = C_PUNCT, ['$'] = C_ALONE, ['%' ... '*'] = C_PUNCT,
	['+'] = C_ALONE, [',' ... '/'] = C_PUNCT, [':' ... ';'] = C_PUNCT,
	['<' ... '>'] = C_ALONE, ['?' ... '@'] = C_PUNCT, ['[' ... ']'] = C_PUNCT,
	['^'] = C_ALONE, ['_'] = C_PUNCT, ['`'] = C_ALONE, ['{'] = C_PUNCT,
	['|'] = C_ALONE, ['}'] = C_PUNCT, ['~'] = C_ALONE,
};

PASS unsigned class_of(uint32_t c, int intl)
{
	unsigned f;

	if (c < 0x80)
		return intl ? ascii_intl[c] : ascii_13a[c];
	f = ucat_flags(c);
	if (f & UCAT_SPACE)
		return C_SPACE;
	if (!intl)
		return 0;
	return f & UCAT_P ? C_PUNCT : f & UCAT_S ? C_ALONE : f & UCAT_N ? C_DIGIT : 0;
}

/* The class of the character at c[i] (i < n), *len its length in bytes. */
PASS unsigned class_at(const unsigned char *c, size_t n, size_t i, int intl, size_t *len)
{
	uint32_t cp;

	if (c[i] < 0x80) {
		*len = 1;
		return intl ? ascii_intl[c[i]] : ascii_13a[c[i]];
	}
	*len = bleu_utf8_next((const char *)c, n, i, &cp);
	return class_of(cp, intl);
}

/*
 * The offset of the first byte from c[i] on that is not plain, eight bytes
 * a step (a short rest is left to the caller).  Plain bytes are ASCII
 * letters and digits, and 13a's apostrophe: all are in words.
 */
PASS size_t skip_plain(const unsigned char *c, size_t n, size_t i, int intl)
{
	for (; i + 8 <= n; i += 8) {
		uint64_t v = bleu_load8(c + i), plain;

		plain = bleu_bytes_in(v, '0', '9') |
			bleu_bytes_in(v | 0x2020202020202020ULL, 'a', 'z');
		if (!intl)
			plain |= bleu_bytes_in(v, '\'', '\'');
		if (~plain & 0x8080808080808080ULL)
			return i + __builtin_ctzll(~plain & 0x8080808080808080ULL) / 8;
	}
	return i;
}

PASS void add_word(struct bleu_words *words, const unsigned char *c, size_t n)
{
	words->w[words->n++] = (struct bleu_text){ (const char *)c, n };
}

/*
 * Replaces words by those of s (at most a word per byte: words has room
 * for them).  Returns the classes of s or'ed together (but for plain
 * letters and digits).
 */
PASS unsigned split_classes(struct bleu_text s, int intl, struct bleu_words *words)
{
	const unsigned char *c = (const unsigned char *)s.s;
	const unsigned edge = intl ? C_DIGIT : 0;
	size_t i = 0, start = 0, len;
	unsigned all = 0, prev = edge;	/* prev: the class of the character before c[i] */
	int open = 0;

	words->n = 0;
/* ends the word in progress before c[i] */
#define END_WORD() do { if (open) add_word(words, c + start, i - start); open = 0; } while (0)
	while (i < s.n) {
		unsigned k;

		if (!open) {
			/* the usual word: plain bytes, then a space */
			size_t j = skip_plain(c, s.n, i, intl);

			if (j > i && j < s.n && c[j] == ' ') {
				add_word(words, c + i, j - i);
				prev = C_SPACE;
				i = j + 1;
				continue;
			}
		}
		k = class_at(c, s.n, i, intl, &len);
		if (!(k & ~C_DIGIT)) {
			/* letters and digits: the rest of the word eight bytes a
			 * step while they are plain, else one character a step */
			if (!open) {
				start = i;
				open = 1;
			}
			do {
				size_t j = skip_plain(c, s.n, i + len, intl);

				prev = j > i + len ? class_at(c, s.n, j - 1, intl, &len) : k;
				i = j;
			} while (i < s.n && !((k = class_at(c, s.n, i, intl, &len)) & ~C_DIGIT));
			continue;
		}
		all |= k;
		if (k & C_SPACE) {
			END_WORD();
		} else if (k & C_PUNCT) {
			size_t j = i + len, n = 1, lj;
			unsigned dx = prev & C_DIGIT, dy = edge, kj;

			while (j < s.n) {
				kj = class_at(c, s.n, j, intl, &lj);
				if (!(kj & C_PUNCT)) {
					dy = kj & C_DIGIT;
					break;
				}
				j += lj;
				n++;
			}
			prev = C_PUNCT;
			if (n == 1 && dx && dy) {
				/* "3.5" (or intl's ".5" at the start): one word */
				if (!open) {
					start = i;
					open = 1;
				}
				i = j;
				continue;
			}
			END_WORD();
			for (size_t m = 1; m < n; m++) {
				class_at(c, s.n, i, intl, &len);
				add_word(words, c + i, len);
				i += len;
			}
			if (dy && (n + !!dx) % 2 == 0) {
				start = i;
				open = 1;
			} else {
				add_word(words, c + i, j - i);
			}
			i = j;
			continue;
		} else if (k & C_ALONE || prev & C_DIGIT) {
			/* ALONE, or a DASH after a digit */
			END_WORD();
			add_word(words, c + i, len);
		} else if (!open) {
			/* a DASH inside a word */
			start = i;
			open = 1;
		}
		prev = k;
		i += len;
	}
	END_WORD();
#undef END_WORD
	return all;
}

int bleu_tokenize_words(enum bleu_tokenizer t, struct bleu_text s, struct bleu_words *words,
			struct bleu_buf *cps, struct bleu_bytes *tmp)
{
	size_t bad, len;
	uint32_t c;

	words->n = 0;
	/* at most a word per byte */
	if (bleu_words_reserve(words, s.n) < 0)
		return -1;
	switch (t) {
	case BLEU_TOK_13A:
		if (!(split_classes(s, 0, words) & C_ENTITY))
			return 0;
		/* entities (rare): unescaped as code points, as the passes do */
		cps->n = tmp->n = 0;
		if (bleu_utf8_decode(s.s, s.n, cps, &bad) != 0) {
			err_set("invalid UTF-8");
			return -1;
		}
		unescape_13a(cps);
		if (bleu_utf8_encode(cps->c, cps->n, tmp) < 0)
			return -1;
		split_classes((struct bleu_text){ tmp->s, tmp->n }, 0, words);
		return 0;
	case BLEU_TOK_INTL:
		split_classes(s, 1, words);
		return 0;
	case BLEU_TOK_CHAR:
		for (size_t i = 0; i < s.n; i += len) {
			len = bleu_utf8_next(s.s, s.n, i, &c);
			if (!bleu_isspace(c))
				add_word(words, (const unsigned char *)s.s + i, len);
		}
		return 0;
	case BLEU_TOK_NONE:
		return bleu_split(s, words);
	}
	return 0;
}
