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
	free(m->to_spm);
	free(m->from_spm);
	memset(m, 0, sizeof *m);
}

/* The table's id of the piece named s, or -1. */
static int32_t map_find(const struct vocab_map *m, const char *s, size_t len)
{
	for (int i = 0; i < m->n; i++)
		if (strlen(m->piece[i]) == len && !memcmp(m->piece[i], s, len))
			return i;
	return -1;
}

/*
 * A vocabulary of the third kind from its bytes (vocab.h): the model,
 * then the pieces; each piece's id in the model (to_spm) and back
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
	m->to_spm = malloc(n * sizeof *m->to_spm);
	m->from_spm = malloc(spm_size(v->spm) * sizeof *m->from_spm);
	if (!m->piece || !m->to_spm || !m->from_spm) {
		err_set("out of memory");
		return -1;
	}
	for (k = 0; k < spm_size(v->spm); k++)
		m->from_spm[k] = -1;
	for (k = 0; k < m->n; k++) {
		const char *nl = memchr(p, '\n', end - p);

		if (!nl || nl == p || memchr(p, 0, nl - p)) {
			err_set("a mapped SentencePiece vocabulary: piece %d "
				"is %s", k, nl ? "empty or holds a NUL" :
				"missing");
			return -1;
		}
		if (!(m->piece[k] = strndup(p, nl - p))) {
			err_set("out of memory");
			return -1;
		}
		m->to_spm[k] = spm_piece_find(v->spm, p, nl - p);
		if (m->to_spm[k] >= 0 && m->from_spm[m->to_spm[k]] < 0)
			m->from_spm[m->to_spm[k]] = k;
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

/* ids [n] of the table as the model's into *out (malloc'ed): an id the
 * model lacks as its <unk>. */
static int32_t *to_spm(const struct vocab *v, const int32_t *ids, size_t n)
{
	int32_t *s = malloc((n ? n : 1) * sizeof *s);

	if (!s) {
		err_set("out of memory");
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		if (ids[i] < 0 || ids[i] >= v->map.n) {
			err_set("id %d is outside the vocabulary of %d",
				(int)ids[i], v->map.n);
			free(s);
			return NULL;
		}
		s[i] = v->map.to_spm[ids[i]] >= 0 ? v->map.to_spm[ids[i]] :
			spm_special(v->spm, SPM_UNK);
	}
	return s;
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

int vocab_encode(struct vocab *v, const char *text, size_t len,
		 struct bpe_ids *ids, struct bpe_text *units)
{
	size_t first = ids->n, i;

	if (v->spm && spm_encode(v->spm, text, len, ids, units) < 0)
		return -1;
	if (v->spm) {	/* the table's ids of the model's pieces */
		for (i = first; v->map.n && i < ids->n; i++)
			ids->v[i] = v->map.from_spm[ids->v[i]] >= 0 ?
				v->map.from_spm[ids->v[i]] :
				v->special[VOCAB_UNK];
		return 0;
	}
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

/* dec (spm_decode or spm_decode_units) of ids: through the table, for a
 * vocabulary of the third kind. */
static int spm_side(const struct vocab *v, const int32_t *ids, size_t n,
		    struct bpe_text *out,
		    int (*dec)(const struct spm *, const int32_t *, size_t,
			       struct bpe_text *))
{
	int32_t *s;
	int rc;

	if (!v->map.n)
		return dec(v->spm, ids, n, out);
	if (!(s = to_spm(v, ids, n)))
		return -1;
	rc = dec(v->spm, s, n, out);
	free(s);
	return rc;
}

int vocab_decode(const struct vocab *v, const int32_t *ids, size_t n,
		 struct bpe_text *out)
{
	return v->bpe ? bpe_decode(v->bpe, ids, n, out) :
			spm_side(v, ids, n, out, spm_decode);
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
	return v->bpe ? bpe_decode_units(v->bpe, ids, n, out) :
			spm_side(v, ids, n, out, spm_decode_units);
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
