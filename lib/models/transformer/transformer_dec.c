/*
 * transformer_dec.c: the Transformer's decoder one position at a time, for
 * greedy and beam search and scoring.  Each step costs one position: the
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
 * A step multiplies a few dozen rows by every weight matrix, where sgemm
 * spends more time packing a matrix than multiplying; so the step's
 * matrices are packed (gemm_packed.h), once for all the live decoders of
 * a model: the first decoder of more than SMALL_STEP rows packs them (or
 * the first after small ones have had that many rows), the last decoder
 * of the model frees them.  A program that keeps a decoder
 * of its model alive (translate.c) thus packs once for all its batches;
 * the model's weights must then not change while it does (nor while any
 * decoder lives: it holds copies).
 *
 * With o->bf16 (arch.h's dec_opts) the products are bf16 ones: every decoder packs in
 * bf16 whatever its rows (sgemm on the weights as stored would give other
 * bits, and a sentence's output would depend on its batch), into packs
 * of their own, never those of f32 decoders of the same model.  So with
 * an int8 export (m->int8, before o->bf16): its int8 matrices, and a
 * tied output projection (the f32 embedding table) quantised by the pack
 * as the export would have.
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
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include "base/errmsg.h"
#include "kernels/attn_step.h"
#include "kernels/gemm_packed.h"
#include "kernels/kernels.h"
#include "nn/layers.h"
#include "models/shortlist.h"
#include "transformer.h"

/*
 * Up to this many rows, sgemm streams [out, in] weights without packing,
 * until the small decoders of a model have had more than this many rows
 * in all: packing costs about as much as decoding 8 sentences unpacked
 * (the shipped model, f32, Zen 5: 40 ms once, against 5-6 ms a sentence
 * with -b 1 or -b 8), so one line is translated unpacked and a file with
 * -b 1 packed from its ninth line on.
 */
#define SMALL_STEP 8

/* A layer's matrices, packed or not. */
struct dec_wt {
	struct wpack self_q, self_k, self_v, self_o, cross_q, cross_o;
	struct wpack W1, W2;
	struct wpack ssru_W, ssru_Wf;	/* dec_self=ssru, in self_*'s place */
};

/* The step's matrices of a model, shared by its live decoders. */
struct dec_pack {
	const struct model *m;
	const struct tf_net *n;	/* m's */
	int pack;		/* WPACK_F32, WPACK_BF16 or WPACK_I8 */
	int refs;		/* live decoders of n */
	long small_rows;	/* rows of the decoders of at most SMALL_STEP
				   rows made so far */
	struct dec_wt *wt;	/* [dec_layers], packed; NULL: not yet */
	struct wpack out;
	struct dec_pack *next;
};

static struct dec_pack *packs;
static pthread_mutex_t packs_lock = PTHREAD_MUTEX_INITIALIZER;

struct tf_decoder {
	const struct model *m;
	const struct tf_net *n;	/* m's */
	int pack;		/* WPACK_F32, _BF16 (o->bf16) or _I8
				   (m->int8, first) */
	struct dec_pack *packs;	/* n's, one reference */
	struct dec_wt *plain;	/* [dec_layers] unpacked, when pack has none */
	struct wpack plain_out;
	const struct dec_wt *wt;	/* [dec_layers] plain or pack's */
	const struct wpack *out_wt;
	int nsent, width, cap;	/* sentences, width, cap = nsent * width */
	int nh;			/* live hypotheses */
	int t;			/* steps done: the position of the next input */
	int S;			/* the longest source */
	int *srclen;		/* [nsent] */
	int kv16;		/* o->kv_f16: keys and values in f16 */
	size_t es;		/* bytes of one of their elements, 2 or 4 */
	char **ck, **cv;	/* per layer [nsent, S, d]: att.{l}.k, .v */
	int tcap;		/* positions a slot holds */
	char **sk, **sv;	/* per layer [cap, tcap, d]: self-attention
				   (NULL each with dec_self=ssru) */
	float **cell;		/* dec_self=ssru: per layer [cap, d], row i
				   hypothesis i's SSRU state */
	float *cell_tmp;	/* [cap, d] dec_select's */
	int *slot, *sent;	/* [cap] per hypothesis */
	int *klen;		/* [cap] source length of each hypothesis */
	const void **kp, **vp;	/* [cap] each hypothesis' keys and values */
	int *nkeys;		/* [cap] the positions of the cache */
	int *pos;		/* [cap] the step's position t, for rope */
	int *tmp_slot, *tmp_sent, *claimed;	/* dec_select's */
	/* the step's rows, [cap, .] */
	float *x, *q, *k, *v, *ctx, *h, *logits;
	struct sub_acts sub;
	struct shortlist *sl;	/* o->shortlist: the output layer's */
};

