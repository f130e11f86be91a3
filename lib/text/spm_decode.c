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

/* Where a decoding stands: its start in out, whether a piece other
 * than a control piece has come, and the byte pieces not yet written. */
struct state {
	size_t start;
	int bos;
	struct bpe_text run;
};

/* Appends one piece's text, as spm_decode's DecodeSentencePiece: s [len]
 * is the piece as given (an id's piece, or a piece read as text). */
static int decode_piece(const struct spm *m, const char *s, size_t len,
			struct state *st, struct bpe_text *out)
{
	/* SentencePiece decodes a piece's text, not its id */
	int32_t id = spm_piece_to_id(m, s, len);
	int type = m->piece[id].type, first;

	if (type == SPM_BYTE) {
		st->bos = 0;
		return bpe_text_add(&st->run, &(char){ (char)piece_byte(s) }, 1);
	}
	if (st->run.n && add_bytes(out, (unsigned char *)st->run.s,
				   st->run.n) < 0)
		return -1;
	st->run.n = 0;
	if (type == SPM_CONTROL)
		return 0;
	first = st->bos;
	st->bos = 0;
	if (type == SPM_UNKNOWN) {
		/* <unk> is its surface; an unknown piece is itself */
		if (len == m->piece[id].len &&
		    !memcmp(s, spm_piece_bytes(m, id), len))
			return bpe_text_add(out, m->unk_surface.s,
					    m->unk_surface.n);
		return bpe_text_add(out, s, len);
	}
	/* the dummy prefix, as spm_decode drops it: with
	 * remove_extra_whitespaces, from every piece while the text is
	 * still empty ("▁ ▁ e" is "e"); without, from the first piece that
	 * is not a control piece only ("▁ ▁ e" is " e") */
	if ((m->norm.remove_extra_whitespaces ? out->n == st->start
					      : first) &&
	    (m->norm.add_dummy_prefix || m->norm.remove_extra_whitespaces) &&
	    len >= 3 && !memcmp(s, SPACE_SYMBOL, 3)) {
		s += 3;
		len -= 3;
	}
	return add_spaced(out, s, len);
}

/* The bytes left, then the denormaliser's rules over the whole text. */
static int finish(const struct spm *m, struct state *st,
		  struct bpe_text *out)
{
	if (st->run.n && add_bytes(out, (unsigned char *)st->run.s,
				   st->run.n) < 0)
		return -1;
	if (m->denorm.present && m->denorm.map.nunits && out->n > st->start) {
		if (spm_normalize(&m->denorm, NULL, out->s + st->start,
				  out->n - st->start, &st->run, NULL) < 0)
			return -1;
		out->n = st->start;
		if (bpe_text_add(out, st->run.s, st->run.n) < 0)
			return -1;
	}
	return 0;
}

int spm_decode(const struct spm *m, const int32_t *ids, size_t n,
	       struct bpe_text *out)
{
	struct state st = { out->n, 1, { 0 } };
	size_t i;
	int rc = check_ids(m, ids, n);

	for (i = 0; rc == 0 && i < n; i++)
		rc = decode_piece(m, spm_piece_bytes(m, ids[i]),
				  m->piece[ids[i]].len, &st, out);
	if (rc == 0)
		rc = finish(m, &st, out);
	bpe_text_free(&st.run);
	return rc;
}

int spm_decode_pieces(const struct spm *m, const char *line, size_t len,
		      struct bpe_text *out)
{
	struct state st = { out->n, 1, { 0 } };
	const char *end = len ? line + len : line, *tok;   /* line may be NULL */
	int rc = 0;

	while (rc == 0 && line < end) {
		for (tok = line; line < end && *line != ' '; line++)
			;
		if (line > tok)
			rc = decode_piece(m, tok, (size_t)(line - tok), &st,
					  out);
		if (line < end)
			line++;
	}
	if (rc == 0)
		rc = finish(m, &st, out);
	bpe_text_free(&st.run);
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
