/*
 * bleu_text.c: the parts of Python's str that sacreBLEU relies on: strict
 * UTF-8 decoding, isspace(), rstrip(), lower() and split(), on UTF-8 text
 * and, where Unicode needs them, code points.
 */
#include <stdlib.h>
#include <string.h>
#include "bleu.h"
#include "base/errmsg.h"
#include "base/unicode_cat.h"
#include "base/utf8.h"

void *bleu_grow(void *p, size_t *cap, size_t n, size_t more, size_t size, const char *what)
{
	size_t c;

	if (p && *cap - n >= more)
		return p;
	if (more > SIZE_MAX / (4 * size) - n) {
		err_set("too many %s", what);
		return NULL;
	}
	c = *cap ? *cap : 64;
	while (c - n < more)
		c *= 2;
	if (!(p = realloc(p, c * size))) {
		err_set("out of memory for %zu %s", c, what);
		return NULL;
	}
	*cap = c;
	return p;
}

int bleu_buf_reserve(struct bleu_buf *b, size_t more)
{
	uint32_t *c = bleu_grow(b->c, &b->cap, b->n, more, sizeof *c, "characters");

	if (!c)
		return -1;
	b->c = c;
	return 0;
}

void bleu_buf_free(struct bleu_buf *b)
{
	free(b->c);
	memset(b, 0, sizeof *b);
}

int bleu_bytes_reserve(struct bleu_bytes *b, size_t more)
{
	char *s = bleu_grow(b->s, &b->cap, b->n, more, 1, "bytes");

	if (!s)
		return -1;
	b->s = s;
	return 0;
}

void bleu_bytes_free(struct bleu_bytes *b)
{
	free(b->s);
	memset(b, 0, sizeof *b);
}

/* Whether the eight bytes at s are ASCII. */
static inline int ascii8(const unsigned char *s)
{
	return !(bleu_load8(s) & 0x8080808080808080ULL);
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
		int k;

		if (i + 8 <= len && ascii8(s + i)) {
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

int bleu_utf8_check(const char *str, size_t len, size_t *bad)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0;
	uint32_t c;

	while (i < len) {
		int k;

		if (i + 8 <= len && ascii8(s + i)) {
			i += 8;
			continue;
		}
		if (s[i] < 0x80) {
			i++;
			continue;
		}
		if ((k = utf8_decode(s + i, len - i, &c)) == 0) {
			*bad = i;
			return 1;
		}
		i += k;
	}
	return 0;
}

int bleu_utf8_encode(const uint32_t *c, size_t n, struct bleu_bytes *out)
{
	unsigned char *o;

	if (bleu_bytes_reserve(out, 4 * n) < 0)
		return -1;
	o = (unsigned char *)out->s + out->n;
	for (size_t i = 0; i < n; i++)
		o += utf8_encode((char *)o, c[i]);
	out->n = (char *)o - out->s;
	return 0;
}

size_t bleu_rstrip(struct bleu_text s)
{
	const unsigned char *u = (const unsigned char *)s.s;
	size_t n = s.n;

	while (n > 0) {
		size_t k = n - 1;
		uint32_t c = u[k];

		if (c >= 0x80) {
			/* back to the first byte of the last character */
			while (k > 0 && n - k < 4 && (u[k] & 0xc0) == 0x80)
				k--;
			if ((size_t)utf8_decode(u + k, n - k, &c) != n - k)
				break;
		}
		if (!bleu_isspace(c))
			break;
		n = k;
	}
	return n;
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

int bleu_lower_utf8(struct bleu_text s, struct bleu_buf *cps, struct bleu_buf *low,
		    struct bleu_bytes *out)
{
	size_t i, bad;

	out->n = 0;
	if (bleu_bytes_reserve(out, s.n) < 0)
		return -1;
	/* ASCII lines as bleu_lower does, eight bytes a step */
	for (i = 0; i + 8 <= s.n; i += 8) {
		uint64_t v = bleu_load8(s.s + i);

		if (v & 0x8080808080808080ULL)
			break;
		v |= bleu_bytes_in(v, 'A', 'Z') >> 2;	/* 0x80 >> 2: 0x20 */
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
		v = __builtin_bswap64(v);	/* back as it came */
#endif
		memcpy(out->s + i, &v, 8);
	}
	for (; i < s.n && (unsigned char)s.s[i] < 0x80; i++)
		out->s[i] = s.s[i] >= 'A' && s.s[i] <= 'Z' ? s.s[i] + 32 : s.s[i];
	out->n = i;
	if (i == s.n)
		return 0;
	/* others whole: final sigma looks at its neighbours */
	cps->n = low->n = out->n = 0;
	if (bleu_utf8_decode(s.s, s.n, cps, &bad) != 0) {
		err_set("invalid UTF-8");
		return -1;
	}
	if (bleu_lower((struct bleu_str){ cps->c, cps->n }, low) < 0)
		return -1;
	return bleu_utf8_encode(low->c, low->n, out);
}

int bleu_split(struct bleu_text s, struct bleu_words *words)
{
	size_t i = 0, start, k = 0;
	uint32_t c;

	words->n = 0;
	/* a word and a space at least per word */
	if (bleu_words_reserve(words, s.n / 2 + 1) < 0)
		return -1;
	for (;;) {
		while (i < s.n && (k = bleu_utf8_next(s.s, s.n, i, &c), bleu_isspace(c)))
			i += k;
		if (i == s.n)
			return 0;
		start = i;
		/* printable ASCII (no space) eight bytes a step, then the rest */
		for (; i + 8 <= s.n; i += 8) {
			uint64_t other = ~bleu_bytes_in(bleu_load8(s.s + i), 0x21, 0x7e) &
					 0x8080808080808080ULL;

			if (other) {
				i += __builtin_ctzll(other) / 8;
				break;
			}
		}
		while (i < s.n && (k = bleu_utf8_next(s.s, s.n, i, &c), !bleu_isspace(c)))
			i += k;
		words->w[words->n++] = (struct bleu_text){ s.s + start, i - start };
	}
}

int bleu_words_reserve(struct bleu_words *words, size_t more)
{
	struct bleu_text *w = bleu_grow(words->w, &words->cap, words->n, more,
					sizeof *w, "words");

	if (!w)
		return -1;
	words->w = w;
	return 0;
}

int bleu_words_push(struct bleu_words *words, struct bleu_text w)
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