/* wt [L] and out: m's matrices, packed as pack says (gemm_packed.h's
 * WPACK_*; int8 from an int8 export's own, model_wpack) or only wrapped. */
static int wrap_weights(const struct model *m, struct dec_wt *wt,
			struct wpack *out, int pack)
{
	const struct tf_net *n = m->net;
	int d = n->d, f = n->ffn, l, rc = 0;

	for (l = 0; l < n->dec_layers; l++) {
		const struct tf_dec_layer *w = &n->w.dec[l];
		struct dec_wt *t = &wt[l];

		if (n->ssru) {
			rc |= model_wpack(m, &t->ssru_W, w->ssru.W, d, d,
					  pack);
			rc |= model_wpack(m, &t->ssru_Wf, w->ssru.Wf, d, d,
					  pack);
		} else {
			rc |= model_wpack(m, &t->self_q, w->self.qW, d, d,
					  pack);
			rc |= model_wpack(m, &t->self_k, w->self.kW, d, d,
					  pack);
			rc |= model_wpack(m, &t->self_v, w->self.vW, d, d,
					  pack);
			rc |= model_wpack(m, &t->self_o, w->self.oW, d, d,
					  pack);
		}
		rc |= model_wpack(m, &t->cross_q, w->cross.qW, d, d, pack);
		rc |= model_wpack(m, &t->cross_o, w->cross.oW, d, d, pack);
		rc |= model_wpack(m, &t->W1, w->ffn.W1, f, d, pack);
		rc |= model_wpack(m, &t->W2, w->ffn.W2, d, f, pack);
	}
	rc |= model_wpack(m, out, n->w.out_W, n->tgt_vocab, d, pack);
	return rc ? -1 : 0;
}

static void free_weights(const struct tf_net *n, struct dec_wt *wt,
			 struct wpack *out)
{
	int l;

	for (l = 0; wt && l < n->dec_layers; l++) {
		wpack_free(&wt[l].self_q);
		wpack_free(&wt[l].self_k);
		wpack_free(&wt[l].self_v);
		wpack_free(&wt[l].self_o);
		wpack_free(&wt[l].cross_q);
		wpack_free(&wt[l].cross_o);
		wpack_free(&wt[l].W1);
		wpack_free(&wt[l].W2);
		wpack_free(&wt[l].ssru_W);
		wpack_free(&wt[l].ssru_Wf);
	}
	wpack_free(out);
	free(wt);
}

static struct dec_wt *alloc_wt(const struct tf_net *n)
{
	return calloc(n->dec_layers > 0 ? (size_t)n->dec_layers : 1,
		      sizeof(struct dec_wt));
}

/* A reference to m's matrices packed as pack says (WPACK_F32, _BF16,
 * _I8), for a decoder of rows rows: packed now when not yet, if fixed
 * (no unpacked form) or if the rows are more than SMALL_STEP, or once
 * small decoders have had more than that many (only the entry, without
 * them, when packing fails).  *wt gets the packed matrices or NULL, read
 * under the lock: another thread's decoder may be packing them (search
 * deals sentences out to threads, each with its decoder). */
static struct dec_pack *pack_get(const struct model *m, int pack, int fixed,
				 int rows, struct dec_wt **wt)
{
	const struct tf_net *n = m->net;
	struct dec_pack *p;

	pthread_mutex_lock(&packs_lock);
	for (p = packs; p && (p->n != n || p->pack != pack); p = p->next)
		;
	if (!p && (p = calloc(1, sizeof(*p)))) {
		p->m = m;
		p->n = n;
		p->pack = pack;
		p->next = packs;
		packs = p;
	}
	if (p) {
		int want = fixed || rows > SMALL_STEP ||
			   (p->small_rows += rows) > SMALL_STEP;

		p->refs++;
		if (want && !p->wt && (p->wt = alloc_wt(n)) &&
		    wrap_weights(m, p->wt, &p->out, pack) < 0) {
			free_weights(n, p->wt, &p->out);
			p->wt = NULL;
		}
	}
	*wt = p ? p->wt : NULL;
	pthread_mutex_unlock(&packs_lock);
	return p;
}

static void pack_put(struct dec_pack *p)
{
	struct dec_pack **pp;

	if (!p)
		return;
	pthread_mutex_lock(&packs_lock);
	if (--p->refs == 0) {
		for (pp = &packs; *pp != p; pp = &(*pp)->next)
			;
		*pp = p->next;
		free_weights(p->n, p->wt, &p->out);
		free(p);
	}
	pthread_mutex_unlock(&packs_lock);
}

