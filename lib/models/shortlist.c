/*
 * shortlist.c: the vocabulary shortlist of a decoder's sentences; see
 * shortlist.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/errmsg.h"
#include "kernels/kernels.h"
#include "kernels/marian_i8.h"
#include "model_parts.h"
#include "shortlist.h"

int shortlist_specials(const struct model *m, int32_t special[4])
{
	const int ids[4] = { m->pad_id, m->bos_id, m->eos_id, m->unk_id };
	int n = 0, i, j;

	for (i = 0; i < 4; i++) {
		int32_t id = ids[i];

		if (id < 0 || id >= m->src_vocab || id >= m->tgt_vocab)
			continue;
		for (j = 0; j < n && special[j] != id; j++)
			;
		if (j < n)
			continue;
		for (j = n++; j > 0 && special[j - 1] > id; j--)
			special[j] = special[j - 1];
		special[j] = id;
	}
	return n;
}

struct sl_table *shortlist_table_new(const struct model *m,
				     const int32_t *freq, int nfreq,
				     const int32_t *trans, int k)
{
	size_t nt = (size_t)m->src_vocab * k, i;
	struct sl_table *t;

	if (nfreq < 0 || k < 1 || nfreq > m->tgt_vocab || k > m->tgt_vocab) {
		err_set("shortlist: %d frequent units and %d translations "
			"each (1 at least), for a target vocabulary of %d",
			nfreq, k, m->tgt_vocab);
		return NULL;
	}
	for (i = 0; i < (size_t)nfreq; i++)
		if (freq[i] < 0 || freq[i] >= m->tgt_vocab) {
			err_set("shortlist.frequent: id %d at %zu is outside "
				"the target vocabulary of %d", freq[i], i,
				m->tgt_vocab);
			return NULL;
		}
	for (i = 0; i < nt; i++)
		if (trans[i] < -1 || trans[i] >= m->tgt_vocab) {
			err_set("shortlist.translations: id %d of source unit "
				"%zu is neither -1 nor in the target "
				"vocabulary of %d", trans[i], i / k,
				m->tgt_vocab);
			return NULL;
		}
	t = calloc(1, sizeof *t);
	if (t) {
		t->freq = malloc(sizeof *t->freq * (nfreq ? nfreq : 1));
		t->trans = malloc(sizeof *t->trans * (nt ? nt : 1));
	}
	if (!t || !t->freq || !t->trans) {
		shortlist_table_free(t);
		err_set("out of memory for the shortlist");
		return NULL;
	}
	/* no frequent units may come as NULL: memcpy must not see it */
	if (nfreq)
		memcpy(t->freq, freq, sizeof *t->freq * nfreq);
	if (nt)
		memcpy(t->trans, trans, sizeof *t->trans * nt);
	t->src_vocab = m->src_vocab;
	t->tgt_vocab = m->tgt_vocab;
	t->nspecial = shortlist_specials(m, t->special);
	t->nfreq = nfreq;
	t->k = k;
	return t;
}

int shortlist_table_load(const struct model *m, struct sl_table **t)
{
	const struct tensor *f = model_annex(m, "shortlist.frequent");
	const struct tensor *tr = model_annex(m, "shortlist.translations");
	const struct tensor *pad = model_annex(m, "shortlist.pad");

	*t = NULL;
	if (!f && !tr)
		return 0;
	if (!f || !tr || f->dtype != DT_I32 || f->rank != 1 ||
	    tr->dtype != DT_I32 || tr->rank != 2 ||
	    tr->dim[0] != (uint64_t)m->src_vocab ||
	    f->dim[0] > (uint64_t)m->tgt_vocab ||
	    tr->dim[1] > (uint64_t)m->tgt_vocab) {
		err_set("the shortlist is not shortlist.frequent, i32 [N], "
			"with shortlist.translations, i32 [%d, K] (N, K <= "
			"%d)", m->src_vocab, m->tgt_vocab);
		return -1;
	}
	*t = shortlist_table_new(m, f->data, (int)f->dim[0], tr->data,
				 (int)tr->dim[1]);
	if (*t && pad) {
		const int32_t *p = pad->data;

		if (pad->dtype != DT_I32 || pad->rank != 1 ||
		    pad->dim[0] != 2 || p[0] < 2 || p[0] > 64 || p[1] < 0 ||
		    p[1] > m->tgt_vocab) {
			shortlist_table_free(*t);
			*t = NULL;
			err_set("shortlist.pad is not i32 [2]: a multiple from "
				"2 to 64 and an id from 0 to %d", m->tgt_vocab);
			return -1;
		}
		memcpy((*t)->pad, p, sizeof (*t)->pad);
	}
	return *t ? 0 : -1;
}

