/* vocab.c: a vocabulary of any kind (vocab.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "vocab.h"
#include "spm.h"
#include "base/errmsg.h"

#define BPE_MAGIC "attn-bpe"
#define MAP_MAGIC "attn-spm-map 1 "

static void map_free(struct vocab_map *m)
{
	for (int i = 0; m->piece && i < m->n; i++)
		free(m->piece[i]);
	free(m->piece);
	free(m->from_spm);
	strmap_free(&m->ids);
	bpe_text_free(&m->units);
	memset(m, 0, sizeof *m);
}

/* The table's id of the piece named s, or -1. */
static int32_t map_find(const struct vocab_map *m, const char *s, size_t len)
{
	const int64_t *id = strmap_find(&m->ids, s, len);

	return id ? (int32_t)*id : -1;
}

/*
 * A vocabulary of the third kind from its bytes (vocab.h): the model,
 * then the pieces; the table's id of each of the model's pieces
 * (from_spm), and the specials by their pieces' names.
 */
static int map_load(struct vocab *v, const char *data, size_t len)
{
	struct vocab_map *m = &v->map;
	unsigned long long b, n;
	const char *p, *end = data + len, *nl = memchr(data, '\n', len);
	char head[80];
	int used = 0, k;

	/* the header line, copied: data need not end with a NUL */
	if (nl && (size_t)(nl - data) < sizeof head - 1) {
		memcpy(head, data, nl - data + 1);
		head[nl - data + 1] = 0;
	} else {
		head[0] = 0;
	}
	if (sscanf(head + strlen(MAP_MAGIC), "%llu %llu\n%n", &b, &n,
		   &used) != 2 || used <= 0 || n < 4 || n > (1 << 24) ||
	    b > (size_t)(end - nl - 1)) {
		err_set("a mapped SentencePiece vocabulary: a bad header");
		return -1;
	}
	p = nl + 1;
	if (!(v->spm = spm_load(p, b)))
		return -1;
	p += b;
	m->n = (int)n;
	m->piece = calloc(n, sizeof *m->piece);
	m->from_spm = malloc(spm_size(v->spm) * sizeof *m->from_spm);
	if (!m->piece || !m->from_spm) {
		err_set("out of memory");
		return -1;
	}
	for (k = 0; k < spm_size(v->spm); k++)
		m->from_spm[k] = -1;
	for (k = 0; k < m->n; k++) {
		const char *nl = memchr(p, '\n', end - p);
		int64_t *id;
		int32_t sid;
		int added;

		if (!nl || nl == p || memchr(p, 0, nl - p)) {
			err_set("a mapped SentencePiece vocabulary: piece %d "
				"is %s", k, nl ? "empty or holds a NUL" :
				"missing");
			return -1;
		}
		if (!(m->piece[k] = strndup(p, nl - p)) ||
		    !(id = strmap_put(&m->ids, p, nl - p, &added))) {
			err_set("out of memory");
			return -1;
		}
		if (!added) {
			err_set("a mapped SentencePiece vocabulary: piece %d "
				"is piece %d's again", k, (int)*id);
			return -1;
		}
		*id = k;
		sid = spm_piece_find(v->spm, p, nl - p);
		if (sid >= 0 && m->from_spm[sid] < 0)
			m->from_spm[sid] = k;
		p = nl + 1;
	}
	if (p != end) {
		err_set("a mapped SentencePiece vocabulary: %zu bytes after "
			"its %d pieces", (size_t)(end - p), m->n);
		return -1;
	}
	v->special[VOCAB_PAD] = map_find(m, "<pad>", 5);
	v->special[VOCAB_BOS] = map_find(m, "<s>", 3);
	v->special[VOCAB_EOS] = map_find(m, "</s>", 4);
	v->special[VOCAB_UNK] = map_find(m, "<unk>", 5);
	if (v->special[VOCAB_UNK] < 0) {
		err_set("a mapped SentencePiece vocabulary without <unk>");
		return -1;
	}
	return 0;
}