/* The step's matrices: n's packed ones, packed now for a bf16 or int8
 * decoder, one of more than SMALL_STEP rows, or once small ones have
 * had that many rows (pack_get), else wrapped as they are. */
static int decoder_weights(struct tf_decoder *dc)
{
	const struct tf_net *n = dc->n;
	int fixed = dc->pack != WPACK_F32;
	struct dec_wt *packed;

	dc->packs = pack_get(dc->m, dc->pack, fixed, dc->cap, &packed);
	if (!dc->packs)
		goto oom;
	if (packed) {
		dc->wt = packed;
		dc->out_wt = &dc->packs->out;
		return 0;
	}
	if (fixed)	/* wpack_init's error: no f32 in its place */
		return -1;
	dc->plain = alloc_wt(n);
	if (!dc->plain ||
	    wrap_weights(dc->m, dc->plain, &dc->plain_out, WPACK_KEEP) < 0)
		goto oom;
	dc->wt = dc->plain;
	dc->out_wt = &dc->plain_out;
	return 0;
oom:
	err_set("out of memory for the decoder's weights");
	return -1;
}

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
	}
	for (l = 0; dc->cell && l < dc->n->dec_layers; l++)
		free(dc->cell[l]);
	pack_put(dc->packs);
	shortlist_free(dc->sl);
	free(dc->plain);
	free(dc->ck);
	free(dc->cv);
	free(dc->sk);
	free(dc->sv);
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
	if (decoder_weights(dc) < 0)
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

/* Doubles the positions every slot holds. */
static int grow_cache(struct tf_decoder *dc)
{
	int tcap = 2 * dc->tcap, l, s, kind;
	size_t d = dc->n->d, es = dc->es;

	for (l = 0; l < dc->n->dec_layers; l++) {
		for (kind = 0; kind < 2; kind++) {
			char **c = kind ? &dc->sv[l] : &dc->sk[l];
			char *nc = malloc(es * dc->cap * tcap * d);

			if (!nc) {
				err_set("out of memory for the decoder's "
					"cache (%d positions)", tcap);
				return -1;
			}
			for (s = 0; s < dc->cap; s++)
				memcpy(nc + es * s * tcap * d,
				       *c + es * s * dc->tcap * d,
				       es * dc->t * d);
			free(*c);
			*c = nc;
		}
	}
	dc->tcap = tcap;
	return 0;
}

/*
 * A block of the step's rows, from row lo: the decoder's [cap, .] arrays
 * from there.  Every part of a step treats each row alone (the products
 * too: gemm_packed.h), so blocks of any size give the same bits.
 */
struct rows {
	int lo, n;
	float *x, *q, *k, *v, *ctx, *h, *logits, *logp, *attw;
	struct sub_acts sub;
	const void **kp, **vp;
	int *nkeys, *pos;
	const int *slot, *sent, *klen;
	const int32_t *prev;
};

static void rows_at(const struct tf_decoder *dc, struct rows *r, int lo,
		    int n, const int32_t *prev, float *logp, float *attw)
{
	size_t d = dc->n->d, i = lo;

	*r = (struct rows){
		.lo = lo, .n = n, .x = dc->x + i * d, .q = dc->q + i * d,
		.k = dc->k + i * d, .v = dc->v + i * d,
		.ctx = dc->ctx + i * d, .h = dc->h + i * dc->n->ffn,
		.logits = dc->logits + i * dc->n->tgt_vocab,
		.logp = logp + i * dc->n->tgt_vocab,
		.attw = attw ? attw + i * dc->n->dec_layers * dc->n->heads *
			(size_t)dc->S : NULL,
		.sub = { .ln = dc->sub.ln + i * d, .mean = dc->sub.mean + i,
			 .rstd = dc->sub.rstd + i, .fo = dc->sub.fo + i * d,
			 .sum = dc->sub.sum + i * d },
		.kp = dc->kp + i, .vp = dc->vp + i, .nkeys = dc->nkeys + i,
		.pos = dc->pos + i, .slot = dc->slot + i,
		.sent = dc->sent + i, .klen = dc->klen + i, .prev = prev + i,
	};
}

/* Self-attention of the rows' queries (r->q) over each slot's cache. */
static void self_attention(const struct tf_decoder *dc, int l,
			   struct rows *r)
{
	const struct tf_net *n = dc->n;
	int d = n->d, i;
	size_t row = dc->es * dc->tcap * d;

