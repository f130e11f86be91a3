/*
 * sentsplit.h: a line of text cut into sentences, by rules of the kind
 * Moses' split-sentences.perl uses, so that a paragraph is translated a
 * sentence at a time (tokenize(1); the line's parts are joined back by
 * cmd/common/linejoin.c).
 *
 * Words are runs of bytes between spaces, tabs and CRs.  A sentence ends
 * after a word whose last characters are a stop (. ! ? or U+2026, any
 * run of them) and then any closing quotes and brackets (quotation
 * marks " ' U+00AB U+00BB U+2039 U+203A U+2018..U+201F, and ) ] }),
 * when the next word starts, after any quotation marks, opening
 * brackets, dashes, inverted marks and '#' (( [ { U+2014 U+00BF U+00A1
 * #), with an upper-case letter or a digit: Spanish's "¿Vienes? ¿qué traes?" is one sentence, as its
 * spelling says (a new one would start "¿Qué").  A word ending in a single '.' (not an ellipsis) ends no
 * sentence when what comes before the dot is
 * - one letter (an initial, "p. ej.", "z. B."),
 * - an abbreviation with dots inside ("e.g.", "U.S.", "J.-C.",
 *   "Prof.ssa": letters, and dot-separated parts of at most 4 bytes,
 *   none of '@', '/' or ':', which a URL or an e-mail address has),
 * - one of the language's non-breaking prefixes (sentsplit_lists.c; some
 *   only before a number, as "No. 5"),
 * - in German, a number of one or two digits (an ordinal: "am 3. Mai").
 * A dot inside a word (3.14, www.example.com, a@b.org) never ends one.
 * The text between sentences is spaces only, so sentences and gaps put
 * back together are the line.  Time is linear in the line's length.
 */
#ifndef ATTN_SENTSPLIT_H
#define ATTN_SENTSPLIT_H

#include <stddef.h>

/* The rules of a language: SENT_NONE's non-breaking prefixes are the
 * titles before a name that are such in all six (sentsplit_lists.c). */
enum sent_lang {
	SENT_NONE, SENT_EN, SENT_ES, SENT_DE, SENT_FR, SENT_PT, SENT_IT,
	SENT_NLANG
};

/* A sentence: bytes [start, end) of the line. */
struct sent_span {
	size_t start, end;
};

/* The language of a code (en, es, de, fr, pt, it, none), or -1. */
int sentsplit_lang(const char *code);
/* The codes, for messages: "en, es, de, fr, pt, it, none". */
extern const char sentsplit_langs[];

/*
 * The sentences of text [len] under lang's rules, in order, into *span
 * (grown as needed, *cap entries; the caller frees it).  With
 * clause_words > 0, a sentence of more than clause_words words is cut
 * further into clauses: after each word ending with ';', or with ':'
 * when the next starts (after its openers) with a capital or a digit
 * (a colon before speech, "dijo: Yo ...").  A long sentence translated
 * whole loses words and loops; clauses are the next best unit.  Returns
 * the number of spans: 0 for a line of spaces only (or empty), else at
 * least 1; -1 (err_msg()) when out of memory.
 */
long sentsplit(const char *text, size_t len, enum sent_lang lang,
	       int clause_words, struct sent_span **span, size_t *cap);

/* Whether word [n] (no dot at its end) is one of lang's non-breaking
 * prefixes: 0 no, 1 yes, 2 yes before a number only (sentsplit_lists.c). */
int sentsplit_prefix(enum sent_lang lang, const char *word, size_t n);

#endif
