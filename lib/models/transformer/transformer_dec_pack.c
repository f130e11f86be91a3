/*
 * transformer_dec_pack.c: the step's weight matrices of the Transformer's
 * decoder (transformer_dec.h).
 *
 * A step multiplies a few dozen rows by every weight matrix, where sgemm
 * spends more time packing a matrix than multiplying; so the step's
 * matrices are packed (gemm_packed.h), once for all the live decoders of
 * a model: the first decoder of more than SMALL_STEP rows packs them (or
 * the first after small ones have had that many rows), the last decoder
 * of the model frees them.  A program that keeps a decoder of its model
 * alive (translate.c) thus packs once for all its batches; the model's
 * weights must then not change while it does (nor while any decoder
 * lives: it holds copies).
 *
 * With o->bf16 (arch.h's dec_opts) the products are bf16 ones: every
 * decoder packs in bf16 whatever its rows (sgemm on the weights as stored
 * would give other bits, and a sentence's output would depend on its
 * batch), into packs of their own, never those of f32 decoders of the
 * same model.  So with an int8 export (m->int8, before o->bf16): its
 * int8 matrices, and a tied output projection (the f32 embedding table)
 * quantised by the pack as the export would have.
 */
#include <pthread.h>
#include <stdlib.h>
#include "base/errmsg.h"
#include "transformer_dec.h"

/*
 * Up to this many rows, sgemm streams [out, in] weights without packing,
 * until the small decoders of a model have had more than this many rows
 * in all: packing costs about as much as decoding 8 sentences unpacked
 * (the shipped model, f32, Zen 5: 40 ms once, against 5-6 ms a sentence
 * with -b 1 or -b 8), so one line is translated unpacked and a file with
 * -b 1 packed from its ninth line on.
 */
#define SMALL_STEP 8

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
	int has_out;		/* out packed: not until a decoder without a
				   shortlist asks (one with never reads it;
				   the student's tied 32,000 x 256 took 7%
				   of decode's CPU time to quantise and pack) */
	struct dec_pack *next;
};

static struct dec_pack *packs;
static pthread_mutex_t packs_lock = PTHREAD_MUTEX_INITIALIZER;

/* wt [L] and out (NULL: not it): m's matrices, packed as pack says
 * (gemm_packed.h's WPACK_*; int8 from an int8 export's own, model_wpack)
 * or only wrapped. */
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
	if (out)
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
 * _I8), for a decoder of rows rows (the output layer's if need_out):
 * packed now when not yet, if fixed
 * (no unpacked form) or if the rows are more than SMALL_STEP, or once
 * small decoders have had more than that many (only the entry, without
 * them, when packing fails).  *wt gets the packed matrices or NULL, read
 * under the lock: another thread's decoder may be packing them (search
 * deals sentences out to threads, each with its decoder). */
static struct dec_pack *pack_get(const struct model *m, int pack, int fixed,
				 int rows, int need_out, struct dec_wt **wt)
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
		    wrap_weights(m, p->wt, NULL, pack) < 0) {
			free_weights(n, p->wt, &p->out);
			p->wt = NULL;
		}
	}
	*wt = p ? p->wt : NULL;
	/* live decoders may hold p->wt: on failure only this one goes
	 * without */
	if (*wt && need_out && !p->has_out) {
		if (model_wpack(m, &p->out, n->w.out_W, n->tgt_vocab, n->d,
				pack) < 0)
			*wt = NULL;
		else
			p->has_out = 1;
	}
	pthread_mutex_unlock(&packs_lock);
	return p;
}

void tf_dec_pack_put(struct dec_pack *p)
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
int tf_dec_weights(struct tf_decoder *dc, int need_out)
{
	const struct tf_net *n = dc->n;
	int fixed = dc->pack != WPACK_F32;
	struct dec_wt *packed;

	dc->packs = pack_get(dc->m, dc->pack, fixed, dc->cap, need_out,
			     &packed);
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