	/* this position's keys and values join the cache */
	for (i = 0; i < r->n; i++) {
		char *k = dc->sk[l] + r->slot[i] * row, *v = dc->sv[l] +
			  r->slot[i] * row;
		size_t o = dc->es * dc->t * d;

		if (dc->kv16) {
			kv_to_f16((uint16_t *)(k + o), r->k + (size_t)i * d, d);
			kv_to_f16((uint16_t *)(v + o), r->v + (size_t)i * d, d);
		} else {
			memcpy(k + o, r->k + (size_t)i * d, sizeof(float) * d);
			memcpy(v + o, r->v + (size_t)i * d, sizeof(float) * d);
		}
		r->kp[i] = k;
		r->vp[i] = v;
		r->nkeys[i] = dc->t + 1;
	}
	attn_step(&(struct attn_step){
		.rows = r->n, .H = n->heads, .dk = n->dk,
		.scale = 1.0f / sqrtf((float)n->dk),
		.q = r->q, .qs = d, .k = r->kp, .v = r->vp, .ks = d,
		.vs = d, .f16 = dc->kv16, .n = r->nkeys, .out = r->ctx,
		.os = d,
	});
}

/* Cross-attention of r->q over the sentences' memory; with r->attw, the
 * weights go to attw [n, L*H, S] (layer l's planes). */
static void cross_attention(const struct tf_decoder *dc, int l,
			    struct rows *r)
{
	const struct tf_net *n = dc->n;
	int d = n->d, H = n->heads, S = dc->S, i;
	size_t mem = dc->es * S * d, plane = (size_t)H * S;

	for (i = 0; i < r->n; i++) {
		r->kp[i] = dc->ck[l] + r->sent[i] * mem;
		r->vp[i] = dc->cv[l] + r->sent[i] * mem;
	}
	attn_step(&(struct attn_step){
		.rows = r->n, .H = H, .dk = n->dk,
		.scale = 1.0f / sqrtf((float)n->dk),
		.q = r->q, .qs = d, .k = r->kp, .v = r->vp, .ks = d,
		.vs = d, .f16 = dc->kv16, .n = r->klen, .out = r->ctx,
		.os = d,
		.weights = r->attw ? r->attw + l * plane : NULL,
		.ws = (long)(n->dec_layers * plane), .wn = S,
	});
}

/* A sub-layer of the step: out = x + F(x) with F's output in sub.fo. */
static const float *step_out(const struct tf_decoder *dc, struct rows *r,
			     const struct ln_w *ln, const float *x)
{
	const float *y = tf_sub_out(dc->n, &r->sub, ln, x, r->n, 0.0f, NULL);

	/* the next sub-layer's input must survive its use of r->sub */
	memcpy(r->x, y, sizeof(float) * r->n * dc->n->d);
	return r->x;
}

/* The self-attention of the rows' inputs u, to r->sub.fo; 0 or -1. */
static int self_layer(const struct tf_decoder *dc, int l, struct rows *r,
		      const struct tf_dec_layer *w, const struct dec_wt *t,
		      const float *u, const float *x)
{
	const struct tf_net *n = dc->n;
	int nh = r->n, rc = 0;
	/* pre_kv=input: keys and values of the sub-layer's input itself */
	const float *kv = n->kv_in ? x : u;

	rc |= linear_packed(r->q, u, nh, &t->self_q, w->self.qb, 0);
	rc |= linear_packed(r->k, kv, nh, &t->self_k, w->self.kb, 0);
	rc |= linear_packed(r->v, kv, nh, &t->self_v, w->self.vb, 0);
	if (n->pos == POS_ROPE) {
		rope_forward(r->q, r->pos, nh, n->heads, n->dk, n->rope,
			     TF_PE_ROWS);
		rope_forward(r->k, r->pos, nh, n->heads, n->dk, n->rope,
			     TF_PE_ROWS);
	}
	self_attention(dc, l, r);
	rc |= linear_packed(r->sub.fo, r->ctx, nh, &t->self_o, w->self.ob, 0);
	return rc;
}

