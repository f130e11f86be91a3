/*
 * spm_charsmap.c: SentencePiece's precompiled normalisation map, a
 * darts-clone double array over the source strings, searched for the
 * longest source string a text begins with.
 *
 * A unit of the double array is 32 bits: bit 8 says the node has a leaf
 * (a key ends there), bits 10..31 are the offset to the node's children
 * (shifted left by 8 more when bit 9 is set), and the label is the low
 * byte with bit 31 (set only in a leaf unit, whose other 31 bits are the
 * value).  From node p, byte c leads to p ^ offset(p) ^ c, if that unit's
 * label is c; a node with a leaf has its value at p ^ offset(p).
 */
#include <string.h>
#include "spm_impl.h"
#include "base/errmsg.h"

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static uint32_t unit_at(const struct spm_charsmap *c, size_t i)
{
	return le32(c->units + 4 * i);
}

static size_t offset(uint32_t u)
{
	return (size_t)(u >> 10) << ((u & (1u << 9)) >> 6);
}

/* Which bytes lead anywhere from the root: most text (ASCII letters
 * under nmt_nfkc) needs no walk at all. */
static void first_bytes(struct spm_charsmap *c)
{
	size_t root, pos;
	int b;

	if (!c->nunits)
		return;
	root = offset(unit_at(c, 0));
	for (b = 0; b < 256; b++) {
		pos = root ^ (size_t)b;
		c->first[b] = pos < c->nunits &&
			(unit_at(c, pos) & (0x80000000u | 0xff)) == (uint32_t)b;
	}
}

int spm_charsmap_init(struct spm_charsmap *c, const uint8_t *blob,
		      size_t len)
{
	uint32_t trie;

	memset(c, 0, sizeof(*c));
	if (len == 0)
		return 0;
	if (len <= 4) {
		err_set("precompiled charsmap of %zu bytes: too short for its "
			"header", len);
		return -1;
	}
	trie = le32(blob);
	if (trie > len - 4) {
		err_set("precompiled charsmap: a trie of %u bytes in %zu",
			trie, len - 4);
		return -1;
	}
	c->units = blob + 4;
	c->nunits = trie / 4;
	c->strings = (const char *)blob + 4 + trie;
	c->nstrings = len - 4 - trie;
	first_bytes(c);
	return 0;
}

size_t spm_charsmap_match(const struct spm_charsmap *c, const char *s,
			  size_t n, const char **to, size_t *tolen)
{
	size_t i, pos, best = 0, found = 0;
	uint32_t u, value = 0;
	const char *z;

	if (!n || !c->first[(unsigned char)*s])
		return 0;
	pos = offset(unit_at(c, 0));
	for (i = 0; i < n && found < 32; i++) {
		unsigned char b = (unsigned char)s[i];

		pos ^= b;
		if (pos >= c->nunits)
			break;
		u = unit_at(c, pos);
		if ((u & (0x80000000u | 0xff)) != b)
			break;
		pos ^= offset(u);
		if (u >> 8 & 1) {
			if (pos >= c->nunits)
				break;
			value = unit_at(c, pos) & 0x7fffffff;
			best = i + 1;
			found++;
		}
	}
	if (!best)
		return 0;
	if (value >= c->nstrings) {
		*to = "";
		*tolen = 0;
		return best;
	}
	*to = c->strings + value;
	z = memchr(*to, 0, c->nstrings - value);
	*tolen = z ? (size_t)(z - *to) : c->nstrings - value;
	return best;
}
