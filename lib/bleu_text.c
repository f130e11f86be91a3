/*
 * bleu_text.c: the parts of Python's str that sacreBLEU relies on, on code
 * points: strict UTF-8 decoding, isspace(), rstrip(), lower() and split().
 */
#include <stdlib.h>
#include <string.h>
#include "bleu.h"
#include "err.h"
#include "unicode_cat.h"
#include "utf8.h"

int bleu_buf_reserve(struct bleu_buf *b, size_t more)
{
	size_t cap;
	uint32_t *c;

	if (b->cap - b->n >= more)
		return 0;
	if (more > SIZE_MAX / 8 - b->n) {
		err_set("text too long");
		return -1;
	}
	cap = b->cap ? b->cap : 64;
	while (cap - b->n < more)
		cap *= 2;
	c = realloc(b->c, cap * sizeof *c);
	if (!c) {
		err_set("out of memory for %zu characters", cap);
		return -1;
	}
	b->c = c;
	b->cap = cap;
	return 0;
}

void bleu_buf_free(struct bleu_buf *b)
{
	free(b->c);
	memset(b, 0, sizeof *b);
}

int bleu_utf8_decode(const char *str, size_t len, struct bleu_buf *out, size_t *bad)
{
	const unsigned char *s = (const unsigned char *)str;
	uint32_t *o;
	size_t i = 0;

	if (bleu_buf_reserve(out, len) < 0)
		return -1;
	o = out->c + out->n;
	while (i < len) {
		uint64_t v;
		int k;

		/* ASCII eight bytes at a time */
		if (i + 8 <= len && (memcpy(&v, s + i, 8), !(v & 0x8080808080808080ULL))) {
			for (k = 0; k < 8; k++)
				o[k] = s[i + k];
			o += 8;
			i += 8;
			continue;
		}
		if (s[i] < 0x80) {
			*o++ = s[i++];
			continue;
		}
		k = utf8_decode(s + i, len - i, o);
		if (k == 0) {
			*bad = i;
			return 1;
		}
		o++;
		i += k;
	}
	out->n = o - out->c;
	return 0;
}

size_t bleu_rstrip(struct bleu_str s)
{
	while (s.n > 0 && bleu_isspace(s.c[s.n - 1]))
		s.n--;
	return s.n;
}

/*
 * Python's final-sigma rule: capital sigma lowercases to the final form
 * when a cased letter precedes it and none follows it, skipping
 * case-ignorable characters on both sides.
 */
static int final_sigma(struct bleu_str s, size_t i)
{
	size_t j;
	unsigned f;

	for (j = i; j > 0; j--) {
		f = ucat_flags(s.c[j - 1]);
		if (!(f & UCAT_CASE_IGNORABLE))
			break;
	}
	if (j == 0 || !(ucat_flags(s.c[j - 1]) & UCAT_CASED))
		return 0;
	for (j = i + 1; j < s.n; j++) {
		f = ucat_flags(s.c[j]);
		if (!(f & UCAT_CASE_IGNORABLE))
			return !(f & UCAT_CASED);
	}
	return 1;
}

int bleu_lower(struct bleu_str s, struct bleu_buf *out)
{
	/* at most one extra code point per character (U+0130 below) */
	if (bleu_buf_reserve(out, 2 * s.n) < 0)
		return -1;
	for (size_t i = 0; i < s.n; i++) {
		uint32_t c = s.c[i];

		if (c < 0x80) {
			out->c[out->n++] = c >= 'A' && c <= 'Z' ? c + 32 : c;
		} else if (c == 0x130) {
			/* the one unconditional full mapping of SpecialCasing */
			out->c[out->n++] = 'i';
			out->c[out->n++] = 0x307;
		} else if (c == 0x3a3) {
			out->c[out->n++] = final_sigma(s, i) ? 0x3c2 : 0x3c3;
		} else {
			out->c[out->n++] = ucat_lower(c);
		}
	}
	return 0;
}

int bleu_split(struct bleu_str s, struct bleu_words *words)
{
	size_t i = 0, start;

	words->n = 0;
	for (;;) {
		while (i < s.n && bleu_isspace(s.c[i]))
			i++;
		if (i == s.n)
			return 0;
		start = i;
		while (i < s.n && !bleu_isspace(s.c[i]))
			i++;
		if (bleu_words_push(words, (struct bleu_str){ s.c + start, i - start }) < 0)
			return -1;
	}
}

int bleu_words_reserve(struct bleu_words *words, size_t more)
{
	size_t cap;
	struct bleu_str *p;

	if (words->cap - words->n >= more)
		return 0;
	if (more > SIZE_MAX / (4 * sizeof *p) - words->n) {
		err_set("too many words");
		return -1;
	}
	cap = words->cap ? words->cap : 64;
	while (cap - words->n < more)
		cap *= 2;
	p = realloc(words->w, cap * sizeof *p);
	if (!p) {
		err_set("out of memory for %zu words", cap);
		return -1;
	}
	words->w = p;
	words->cap = cap;
	return 0;
}

int bleu_words_push(struct bleu_words *words, struct bleu_str w)
{
	if (bleu_words_reserve(words, 1) < 0)
		return -1;
	words->w[words->n++] = w;
	return 0;
}

void bleu_words_free(struct bleu_words *words)
{
	free(words->w);
	memset(words, 0, sizeof *words);
}
