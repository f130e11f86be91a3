/*
 * spm_load.c: a SentencePiece model from its protobuf bytes (ModelProto
 * of sentencepiece_model.proto), checked as SentencePiece checks it when
 * it loads one, and the pieces' lookups.
 *
 * The fields read (field number, wire type), every other skipped:
 *   ModelProto: 1 pieces (message, repeated), 2 trainer_spec,
 *     3 normalizer_spec, 5 denormalizer_spec (messages)
 *   SentencePiece: 1 piece (string), 2 score (float), 3 type (enum)
 *   TrainerSpec: 3 model_type, 24 treat_whitespace_as_suffix,
 *     35 byte_fallback (varints), 44 unk_surface, 45 unk_piece,
 *     46 bos_piece, 47 eos_piece, 48 pad_piece (strings)
 *   NormalizerSpec: 2 precompiled_charsmap (bytes), 3 add_dummy_prefix,
 *     4 remove_extra_whitespaces, 5 escape_whitespaces (varints)
 * A message that comes twice is merged, a scalar that comes twice takes
 * its last value (protobuf's rules); an enum value unknown is ignored.
 */
#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "spm_impl.h"
#include "base/errmsg.h"

struct piece_in {
	const uint8_t *s;
	size_t len;
	float score;
	int type;
};

struct parse {
	struct pb top;
	struct piece_in *p;
	size_t n, cap;
	const uint8_t *name[4];         /* unk bos eos pad pieces */
	size_t namelen[4];
	const uint8_t *unk_surface;
	size_t unk_surface_len;
	int type, byte_fallback, suffix;
	struct spm_norm *norm, *denorm;
};

static struct pb sub(const struct pb *r, const uint8_t *s, size_t n)
{
	struct pb q = { s, s + n, r->base, NULL };

	return q;
}

static int read_bool(struct pb *r, uint32_t f, int wire, const char *what,
		     int *out)
{
	uint64_t v;

	if (pb_want(r, f, wire, PB_VARINT, what) < 0 || pb_varint(r, &v) < 0)
		return -1;
	*out = v != 0;
	return 0;
}

static int read_string(struct pb *r, uint32_t f, int wire, const char *what,
		       const uint8_t **s, size_t *n)
{
	return pb_want(r, f, wire, PB_LEN, what) < 0 ? -1 : pb_bytes(r, s, n);
}

static int parse_piece(struct parse *ps, struct pb r)
{
	struct piece_in in = { (const uint8_t *)"", 0, 0, SPM_NORMAL }, *p;
	uint32_t f, bits;
	uint64_t v;
	int wire, rc;

	while ((rc = pb_tag(&r, &f, &wire)) > 0) {
		if (f == 1) {
			rc = read_string(&r, f, wire, "a piece", &in.s,
					 &in.len);
		} else if (f == 2) {
			if ((rc = pb_want(&r, f, wire, PB_I32, "a piece")) ==
			    0 && (rc = pb_fixed32(&r, &bits)) == 0)
				memcpy(&in.score, &bits, 4);
		} else if (f == 3) {
			if ((rc = pb_want(&r, f, wire, PB_VARINT, "a piece")) ==
			    0 && (rc = pb_varint(&r, &v)) == 0 && v >= 1 &&
			    v <= 6)
				in.type = (int)v;
		} else {
			rc = pb_skip(&r, wire);
		}
		if (rc < 0)
			return -1;
	}
	if (rc < 0)
		return -1;
	if (ps->n == ps->cap) {
		size_t cap = ps->cap ? 2 * ps->cap : 1024;

		if (!(p = realloc(ps->p, cap * sizeof(*p)))) {
			err_set("out of memory");
			return -1;
		}
		ps->p = p;
		ps->cap = cap;
	}
	ps->p[ps->n++] = in;
	return 0;
}