/* An i32 [d0] (d1 0) or [d0, d1] record of ids, not copied. */
static void ids_tensor(struct tensor *t, const char *name,
		       const int32_t *ids, int d0, int d1)
{
	memset(t, 0, sizeof *t);
	strcpy(t->name, name);
	t->dtype = DT_I32;
	t->rank = d1 ? 2 : 1;
	t->dim[0] = d0;
	t->dim[1] = d1;
	t->data = (void *)ids;
	t->nbytes = sizeof(int32_t) * d0 * (d1 ? (size_t)d1 : 1);
}

int shortlist_table_records(const struct sl_table *t, struct tensor rec[3])
{
	ids_tensor(&rec[0], "shortlist.frequent", t->freq, t->nfreq, 0);
	ids_tensor(&rec[1], "shortlist.translations", t->trans, t->src_vocab,
		   t->k);
	if (!t->pad[0])
		return 2;
	ids_tensor(&rec[2], "shortlist.pad", t->pad, 2, 0);
	return 3;
}

int shortlist_table_save(const struct sl_table *t, const char *path)
{
	struct tensor rec[3];
	int n = shortlist_table_records(t, rec);

	return model_file_set_annexes(path, "shortlist.", rec, n);
}

void shortlist_table_free(struct sl_table *t)
{
	if (!t)
		return;
	free(t->freq);
	free(t->trans);
	free(t);
}

void shortlist_free(struct shortlist *s)
{
	if (!s)
		return;
	for (int i = 0; s->w && i < s->nw; i++)
		wpack_free(&s->w[i]);
	free(s->w);
	free(s->uid);
	free(s->off);
	free(s->ids);
	free(s->pos);
	free(s->W);
	free(s->b);
	free(s->q);
	free(s->qs);
	free(s->logits);
	free(s);
}

/* Marks sentence s's units in mark [V] with s + 1, in the union's
 * umark [V] and, unless NULL, in the bitmap bits [V / 64]; returns how
 * many. */
static int mark_sentence(const struct sl_table *t, const int32_t *src,
			 int S, int s, int *mark, char *umark, uint64_t *bits)
{
	int n = 0, i, j;

#define MARK(id) do { int id_ = (id); if (mark[id_] != s + 1) { \
		mark[id_] = s + 1; umark[id_] = 1; n++; \
		if (bits) bits[id_ >> 6] |= 1ull << (id_ & 63); } } while (0)
	for (i = 0; i < t->nspecial; i++)
		MARK(t->special[i]);
	for (i = 0; i < t->nfreq; i++)
		MARK(t->freq[i]);
	for (i = 0; i < S; i++)
		for (j = 0; j < t->k; j++) {
			int32_t y = t->trans[(size_t)src[i] * t->k + j];

			if (y < 0)
				break;
			MARK(y);
		}
	for (j = t->pad[1]; t->pad[0] && n % t->pad[0] && j < t->tgt_vocab;
	     j++)
		MARK(j);
#undef MARK
	return n;
}

/* The sentences' units (s->off, ids) and their union (uid, pos). */
static int units(struct shortlist *s, const struct model *m,
		 const struct sl_table *t, struct frame **f, int n)
{
	int V = m->tgt_vocab, nb = (V + 63) / 64, total = 0, i, y, j, w;
	int *mark = calloc(V, sizeof *mark), *place = NULL;
	char *umark = calloc(V, 1);
	uint64_t *bits = calloc(nb, sizeof *bits);
	int rc = -1;

	if (!mark || !umark || !bits ||
	    !(s->off = malloc(sizeof(int) * (n + 1))))
		goto oom;
	s->off[0] = 0;
	for (i = 0; i < n; i++) {
		const struct tensor *src;

		if (model_check_ids(f[i], "src.ids", m->src_vocab,
				    "tokenize") < 0) {
			err_prefix("the shortlist needs the source ids");
			goto out;
		}
		src = frame_find(f[i], "src.ids");
		total += mark_sentence(t, src->data, (int)src->dim[0], i,
				       mark, umark, NULL);
		s->off[i + 1] = total;
	}
	s->ids = malloc(sizeof *s->ids * total);
	s->pos = malloc(sizeof *s->pos * total);
	s->uid = malloc(sizeof *s->uid * V);
	place = malloc(sizeof *place * V);
	if (!s->ids || !s->pos || !s->uid || !place)
		goto oom;
	for (y = 0; y < V; y++)
		if (umark[y]) {
			place[y] = s->U;
			s->uid[s->U++] = y;
		}
	/* each sentence's in ascending order: its bitmap's words in turn
	 * (a pass over V / 64 words, where one over the vocabulary was 3.5%
	 * of a greedy decode of the Firefox student), cleared as read */
	memset(mark, 0, sizeof *mark * V);
	for (i = 0; i < n; i++) {
		const struct tensor *src = frame_find(f[i], "src.ids");

		mark_sentence(t, src->data, (int)src->dim[0], i, mark, umark,
			      bits);
		for (j = s->off[i], w = 0; w < nb; w++) {
			uint64_t b = bits[w];

			for (bits[w] = 0; b; b &= b - 1) {
				y = w * 64 + __builtin_ctzll(b);
				s->ids[j] = y;
				s->pos[j++] = place[y];
			}
		}
	}
	rc = 0;
	goto out;
oom:
	err_set("out of memory for the shortlists of %d sentences", n);
out:
	free(mark);
	free(umark);
	free(bits);
	free(place);
	return rc;
}

