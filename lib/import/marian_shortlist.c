/*
 * marian_shortlist.c: Marian's lexical shortlists, text and binary, as
 * attn's shortlist table; see marian_shortlist.h.  The line numbers
 * below are marian-dev 2781d735's src/data/shortlist.cpp.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "base/config.h"
#include "base/errmsg.h"
#include "marian_shortlist.h"

/* shortlist.h:21, BINARY_SHORTLIST_MAGIC, as the file's first 8 bytes */
#define LEX_MAGIC 0xF11A48D5013417F5ull
#define LEX_HEADER 48		/* six uint64: magic, checksum, firstNum,
				   bestNum, wordToOffsetSize,
				   shortListsSize (shortlist.h:186-193) */
/* The largest table made (src_vocab x k ids): a list longer than any
 * Marian writes (best 50 to 100) must not cost gigabytes. */
#define TABLE_MAX ((size_t)1 << 28)
#define TOKEN_MAX 1024		/* a longer word is in no vocabulary */
#define ENTRIES_MAX ((size_t)1 << 28)

static uint64_t rd64(const unsigned char *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

int marian_lex_is_binary(const void *data, size_t len)
{
	return len >= 8 && rd64(data) == LEX_MAGIC;
}

int marian_lex_opts_parse(struct marian_lex_opts *o, const char *s)
{
	long v[2] = { 100, 100 };	/* shortlist.cpp:69-71 */
	const char *s0 = s;
	char *end;
	int i;

	memset(o, 0, sizeof *o);
	for (i = 0; s && i < 2; i++) {
		v[i] = strtol(s, &end, 10);
		if (end == s || v[i] < 0 || v[i] > (1 << 30) ||
		    (*end && *end != ',')) {
			err_set("'%s' is not FIRST[,BEST[,THRESHOLD]] "
				"(integers from 0, a probability)", s);
			return -1;
		}
		s = *end ? end + 1 : NULL;
	}
	if (s) {
		o->threshold = strtof(s, &end);
		if (end == s || *end || !isfinite(o->threshold)) {
			err_set("'%s' is not a threshold", s);
			return -1;
		}
	}
	o->given = s0 != NULL;
	o->first = (int)v[0];
	o->best = (int)v[1];
	return 0;
}

/*
 * util::hashMem<uint64_t, uint64_t> (common/hash.h: boost's
 * hash_combine over std::hash, the identity for integers) of the n
 * words at p: what the header's checksum holds, from firstNum to the
 * last whole word of the file (shortlist.cpp:179, 382).
 */
static uint64_t hash_words(const unsigned char *p, size_t n)
{
	uint64_t seed = 0;

	for (size_t i = 0; i < n; i++)
		seed ^= rd64(p + 8 * i) + 0x9e3779b9 + (seed << 6) +
			(seed >> 2);
	return seed;
}

int marian_lex_read_bin(struct marian_lex *l, const void *data, size_t len,
			int src_vocab, int tgt_vocab)
{
	const unsigned char *p = data, *q;
	uint64_t noff, nids, i;

	memset(l, 0, sizeof *l);
	if (len < LEX_HEADER) {
		err_set("%zu bytes: too short for a binary shortlist's "
			"header of %d", len, LEX_HEADER);
		return -1;
	}
	if (rd64(p) != LEX_MAGIC) {
		err_set("not a binary shortlist (no magic F11A48D5013417F5)");
		return -1;
	}
	noff = rd64(p + 32);
	nids = rd64(p + 40);
	/* the lengths against the file's, without overflow (shortlist.cpp:
	 * 175-176: the file is exactly header, offsets, ids) */
	if (noff > (len - LEX_HEADER) / 8 ||
	    nids > (len - LEX_HEADER - 8 * noff) / 4 ||
	    LEX_HEADER + 8 * noff + 4 * nids != len) {
		err_set("its header's %llu offsets and %llu ids are not its "
			"%zu bytes (truncated or corrupt)",
			(unsigned long long)noff, (unsigned long long)nids,
			len);
		return -1;
	}
	if (hash_words(p + 16, (len - 16) / 8) != rd64(p + 8)) {
		err_set("checksum mismatch: the binary shortlist is corrupt");
		return -1;
	}
	if (noff != (uint64_t)src_vocab + 1) {
		err_set("a shortlist for a source vocabulary of %lld units, "
			"not the model's %d", (long long)noff - 1, src_vocab);
		return -1;
	}
	l->src_vocab = src_vocab;
	l->tgt_vocab = tgt_vocab;
	l->first = rd64(p + 16);
	l->best = rd64(p + 24);
	l->off = malloc(sizeof *l->off * noff);
	l->ids = malloc(sizeof *l->ids * (nids ? nids : 1));
	if (!l->off || !l->ids) {
		marian_lex_free(l);
		err_set("out of memory for a shortlist of %llu ids",
			(unsigned long long)nids);
		return -1;
	}
	q = p + LEX_HEADER;
	for (i = 0; i < noff; i++) {
		l->off[i] = rd64(q + 8 * i);
		/* Marian checks each offset against the ids (contentCheck),
		 * not their order; a list ending before it begins is no
		 * list marian-conv writes */
		if (l->off[i] > nids || (i && l->off[i] < l->off[i - 1]) ||
		    (i == noff - 1 && l->off[i] != nids)) {
			err_set("offset %llu of source unit %llu is out of "
				"order or past the %llu ids",
				(unsigned long long)l->off[i],
				(unsigned long long)i, (unsigned long long)nids);
			marian_lex_free(l);
			return -1;
		}
	}
	q += 8 * noff;
	for (i = 0; i < nids; i++) {
		uint32_t id = (uint32_t)q[4 * i] | (uint32_t)q[4 * i + 1] << 8 |
			      (uint32_t)q[4 * i + 2] << 16 |
			      (uint32_t)q[4 * i + 3] << 24;

		if (id >= (uint32_t)tgt_vocab) {
			err_set("id %u at %llu is past the target vocabulary "
				"of %d", id, (unsigned long long)i, tgt_vocab);
			marian_lex_free(l);
			return -1;
		}
		l->ids[i] = (int32_t)id;
	}
	return 0;
}

/* ---- the text table ------------------------------------------------ */

/* The bytes of the table, plain or inflated a chunk at a time. */
struct in {
	const unsigned char *p, *end;
	int gz, done;
	z_stream z;
	long line;		/* of the next byte, from 1 */
	unsigned char buf[1 << 16];
};

/* More bytes into in->p: 1, 0 at the end, -1 (err_msg()). */
static int fill(struct in *in)
{
	while (in->gz && !in->done) {
		int rc;

		in->z.next_out = in->buf;
		in->z.avail_out = sizeof in->buf;
		rc = inflate(&in->z, Z_NO_FLUSH);
		if (rc == Z_STREAM_END) {
			/* another member (gzip's concatenation) or the end */
			if (in->z.avail_in)
				rc = inflateReset(&in->z);
			else
				in->done = 1;
		}
		if (rc != Z_OK && rc != Z_STREAM_END) {
			err_set("line %ld: %s gzip data", in->line,
				rc == Z_BUF_ERROR ? "truncated" : "corrupt");
			return -1;
		}
		if (in->z.next_out != in->buf) {
			in->p = in->buf;
			in->end = in->z.next_out;
			return 1;
		}
	}
	return 0;
}

/*
 * The next whitespace-separated word (as C++'s >> std::string reads
 * them) into tok, NUL-ended, at most TOKEN_MAX bytes; *n its whole
 * length.  1, 0 at the end, -1 (err_msg()).
 */
static int word(struct in *in, char *tok, size_t *n, long *line)
{
	int c, rc;

	*n = 0;
	for (;;) {
		if (in->p == in->end && (rc = fill(in)) <= 0) {
			if (rc < 0)
				return -1;
			break;
		}
		c = *in->p++;
		if (c == ' ' || (c >= '\t' && c <= '\r')) {
			in->line += c == '\n';
			if (*n)
				break;
			continue;
		}
		if (!*n)
			*line = in->line;
		if (*n < TOKEN_MAX)
			tok[*n] = (char)c;
		++*n;
	}
	tok[*n < TOKEN_MAX ? *n : TOKEN_MAX] = 0;
	return *n > 0;
}

/* A vocabulary's piece -> id, and its <unk> for the rest (Marian's
 * vocabularies answer so: sentencepiece_vocab.cpp:195, default_vocab.cpp:
 * 52).  A mapped one (vocab.yml's ids) is sorted here for bsearch. */
struct lookup {
	const struct vocab *v;
	int n;
	struct piece {
		const char *s;
		size_t n;
		int32_t id;
	} *p;			/* mapped: the pieces in byte order */
};

static int piece_cmp(const char *a, size_t na, const char *b, size_t nb)
{
	int c = memcmp(a, b, na < nb ? na : nb);

	return c ? c : (na > nb) - (na < nb);
}

static int by_piece(const void *a, const void *b)
{
	const struct piece *x = a, *y = b;

	return piece_cmp(x->s, x->n, y->s, y->n);
}

static int lookup_init(struct lookup *k, const struct vocab *v)
{
	memset(k, 0, sizeof *k);
	k->v = v;
	if (!v->map.n)
		return 0;
	if (!(k->p = malloc(sizeof *k->p * v->map.n))) {
		err_set("out of memory for a vocabulary of %d", v->map.n);
		return -1;
	}
	k->n = v->map.n;
	for (int i = 0; i < k->n; i++) {
		k->p[i].s = v->map.piece[i];
		k->p[i].n = strlen(v->map.piece[i]);
		k->p[i].id = i;
	}
	qsort(k->p, k->n, sizeof *k->p, by_piece);
	return 0;
}

static int32_t lookup_find(const struct lookup *k, const char *s, size_t n)
{
	int32_t id;

	if (n > TOKEN_MAX)
		id = -1;
	else if (!k->n)
		id = vocab_unit_find(k->v, s, n);
	else {
		int lo = 0, hi = k->n;

		id = -1;
		while (lo < hi) {
			int mid = lo + (hi - lo) / 2;
			int c = piece_cmp(s, n, k->p[mid].s, k->p[mid].n);

			if (!c) {
				id = k->p[mid].id;
				break;
			}
			if (c < 0)
				hi = mid;
			else
				lo = mid + 1;
		}
	}
	return id >= 0 ? id : vocab_special(k->v, VOCAB_UNK);
}

static void lookup_free(struct lookup *k)
{
	free(k->p);
}

struct ent {
	int32_t s, t;
	float p;
	uint32_t seq;		/* the order read: the last of a pair wins */
};

static int by_pair(const void *a, const void *b)
{
	const struct ent *x = a, *y = b;

	if (x->s != y->s)
		return x->s < y->s ? -1 : 1;
	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* prune's order (shortlist.cpp:39-40): std::greater of (prob, id) */
static int by_prob(const void *a, const void *b)
{
	const struct ent *x = a, *y = b;

	if (x->p != y->p)
		return x->p > y->p ? -1 : 1;
	return x->t > y->t ? -1 : x->t < y->t;
}

static int by_id(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;

	return (x > y) - (x < y);
}

/* The triples of in into *e [*n] (source, target, probability). */
static int read_triples(struct in *in, const struct lookup *ks,
			const struct lookup *kt, struct ent **e, size_t *n)
{
	char tok[3][TOKEN_MAX + 1], *end;
	size_t len[3], cap = 0;
	long line[3];
	int i, rc;

	*n = 0;
	for (;;) {
		for (i = 0; i < 3; i++) {
			if ((rc = word(in, tok[i], &len[i], &line[i])) < 0)
				return -1;
			if (!rc)
				break;
		}
		if (i == 0)
			return 0;
		if (i < 3) {
			err_set("line %ld: truncated: %d of the 3 fields "
				"TARGET SOURCE PROB", line[0], i);
			return -1;
		}
		float p = strtof(tok[2], &end);

		if (len[2] > TOKEN_MAX || end == tok[2] || *end ||
		    !isfinite(p)) {
			err_set("line %ld: '%.40s' is not a finite "
				"probability", line[2], tok[2]);
			return -1;
		}
		/* shortlist.cpp:21: "NULL" on either side is no word */
		if ((len[0] == 4 && !memcmp(tok[0], "NULL", 4)) ||
		    (len[1] == 4 && !memcmp(tok[1], "NULL", 4)))
			continue;
		if (*n == cap) {
			struct ent *g;

			if (cap >= ENTRIES_MAX) {
				err_set("line %ld: more than %zu entries",
					line[0], ENTRIES_MAX);
				return -1;
			}
			cap = cap ? 2 * cap : 4096;
			if (!(g = realloc(*e, sizeof *g * cap))) {
				err_set("out of memory for %zu entries", cap);
				return -1;
			}
			*e = g;
		}
		(*e)[*n].t = lookup_find(kt, tok[0], len[0]);
		(*e)[*n].s = lookup_find(ks, tok[1], len[1]);
		if ((*e)[*n].t < 0 || (*e)[*n].s < 0) {
			err_set("line %ld: '%.40s' is not in the %s "
				"vocabulary, which has no <unk>", line[0],
				(*e)[*n].t < 0 ? tok[0] : tok[1],
				(*e)[*n].t < 0 ? "target" : "source");
			return -1;
		}
		(*e)[*n].p = p;
		(*e)[*n].seq = (uint32_t)*n;
		++*n;
	}
}

/* Each source unit's targets from the entries sorted by pair: the last
 * of each pair, the best with p > threshold (prune), ascending. */
static int prune(struct marian_lex *l, struct ent *e, size_t n,
		 const struct marian_lex_opts *o)
{
	size_t i = 0, j, w, k = 0;
	int s;

	l->off = calloc((size_t)l->src_vocab + 1, sizeof *l->off);
	l->ids = malloc(sizeof *l->ids * (n ? n : 1));
	if (!l->off || !l->ids) {
		err_set("out of memory for a shortlist of %zu entries", n);
		return -1;
	}
	for (s = 0; s < l->src_vocab; s++) {
		l->off[s] = k;
		for (w = j = i; j < n && e[j].s == s; j++)
			if (j + 1 == n || e[j + 1].s != s ||
			    e[j + 1].t != e[j].t)
				e[w++] = e[j];	/* the pair's last */
		if (w > i)
			qsort(e + i, w - i, sizeof *e, by_prob);
		for (size_t m = i; m < w && m - i < (size_t)o->best &&
		     e[m].p > o->threshold; m++)
			l->ids[k++] = e[m].t;
		qsort(l->ids + l->off[s], k - l->off[s], sizeof *l->ids,
		      by_id);
		i = j;
	}
	l->off[l->src_vocab] = k;
	return 0;
}

int marian_lex_read_text(struct marian_lex *l, const void *data, size_t len,
			 const struct vocab *vs, const struct vocab *vt,
			 const struct marian_lex_opts *o)
{
	struct in *in = calloc(1, sizeof *in);
	struct lookup ks, kt;
	struct ent *e = NULL;
	size_t n = 0;
	int rc = -1;

	memset(l, 0, sizeof *l);
	lookup_init(&ks, vs);	/* (freed whatever came of them) */
	lookup_init(&kt, vt);
	if (!in) {
		err_set("out of memory");
		goto out;
	}
	if ((vs->map.n && !ks.p) || (vt->map.n && !kt.p))
		goto out;
	in->line = 1;
	in->p = data;
	in->end = in->p + len;
	if (len >= 2 && in->p[0] == 0x1f && in->p[1] == 0x8b) {
		in->gz = 1;
		in->z.next_in = (unsigned char *)data;
		in->z.avail_in = len > UINT32_MAX ? UINT32_MAX : (uInt)len;
		in->p = in->end = NULL;
		if (len > UINT32_MAX || inflateInit2(&in->z, 15 + 16) != Z_OK) {
			in->gz = 0;
			err_set("cannot inflate %zu bytes", len);
			goto out;
		}
	}
	l->src_vocab = vocab_size(vs);
	l->tgt_vocab = vocab_size(vt);
	l->first = (uint64_t)o->first;
	l->best = (uint64_t)o->best;
	if (read_triples(in, &ks, &kt, &e, &n) < 0)
		goto out;
	if (n)
		qsort(e, n, sizeof *e, by_pair);
	rc = prune(l, e, n, o);
out:
	if (in && in->gz)
		inflateEnd(&in->z);
	if (rc < 0)
		marian_lex_free(l);
	free(in);
	free(e);
	lookup_free(&ks);
	lookup_free(&kt);
	return rc;
}

/* ---- as attn's table ------------------------------------------------ */

struct sl_table *marian_lex_table(const struct marian_lex *l,
				  const struct model *m, int shared)
{
	int V = m->tgt_vocab, nfreq, k = 1, s, j, n;
	int32_t *freq = NULL, *trans = NULL, *row = NULL;
	struct sl_table *t = NULL;

	if (l->src_vocab != m->src_vocab || l->tgt_vocab != V) {
		err_set("a shortlist for vocabularies of %d and %d units, "
			"not the model's %d and %d", l->src_vocab,
			l->tgt_vocab, m->src_vocab, V);
		return NULL;
	}
	for (s = 0; s < l->src_vocab; s++)
		if (l->off[s + 1] - l->off[s] + 1 > (uint64_t)k)
			k = (int)(l->off[s + 1] - l->off[s]) + 1;
	/* (k is the longest list and the source unit itself, at most) */
	if ((size_t)k > TABLE_MAX / sizeof *trans / (l->src_vocab + 1)) {
		err_set("a list of %d ids is too long for a table of %d "
			"source units", k - 1, l->src_vocab);
		return NULL;
	}
	nfreq = l->first < (uint64_t)V ? (int)l->first : V;
	freq = malloc(sizeof *freq * (nfreq + 1));
	trans = malloc(sizeof *trans * ((size_t)l->src_vocab * k + 1));
	row = malloc(sizeof *row * (k + 1));
	if (!freq || !trans || !row) {
		err_set("out of memory for a shortlist table");
		goto out;
	}
	for (j = 0; j < nfreq; j++)	/* shortlist.cpp:268 */
		freq[j] = j;
	for (s = 0; s < l->src_vocab; s++) {
		n = 0;
		for (uint64_t i = l->off[s]; i < l->off[s + 1]; i++)
			row[n++] = l->ids[i];
		if (shared && s < V)	/* shortlist.cpp:275-276 */
			row[n++] = s;
		qsort(row, n, sizeof *row, by_id);
		int u = 0;

		for (j = 0; j < n; j++)
			if (!u || row[j] != row[u - 1])
				row[u++] = row[j];
		for (j = 0; j < k; j++)
			trans[(size_t)s * k + j] = j < u ? row[j] : -1;
	}
	t = shortlist_table_new(m, freq, nfreq, trans, k);
	if (t) {	/* shortlist.cpp:292-299: to a multiple of 8 */
		t->pad[0] = 8;
		t->pad[1] = nfreq;
	}
out:
	free(freq);
	free(trans);
	free(row);
	return t;
}

void marian_lex_free(struct marian_lex *l)
{
	free(l->off);
	free(l->ids);
	memset(l, 0, sizeof *l);
}

struct sl_table *marian_shortlist_import(struct model *m, const void *data,
					 size_t len,
					 const struct marian_lex_opts *o)
{
	struct marian_lex_opts def;
	struct marian_lex l;
	struct vocab *vs = NULL, *vt = NULL;
	struct sl_table *t = NULL;
	int shared, rc;

	if (!o) {
		marian_lex_opts_parse(&def, NULL);
		o = &def;
	}
	/* Marian: the config names one file for both sides
	 * (translator.h:63, vocabs.front() == vocabs.back()) */
	shared = m->vocab_src_len == m->vocab_tgt_len &&
		 !memcmp(m->vocab_src, m->vocab_tgt, m->vocab_src_len);
	if (marian_lex_is_binary(data, len)) {
		if (o->given) {
			err_set("a binary shortlist holds its own numbers: "
				"give the file alone");
			return NULL;
		}
		rc = marian_lex_read_bin(&l, data, len, m->src_vocab,
					 m->tgt_vocab);
	} else {
		vs = vocab_load(m->vocab_src, m->vocab_src_len);
		vt = vs ? vocab_load(m->vocab_tgt, m->vocab_tgt_len) : NULL;
		rc = vt ? marian_lex_read_text(&l, data, len, vs, vt, o) : -1;
	}
	if (rc == 0) {
		t = marian_lex_table(&l, m, shared);
		marian_lex_free(&l);
	}
	if (t && config_set(&m->cfg, "dec_shortlist", "1") < 0) {
		shortlist_table_free(t);
		t = NULL;
	}
	vocab_free(vs);
	vocab_free(vt);
	return t;
}