static int parse_trainer(struct parse *ps, struct pb r)
{
	static const char what[] = "the trainer spec";
	uint32_t f;
	uint64_t v;
	int wire, rc;

	while ((rc = pb_tag(&r, &f, &wire)) > 0) {
		if (f == 3) {
			if ((rc = pb_want(&r, f, wire, PB_VARINT, what)) == 0 &&
			    (rc = pb_varint(&r, &v)) == 0 && v >= 1 && v <= 4)
				ps->type = (int)v;
		} else if (f == 24) {
			rc = read_bool(&r, f, wire, what, &ps->suffix);
		} else if (f == 35) {
			rc = read_bool(&r, f, wire, what, &ps->byte_fallback);
		} else if (f == 44) {
			rc = read_string(&r, f, wire, what, &ps->unk_surface,
					 &ps->unk_surface_len);
		} else if (f >= 45 && f <= 48) {
			rc = read_string(&r, f, wire, what, &ps->name[f - 45],
					 &ps->namelen[f - 45]);
		} else {
			rc = pb_skip(&r, wire);
		}
		if (rc < 0)
			return -1;
	}
	return rc;
}

static int parse_normalizer(struct pb r, struct spm_norm *nm,
			    const char *what)
{
	const uint8_t *s;
	uint32_t f;
	size_t n;
	int wire, rc;

	nm->present = 1;
	while ((rc = pb_tag(&r, &f, &wire)) > 0) {
		if (f == 2) {
			if ((rc = read_string(&r, f, wire, what, &s, &n)) == 0 &&
			    (rc = spm_charsmap_init(&nm->map, s, n)) < 0)
				err_prefix("%s", what);
		} else if (f == 3) {
			rc = read_bool(&r, f, wire, what, &nm->add_dummy_prefix);
		} else if (f == 4) {
			rc = read_bool(&r, f, wire, what,
				       &nm->remove_extra_whitespaces);
		} else if (f == 5) {
			rc = read_bool(&r, f, wire, what,
				       &nm->escape_whitespaces);
		} else {
			rc = pb_skip(&r, wire);
		}
		if (rc < 0)
			return -1;
	}
	return rc;
}

static int parse_model(struct parse *ps)
{
	struct pb *r = &ps->top;
	const uint8_t *s;
	uint32_t f;
	size_t n;
	int wire, rc;

	while ((rc = pb_tag(r, &f, &wire)) > 0) {
		if (f == 1 || f == 2 || f == 3 || f == 5) {
			if (pb_want(r, f, wire, PB_LEN, "the model") < 0 ||
			    pb_bytes(r, &s, &n) < 0)
				return -1;
			if (f == 1)
				rc = parse_piece(ps, sub(r, s, n));
			else if (f == 2)
				rc = parse_trainer(ps, sub(r, s, n));
			else if (f == 3)
				rc = parse_normalizer(sub(r, s, n), ps->norm,
						      "the normalizer spec");
			else
				rc = parse_normalizer(sub(r, s, n), ps->denorm,
						      "the denormalizer spec");
		} else {
			rc = pb_skip(r, wire);
		}
		if (rc < 0)
			return -1;
	}
	return rc;
}

/* SentencePiece's byte piece names, <0x00> .. <0xFF>: the byte, or -1. */
static int piece_byte(const uint8_t *s, size_t n)
{
	static const char hex[] = "0123456789ABCDEF";
	const char *a, *b;

	if (n != 6 || memcmp(s, "<0x", 3) || s[5] != '>' || !s[3] || !s[4] ||
	    !(a = strchr(hex, s[3])) || !(b = strchr(hex, s[4])))
		return -1;
	return (int)((a - hex) << 4 | (b - hex));
}

static void show(char *buf, size_t size, const uint8_t *s, size_t n)
{
	snprintf(buf, size, "%.*s%s", n > 40 ? 40 : (int)n, (const char *)s,
		 n > 40 ? "..." : "");
}

/*
 * The score of each unigram trie node's piece, as the Viterbi adds it:
 * its own, or for a user-defined piece its length times the highest
 * normal score, less 0.1 (float times, then double, as SentencePiece
 * computes it).
 */