int vocab_map_make(const void *spm, size_t spm_len, const char *const *piece,
		   int n, struct bpe_text *out)
{
	char head[80];

	for (int i = 0; i < n; i++)
		if (!piece[i][0] || strchr(piece[i], '\n')) {
			err_set("piece %d is empty or holds a newline", i);
			return -1;
		}
	snprintf(head, sizeof head, MAP_MAGIC "%zu %d\n", spm_len, n);
	if (bpe_text_add(out, head, strlen(head)) < 0 ||
	    bpe_text_add(out, spm, spm_len) < 0)
		return -1;
	for (int i = 0; i < n; i++)
		if (bpe_text_add(out, piece[i], strlen(piece[i])) < 0 ||
		    bpe_text_add(out, "\n", 1) < 0)
			return -1;
	return 0;
}

struct vocab *vocab_load(const void *data, size_t len)
{
	struct vocab *v = calloc(1, sizeof(*v));
	int k;

	if (!v) {
		err_set("out of memory");
		return NULL;
	}
	if (len >= 8 && !memcmp(data, BPE_MAGIC, 8)) {
		v->kind = VOCAB_BPE;
		if (memchr(data, 0, len)) {
			err_set("not a vocabulary (a NUL byte)");
			free(v);
			return NULL;
		}
		if (!(v->bpe = bpe_load(data, len))) {
			free(v);
			return NULL;
		}
		v->special[VOCAB_PAD] = BPE_PAD;
		v->special[VOCAB_BOS] = BPE_BOS;
		v->special[VOCAB_EOS] = BPE_EOS;
		v->special[VOCAB_UNK] = BPE_UNK;
		return v;
	}
	v->kind = VOCAB_SPM;
	if (len > strlen(MAP_MAGIC) && memchr(data, '\n', len) &&
	    !memcmp(data, MAP_MAGIC, strlen(MAP_MAGIC))) {
		if (map_load(v, data, len) < 0) {
			vocab_free(v);
			return NULL;
		}
		return v;
	}
	if (!(v->spm = spm_load(data, len))) {
		err_prefix("neither an attn-bpe vocabulary nor a SentencePiece "
			   "model");
		free(v);
		return NULL;
	}
	for (k = 0; k < 4; k++)
		v->special[k] = spm_special(v->spm,
			k == VOCAB_PAD ? SPM_PAD : k == VOCAB_BOS ? SPM_BOS :
			k == VOCAB_EOS ? SPM_EOS : SPM_UNK);
	return v;
}

void vocab_free(struct vocab *v)
{
	if (!v)
		return;
	bpe_free(v->bpe);
	spm_free(v->spm);
	map_free(&v->map);
	free(v);
}

int vocab_size(const struct vocab *v)
{
	return v->bpe ? bpe_size(v->bpe) : v->map.n ? v->map.n :
		spm_size(v->spm);
}

/*
 * vocab_encode for the third kind: the model's pieces, each to the
 * table's id of its text.  A known piece's is from_spm's; a piece the
 * model does not know (its unk id) is looked up by the text spm_encode
 * prints for it, as OPUS-MT's pipeline (spm_encode, then vocab.yml)
 * does: a character the target's model lacks may be in the joint table.
 */
static int map_encode(struct vocab *v, const char *text, size_t len,
		      struct bpe_ids *ids, struct bpe_text *units,
		      struct bpe_ids *spans)
{
	struct vocab_map *m = &v->map;
	int32_t unk = spm_special(v->spm, SPM_UNK);
	size_t first = ids->n, i, u0 = units ? units->n : 0;
	struct bpe_text *t = units ? units : &m->units;
	const char *p, *end;
	size_t gaps = 0;
	int in_step;