/* 1 when p is the output matrix of a Marian int8 import (annex
 * marian.NAME, config marian_int8). */
static int marian_output(const struct model *m, const struct param *p)
{
	char name[PARAM_NAME_MAX + 8];

	snprintf(name, sizeof name, "marian.%s", p->name);
	return config_get(&m->cfg, "marian_int8") && model_annex(m, name);
}

/*
 * Rows ids [rows] of W (and b) gathered into s->W, or where W is an int8
 * export's, its int8 rows and scales into s->q and s->qs.
 */
static int gather(struct shortlist *s, const struct model *m,
		  const int32_t *ids, int rows, const float *W, const float *b,
		  int pack)
{
	const struct param *p = NULL;
	int K = s->K, i;
	size_t k;

	for (i = 0; pack == WPACK_I8 && i < m->nparam && !p; i++)
		if (m->param[i].w == W &&
		    m->param[i].dim[0] == m->tgt_vocab &&
		    m->param[i].dim[1] == K)
			p = &m->param[i];
	if (b && !(s->b = malloc(sizeof *s->b * (rows ? rows : 1))))
		goto oom;
	for (i = 0; b && i < rows; i++)
		s->b[i] = b[ids[i]];
	/* a Marian int8 model: the rows of its own product (params.c's
	 * model_wpack), a tied float output quantised with the whole
	 * matrix's multiplier, as Marian selects columns of it prepared */
	if (p && marian_output(m, p) && !model_marian_float_out(m)) {
		s->mp = p;
		if (!p->q) {
			s->mqb = model_marian_out_qb(m);
			if (!(s->q = malloc((size_t)rows * K + 1)) ||
			    !(s->qs = malloc(sizeof *s->qs * (rows ? rows : 1))))
				goto oom;
			for (i = 0; i < rows; i++) {
				const float *wr = W + (size_t)ids[i] * K;
				int8_t *qr = s->q + (size_t)i * K;

				if (m->marian_out_q)	/* made when loaded */
					memcpy(qr, m->marian_out_q +
					       (size_t)ids[i] * K, K);
				else
					for (k = 0; k < (size_t)K; k++)
						qr[k] = marian_quant(wr[k] *
								     s->mqb);
				s->qs[i] = 1 / s->mqb;
			}
			return 0;
		}
	}
	if (p && !p->q) {	/* (a Marian float32 one stays float) */
		s->f32 = marian_output(m, p);
		p = NULL;
	}
	if (p) {	/* the export's own int8 rows, as model_wpack */
		s->q = malloc((size_t)rows * K + 1);
		s->qs = malloc(sizeof *s->qs * (rows ? rows : 1));
		if (!s->q || !s->qs)
			goto oom;
		for (i = 0; i < rows; i++) {
			memcpy(s->q + (size_t)i * K, p->q + (size_t)ids[i] * K,
			       K);
			s->qs[i] = p->qs[ids[i]];
		}
		return 0;
	}
	if (!(s->W = malloc(sizeof *s->W * ((size_t)rows * K + 1))))
		goto oom;
	for (i = 0; i < rows; i++)
		memcpy(s->W + (size_t)i * K, W + (size_t)ids[i] * K,
		       sizeof *s->W * K);
	return 0;
oom:
	err_set("out of memory for the shortlist's [%d, %d] matrix", rows, K);
	return -1;
}

/* Rows row0 .. row0 + rows - 1 of the gathered ones packed into w: f32
 * packed (a model's f32 product, packed or not, has its bits), bf16, or
 * int8 (the export's own, or quantised by the pack as the full one). */
