/*
 * transformer_dec.c: the Transformer's decoder one position at a time, for
 * greedy and beam search and scoring: its memory, cache and hypotheses
 * (transformer_dec.h; a step is transformer_dec_step.c's, the packed
 * weights transformer_dec_pack.c's).  Each step costs one position: the
 * self-attention keys and values of earlier positions are kept in a cache,
 * and the cross-attention's keys and values (att.{l}.k, att.{l}.v) are
 * read once from the frames.
 *
 * Every hypothesis has a cache slot, [tcap, d] rows per layer for K and
 * for V.  dec_select hands a slot to the first child of each surviving
 * hypothesis and copies it only for the others, so greedy search never
 * copies and beam search copies only where a hypothesis branches.  The
 * attention of a step is that of single query rows (attn_step.h).  With
 * pos=rope the step's queries and keys are rotated to its position before
 * the keys join the cache, so each key is rotated once, when written.
 *
 * With o->kv_f16 the keys and values that the step's attention reads,
 * the cache's and the memory's, are kept in f16 (attn_step.h's
 * kv_to_f16): they are most of the bytes a step reads, and attention
 * waits on memory, not on arithmetic.
 *
 * With dec_self=ssru (Bergamot's students) a layer has no self-attention
 * and no cache: its SSRU's state, one cell [d] per hypothesis
 * (nn/ssru.h), is all a step carries to the next, from zeros; dec_select
 * gathers the cells of the parents, as small as a row of the step.
 */
#include <stdlib.h>
#include <string.h>
#include "base/errmsg.h"
#include "kernels/attn_step.h"
#include "transformer_dec.h"

static void dec_release(struct tf_decoder *dc)
{
	int l;

	if (!dc)
		return;
	for (l = 0; dc->ck && l < dc->n->dec_layers; l++) {
		free(dc->ck[l]);
		free(dc->cv[l]);
		free(dc->sk[l]);
		free(dc->sv[l]);
		free(dc->sx ? dc->sx[l] : NULL);
	}
	for (l = 0; dc->cell && l < dc->n->dec_layers; l++)
		free(dc->cell[l]);
	tf_dec_pack_put(dc->packs);
	shortlist_free(dc->sl);
	free(dc->plain);
	free(dc->ck);
	free(dc->cv);
	free(dc->sk);
	free(dc->sv);
	free(dc->sx);
	free(dc->cell);
	free(dc->cell_tmp);
	free(dc->srclen);
	free(dc->slot);
	free(dc->sent);
	free(dc->klen);
	free(dc->kp);
	free(dc->vp);
	free(dc->nkeys);
	free(dc->pos);
	free(dc->tmp_slot);
	free(dc->tmp_sent);
	free(dc->claimed);
	free(dc->x);
	free(dc->q);
	free(dc->k);
	free(dc->v);
	free(dc->ctx);
	free(dc->h);
	free(dc->logits);
	free(dc->sub.ln);
	free(dc->sub.mean);
	free(dc->sub.rstd);
	free(dc->sub.fo);
	free(dc->sub.sum);
	free(dc);
}

void tf_dec_free(struct decoder *d)
{
	dec_release((struct tf_decoder *)d);
}

static void *falloc(size_t n)
{
	return malloc(sizeof(float) * (n ? n : 1));
}

/* *x [n] in f16 in place of the f32 *x; 0, or -1 out of memory. */
static int to_f16(char **x, size_t n)
{
	uint16_t *h = malloc(sizeof(uint16_t) * (n ? n : 1));

	if (!h) {
		err_set("out of memory for the decoder's f16 memory");
		return -1;
	}
	kv_to_f16(h, (const float *)*x, n);
	free(*x);
	*x = (char *)h;
	return 0;
}

/* Reads att.{l}.k and .v of every frame into dc->ck, dc->cv. */
static int read_memory(struct tf_decoder *dc, struct frame **f, int nf)
{
	char name[32];
	int l, kind, i, S, *len;

	for (l = 0; l < dc->n->dec_layers; l++) {
		for (kind = 0; kind < 2; kind++) {
			char **dst = kind ? &dc->cv[l] : &dc->ck[l];
			float *x;

			snprintf(name, sizeof(name), "att.%d.%c", l,
				 kind ? 'v' : 'k');
			S = tf_gather_rows(dc->n, f, nf, name, "attend", &x,
					   &len);
			if (S < 0)
				return -1;
			*dst = (char *)x;
			if (dc->kv16 &&
			    to_f16(dst, (size_t)nf * S * dc->n->d) < 0) {
				free(len);
				return -1;
			}
			if (!dc->srclen) {
				dc->srclen = len;
				dc->S = S;
				continue;
			}
			for (i = 0; i < nf; i++)
				if (len[i] != dc->srclen[i])
					break;
			if (i < nf)
				err_set("frame %llu: %s has %d rows where "
					"att.0.k has %d",
					(unsigned long long)f[i]->number, name,
					len[i], dc->srclen[i]);
			free(len);
			if (i < nf)
				return -1;
		}
	}
	return 0;
}