static int node_scores(struct spm *m)
{
	struct spm_trie *t = &m->trie;
	int32_t node, id;
	size_t i;

	if (!(m->node_score = calloc(t->nnodes + 1, sizeof(double)))) {
		err_set("out of memory");
		return -1;
	}
	for (node = 0; node < t->nnodes; node++) {
		if ((id = t->value[node]) < 0)
			continue;
		m->node_score[node] = m->piece[id].type == SPM_USER_DEFINED ?
			(double)((float)m->piece[id].len * m->max_score) - 0.1 :
			(double)m->piece[id].score;
	}
	/* the edges: a normal piece's score, or SPM_USER_EDGE */
	spm_trie_finish(t);
	for (i = 0; t->mask && i <= t->mask; i++) {
		if (!t->edge[i].key || (id = t->edge[i].value) < 0)
			continue;
		t->edge[i].score = m->piece[id].score;
		if (m->piece[id].type == SPM_USER_DEFINED)
			t->edge[i].value |= SPM_USER_EDGE;
	}
	spm_trie_root(t);
	return 0;
}

/* Adds the pieces as SentencePiece's ModelInterface does, with its
 * checks. */
static int add_pieces(struct spm *m, const struct parse *ps)
{
	char name[64];
	size_t i;
	int added, b;
	int64_t *v;

	if (!ps->n) {
		err_set("no pieces: not a SentencePiece model");
		return -1;
	}
	if (ps->n > (1u << 30)) {
		err_set("%zu pieces: too many", ps->n);
		return -1;
	}
	if (!(m->piece = calloc(ps->n, sizeof(*m->piece))))
		goto oom;
	m->n = (int)ps->n;
	m->unk_id = -1;
	m->min_score = FLT_MAX;
	m->max_score = FLT_MIN;
	memset(m->byte_id, 0xff, sizeof(m->byte_id));
	for (i = 0; i < ps->n; i++) {
		const struct piece_in *p = &ps->p[i];
		int normal = p->type == SPM_NORMAL ||
			     p->type == SPM_USER_DEFINED ||
			     p->type == SPM_UNUSED;

		show(name, sizeof(name), p->s, p->len);
		if (!p->len) {
			err_set("piece %zu is empty", i);
			return -1;
		}
		if (p->len > 0xffffffu) {
			err_set("piece %zu is too long", i);
			return -1;
		}
		m->piece[i].off = m->bytes.n;
		m->piece[i].len = (uint32_t)p->len;
		m->piece[i].score = p->score;
		m->piece[i].type = p->type;
		if (bpe_text_add(&m->bytes, p->s, p->len) < 0)
			return -1;
		if (!(v = strmap_put(normal ? &m->pieces : &m->reserved, p->s,
				      p->len, &added)))
			goto oom;
		if (!added) {
			err_set("piece %zu '%s' is already defined", i, name);
			return -1;
		}
		*v = (int64_t)i;
		if (p->type == SPM_NORMAL) {
			if (p->score < m->min_score)
				m->min_score = p->score;
			if (m->max_score < p->score)
				m->max_score = p->score;
		}
		if (p->type == SPM_USER_DEFINED) {
			m->has_user = 1;
			if (spm_trie_add(&m->user, (const char *)p->s, p->len,
					 (int32_t)i) < 0)
				return -1;
		}
		if (p->type == SPM_UNKNOWN) {
			if (m->unk_id >= 0) {
				err_set("piece %zu '%s': a second unknown piece "
					"(the first is %d)", i, name, m->unk_id);
				return -1;
			}
			m->unk_id = (int32_t)i;
		}
		if (p->type == SPM_BYTE) {
			if (!ps->byte_fallback) {
				err_set("piece %zu '%s' is a byte piece, but "
					"byte_fallback is off", i, name);
				return -1;
			}
			if ((b = piece_byte(p->s, p->len)) < 0) {
				err_set("piece %zu '%s' is a byte piece not "
					"named <0x00>..<0xFF>", i, name);
				return -1;
			}
			m->byte_id[b] = (int32_t)i;
		}
		if (normal && p->type != SPM_UNUSED && m->type == SPM_UNIGRAM &&
		    spm_trie_add(&m->trie, (const char *)p->s, p->len,
				 (int32_t)i) < 0)
			return -1;
	}
	if (m->unk_id < 0) {
		err_set("no unknown piece (<unk>) among the %d pieces", m->n);
		return -1;
	}
	if (m->type == SPM_UNIGRAM && node_scores(m) < 0)
		return -1;
	if (m->type == SPM_BPE && spm_bpe_init(m) < 0)
		return -1;
	for (b = 0; ps->byte_fallback && b < 256; b++)
		if (m->byte_id[b] < 0) {
			err_set("byte_fallback is on, but there is no piece "
				"<0x%02X>", b);
			return -1;
		}
	return 0;
oom:
	err_set("out of memory");
	return -1;
}

