/*
 * bpe_pieces.c: characters, their classes and the pieces a line is cut
 * into before merging (bpe.h gives the rules).
 */
#include "bpe_impl.h"
#include "base/utf8.h"

static int ascii_class(unsigned c)
{
	if (c == ' ')
		return BPE_CL_SPACE;
	if (c < 0x20 || c == 0x7f)
		return BPE_CL_CONTROL;
	if (c >= '0' && c <= '9')
		return BPE_CL_DIGIT;
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
		return BPE_CL_LETTER;
	return BPE_CL_PUNCT;
}

static int wide_class(uint32_t cp)
{
	if (cp <= 0x9f)
		return BPE_CL_CONTROL;
	if (cp == 0xa1 || cp == 0xab || cp == 0xbb || cp == 0xbf ||
	    (cp >= 0x2010 && cp <= 0x205e) || (cp >= 0x3000 && cp <= 0x303f))
		return BPE_CL_PUNCT;
	return BPE_CL_LETTER;
}

struct bpe_char bpe_char_at(const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	struct bpe_char c;
	uint32_t cp;

	if (u[0] < 0x80) {
		c.len = 1;
		c.cls = ascii_class(u[0]);
		c.unit = c.cls != BPE_CL_CONTROL;
		return c;
	}
	c.len = utf8_decode(u, n, &cp);
	if (c.len == 0) {               /* an invalid byte: a letter of its own */
		c.len = 1;
		c.cls = BPE_CL_LETTER;
		c.unit = 0;
		return c;
	}
	c.cls = wide_class(cp);
	c.unit = c.cls != BPE_CL_CONTROL && cp != 0x2581;
	return c;
}

size_t bpe_piece_len(const char *s, size_t n)
{
	struct bpe_char c = bpe_char_at(s, n);
	size_t i = 0;
	int cls;

	if (c.cls == BPE_CL_SPACE) {
		if (n == 1)
			return 1;
		c = bpe_char_at(s + 1, n - 1);
		if (c.cls == BPE_CL_SPACE || c.cls == BPE_CL_CONTROL)
			return 1;
		i = 1;
	} else if (c.cls == BPE_CL_CONTROL) {
		return c.len;
	}
	cls = c.cls;
	for (i += c.len; i < n; i += c.len) {
		c = bpe_char_at(s + i, n - i);
		if (c.cls != cls)
			break;
	}
	return i;
}

int bpe_line_pieces(const char *s, size_t n, int prefix,
		    struct bpe_text *scratch,
		    int (*piece)(void *ctx, const char *s, size_t n),
		    void *ctx)
{
	size_t i, k;

	if (prefix && n) {
		scratch->n = 0;
		if (bpe_text_add(scratch, " ", 1) < 0 ||
		    bpe_text_add(scratch, s, n) < 0)
			return -1;
		s = scratch->s;
		n = scratch->n;
	}
	for (i = 0; i < n; i += k) {
		k = bpe_piece_len(s + i, n - i);
		if (piece(ctx, s + i, k) < 0)
			return -1;
	}
	return 0;
}
