/*
 * shortlist.c: the vocabulary shortlist of a decoder's sentences; see
 * shortlist.h.
 */
#include <stdlib.h>
#include <string.h>
#include "base/errmsg.h"
#include "kernels/kernels.h"
#include "shortlist.h"

int shortlist_table_set(struct model *m, const int32_t *freq, int nfreq,
			const int32_t *trans, int k)
{
	size_t nt = (size_t)m->src_vocab * k, i;
	int32_t *f, *t;

	if (nfreq < 0 || k < 1 || nfreq > m->tgt_vocab || k > m->tgt_vocab) {
		err_set("shortlist: %d frequent units and %d translations "
			"each (1 at least), for a target vocabulary of %d", nfreq, k,
			m->tgt_vocab);
		return -1;
	}
	for (i = 0; i < (size_t)nfreq; i++)
		if (freq[i] < 0 || freq[i] >= m->tgt_vocab) {
			err_set("shortlist.frequent: id %d at %zu is outside "
				"the target vocabulary of %d", freq[i], i,
				m->tgt_vocab);
			return -1;
		}
	for (i = 0; i < nt; i++)
		if (trans[i] < -1 || trans[i] >= m->tgt_vocab) {
			err_set("shortlist.translations: id %d of source unit "
				"%zu is neither -1 nor in the target "
				"vocabulary of %d", trans[i], i / k,
				m->tgt_vocab);
			return -1;
		}
	f = malloc(sizeof *f * (nfreq ? nfreq : 1));
	t = malloc(sizeof *t * (nt ? nt : 1));
	if (!f || !t) {
		free(f);
		free(t);
		err_set("out of memory for the shortlist");
		return -1;
	}
	memcpy(f, freq, sizeof *f * nfreq);
	memcpy(t, trans, sizeof *t * nt);
	free(m->sl.freq);
	free(m->sl.trans);
	m->sl.freq = f;
	m->sl.trans = t;
	m->sl.nfreq = nfreq;
	m->sl.k = k;
	return 0;
}

void shortlist_free(struct shortlist *s)
{
	if (!s)
		return;
	wpack_free(&s->w);
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

/* Marks sentence s's units in mark [V] with s + 1 and in the union's
 * umark [V]; returns how many. */
static int mark_sentence(const struct model *m, const int32_t *src, int S,
			 int s, int *mark, char *umark)
{
	const struct sl_table *t = &m->sl;
	int n = 0, i, j;

#define MARK(id) do { int id_ = (id); if (mark[id_] != s + 1) { \
		mark[id_] = s + 1; umark[id_] = 1; n++; } } while (0)
	for (i = 0; i < SHORTLIST_SPECIAL && i < m->tgt_vocab; i++)
		MARK(i);
	for (i = 0; i < t->nfreq; i++)
		MARK(t->freq[i]);
	for (i = 0; i < S; i++)
		for (j = 0; j < t->k; j++) {
			int32_t y = t->trans[(size_t)src[i] * t->k + j];

			if (y < 0)
				break;
			MARK(y);
		}
#undef MARK
	return n;
}

/* The sentences' units (s->off, ids) and their union (uid, pos). */
static int units(struct shortlist *s, const struct model *m,
		 struct frame **f, int n)
{
	int V = m->tgt_vocab, total = 0, i, y, j;
	int *mark = calloc(V, sizeof *mark), *place = NULL;
	char *umark = calloc(V, 1);
	int rc = -1;

	if (!mark || !umark || !(s->off = malloc(sizeof(int) * (n + 1))))
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
		total += mark_sentence(m, src->data, (int)src->dim[0], i,
				       mark, umark);
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
	/* each sentence's in ascending order: a pass over the vocabulary
	 * per sentence, as cheap as a sort of its few hundred units */
	memset(mark, 0, sizeof *mark * V);
	for (i = 0; i < n; i++) {
		const struct tensor *src = frame_find(f[i], "src.ids");

		mark_sentence(m, src->data, (int)src->dim[0], i, mark, umark);
		for (j = s->off[i], y = 0; y < V; y++)
			if (mark[y] == i + 1) {
				s->ids[j] = y;
				s->pos[j++] = place[y];
			}
	}
	rc = 0;
	goto out;
oom:
	err_set("out of memory for the shortlists of %d sentences", n);
out:
	free(mark);
	free(umark);
	free(place);
	return rc;
}

/* The union's rows of W (and b) gathered and packed. */
static int gather(struct shortlist *s, const struct model *m, const float *W,
		  const float *b, int K, int pack)
{
	const struct param *p = NULL;
	int U = s->U, i;

	for (i = 0; pack == WPACK_I8 && i < m->nparam && !p; i++)
		if (m->param[i].w == W && m->param[i].q &&
		    m->param[i].dim[0] == m->tgt_vocab &&
		    m->param[i].dim[1] == K)
			p = &m->param[i];
	if (b && !(s->b = malloc(sizeof *s->b * U)))
		goto oom;
	for (i = 0; b && i < U; i++)
		s->b[i] = b[s->uid[i]];
	if (p) {	/* the export's own int8 rows, as model_wpack */
		s->q = malloc((size_t)U * K);
		s->qs = malloc(sizeof *s->qs * U);
		if (!s->q || !s->qs)
			goto oom;
		for (i = 0; i < U; i++) {
			memcpy(s->q + (size_t)i * K,
			       p->q + (size_t)s->uid[i] * K, K);
			s->qs[i] = p->qs[s->uid[i]];
		}
		return wpack_init_i8(&s->w, s->q, s->qs, U, K);
	}
	if (!(s->W = malloc(sizeof *s->W * ((size_t)U * K))))
		goto oom;
	for (i = 0; i < U; i++)
		memcpy(s->W + (size_t)i * K, W + (size_t)s->uid[i] * K,
		       sizeof *s->W * K);
	/* f32 packed, as the full product would be or with its bits */
	return wpack_init(&s->w, s->W, U, K,
			  pack == WPACK_KEEP ? WPACK_F32 : pack);
oom:
	err_set("out of memory for the shortlist's [%d, %d] matrix", U, K);
	return -1;
}

struct shortlist *shortlist_new(const struct model *m, struct frame **f,
				int n, int cap, const float *W, const float *b,
				int K, int pack)
{
	struct shortlist *s;

	if (!m->sl.freq) {
		err_set("the model has no shortlist");
		return NULL;
	}
	if (!(s = calloc(1, sizeof *s))) {
		err_set("out of memory for the shortlist");
		return NULL;
	}
	s->nsent = n;
	s->cap = cap;
	if (units(s, m, f, n) < 0 || gather(s, m, W, b, K, pack) < 0)
		goto fail;
	if (!(s->logits = malloc(sizeof *s->logits *
				 ((size_t)cap * s->U + 1)))) {
		err_set("out of memory for the shortlist's logits");
		goto fail;
	}
	return s;
fail:
	shortlist_free(s);
	return NULL;
}

int shortlist_logp(struct shortlist *s, float *logp, long ld,
		   const float *x, int nh, const int *sent)
{
	int i, j;

	if (linear_packed(s->logits, x, nh, &s->w, s->b, 0) < 0)
		return -1;
	for (i = 0; i < nh; i++) {
		const float *z = s->logits + (size_t)i * s->U;
		const int *pos = s->pos + s->off[sent[i]];
		int n = s->off[sent[i] + 1] - s->off[sent[i]];
		float *y = logp + i * ld;

		for (j = 0; j < n; j++)
			y[j] = z[pos[j]];
		log_softmax_rows(y, y, 1, n);
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