/* The special ids: the pieces the trainer spec names, of their type. */
static void find_specials(struct spm *m, const struct parse *ps)
{
	static const char *const dflt[4] = { "<unk>", "<s>", "</s>", "<pad>" };
	int k;
	int32_t id;

	for (k = 0; k < 4; k++) {
		if (ps->name[k])
			id = spm_piece_to_id(m, (const char *)ps->name[k],
					     ps->namelen[k]);
		else
			id = spm_piece_to_id(m, dflt[k], strlen(dflt[k]));
		if (k == SPM_UNK)
			m->special[k] = m->piece[id].type == SPM_UNKNOWN ? id
									: -1;
		else
			m->special[k] = m->piece[id].type == SPM_CONTROL ? id
									: -1;
	}
}

struct spm *spm_load(const void *data, size_t len)
{
	struct spm *m = calloc(1, sizeof(*m));
	struct parse ps;
	uint8_t *copy;

	if (!m || !(copy = malloc(len ? len : 1))) {
		free(m);
		err_set("out of memory");
		return NULL;
	}
	if (len)
		memcpy(copy, data, len);
	m->data = copy;
	memset(&ps, 0, sizeof(ps));
	ps.top.p = ps.top.base = copy;
	ps.top.end = copy + len;
	ps.type = SPM_UNIGRAM;
	ps.norm = &m->norm;
	ps.denorm = &m->denorm;
	m->norm.add_dummy_prefix = m->norm.remove_extra_whitespaces =
		m->norm.escape_whitespaces = 1;
	m->denorm.add_dummy_prefix = m->denorm.remove_extra_whitespaces =
		m->denorm.escape_whitespaces = 1;
	if (parse_model(&ps) < 0)
		goto fail;
	m->type = ps.type;
	m->byte_fallback = ps.byte_fallback;
	m->norm.suffix = ps.suffix;
	if (add_pieces(m, &ps) < 0)
		goto fail;
	find_specials(m, &ps);
	if (ps.unk_surface ?
	    bpe_text_add(&m->unk_surface, ps.unk_surface, ps.unk_surface_len) :
	    bpe_text_add(&m->unk_surface, " \xe2\x81\x87 ", 5) < 0)
		goto fail;
	free(ps.p);
	return m;
fail:
	free(ps.p);
	spm_free(m);
	return NULL;
}

void spm_free(struct spm *m)
{
	if (!m)
		return;
	free(m->data);
	free(m->piece);
	bpe_text_free(&m->bytes);
	bpe_text_free(&m->unk_surface);
	strmap_free(&m->pieces);
	strmap_free(&m->reserved);
	spm_trie_free(&m->trie);
	free(m->node_score);
	spm_trie_free(&m->user);
	bpe_text_free(&m->line);
	bpe_ids_free(&m->from);
	free(m->tok);
	free(m->work);
	free(m->heap);
	free(m->pairs);
	strmap_free(&m->revmerge);
	free(m);
}

int32_t spm_piece_to_id(const struct spm *m, const char *s, size_t len)
{
	const int64_t *v = strmap_find(&m->reserved, s, len);

	if (v || (v = strmap_find(&m->pieces, s, len)))
		return (int32_t)*v;
	return m->unk_id;
}

int spm_size(const struct spm *m)
{
	return m->n;
}

int32_t spm_special(const struct spm *m, enum spm_special which)
{
	return m->special[which];
}

int spm_piece_show(const struct spm *m, int32_t id, struct bpe_text *out)
{
	if (id < 0 || id >= m->n) {
		err_set("id %d is outside the model's %d pieces", id, m->n);
		return -1;
	}
	return bpe_text_add(out, spm_piece_bytes(m, id), m->piece[id].len);
}

int32_t spm_piece_find(const struct spm *m, const char *s, size_t len)
{
	const int64_t *v = strmap_find(&m->reserved, s, len);

	if (v || (v = strmap_find(&m->pieces, s, len)))
		return (int32_t)*v;
	return -1;
}