struct decoder *tf_dec_new(const struct model *m, const struct dec_opts *o,
			   struct frame **f, int nf, int width)
{
	const struct tf_net *n = m->net;
	struct tf_decoder *dc;
	int L = n->dec_layers, d = n->d, i, l;
	size_t cap, V = n->tgt_vocab;

	if (nf < 1 || width < 1) {
		err_set("transformer: a decoder for %d sentences of width %d",
			nf, width);
		return NULL;
	}
	dc = calloc(1, sizeof(*dc));
	if (!dc)
		goto oom;
	dc->m = m;
	dc->n = n;
	dc->pack = m->int8 ? WPACK_I8 : o && o->bf16 ? WPACK_BF16 : WPACK_F32;
	dc->kv16 = o && o->kv_f16;
	dc->es = dc->kv16 ? sizeof(uint16_t) : sizeof(float);
	dc->nsent = nf;
	dc->width = width;
	dc->cap = nf * width;
	dc->nh = nf;
	cap = dc->cap;
	dc->ck = calloc(L ? L : 1, sizeof(char *));
	dc->cv = calloc(L ? L : 1, sizeof(char *));
	dc->sk = calloc(L ? L : 1, sizeof(char *));
	dc->sv = calloc(L ? L : 1, sizeof(char *));
	dc->cell = calloc(L ? L : 1, sizeof(float *));
	if (!dc->ck || !dc->cv || !dc->sk || !dc->sv || !dc->cell)
		goto oom;
	if (L == 0) {
		dc->srclen = calloc(nf, sizeof(int));
		if (!dc->srclen)
			goto oom;
	} else if (read_memory(dc, f, nf) < 0) {
		goto fail;
	}
	if (tf_dec_weights(dc, !(o && o->shortlist)) < 0)
		goto fail;
	if (o && o->shortlist && !(dc->sl = shortlist_new(m, o->shortlist, f,
			nf, nf * width,
			n->w.out_W, n->w.out_b, d, dc->pack)))
		goto fail;
	/* room for doc/MODELS.md's default maximum length; more on demand */
	dc->tcap = 2 * dc->S + 10;
	for (l = 0; l < L && !n->ssru; l++) {
		dc->sk[l] = malloc(dc->es * cap * dc->tcap * d);
		dc->sv[l] = malloc(dc->es * cap * dc->tcap * d);
		if (!dc->sk[l] || !dc->sv[l])
			goto oom;
	}
	dc->kv_hist = L > 0 && !n->ssru && n->pos != POS_ROPE &&
		      dc->wt[0].self_k.marian &&
		      !(dc->wt[0].self_k.mqa > 0);
	if (dc->kv_hist && !(dc->sx = calloc(L, sizeof(float *))))
		goto oom;
	for (l = 0; l < L && dc->kv_hist; l++)
		if (!(dc->sx[l] = falloc(cap * dc->tcap * d)))
			goto oom;
	for (l = 0; l < L && n->ssru; l++)	/* c_0 = 0 */
		if (!(dc->cell[l] = calloc(cap * d, sizeof(float))))
			goto oom;
	if (n->ssru && L && !(dc->cell_tmp = falloc(cap * d)))
		goto oom;
	dc->slot = malloc(sizeof(int) * cap);
	dc->sent = malloc(sizeof(int) * cap);
	dc->klen = malloc(sizeof(int) * cap);
	dc->kp = malloc(sizeof(*dc->kp) * cap);
	dc->vp = malloc(sizeof(*dc->vp) * cap);
	dc->nkeys = malloc(sizeof(int) * cap);
	dc->pos = malloc(sizeof(int) * cap);
	dc->tmp_slot = malloc(sizeof(int) * cap);
	dc->tmp_sent = malloc(sizeof(int) * cap);
	dc->claimed = malloc(sizeof(int) * cap);
	dc->x = falloc(cap * d);
	dc->q = falloc(cap * d);
	dc->k = falloc(cap * d);
	dc->v = falloc(cap * d);
	dc->ctx = falloc(cap * d);
	dc->h = falloc(cap * n->ffn);
	dc->logits = falloc(dc->sl ? 1 : cap * V);
	dc->sub.ln = falloc(cap * d);
	dc->sub.mean = falloc(cap);
	dc->sub.rstd = falloc(cap);
	dc->sub.fo = falloc(cap * d);
	dc->sub.sum = falloc(cap * d);
	if (!dc->slot || !dc->sent || !dc->klen || !dc->kp || !dc->vp ||
	    !dc->nkeys || !dc->pos || !dc->tmp_slot ||
	    !dc->tmp_sent || !dc->claimed || !dc->x || !dc->q || !dc->k ||
	    !dc->v || !dc->ctx || !dc->h || !dc->logits ||
	    !dc->sub.ln || !dc->sub.mean || !dc->sub.rstd || !dc->sub.fo ||
	    !dc->sub.sum)
		goto oom;
	for (i = 0; i < nf; i++) {
		dc->slot[i] = i;
		dc->sent[i] = i;
		dc->klen[i] = dc->srclen[i];
	}
	return (struct decoder *)dc;
oom:
	err_set("out of memory for a decoder of %d sentences", nf);
fail:
	dec_release(dc);
	return NULL;
}