static int pack_rows(const struct model *m, struct shortlist *s,
		     struct wpack *w, int row0, int rows, int pack)
{
	size_t at = (size_t)row0 * s->K;

	if (s->q && wpack_init_i8(w, s->q + at, s->qs + row0, rows, s->K) < 0)
		return -1;
	if (s->q && s->mp && model_marian_pack_qb(m, s->mp, w, s->mqb) < 0) {
		wpack_free(w);
		return -1;
	}
	if (s->q)
		return 0;
	return wpack_init(w, s->W + at, rows, s->K,
			  pack == WPACK_KEEP || s->f32 ? WPACK_F32 : pack);
}

struct shortlist *shortlist_new(const struct model *m,
				const struct sl_table *t, struct frame **f,
				int n, int cap, const float *W, const float *b,
				int K, int pack)
{
	struct shortlist *s;
	int i, width = n > 0 ? cap / n : 1, most = 0;

	if (t->src_vocab != m->src_vocab || t->tgt_vocab != m->tgt_vocab) {
		err_set("a shortlist of vocabularies of %d and %d units, for "
			"a model of %d and %d", t->src_vocab, t->tgt_vocab,
			m->src_vocab, m->tgt_vocab);
		return NULL;
	}
	if (!(s = calloc(1, sizeof *s))) {
		err_set("out of memory for the shortlist");
		return NULL;
	}
	s->nsent = n;
	s->cap = cap;
	s->K = K;
	if (units(s, m, t, f, n) < 0)
		goto fail;
	/* greedy: the union's rows (rows of their own would each stream a
	 * matrix of their own); beam: each sentence's */
	s->nw = width > 1 ? n : 1;
	if (!(s->w = calloc(s->nw, sizeof *s->w)))
		goto oom;
	if (s->nw == 1) {
		if (gather(s, m, s->uid, s->U, W, b, pack) < 0 ||
		    pack_rows(m, s, &s->w[0], 0, s->U, pack) < 0)
			goto fail;
		most = s->U;
	} else {
		if (gather(s, m, s->ids, s->off[n], W, b, pack) < 0)
			goto fail;
		for (i = 0; i < n; i++) {
			int rows = s->off[i + 1] - s->off[i];

			if (pack_rows(m, s, &s->w[i], s->off[i], rows,
				      pack) < 0)
				goto fail;
			most = rows > most ? rows : most;
		}
	}
	if (!(s->logits = malloc(sizeof *s->logits *
				 ((size_t)cap * most + 1))))
		goto oom;
	return s;
oom:
	err_set("out of memory for the shortlists of %d sentences", n);
fail:
	shortlist_free(s);
	return NULL;
}

/* Row i's log-probabilities from its logits z over its units' places
 * pos [n] among them (NULL: all n, in order). */
static void row_logp(float *y, const float *z, const int *pos, int n)
{
	int j;

	if (!pos) {
		log_softmax_rows(y, z, 1, n);
		return;
	}
	for (j = 0; j < n; j++)
		y[j] = z[pos[j]];
	log_softmax_rows(y, y, 1, n);
}

int shortlist_logp(struct shortlist *s, float *logp, long ld,
		   const float *x, int nh, const int *sent)
{
	int i, e, r;

	if (s->nw == 1) {
		if (linear_packed(s->logits, x, nh, &s->w[0], s->b, 0) < 0)
			return -1;
		for (i = 0; i < nh; i++)
			row_logp(logp + i * ld, s->logits + (size_t)i * s->U,
				 s->pos + s->off[sent[i]],
				 s->off[sent[i] + 1] - s->off[sent[i]]);
		return 0;
	}
	/* each run of rows of one sentence by the sentence's matrix */
	for (i = 0; i < nh; i = e) {
		int t = sent[i], n = s->off[t + 1] - s->off[t];

		for (e = i + 1; e < nh && sent[e] == t; e++)
			;
		if (linear_packed(s->logits, x + (size_t)i * s->K, e - i,
				  &s->w[t], s->b ? s->b + s->off[t] : NULL,
				  0) < 0)
			return -1;
		for (r = i; r < e; r++)
			row_logp(logp + r * ld,
				 s->logits + (size_t)(r - i) * n, NULL, n);
	}
	return 0;
}

int shortlist_find(const struct shortlist *s, int sent, int32_t id)
{
	int lo = s->off[sent], hi = s->off[sent + 1];

	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;

		if (s->ids[mid] < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < s->off[sent + 1] && s->ids[lo] == id ?
	       lo - s->off[sent] : -1;
}
