/*
 * spm_decode.c: ids back to text as spm_decode does it (spm.h), and unit
 * by unit for the alignments.
 */
#include <string.h>
#include "spm_impl.h"
#include "base/errmsg.h"
#include "base/utf8.h"

#define SPACE_SYMBOL "\xe2\x96\x81"

/* Appends s [n] with every U+2581 made a space. */
static int add_spaced(struct bpe_text *out, const char *s, size_t n)
{
	const char *z;

	while (n && (z = memmem(s, n, SPACE_SYMBOL, 3))) {
		if (bpe_text_add(out, s, (size_t)(z - s)) < 0 ||
		    bpe_text_add(out, " ", 1) < 0)
			return -1;
		n -= (size_t)(z - s) + 3;
		s = z + 3;
	}
	return bpe_text_add(out, s, n);
}

/* Appends a run of byte pieces' bytes, U+FFFD for each byte that does
 * not start a valid character. */
static int add_bytes(struct bpe_text *out, const unsigned char *b, size_t n)
{
	size_t i = 0;
	uint32_t cp;
	int len;

	while (i < n) {
		len = utf8_decode(b + i, n - i, &cp);
		if (len > 0 ? bpe_text_add(out, b + i, (size_t)len) < 0
			    : bpe_text_add(out, "\xef\xbf\xbd", 3) < 0)
			return -1;
		i += len > 0 ? (size_t)len : 1;
	}
	return 0;
}

static int check_ids(const struct spm *m, const int32_t *ids, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (ids[i] < 0 || ids[i] >= m->n) {
			err_set("id %d at position %zu is outside the model's "
				"%d pieces", ids[i], i, m->n);
			return -1;
		}
	return 0;
}

/* The byte of a byte piece, named <0xNN> (the loader checked). */
static unsigned char piece_byte(const char *s)
{
	static const char hex[] = "0123456789ABCDEF";

	return (unsigned char)((strchr(hex, s[3]) - hex) << 4 |
			       (strchr(hex, s[4]) - hex));
}

static int decode(const struct spm *m, const int32_t *ids, size_t n,
		  struct bpe_text *out, struct bpe_text *run)
{
	size_t i, start = out->n, len;
	int32_t id;
	const char *s;
	int bos = 1;            /* no piece but control pieces yet */

	if (check_ids(m, ids, n) < 0)
		return -1;
	for (i = 0; i < n; i++) {
		s = spm_piece_bytes(m, ids[i]);
		len = m->piece[ids[i]].len;
		/* SentencePiece decodes a piece's text, not its id */
		id = spm_piece_to_id(m, s, len);
		if (m->piece[id].type == SPM_BYTE) {
			if (bpe_text_add(run, &(char){ (char)piece_byte(s) },
					 1) < 0)
				return -1;
			bos = 0;
			continue;
		}
		if (run->n && add_bytes(out, (unsigned char *)run->s,
					run->n) < 0)
			return -1;
		run->n = 0;
		if (m->piece[id].type == SPM_CONTROL)
			continue;
		if (m->piece[id].type == SPM_UNKNOWN) {
			if (bpe_text_add(out, m->unk_surface.s,
					 m->unk_surface.n) < 0)
				return -1;
			bos = 0;
			continue;
		}
		/* the dummy prefix, as spm_decode drops it: with
		 * remove_extra_whitespaces, from every piece while the text
		 * is still empty ("▁ ▁ e" is "e"); without, from the first
		 * piece that is not a control piece only ("▁ ▁ e" is " e") */
		if ((m->norm.remove_extra_whitespaces ? out->n == start : bos) &&
		    (m->norm.add_dummy_prefix ||
					m->norm.remove_extra_whitespaces) &&
		    len >= 3 && !memcmp(s, SPACE_SYMBOL, 3)) {
			s += 3;
			len -= 3;
		}
		if (add_spaced(out, s, len) < 0)
			return -1;
		bos = 0;
	}
	if (run->n && add_bytes(out, (unsigned char *)run->s, run->n) < 0)
		return -1;
	if (m->denorm.present && m->denorm.map.nunits && out->n > start) {
		/* the denormaliser's rules, over the whole text */
		if (spm_normalize(&m->denorm, NULL, out->s + start,
				  out->n - start, run) < 0)
			return -1;
		out->n = start;
		if (bpe_text_add(out, run->s, run->n) < 0)
			return -1;
	}
	return 0;
}

int spm_decode(const struct spm *m, const int32_t *ids, size_t n,
	       struct bpe_text *out)
{
	struct bpe_text run = { 0 };
	int rc = decode(m, ids, n, out, &run);

	bpe_text_free(&run);
	return rc;
}

int spm_decode_units(const struct spm *m, const int32_t *ids, size_t n,
		     struct bpe_text *out)
{
	const struct spm_piece *p;
	const char *s;
	size_t i;

	if (check_ids(m, ids, n) < 0)
		return -1;
	for (i = 0; i < n; i++) {
		p = &m->piece[ids[i]];
		s = spm_piece_bytes(m, ids[i]);
		if (p->type == SPM_CONTROL)
			continue;
		if (p->type == SPM_UNKNOWN) {
			if (bpe_text_add(out, m->unk_surface.s,
					 m->unk_surface.n) < 0)
				return -1;
		} else if (p->type == SPM_BYTE) {
			if (bpe_text_add(out,
					 &(char){ (char)piece_byte(s) }, 1) < 0)
				return -1;
		} else if (add_spaced(out, s, p->len) < 0) {
			return -1;
		}
	}
	return 0;
}
