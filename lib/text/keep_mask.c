/* keep_mask.c: spans taken out of a line (keep_restore.c puts them back
 * into its translation); see keep.h. */
#include <stdlib.h>
#include <string.h>
#include "base/errmsg.h"
#include "keep.h"

/*
 * Names the shipped model (models/bible-es-en.tsr) writes as they are in
 * its Spanish: it copies each into the English (doc/results.md, "What is
 * kept as written"), where a digit or a URL comes out as a Bible name of
 * its own making.
 */
static const char *const names[KEEP_NAMES] = { "Moab", "David", "Jacob",
					       "Aaron", "Samuel", "Isaac",
					       "Gilead", "Levi" };
#define NNAMES KEEP_NAMES

const char *keep_name(int i)
{
	return names[i % NNAMES];
}

static int is_space(int c)
{
	return c == ' ' || c == '\t';
}

static int is_alnum(int c)
{
	return (c >= '0' && c <= '9') || ((c | 32) >= 'a' && (c | 32) <= 'z') ||
	       c >= 0x80;
}

/* Words counted in t up to byte *done, one pass in all: the index of
 * the word that holds byte at-1 (-1: none), *words its count so far. */
static int word_of(const struct bpe_text *t, size_t at, size_t *done,
		   int *words)
{
	size_t q;

	for (q = *done; q < at; q++)
		if (!is_space(t->s[q]) && (q == 0 || is_space(t->s[q - 1])))
			++*words;
	*done = at;
	return *words - 1;
}

int keep_mask(const char *s, size_t n, const struct keep_span *sp,
	      size_t nspans, enum keep_mode mode, struct bpe_text *masked,
	      struct bpe_text *bytes, struct bpe_ids *pos)
{
	size_t i, from = 0, done = 0;
	int name = 0, words = 0, held = 0;

	masked->n = bytes->n = pos->n = 0;
	for (i = 0; i < NNAMES; i++)	/* the names the line holds */
		held |= !!memmem(s, n, names[i], strlen(names[i])) << i;
	for (i = 0; i < nspans; i++) {
		size_t a = sp[i].start, b = sp[i].end, len;
		int word, ph = -1, glue = 0;

		if (bpe_text_add(masked, s + from, a - from) < 0 ||
		    bpe_text_add(bytes, s + a, b - a) < 0)
			return -1;
		from = b;
		if (mode == KEEP_DROP) {
			/* "de 2025." is "de." */
			if (masked->n && is_space(masked->s[masked->n - 1]) &&
			    (b == n || !is_alnum((unsigned char)s[b])))
				masked->n--;
			if (done > masked->n)	/* a space: no word's start */
				done = masked->n;
			word = word_of(masked, masked->n, &done, &words);
		} else {
			/* a name not in the line, its own word */
			for (len = 0; len < NNAMES && (held >> name % NNAMES & 1);
			     len++)
				name++;
			ph = name++;
			glue = (masked->n && is_alnum((unsigned char)
						      masked->s[masked->n - 1])) |
			       (b < n && is_alnum((unsigned char)s[b])) << 1;
			if ((glue & 1) && bpe_text_add(masked, " ", 1) < 0)
				return -1;
			len = masked->n;
			if (bpe_text_add(masked, keep_name(ph),
					 strlen(keep_name(ph))) < 0 ||
			    ((glue & 2) && bpe_text_add(masked, " ", 1) < 0))
				return -1;
			word = word_of(masked, len + 1, &done, &words);
		}
		if (bpe_ids_push(pos, (int32_t)(b - a)) < 0 ||
		    bpe_ids_push(pos, word) < 0 || bpe_ids_push(pos, ph) < 0 ||
		    bpe_ids_push(pos, glue) < 0)
			return -1;
	}
	return bpe_text_add(masked, s + from, n - from);
}
