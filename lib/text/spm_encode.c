/*
 * spm_encode.c: a line to ids as spm_encode does it: normalise, segment
 * by the model's type, then (with byte fallback) each unknown piece
 * becomes the byte pieces of its normalised text.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "spm_impl.h"
#include "base/errmsg.h"

int spm_tok_push(struct spm *m, int32_t id, size_t off, size_t len)
{
	struct spm_tok *t;
	size_t cap;

	if (m->ntok == m->tokcap) {
		cap = m->tokcap ? 2 * m->tokcap : 256;
		if (!(t = realloc(m->tok, cap * sizeof(*t)))) {
			err_set("out of memory");
			return -1;
		}
		m->tok = t;
		m->tokcap = cap;
	}
	m->tok[m->ntok].id = id;
	m->tok[m->ntok].off = (uint32_t)off;
	m->tok[m->ntok].len = (uint32_t)len;
	m->ntok++;
	return 0;
}

void *spm_work(struct spm *m, size_t bytes)
{
	void *w;

	if (bytes > m->workcap) {
		if (!(w = realloc(m->work, bytes))) {
			err_set("out of memory");
			return NULL;
		}
		m->work = w;
		m->workcap = bytes;
	}
	return m->work;
}

/* The word model: a word is a run that starts at the line's start or at
 * a space symbol (U+2581), looked up whole. */
static int words(struct spm *m)
{
	const char *s = m->line.s;
	size_t size = m->line.n, pos, mblen, start = 0;

	m->ntok = 0;
	for (pos = 0; pos < size; pos += mblen) {
		mblen = spm_char_len((unsigned char)s[pos]);
		if (mblen > size - pos)
			mblen = size - pos;
		if (pos && mblen == 3 && !memcmp(s + pos, "\xe2\x96\x81", 3)) {
			if (spm_tok_push(m, spm_piece_to_id(m, s + start,
							    pos - start),
					 start, pos - start) < 0)
				return -1;
			start = pos;
		}
	}
	if (size && spm_tok_push(m, spm_piece_to_id(m, s + start,
						    size - start),
				 start, size - start) < 0)
		return -1;
	return 0;
}

/* The char model: each character looked up alone. */
static int chars(struct spm *m)
{
	const char *s = m->line.s;
	size_t size = m->line.n, pos, mblen;

	m->ntok = 0;
	for (pos = 0; pos < size; pos += mblen) {
		mblen = spm_char_len((unsigned char)s[pos]);
		if (mblen > size - pos)
			mblen = size - pos;
		if (spm_tok_push(m, spm_piece_to_id(m, s + pos, mblen), pos,
				 mblen) < 0)
			return -1;
	}
	return 0;
}

/* The bytes of text that normalised bytes off .. off + len - 1 come from,
 * appended to spans. */
static int span(const struct spm *m, size_t off, size_t len,
		struct bpe_ids *spans)
{
	if (!len) {             /* none; not seen, but not out of bounds */
		int32_t at = off < m->line.n ? m->from.v[2 * off] :
			     m->line.n ? m->from.v[2 * m->line.n - 1] : 0;

		return bpe_ids_push(spans, at) < 0 ||
		       bpe_ids_push(spans, at) < 0 ? -1 : 0;
	}
	return bpe_ids_push(spans, m->from.v[2 * off]) < 0 ||
	       bpe_ids_push(spans, m->from.v[2 * (off + len - 1) + 1]) < 0 ?
	       -1 : 0;
}

static int encode(struct spm *m, const char *text, size_t len,
		  struct bpe_ids *ids, struct bpe_text *pieces,
		  struct bpe_ids *spans)
{
	size_t i, k, first = 1;
	int prev_unk = 0;
	char name[8];
	int rc;

	if (spans && len > INT32_MAX) {
		err_set("line of %zu bytes: too long", len);
		return -1;
	}
	if (spm_normalize(&m->norm, m->has_user ? &m->user : NULL, text, len,
			  &m->line, spans ? &m->from : NULL) < 0)
		return -1;
	if (m->line.n > INT32_MAX) {
		err_set("line of %zu bytes: too long", len);
		return -1;
	}
	m->ntok = 0;
	if (!m->line.n)
		return 0;
	switch (m->type) {
	case SPM_BPE: rc = spm_bpe(m); break;
	case SPM_WORD: rc = words(m); break;
	case SPM_CHAR: rc = chars(m); break;
	default: rc = spm_unigram(m); break;
	}
	if (rc < 0)
		return -1;
	for (i = 0; i < m->ntok; i++) {
		const struct spm_tok *t = &m->tok[i];
		const char *s = m->line.s + t->off;

		/* a model whose control piece is also text (a forged one:
		 * say "▁" both): SentencePiece fails ("all normalized
		 * characters are not consumed"), and so do we */
		if (m->piece[t->id].type == SPM_CONTROL) {
			err_set("the text '%.*s' segments into control piece "
				"%d, which SentencePiece refuses",
				t->len > 40 ? 40 : (int)t->len, s, t->id);
			return -1;
		}

		if (t->id == m->unk_id && m->byte_fallback) {
			for (k = 0; k < t->len; k++) {
				unsigned char b = (unsigned char)s[k];

				if (bpe_ids_push(ids, m->byte_id[b]) < 0 ||
				    (spans && span(m, t->off + k, 1, spans) < 0))
					return -1;
				if (!pieces)
					continue;
				snprintf(name, sizeof(name), "<0x%02X>", b);
				if ((!first && bpe_text_add(pieces, " ", 1) < 0) ||
				    bpe_text_add(pieces, name, 6) < 0)
					return -1;
				first = 0;
			}
			continue;
		}
		/* a run of unknown pieces is one (SentencePiece merges them,
		 * "so that decoder can copy or generate unknown tokens") */
		if (t->id == m->unk_id && prev_unk) {
			if (pieces && bpe_text_add(pieces, s, t->len) < 0)
				return -1;
			if (spans)      /* the run's span grows */
				spans->v[spans->n - 1] =
					m->from.v[2 * (t->off + t->len - 1) + 1];
			continue;
		}
		prev_unk = t->id == m->unk_id;
		if (bpe_ids_push(ids, t->id) < 0 ||
		    (spans && span(m, t->off, t->len, spans) < 0))
			return -1;
		if (pieces && ((!first && bpe_text_add(pieces, " ", 1) < 0) ||
			       bpe_text_add(pieces, s, t->len) < 0))
			return -1;
		first = 0;
	}
	return 0;
}

int spm_encode(struct spm *m, const char *text, size_t len,
	       struct bpe_ids *ids, struct bpe_text *pieces)
{
	return encode(m, text, len, ids, pieces, NULL);
}

int spm_encode_spans(struct spm *m, const char *text, size_t len,
		     struct bpe_ids *ids, struct bpe_text *pieces,
		     struct bpe_ids *spans)
{
	return encode(m, text, len, ids, pieces, spans);
}