/* The step for a block of rows: their log-probabilities; 0 or -1. */
static int step_rows(const struct tf_decoder *dc, struct rows *r)
{
	const struct tf_net *n = dc->n;
	const float *x = r->x, *u;
	int l, nh = r->n, rc = 0;

	tf_embed_forward(n, r->x, r->prev, nh, 1, dc->t, 1);
	for (l = 0; l < n->dec_layers; l++) {
		const struct tf_dec_layer *w = &n->w.dec[l];
		const struct dec_wt *t = &dc->wt[l];

		u = tf_sub_in(n, &r->sub, &w->ln1, x, nh);
		if (n->ssru) {
			/* W u, Wf u + bf, then the cells move on */
			rc |= linear_packed(r->q, u, nh, &t->ssru_W, NULL, 0);
			rc |= linear_packed(r->k, u, nh, &t->ssru_Wf,
					    w->ssru.bf, 0);
			ssru_step_forward(r->sub.fo, dc->cell[l] +
					  (size_t)r->lo * n->d, r->q, r->k,
					  nh, n->d);
		} else {
			rc |= self_layer(dc, l, r, w, t, u, x);
		}
		x = step_out(dc, r, &w->ln1, x);

		u = tf_sub_in(n, &r->sub, &w->ln2, x, nh);
		rc |= linear_packed(r->q, u, nh, &t->cross_q, w->cross.qb, 0);
		cross_attention(dc, l, r);
		rc |= linear_packed(r->sub.fo, r->ctx, nh, &t->cross_o,
				    w->cross.ob, 0);
		x = step_out(dc, r, &w->ln2, x);

		/* the FFN of ffn.c */
		u = tf_sub_in(n, &r->sub, &w->ln3, x, nh);
		rc |= linear_packed(r->h, u, nh, &t->W1, w->ffn.b1,
				    !n->swish);
		if (n->swish)
			tf_swish(r->h, r->h, (size_t)nh * n->ffn);
		rc |= linear_packed(r->sub.fo, r->h, nh, &t->W2, w->ffn.b2, 0);
		x = step_out(dc, r, &w->ln3, x);
	}
	u = tf_sub_in(n, &r->sub, &n->w.dec_ln, x, nh);
	if (dc->sl) {
		rc |= shortlist_logp(dc->sl, r->logp, n->tgt_vocab, u, nh,
				     r->sent);
	} else {
		rc |= linear_packed(r->logits, u, nh, dc->out_wt,
				    n->w.out_b, 0);
		if (!rc)
			log_softmax_rows(r->logp, r->logits, nh,
					 n->tgt_vocab);
	}
	return rc ? -1 : 0;	/* bf16, int8: out of memory for x's rows */
}

struct step_job {
	const struct tf_decoder *dc;
	const int32_t *prev;
	float *logp, *attw;
	_Atomic int rc;
};

static void step_task(void *ctx, int64_t lo, int64_t hi)
{
	struct step_job *j = ctx;
	struct rows r;

	rows_at(j->dc, &r, (int)lo, (int)(hi - lo), j->prev, j->logp,
		j->attw);
	if (step_rows(j->dc, &r) < 0)
		j->rc = -1;
}

/* 1 when this is the first step of a model with bos_id -1 and every
 * hypothesis' input is that -1 (a zero vector): dec_step_check refuses
 * it, as it refuses any id outside the vocabulary. */
static int first_zero_step(const struct tf_decoder *dc, int nh,
			  const int32_t *prev)
{
	int i;

	if (dc->t || dc->m->bos_id != -1 || nh < 0 || nh > dc->nh)
		return 0;
	for (i = 0; i < nh; i++)
		if (prev[i] != -1)
			return 0;
	err_clear();
	return 1;
}

int tf_dec_step(struct decoder *d, int nh, const int32_t *prev, float *logp,
		float *attw)
{
	struct tf_decoder *dc = (struct tf_decoder *)d;
	const struct tf_net *n = dc->n;
	struct step_job j = { dc, prev, logp, attw, 0 };
	int i, block;

	/* fewer than last time: the last ones were dropped (model.h) */
	if (dec_step_check(nh, dc->nh, prev, n->tgt_vocab) < 0 &&
	    !first_zero_step(dc, nh, prev))
		return -1;
	dc->nh = nh;
	if (nh == 0)
		return 0;
	if (dc->t >= tf_pos_limit(n)) {
		err_set("transformer: the translation of sentence %d of the "
			"batch outgrows max_pos=%d of pos=learned",
			dc->sent[0], n->max_pos);
		return -1;
	}
	if (!n->ssru && dc->t == dc->tcap && grow_cache(dc) < 0)
		return -1;
	for (i = 0; i < nh; i++)
		dc->pos[i] = dc->t;
	if ((block = dec_step_block(nh, dc->sl != NULL)) > 0)
		kern_parallel_for(nh, block, step_task, &j);
	else
		step_task(&j, 0, nh);
	if (j.rc < 0)
		return -1;
	dc->t++;
	return 0;
}

int tf_dec_select(struct decoder *d, int nh, const int *parent)
{
	struct tf_decoder *dc = (struct tf_decoder *)d;
	size_t row = dc->es * dc->tcap * dc->n->d;
	size_t used = dc->es * dc->t * dc->n->d;
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
