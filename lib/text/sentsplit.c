/* sentsplit.c: a line cut into sentences; the rules are sentsplit.h's. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "base/errmsg.h"
#include "base/unicode_cat.h"
#include "base/utf8.h"
#include "sentsplit.h"

const char sentsplit_langs[] = "en, es, de, fr, pt, it, none";

int sentsplit_lang(const char *code)
{
	static const char *const codes[SENT_NLANG] = {
		[SENT_NONE] = "none", [SENT_EN] = "en", [SENT_ES] = "es",
		[SENT_DE] = "de", [SENT_FR] = "fr", [SENT_PT] = "pt",
		[SENT_IT] = "it",
	};
	int i;

	for (i = 0; i < SENT_NLANG; i++)
		if (strcmp(code, codes[i]) == 0)
			return i;
	return -1;
}

static int is_space(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

static int is_stop(uint32_t c)
{
	return c == '.' || c == '!' || c == '?' || c == 0x2026;
}

/* Quotation marks: each language closes with some that others open
 * with (German's „...“ and »...«, French's «...»), so all are both. */
static int is_quote(uint32_t c)
{
	return c == '"' || c == '\'' || c == 0xAB || c == 0xBB ||
	       c == 0x2039 || c == 0x203A || (c >= 0x2018 && c <= 0x201F);
}

static int is_closer(uint32_t c)
{
	return is_quote(c) || c == ')' || c == ']' || c == '}';
}

/* '#' opens a numbered item ("#2) Think ..."). */
static int is_opener(uint32_t c)
{
	return is_quote(c) || c == '(' || c == '[' || c == '{' ||
	       c == 0x2014 || c == 0xBF || c == 0xA1 || c == '#';
}

static int is_upper(uint32_t c)
{
	return (ucat_flags(c) & UCAT_CASED) && ucat_lower(c) != c;
}

/* A letter of any script: no punctuation, symbol, number or space. */
static int is_letter(uint32_t c)
{
	return c > ' ' && c != 0x7f &&
	       !(ucat_flags(c) & (UCAT_P | UCAT_S | UCAT_N | UCAT_SPACE));
}

/* The character at s [i, e) into *c; returns its length (an invalid
 * byte is a character of one byte). */
static size_t char_at(const unsigned char *s, size_t i, size_t e,
		      uint32_t *c)
{
	int n = utf8_decode(s + i, e - i, c);

	return n > 0 ? (size_t)n : 1;
}

/* The character that ends at byte e of s (e > b, b the word's start);
 * its first byte into *at. */
static uint32_t char_before(const unsigned char *s, size_t b, size_t e,
			    size_t *at)
{
	size_t i = e - 1;
	uint32_t c;

	while (i > b && e - i < 4 && (s[i] & 0xC0) == 0x80)
		i--;
	if (utf8_decode(s + i, e - i, &c) != (int)(e - i)) {
		i = e - 1;
		c = s[i];
	}
	*at = i;
	return c;
}

/* Whether part [a, b) of s is one of the generic top-level domains that
 * end a host name ("example.com"), which a URL has and an abbreviation
 * does not. */
static int is_gtld(const unsigned char *s, size_t a, size_t b)
{
	static const char *const tld[] = {
		"com", "org", "net", "edu", "gov", "info", "int", "mil", "biz",
	};
	size_t i;

	for (i = 0; i < sizeof tld / sizeof tld[0]; i++)
		if (strlen(tld[i]) == b - a && memcmp(tld[i], s + a, b - a) == 0)
			return 1;
	return 0;
}

/*
 * Whether word [a, b) (its final dot left out) is an abbreviation with
 * dots inside: a letter, dot-separated parts of at most 4 bytes, and
 * nothing of a URL or an e-mail address ('@', '/', ':', "www.", a
 * generic top-level domain last).
 */
static int dotted_abbrev(const unsigned char *s, size_t a, size_t b)
{
	size_t i, part = a, letters = 0, dots = 0;

	if (b - a >= 4 && memcmp(s + a, "www.", 4) == 0)
		return 0;
	for (i = a; i <= b; i++) {
		if (i == b || s[i] == '.') {
			if (i - part > 4)
				return 0;
			dots += i < b;
			part = i + 1;
		} else if (s[i] == '@' || s[i] == '/' || s[i] == ':') {
			return 0;
		} else {
			letters += (s[i] >= 'A' && s[i] <= 'Z') ||
				   (s[i] >= 'a' && s[i] <= 'z') || s[i] >= 0x80;
		}
	}
	for (part = b; part > a && s[part - 1] != '.'; part--)
		;
	return dots && letters && !is_gtld(s, part, b);
}

/* A number of one or two digits: a German ordinal ("am 3. Mai"). */
static int ordinal(const unsigned char *s, size_t a, size_t b)
{
	size_t i;

	if (b - a < 1 || b - a > 2)
		return 0;
	for (i = a; i < b; i++)
		if (s[i] < '0' || s[i] > '9')
			return 0;
	return 1;
}

/*
 * Whether a sentence ends after word [ws, we), the next word being
 * [ns, ne): sentsplit.h's rules.  Each scan stays within its word, so a
 * line costs time linear in its length.
 */