	if (!units)
		m->units.n = 0;
	if (spm_encode_spans(v->spm, text, len, ids, t, spans) < 0)
		return -1;
	/* the pieces as printed, one space between, in step with the ids
	 * unless a piece holds a space (a model that does not escape
	 * whitespace): then an unknown piece stays <unk> */
	p = t->s + u0;
	end = t->s + t->n;
	for (const char *q = p; q < end; q++)
		gaps += *q == ' ';
	in_step = ids->n == first || gaps == ids->n - first - 1;
	for (i = first; i < ids->n; i++) {
		const char *sp = p < end ? memchr(p, ' ', (size_t)(end - p)) :
			NULL;
		const char *pe = sp ? sp : end;

		if (ids->v[i] == unk && in_step)
			ids->v[i] = map_find(m, p, (size_t)(pe - p));
		else
			ids->v[i] = m->from_spm[ids->v[i]];
		if (ids->v[i] < 0)
			ids->v[i] = v->special[VOCAB_UNK];
		p = pe + 1;
	}
	return 0;
}

int vocab_encode(struct vocab *v, const char *text, size_t len,
		 struct bpe_ids *ids, struct bpe_text *units)
{
	size_t first = ids->n, i;

	if (v->map.n)
		return map_encode(v, text, len, ids, units, NULL);
	if (v->spm)
		return spm_encode(v->spm, text, len, ids, units);
	if (bpe_encode(v->bpe, text, len, ids) < 0)
		return -1;
	for (i = first; units && i < ids->n; i++)
		if ((i > first && bpe_text_add(units, " ", 1) < 0) ||
		    bpe_unit_show(v->bpe, ids->v[i], units) < 0)
			return -1;
	return 0;
}

int vocab_encode_dropout(struct vocab *v, const char *text, size_t len,
			 struct bpe_ids *ids, double p, struct rng *r)
{
	if (v->spm) {
		err_set("BPE-dropout needs an attn-bpe vocabulary, not a "
			"SentencePiece model");
		return -1;
	}
	return bpe_encode_dropout(v->bpe, text, len, ids, p, r);
}

/* The spans of an attn-bpe vocabulary's units ids [n], the encoding of
 * len bytes: each unit is its bytes, a space put first (attn-bpe's
 * prefix) the only byte not of the text. */
static int bpe_spans(const struct vocab *v, size_t len, const int32_t *ids,
		     size_t n, struct bpe_ids *spans)
{
	struct bpe_text u = { 0 };
	size_t first = spans->n, c = 0, shift, i;
	int rc = 0;

	for (i = 0; i < n && rc == 0; i++) {
		u.n = 0;
		rc = vocab_decode_units(v, &ids[i], 1, &u) < 0 ||
		     bpe_ids_push(spans, (int32_t)c) < 0 ||
		     bpe_ids_push(spans, (int32_t)(c + u.n)) < 0 ? -1 : 0;
		c += u.n;
	}
	bpe_text_free(&u);
	shift = c > len ? c - len : 0;
	for (i = first; rc == 0 && i < spans->n; i++) {
		size_t x = (size_t)spans->v[i];

		x = x > shift ? x - shift : 0;
		spans->v[i] = (int32_t)(x < len ? x : len);
	}
	return rc;
}

int vocab_encode_spans(struct vocab *v, const char *text, size_t len,
		       struct bpe_ids *ids, struct bpe_ids *spans, double p,
		       struct rng *r)
{
	size_t first = ids->n;

	if (len > INT32_MAX) {
		err_set("line of %zu bytes: too long", len);
		return -1;
	}
	if (v->spm && p <= 0)
		return v->map.n ? map_encode(v, text, len, ids, NULL, spans) :
		       spm_encode_spans(v->spm, text, len, ids, NULL, spans);
	if ((p > 0 ? vocab_encode_dropout(v, text, len, ids, p, r) :
	     bpe_encode(v->bpe, text, len, ids)) < 0)
		return -1;
	return bpe_spans(v, len, ids->v + first, ids->n - first, spans);
}

