/*
 * unicode_cat.h: the few Unicode character classes that the bleu program's
 * tokenisers need, looked up in tables generated from the Unicode Character
 * Database by tools/gen_unicode.sh (lib/unicode_cat.c: do not edit it).
 */
#ifndef ATTN_UNICODE_CAT_H
#define ATTN_UNICODE_CAT_H

#include <stddef.h>
#include <stdint.h>

enum {
	UCAT_P = 1,			/* punctuation, general category P* */
	UCAT_S = 2,			/* symbol, S* */
	UCAT_N = 4,			/* number, N* */
	UCAT_SPACE = 8,			/* Python's str.isspace() */
	UCAT_CASED = 16,		/* derived property Cased */
	UCAT_CASE_IGNORABLE = 32,	/* derived property Case_Ignorable */
};

/* The UCAT_* flags of code point c (0 outside Unicode). */
unsigned ucat_flags(uint32_t c);
/* The simple lowercase mapping of c; c itself when it has none. */
uint32_t ucat_lower(uint32_t c);

#endif
