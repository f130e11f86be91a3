/*
 * keep.h: what must not be translated, kept as written (issue 47).
 *
 * keep_find finds the spans of a line that a translation must carry
 * verbatim: text in backticks, URLs, e-mail addresses, printf, Qt and
 * ICU placeholders and shell variables, file paths, numbers (signs,
 * '.' ',' ':' '/' '-' between digits: times and dates, groups of digits
 * one space apart, '%', currency, ordinals), and the matches of the
 * caller's POSIX extended regexes.  The built-in kinds are hand-written
 * scanners that look at each byte a bounded number of times; a regex
 * is glibc's regexec, once per match.  Spans never overlap: at each
 * byte the first kind that matches there (in the order above, the
 * regexes before the URLs) takes the longest span it can, and the scan
 * goes on after it.
 *
 * keep_mask takes the spans out of the line before it is translated:
 * each is replaced by a placeholder word the model copies (KEEP_NAME)
 * or dropped with the space before it (KEEP_DROP), and noted in the
 * frame's records src.keep (the spans' bytes one after another) and
 * src.keep.pos (i32 [K, KEEP_COLS]: a span's length in bytes, its source
 * word (the placeholder's word; dropped: the word before it, -1 none),
 * its placeholder (keep_name's index; -1 dropped), its glue (bit 0: a
 * space was put before the name, bit 1 after it, to part it from a
 * letter or digit: restoring takes them out again)).  Words are the
 * masked text's runs between spaces and tabs, as attn_align.h's.
 *
 * keep_restore puts them back into a translation: every span appears
 * in it exactly once, verbatim (keep_restore's comment says where).
 */
#ifndef ATTN_KEEP_H
#define ATTN_KEEP_H

#include <regex.h>
#include <stddef.h>
#include <stdint.h>
#include "bpe.h"

enum keep_kind {
	KEEP_CODE = 1,		/* `text in backticks` */
	KEEP_REGEX = 2,		/* the caller's patterns */
	KEEP_URL = 4,		/* https://..., www.example.com */
	KEEP_EMAIL = 8,		/* name@example.com */
	KEEP_PLACEHOLDER = 16,	/* %s %1$d %1 %qD %<x%> {} {name} {{name}}
				   $VAR ${VAR} $(VAR) */
	KEEP_PATH = 32,		/* /usr/bin/env ./a ../b ~/c C:\Temp */
	KEEP_NUMBER = 64,	/* -12 3.5% 1.234,56 € 10:30 2025-01-31 */
	KEEP_ALL = 127
};

enum keep_mode { KEEP_NAME, KEEP_DROP };

#define KEEP_COLS 4		/* src.keep.pos's columns */

struct keep_span {
	size_t start, end;	/* bytes [start, end) of the line */
	int kind;		/* one enum keep_kind */
};

struct keep {
	unsigned kinds;		/* enum keep_kind bits looked for */
	regex_t *re;		/* [nre] compiled KEEP_REGEX patterns */
	int nre;
};

/* The kind's bit for its name ("url", "email", "number", "path",
 * "code", "placeholder", "regex"); 0 for another name. */
unsigned keep_kind_bit(const char *name, size_t len);

/*
 * Adds a POSIX extended regex (REG_EXTENDED).  -1 (err_msg()): it does
 * not compile (regerror's words), or it matches the empty string (it
 * would match everywhere, and never advance), or out of memory.
 */
int keep_add_regex(struct keep *k, const char *pattern);
void keep_free(struct keep *k);

/*
 * The spans of s [n] (no NUL needed), in order, into *out (realloc'd,
 * *cap its room), *nspans of them.  -1 (err_msg()): out of memory, or
 * regexec failed.
 */
int keep_find(const struct keep *k, const char *s, size_t n,
	      struct keep_span **out, size_t *cap, size_t *nspans);

/* The placeholder words, from the names the shipped Bible model copies;
 * i's is keep_name(i) (i >= 0; they repeat past the KEEP_NAMES). */
#define KEEP_NAMES 8
const char *keep_name(int i);

/*
 * Masks the nspans spans of s [n] as the mode says (above): the masked
 * text into masked, the spans' bytes into bytes, their [K, 4] rows into
 * pos (all emptied first).  A line's placeholders are names it does
 * not hold already.  -1 (err_msg()): out of memory.
 */
int keep_mask(const char *s, size_t n, const struct keep_span *sp,
	      size_t nspans, enum keep_mode mode, struct bpe_text *masked,
	      struct bpe_text *bytes, struct bpe_ids *pos);

/*
 * Appends to out the translation hyp [n] with the spans of one frame
 * back in it: bytes [nbytes] and pos [k, 4] as keep_mask made them.
 * A span goes, first that applies:
 *   1. in the place of its placeholder in the first target word not
 *      yet used that holds it, not after a letter or digit, alone or
 *      with lower-case letters or an apostrophe after it (the model's
 *      "Moabites", "David's");
 *   2. with links (Pharaoh "i-j" word links of the translation to the
 *      masked source, as beam -A writes them; NULL: none), after the
 *      last target word linked to its source word, before that word's
 *      punctuation; a dropped span whose source word is -1 at the start;
 *   3. at the end.
 * Spans in one place keep their order.  Target words that are a
 * restored placeholder once more are left out, their punctuation kept:
 * each span appears once.  The translation's other bytes stay as they
 * are, spaces included; with source (hyp is the masked source, not a
 * translation) the spaces masking put around a name (glue) are taken
 * out too, so that the line comes back as it was.
 * -1 (err_msg()): pos and bytes disagree, out of memory.
 */
int keep_restore(const char *hyp, size_t n, const char *bytes,
		 size_t nbytes, const int32_t *pos, size_t k,
		 const char *links, size_t nlinks, int source,
		 struct bpe_text *out);

#endif