static int ends_sentence(const unsigned char *s, size_t ws, size_t we,
			 size_t ns, size_t ne, enum sent_lang lang)
{
	size_t e = we, at, a = ws, p = ns, n;
	uint32_t c = 0;
	int stops = 0, dots = 0, pre;

	while (e > ws && is_closer(char_before(s, ws, e, &at)))
		e = at;
	while (e > ws && is_stop(c = char_before(s, ws, e, &at))) {
		stops++;
		dots += c == '.';
		e = at;
	}
	if (!stops)
		return 0;
	/* the next word, after its openers, starts with an upper-case
	 * letter or a digit */
	for (;;) {
		n = char_at(s, p, ne, &c);
		if (!is_opener(c) || p + n >= ne)
			break;
		p += n;
	}
	if (!is_upper(c) && !(c >= '0' && c <= '9'))
		return 0;
	if (stops > 1 || dots == 0)	/* ! ? ... and the like */
		return 1;
	/* one dot: the word before it, without its openers */
	while (a < e && (n = char_at(s, a, e, &c)) && is_opener(c))
		a += n;
	if (a == e)
		return 1;               /* a lone dot */
	if (a + char_at(s, a, e, &c) == e && is_letter(c))
		return 0;               /* an initial */
	if (dotted_abbrev(s, a, e))
		return 0;
	pre = e - a <= 16 ? sentsplit_prefix(lang, (const char *)s + a,
					      e - a) : 0;
	if (pre == 1 || (pre == 2 && s[p] >= '0' && s[p] <= '9'))
		return 0;
	if (lang == SENT_DE && ordinal(s, a, e))
		return 0;
	return 1;
}

static int push(struct sent_span **span, size_t *cap, size_t n,
		size_t start, size_t end)
{
	if (n == *cap) {
		size_t c = *cap ? 2 * *cap : 8;
		struct sent_span *p = realloc(*span, c * sizeof *p);

		if (!p) {
			err_set("out of memory for %zu sentences", c);
			return -1;
		}
		*span = p;
		*cap = c;
	}
	(*span)[n].start = start;
	(*span)[n].end = end;
	return 0;
}

/* The word after byte i of s [len] (spaces skipped): [*ws, *we); 0 at
 * the end. */
static int next_word(const unsigned char *s, size_t len, size_t i,
		     size_t *ws, size_t *we)
{
	while (i < len && is_space(s[i]))
		i++;
	*ws = i;
	while (i < len && !is_space(s[i]))
		i++;
	*we = i;
	return *we > *ws;
}

/*
 * Whether a clause of a long sentence ends after word [ws, we), the next
 * being [ns, ne): the word ends with ';', or with ':' and the next word
 * starts, after its openers, with a capital or a digit.
 */
static int ends_clause(const unsigned char *s, size_t ws, size_t we,
		       size_t ns, size_t ne)
{
	size_t p = ns, n;
	uint32_t c;

	if (s[we - 1] == ';')
		return 1;
	if (s[we - 1] != ':')
		return 0;
	while ((n = char_at(s, p, ne, &c)) && is_opener(c) && p + n < ne)
		p += n;
	return is_upper(c) || (c >= '0' && c <= '9');
}

/*
 * Sentence [start, end) of s, its last word ending at end: pushed whole,
 * or when it has more than clause_words words (clause_words > 0), cut
 * after each word that ends a clause.
 */
static int push_sentence(const unsigned char *s, size_t start, size_t end,
			 int clause_words, struct sent_span **span,
			 size_t *cap, size_t *n)
{
	size_t ws, we, ns, ne, from = start;
	long words = 0;

	if (clause_words > 0)
		for (we = start; words <= clause_words &&
		     next_word(s, end, we, &ws, &we); )
			words++;
	if (words <= clause_words)
		return push(span, cap, (*n)++, start, end);
	next_word(s, end, start, &ns, &ne);
	do {
		ws = ns;
		we = ne;
		if (!next_word(s, end, we, &ns, &ne))
			break;
		if (ends_clause(s, ws, we, ns, ne)) {
			if (push(span, cap, (*n)++, from, we) < 0)
				return -1;
			from = ns;
		}
	} while (1);
	return push(span, cap, (*n)++, from, end);
}

long sentsplit(const char *text, size_t len, enum sent_lang lang,
	       int clause_words, struct sent_span **span, size_t *cap)
{
	const unsigned char *s = (const unsigned char *)text;
	size_t i = 0, ws, we, ns, ne, start, n = 0;

	while (i < len && is_space(s[i]))
		i++;
	if (i == len)
		return 0;
	start = ns = i;
	for (ne = ns; ne < len && !is_space(s[ne]); ne++)
		;
	for (;;) {
		ws = ns;
		we = ne;
		for (i = we; i < len && is_space(s[i]); i++)
			;
		if (i == len)
			break;
		ns = i;
		for (ne = ns; ne < len && !is_space(s[ne]); ne++)
			;
		if (ends_sentence(s, ws, we, ns, ne, lang)) {
			if (push_sentence(s, start, we, clause_words, span,
					  cap, &n) < 0)
				return -1;
			start = ns;
		}
	}
	if (push_sentence(s, start, we, clause_words, span, cap, &n) < 0)
		return -1;
	return (long)n;
}