/*
 * Appends the text of the table's piece id as OPUS-MT's postprocessing
 * writes it: its spaces dropped, each ▁ a space.  -1 on an id outside
 * the table.
 */
static int map_piece_text(const struct vocab_map *m, int32_t id,
			  struct bpe_text *out)
{
	static const char bar[] = "\xe2\x96\x81";	/* ▁ */
	const char *p;

	if (id < 0 || id >= m->n) {
		err_set("id %d is outside the vocabulary of %d", (int)id,
			m->n);
		return -1;
	}
	for (p = m->piece[id]; *p;) {
		if (!strncmp(p, bar, 3)) {
			if (bpe_text_add(out, " ", 1) < 0)
				return -1;
			p += 3;
		} else if (*p != ' ' && bpe_text_add(out, p, 1) < 0) {
			return -1;
		} else {
			p++;
		}
	}
	return 0;
}

/*
 * The third kind's text of ids: Marian prints the pieces (</s> none)
 * with a space between them, and OPUS-MT's postprocessing (sed 's/ //g;
 * s/▁/ /g', then the line's spaces trimmed at both ends) drops those
 * spaces and makes each ▁ a space.
 */
static int map_decode(const struct vocab *v, const int32_t *ids, size_t n,
		      struct bpe_text *out)
{
	size_t start = out->n, b = start, e;

	for (size_t i = 0; i < n; i++)
		if (ids[i] != v->special[VOCAB_EOS] &&
		    map_piece_text(&v->map, ids[i], out) < 0)
			return -1;
	while (b < out->n && out->s[b] == ' ')
		b++;
	for (e = out->n; e > b && out->s[e - 1] == ' '; e--)
		;
	if (e > b)	/* out->s is NULL when nothing was written */
		memmove(out->s + start, out->s + b, e - b);
	out->n = start + (e - b);
	return 0;
}

int vocab_decode(const struct vocab *v, const int32_t *ids, size_t n,
		 struct bpe_text *out)
{
	if (v->map.n)
		return map_decode(v, ids, n, out);
	return v->bpe ? bpe_decode(v->bpe, ids, n, out) :
			spm_decode(v->spm, ids, n, out);
}

int vocab_decode_line(const struct vocab *v, const int32_t *ids, size_t n,
		      struct bpe_text *out)
{
	size_t k;

	if (v->bpe)
		return bpe_decode_line(v->bpe, ids, n, out);
	for (k = 0; k < n && ids[k] != v->special[VOCAB_EOS]; k++)
		;
	out->n = 0;
	if (vocab_decode(v, ids, k, out) < 0)
		return -1;
	return bpe_text_line(out, 0);
}

int vocab_decode_units(const struct vocab *v, const int32_t *ids, size_t n,
		       struct bpe_text *out)
{
	if (v->map.n) {		/* each piece's text, nothing trimmed */
		for (size_t i = 0; i < n; i++)
			if (ids[i] != v->special[VOCAB_EOS] &&
			    map_piece_text(&v->map, ids[i], out) < 0)
				return -1;
		return 0;
	}
	return v->bpe ? bpe_decode_units(v->bpe, ids, n, out) :
			spm_decode_units(v->spm, ids, n, out);
}

int vocab_unit_show(const struct vocab *v, int32_t id, struct bpe_text *out)
{
	if (v->map.n) {
		if (id < 0 || id >= v->map.n) {
			err_set("id %d is outside the vocabulary of %d",
				(int)id, v->map.n);
			return -1;
		}
		return bpe_text_add(out, v->map.piece[id],
				    strlen(v->map.piece[id]));
	}
	return v->bpe ? bpe_unit_show(v->bpe, id, out)
		      : spm_piece_show(v->spm, id, out);
}

int32_t vocab_unit_find(const struct vocab *v, const char *s, size_t len)
{
	if (v->map.n)
		return map_find(&v->map, s, len);
	return v->bpe ? bpe_unit_find(v->bpe, s, len)
		      : spm_piece_find(v->spm, s, len);
}