int tf_dec_select(struct decoder *d, int nh, const int *parent)
{
	struct tf_decoder *dc = (struct tf_decoder *)d;
	size_t row = dc->es * dc->tcap * dc->n->d;
	size_t used = dc->es * dc->t * dc->n->d;
	size_t xrow = (size_t)dc->tcap * dc->n->d, xused = (size_t)dc->t *
		      dc->n->d;
	int i, l, free_slot = 0;

	if (nh < 0 || nh > dc->cap) {
		err_set("transformer: %d hypotheses for a decoder of %d", nh,
			dc->cap);
		return -1;
	}
	for (i = 0; i < nh; i++)
		if (parent[i] < 0 || parent[i] >= dc->nh) {
			err_set("transformer: parent %d of %d hypotheses",
				parent[i], dc->nh);
			return -1;
		}
	/* dec_self=ssru: hypothesis i's cells are its parent's */
	for (l = 0; dc->n->ssru && l < dc->n->dec_layers; l++) {
		size_t d = dc->n->d;
		float *c = dc->cell[l];

		for (i = 0; i < nh; i++)
			memcpy(dc->cell_tmp + i * d, c + parent[i] * d,
			       sizeof(float) * d);
		dc->cell[l] = dc->cell_tmp;
		dc->cell_tmp = c;
	}
	/* each surviving slot goes to its first child... */
	memset(dc->claimed, 0, sizeof(int) * dc->cap);
	for (i = 0; i < nh; i++) {
		int s = dc->slot[parent[i]];

		dc->tmp_slot[i] = dc->claimed[s] ? -1 : s;
		dc->claimed[s] = 1;
		dc->tmp_sent[i] = dc->sent[parent[i]];
	}
	/* ...and the other children get a copy in a free one */
	for (i = 0; i < nh; i++) {
		int src = dc->slot[parent[i]];

		if (dc->tmp_slot[i] >= 0)
			continue;
		while (dc->claimed[free_slot])
			free_slot++;
		dc->claimed[free_slot] = 1;
		dc->tmp_slot[i] = free_slot;
		for (l = 0; l < dc->n->dec_layers && !dc->n->ssru; l++) {
			memcpy(dc->sk[l] + free_slot * row,
			       dc->sk[l] + src * row, used);
			memcpy(dc->sv[l] + free_slot * row,
			       dc->sv[l] + src * row, used);
			if (dc->kv_hist)
				memcpy(dc->sx[l] + free_slot * xrow,
				       dc->sx[l] + src * xrow,
				       sizeof(float) * xused);
		}
	}
	for (i = 0; i < nh; i++) {
		dc->slot[i] = dc->tmp_slot[i];
		dc->sent[i] = dc->tmp_sent[i];
		dc->klen[i] = dc->srclen[dc->sent[i]];
	}
	dc->nh = nh;
	return 0;
}

int tf_dec_sentence(const struct decoder *d, int i)
{
	const struct tf_decoder *dc = (const struct tf_decoder *)d;

	return i >= 0 && i < dc->nh ? dc->sent[i] : -1;
}

int tf_dec_srclen(const struct decoder *d, int sentence)
{
	const struct tf_decoder *dc = (const struct tf_decoder *)d;

	return sentence >= 0 && sentence < dc->nsent ? dc->srclen[sentence]
		: -1;
}

const struct shortlist *tf_dec_shortlist(const struct decoder *d)
{
	return ((const struct tf_decoder *)d)->sl;
}

void tf_dec_attw_planes(const struct decoder *d, int *L, int *H)
{
	const struct tf_decoder *dc = (const struct tf_decoder *)d;

	*L = dc->n->dec_layers;
	*H = dc->n->heads;
}
