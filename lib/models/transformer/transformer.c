/*
 * transformer.c: arch_transformer, the Transformer of Vaswani et al. 2017
 * as MODELS.md gives it: its parameters, the pipeline's stages (embed,
 * encode, attend) and training (one forward and backward pass over a
 * padded batch).  The step-by-step decoder is in transformer_dec.c, the
 * input layer in transformer_layers.c; the layers it shares are nn/'s.
 *
 * Every stage works on all rows of a batch at once: B sentences padded to
 * the longest (S source, T target positions) make [B*S, d] and [B*T, d]
 * matrices, and padding is masked in attention (klen), so it never
 * changes a real position's result.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/errmsg.h"
#include "kernels/kernels.h"
#include "nn/layers.h"
#include "transformer.h"

/*
 * The paper's base model is d_model=512 heads=8 ffn=2048 with 6+6 layers;
 * these defaults are a smaller model of the same shape.  Its training
 * settings override the RNNsearch paper's (model.c): Adam with beta2 0.98
 * and eps 1e-9, the noam schedule with warmup 4000 (lr 1 gives the paper's
 * rate), no gradient clipping, dropout 0.1 (sub-layer outputs, embedding
 * sums and, as tensor2tensor, attention weights) and label smoothing 0.1.
 * The paper's batches hold about 25000 source and 25000 target tokens.
 */
static const char *const tf_defaults[] = {
	"d_model=256", "heads=4", "ffn=1024", "enc_layers=3", "dec_layers=3",
	"norm=post", "tie=none", "ln_eps=1e-05",
	"optim=adam", "beta1=0.9", "beta2=0.98", "adam_eps=1e-9",
	"schedule=noam", "lr=1", "warmup=4000", "clip=0", "dropout=0.1",
	"label_smoothing=0.1", NULL,
};

/* For a config without them (a model file states every training key). */
#define DEFAULT_DROPOUT 0.1
#define DEFAULT_LABEL_SMOOTHING 0.1

/* ---- sizes and parameters ---------------------------------------------- */

static int cfg_pos_int(const struct model *m, const char *key, int *out)
{
	long v;

	if (config_int(&m->cfg, key, &v) < 0)
		return -1;
	if (v < 1 || v > 1 << 20) {
		err_set("model.config: %s=%ld is out of range", key, v);
		return -1;
	}
	*out = (int)v;
	return 0;
}

/* Reads and checks the sizes of n from m's config. */
static int read_sizes(const struct model *m, struct tf_net *n)
{
	const char *norm = config_get(&m->cfg, "norm");
	const char *tie = config_get(&m->cfg, "tie");
	double eps = 1e-5;

	if (cfg_pos_int(m, "src_vocab", &n->src_vocab) < 0 ||
	    cfg_pos_int(m, "tgt_vocab", &n->tgt_vocab) < 0 ||
	    cfg_pos_int(m, "d_model", &n->d) < 0 ||
	    cfg_pos_int(m, "heads", &n->heads) < 0 ||
	    cfg_pos_int(m, "ffn", &n->ffn) < 0 ||
	    cfg_pos_int(m, "enc_layers", &n->enc_layers) < 0 ||
	    cfg_pos_int(m, "dec_layers", &n->dec_layers) < 0)
		return -1;
	if (n->d % n->heads) {
		err_set("model.config: d_model=%d is not divisible by heads=%d",
			n->d, n->heads);
		return -1;
	}
	n->dk = n->d / n->heads;
	if (!norm || (strcmp(norm, "post") && strcmp(norm, "pre"))) {
		err_set("model.config: norm must be post or pre, not %s",
			norm ? norm : "missing");
		return -1;
	}
	n->pre = !strcmp(norm, "pre");
	if (tie && !strcmp(tie, "none"))
		n->tie = TIE_NONE;
	else if (tie && !strcmp(tie, "tgt"))
		n->tie = TIE_TGT;
	else if (tie && !strcmp(tie, "all"))
		n->tie = TIE_ALL;
	else {
		err_set("model.config: tie must be none, tgt or all, not %s",
			tie ? tie : "missing");
		return -1;
	}
	if (n->tie == TIE_ALL && n->src_vocab != n->tgt_vocab) {
		err_set("model.config: tie=all needs src_vocab (%d) equal to "
			"tgt_vocab (%d)", n->src_vocab, n->tgt_vocab);
		return -1;
	}
	if (config_get(&m->cfg, "ln_eps") &&
	    config_double(&m->cfg, "ln_eps", &eps) < 0)
		return -1;
	if (!(eps > 0 && eps < 1)) {
		err_set("model.config: ln_eps=%g is out of range", eps);
		return -1;
	}
	n->ln_eps = (float)eps;
	n->emb_scale = sqrtf((float)n->d);
	return 0;
}

/* A tf_net with its layer arrays and PE table, in one allocation (so that
 * model_free's free(m->net) releases it all). */
static struct tf_net *net_alloc(const struct model *m)
{
	struct tf_net sz, *n;
	size_t le, ld, off;
	char *p;

	memset(&sz, 0, sizeof(sz));
	if (read_sizes(m, &sz) < 0)
		return NULL;
	le = sizeof(struct tf_enc_layer) * sz.enc_layers;
	ld = sizeof(struct tf_dec_layer) * sz.dec_layers;
	off = (sizeof(struct tf_net) + 63) & ~(size_t)63;
	p = calloc(1, off + 2 * (le + ld) + sizeof(float) * TF_PE_ROWS * sz.d);
	if (!p) {
		err_set("out of memory for the transformer");
		return NULL;
	}
	n = (struct tf_net *)p;
	*n = sz;
	n->w.enc = (struct tf_enc_layer *)(p + off);
	n->g.enc = (struct tf_enc_layer *)(p + off + le);
	n->w.dec = (struct tf_dec_layer *)(p + off + 2 * le);
	n->g.dec = (struct tf_dec_layer *)(p + off + 2 * le + ld);
	n->pe = (float *)(p + off + 2 * (le + ld));
	posenc_table(n->pe, TF_PE_ROWS, n->d);
	return n;
}

/* Declares (declare) or binds every parameter, in MODELS.md's order. */
struct walker {
	struct model *m;
	int declare, err;
};

static void ATTN_PRINTF(7, 8) par(struct walker *wk, float **w, float **g,
				  int rank, int d0, int d1, const char *fmt, ...)
{
	char name[PARAM_NAME_MAX];
	struct param *p;
	va_list ap;

	if (wk->err)
		return;
	va_start(ap, fmt);
	vsnprintf(name, sizeof(name), fmt, ap);
	va_end(ap);
	if (wk->declare) {
		if (model_add_param(wk->m, name, rank, d0, rank > 1 ? d1 : 0) < 0)
			wk->err = -1;
		return;
	}
	p = model_param(wk->m, name);
	if (!p) {
		err_set("transformer: no parameter %s", name);
		wk->err = -1;
		return;
	}
	*w = p->w;
	*g = p->g;
}

static void par_mha(struct walker *wk, struct mha_w *w, struct mha_w *g,
		    int d, const char *pfx)
{
	par(wk, &w->qW, &g->qW, 2, d, d, "%s.q.W", pfx);
	par(wk, &w->qb, &g->qb, 1, d, 0, "%s.q.b", pfx);
	par(wk, &w->kW, &g->kW, 2, d, d, "%s.k.W", pfx);
	par(wk, &w->kb, &g->kb, 1, d, 0, "%s.k.b", pfx);
	par(wk, &w->vW, &g->vW, 2, d, d, "%s.v.W", pfx);
	par(wk, &w->vb, &g->vb, 1, d, 0, "%s.v.b", pfx);
	par(wk, &w->oW, &g->oW, 2, d, d, "%s.o.W", pfx);
	par(wk, &w->ob, &g->ob, 1, d, 0, "%s.o.b", pfx);
}

static void par_ln(struct walker *wk, struct ln_w *w, struct ln_w *g, int d,
		   const char *pfx)
{
	par(wk, &w->g, &g->g, 1, d, 0, "%s.g", pfx);
	par(wk, &w->b, &g->b, 1, d, 0, "%s.b", pfx);
}

static void par_ffn(struct walker *wk, struct ffn_w *w, struct ffn_w *g,
		    int d, int f, const char *pfx)
{
	par(wk, &w->W1, &g->W1, 2, f, d, "%s.W1", pfx);
	par(wk, &w->b1, &g->b1, 1, f, 0, "%s.b1", pfx);
	par(wk, &w->W2, &g->W2, 2, d, f, "%s.W2", pfx);
	par(wk, &w->b2, &g->b2, 1, d, 0, "%s.b2", pfx);
}

static int walk(struct model *m, struct tf_net *n, int declare)
{
	struct walker wk = { m, declare, 0 };
	struct tf_params *w = &n->w, *g = &n->g;
	char pfx[PARAM_NAME_MAX];
	int d = n->d, f = n->ffn, l;

	if (n->tie != TIE_ALL)
		par(&wk, &w->src_emb, &g->src_emb, 2, n->src_vocab, d,
		    "src.emb");
	par(&wk, &w->tgt_emb, &g->tgt_emb, 2, n->tgt_vocab, d, "tgt.emb");
	for (l = 0; l < n->enc_layers; l++) {
		struct tf_enc_layer *lw = &w->enc[l], *lg = &g->enc[l];

		snprintf(pfx, sizeof(pfx), "enc.%d.self", l);
		par_mha(&wk, &lw->self, &lg->self, d, pfx);
		snprintf(pfx, sizeof(pfx), "enc.%d.ln1", l);
		par_ln(&wk, &lw->ln1, &lg->ln1, d, pfx);
		snprintf(pfx, sizeof(pfx), "enc.%d.ln2", l);
		par_ln(&wk, &lw->ln2, &lg->ln2, d, pfx);
		snprintf(pfx, sizeof(pfx), "enc.%d.ffn", l);
		par_ffn(&wk, &lw->ffn, &lg->ffn, d, f, pfx);
	}
	for (l = 0; l < n->dec_layers; l++) {
		struct tf_dec_layer *lw = &w->dec[l], *lg = &g->dec[l];

		snprintf(pfx, sizeof(pfx), "dec.%d.self", l);
		par_mha(&wk, &lw->self, &lg->self, d, pfx);
		snprintf(pfx, sizeof(pfx), "dec.%d.cross", l);
		par_mha(&wk, &lw->cross, &lg->cross, d, pfx);
		snprintf(pfx, sizeof(pfx), "dec.%d.ln1", l);
		par_ln(&wk, &lw->ln1, &lg->ln1, d, pfx);
		snprintf(pfx, sizeof(pfx), "dec.%d.ln2", l);
		par_ln(&wk, &lw->ln2, &lg->ln2, d, pfx);
		snprintf(pfx, sizeof(pfx), "dec.%d.ln3", l);
		par_ln(&wk, &lw->ln3, &lg->ln3, d, pfx);
		snprintf(pfx, sizeof(pfx), "dec.%d.ffn", l);
		par_ffn(&wk, &lw->ffn, &lg->ffn, d, f, pfx);
	}
	if (n->pre) {
		par_ln(&wk, &w->enc_ln, &g->enc_ln, d, "enc.ln");
		par_ln(&wk, &w->dec_ln, &g->dec_ln, d, "dec.ln");
	}
	if (n->tie == TIE_NONE)
		par(&wk, &w->out_W, &g->out_W, 2, n->tgt_vocab, d, "out.W");
	par(&wk, &w->out_b, &g->out_b, 1, n->tgt_vocab, 0, "out.b");
	if (n->tie == TIE_ALL) {
		w->src_emb = w->tgt_emb;
		g->src_emb = g->tgt_emb;
	}
	if (n->tie != TIE_NONE) {
		w->out_W = w->tgt_emb;
		g->out_W = g->tgt_emb;
	}
	return wk.err;
}

static int tf_declare(struct model *m)
{
	struct tf_net *n = net_alloc(m);
	int rc;

	if (!n)
		return -1;
	m->src_vocab = n->src_vocab;
	m->tgt_vocab = n->tgt_vocab;
	rc = walk(m, n, 1);
	free(n);
	return rc;
}

static int tf_bind(struct model *m)
{
	struct tf_net *n = net_alloc(m);

	if (!n)
		return -1;
	if (walk(m, n, 0) < 0) {
		free(n);
		return -1;
	}
	free(m->net);
	m->net = n;
	return 0;
}

static int ends_with(const char *s, const char *suffix)
{
	size_t ls = strlen(s), lx = strlen(suffix);

	return ls >= lx && !strcmp(s + ls - lx, suffix);
}

/* Xavier-uniform matrices, embeddings N(0, 1/d), biases 0, LN gains 1. */
static void tf_init(struct model *m)
{
	const struct tf_net *n = m->net;
	int i;

	for (i = 0; i < m->nparam; i++) {
		struct param *p = &m->param[i];
		size_t k;

		if (ends_with(p->name, ".emb")) {
			double sd = 1.0 / sqrt((double)n->d);

			for (k = 0; k < p->n; k++)
				p->w[k] = (float)(sd * rng_normal(&m->rng));
		} else if (p->rank == 2) {
			double a = sqrt(6.0 / (p->dim[0] + p->dim[1]));

			for (k = 0; k < p->n; k++)
				p->w[k] = (float)(a * (2 * rng_uniform(&m->rng)
						       - 1));
		} else {
			float v = ends_with(p->name, ".g") ? 1.0f : 0.0f;

			for (k = 0; k < p->n; k++)
				p->w[k] = v;
		}
	}
}

/* ---- activations of a batch -------------------------------------------- */

struct enc_acts {
	struct sub_acts s_att, s_ffn;
	struct mha_acts att;
	float *h;			/* FFN hidden [N, f] */
};

struct dec_acts {
	struct sub_acts s_self, s_cross, s_ffn;
	struct mha_acts self, cross;
	float *h;
};

/* Everything a forward pass keeps, and the backward pass's scratch. */
struct fwd {
	int B, S, T;			/* T 0: the encoder only */
	float drop;			/* dropout rate, 0 when off */
	int train;			/* keep what the backward pass needs */
	const int *slen, *tlen;
	const int32_t *src_ids;		/* [B*S] */
	int32_t *dec_in;		/* [B*T] <s> tgt[0 .. T-2] */
	float *x0;			/* [B*S, d] encoder input */
	uint8_t *m0;
	struct enc_acts *enc;
	struct sub_acts enc_ln;		/* pre-norm's final enc.ln */
	float *E;			/* [B*S, d] encoder output */
	float *y0;			/* [B*T, d] decoder input */
	uint8_t *my0;
	struct dec_acts *dec;
	struct sub_acts dec_ln;
	float *Y;			/* [B*T, d] decoder output */
	/* training: the output layer sees only rows whose reference is not
	 * <pad> (their loss and gradient are zero) */
	const int32_t *tgt_ids;		/* [B*T] references, or NULL */
	int nout;			/* rows of logits */
	int *out_row;			/* [nout] their rows of Y */
	int32_t *out_tgt;		/* [nout] their references */
	float *Yo;			/* [nout, d] their rows of Y */
	float *logits;			/* [nout, V] (all B*T rows: nout);
					   training: without out.b */
	/* backward scratch */
	float *dA, *dB, *dln, *dfo, *dE, *dh, *dmha;
};

/* A bump allocator: a first pass with base NULL only counts. */
struct arena {
	char *base;
	size_t off;
};

static void *take(struct arena *a, size_t bytes)
{
	void *p = a->base ? a->base + a->off : NULL;

	a->off += (bytes + 63) & ~(size_t)63;
	return p;
}

#define TAKEF(a, n) ((float *)take((a), sizeof(float) * (size_t)(n)))
#define TAKEB(a, n) ((uint8_t *)take((a), (size_t)(n)))

static void plan_sub(struct sub_acts *s, struct arena *a, const struct fwd *f,
		     size_t N, int d)
{
	s->ln = TAKEF(a, N * d);
	s->mean = TAKEF(a, N);
	s->rstd = TAKEF(a, N);
	s->fo = TAKEF(a, N * d);
	s->sum = TAKEF(a, N * d);
	s->mask = f->drop > 0 ? TAKEB(a, N * d) : NULL;
}

static void plan_mha(struct mha_acts *m, struct arena *a, const struct fwd *f,
		     int H, size_t Tq, size_t Tk, int d)
{
	m->q = TAKEF(a, f->B * Tq * d);
	m->k = TAKEF(a, f->B * Tk * d);
	m->v = TAKEF(a, f->B * Tk * d);
	m->ctx = TAKEF(a, f->B * Tq * d);
	m->lse = TAKEF(a, (size_t)f->B * H * Tq);
}

static size_t maxz(size_t a, size_t b)
{
	return a > b ? a : b;
}

static struct mha_dims mha_dims_of(const struct tf_net *n, const struct fwd *f,
				   int Tq, int Tk, const int *klen,
				   int causal)
{
	return (struct mha_dims){
		.B = f->B, .Tq = Tq, .Tk = Tk, .d = n->d, .heads = n->heads,
		.klen = klen, .causal = causal, .dropout = f->drop,
	};
}

/* Lays out f's buffers in a (f's sizes and flags set). */
static void plan(struct fwd *f, struct arena *a, const struct tf_net *n)
{
	size_t N = (size_t)f->B * f->S, M = (size_t)f->B * f->T;
	size_t rows = maxz(N, M);
	int d = n->d, H = n->heads, l;
	struct mha_dims es, ds, dc;

	f->x0 = TAKEF(a, N * d);
	f->m0 = f->drop > 0 ? TAKEB(a, N * d) : NULL;
	f->enc = take(a, sizeof(*f->enc) * n->enc_layers);
	for (l = 0; l < n->enc_layers; l++) {
		struct enc_acts tmp, *e = a->base ? &f->enc[l] : &tmp;

		plan_sub(&e->s_att, a, f, N, d);
		plan_mha(&e->att, a, f, H, f->S, f->S, d);
		plan_sub(&e->s_ffn, a, f, N, d);
		e->h = TAKEF(a, N * n->ffn);
	}
	plan_sub(&f->enc_ln, a, f, N, d);
	if (!f->T)
		return;
	f->dec_in = take(a, sizeof(int32_t) * M);
	f->y0 = TAKEF(a, M * d);
	f->my0 = f->drop > 0 ? TAKEB(a, M * d) : NULL;
	f->dec = take(a, sizeof(*f->dec) * n->dec_layers);
	for (l = 0; l < n->dec_layers; l++) {
		struct dec_acts tmp, *e = a->base ? &f->dec[l] : &tmp;

		plan_sub(&e->s_self, a, f, M, d);
		plan_mha(&e->self, a, f, H, f->T, f->T, d);
		plan_sub(&e->s_cross, a, f, M, d);
		plan_mha(&e->cross, a, f, H, f->T, f->S, d);
		plan_sub(&e->s_ffn, a, f, M, d);
		e->h = TAKEF(a, M * n->ffn);
	}
	plan_sub(&f->dec_ln, a, f, M, d);
	f->logits = TAKEF(a, M * n->tgt_vocab);
	if (!f->train)
		return;
	f->out_row = take(a, sizeof(int) * M);
	f->out_tgt = take(a, sizeof(int32_t) * M);
	f->Yo = TAKEF(a, M * d);
	f->dA = TAKEF(a, rows * d);
	f->dB = TAKEF(a, rows * d);
	f->dln = TAKEF(a, rows * d);
	f->dfo = TAKEF(a, rows * d);
	f->dE = TAKEF(a, N * d);
	f->dh = TAKEF(a, rows * n->ffn);
	es = mha_dims_of(n, f, f->S, f->S, NULL, 0);
	ds = mha_dims_of(n, f, f->T, f->T, NULL, 1);
	dc = mha_dims_of(n, f, f->T, f->S, NULL, 0);
	f->dmha = TAKEF(a, maxz(mha_scratch_floats(&es),
				maxz(mha_scratch_floats(&ds),
				     mha_scratch_floats(&dc))));
}

/*
 * The workspace of the calling thread, kept between batches: a batch's
 * activations are tens of megabytes, and mapping them afresh every batch
 * costs a page fault per 4 KiB.
 */
static _Thread_local struct {
	void *p;
	size_t cap;
} ws;

static int plan_alloc(struct fwd *f, const struct tf_net *n)
{
	struct arena a = { NULL, 0 };

	plan(f, &a, n);
	if (a.off > ws.cap) {
		free(ws.p);
		ws.p = aligned_alloc(64, a.off);
		ws.cap = ws.p ? a.off : 0;
		if (!ws.p) {
			err_set("transformer: out of memory for a batch "
				"(%zu bytes)", a.off);
			return -1;
		}
	}
	a.base = ws.p;
	a.off = 0;
	plan(f, &a, n);
	return 0;
}

/* ---- forward ----------------------------------------------------------- */

static void maybe_dropout(float *x, uint8_t *mask, size_t n, float p,
			  struct rng *r)
{
	if (p > 0)
		dropout_forward(x, mask, NULL, x, n, p, r);
}

const float *tf_sub_in(const struct tf_net *n, struct sub_acts *s,
			   const struct ln_w *ln, const float *x, int N)
{
	if (!n->pre)
		return x;
	layernorm_forward(s->ln, s->mean, s->rstd, x, ln->g, ln->b, N, n->d,
			  n->ln_eps);
	return s->ln;
}

const float *tf_sub_out(const struct tf_net *n, struct sub_acts *s,
			    const struct ln_w *ln, const float *x, int N,
			    float drop, struct rng *r)
{
	size_t k = (size_t)N * n->d;

	dropout_forward(s->sum, s->mask, x, s->fo, k, drop, r);
	if (n->pre)
		return s->sum;
	layernorm_forward(s->ln, s->mean, s->rstd, s->sum, ln->g, ln->b, N,
			  n->d, n->ln_eps);
	return s->ln;
}

/* Pre-norm's final layer norm (enc.ln, dec.ln); post-norm: x itself. */
static const float *final_ln(const struct tf_net *n, struct sub_acts *s,
			     const struct ln_w *ln, const float *x, int N)
{
	return tf_sub_in(n, s, ln, x, N);
}

/* The encoder over f->x0 (the embedding sums, before dropout). */
static void encoder_forward(const struct tf_net *n, struct fwd *f,
			    struct rng *r)
{
	int N = f->B * f->S, l;
	struct mha_dims dm = mha_dims_of(n, f, f->S, f->S, f->slen, 0);
	const float *x = f->x0, *u;

	maybe_dropout(f->x0, f->m0, (size_t)N * n->d, f->drop, r);
	for (l = 0; l < n->enc_layers; l++) {
		const struct tf_enc_layer *w = &n->w.enc[l];
		struct enc_acts *e = &f->enc[l];

		u = tf_sub_in(n, &e->s_att, &w->ln1, x, N);
		mha_forward(e->s_att.fo, &e->att, u, u, &w->self, &dm, r);
		x = tf_sub_out(n, &e->s_att, &w->ln1, x, N, f->drop, r);
		u = tf_sub_in(n, &e->s_ffn, &w->ln2, x, N);
		ffn_forward(e->s_ffn.fo, e->h, u, &w->ffn, N, n->d, n->ffn);
		x = tf_sub_out(n, &e->s_ffn, &w->ln2, x, N, f->drop, r);
	}
	f->E = (float *)final_ln(n, &f->enc_ln, &n->w.enc_ln, x, N);
}

/* The rows of f->Y that the output layer sees (f->nout of them). */
static const float *output_rows(const struct tf_net *n, struct fwd *f)
{
	int M = f->B * f->T, i, k = 0;

	if (!f->tgt_ids) {
		f->nout = M;
		return f->Y;
	}
	for (i = 0; i < M; i++) {
		if (f->tgt_ids[i] == 0)
			continue;
		f->out_row[k] = i;
		f->out_tgt[k] = f->tgt_ids[i];
		memcpy(f->Yo + (size_t)k * n->d, f->Y + (size_t)i * n->d,
		       sizeof(float) * n->d);
		k++;
	}
	f->nout = k;
	return f->Yo;
}

/* The decoder over f->dec_in and f->E, to f->logits. */
static void decoder_forward(const struct tf_net *n, struct fwd *f,
			    struct rng *r)
{
	int M = f->B * f->T, l;
	struct mha_dims ds = mha_dims_of(n, f, f->T, f->T, f->tlen, 1);
	struct mha_dims dc = mha_dims_of(n, f, f->T, f->S, f->slen, 0);
	const float *y = f->y0, *u;

	tf_embed_forward(n, f->y0, f->dec_in, f->B, f->T, 0, n->w.tgt_emb);
	maybe_dropout(f->y0, f->my0, (size_t)M * n->d, f->drop, r);
	for (l = 0; l < n->dec_layers; l++) {
		const struct tf_dec_layer *w = &n->w.dec[l];
		struct dec_acts *e = &f->dec[l];

		u = tf_sub_in(n, &e->s_self, &w->ln1, y, M);
		mha_forward(e->s_self.fo, &e->self, u, u, &w->self, &ds, r);
		y = tf_sub_out(n, &e->s_self, &w->ln1, y, M, f->drop, r);
		u = tf_sub_in(n, &e->s_cross, &w->ln2, y, M);
		mha_forward(e->s_cross.fo, &e->cross, u, f->E, &w->cross, &dc,
			    r);
		y = tf_sub_out(n, &e->s_cross, &w->ln2, y, M, f->drop, r);
		u = tf_sub_in(n, &e->s_ffn, &w->ln3, y, M);
		ffn_forward(e->s_ffn.fo, e->h, u, &w->ffn, M, n->d, n->ffn);
		y = tf_sub_out(n, &e->s_ffn, &w->ln3, y, M, f->drop, r);
	}
	f->Y = (float *)final_ln(n, &f->dec_ln, &n->w.dec_ln, y, M);
	y = output_rows(n, f);
	/* training: the loss adds out.b, row by row (tf_train_batch) */
	linear_forward(f->logits, y, n->w.out_W, f->train ? NULL : n->w.out_b,
		       f->nout, n->d, n->tgt_vocab);
}

/* ---- backward ---------------------------------------------------------- */

/*
 * Backward of a sub-layer's output half: from dy, the gradient of its
 * output, sets dx to the residual path's share of its input's gradient and
 * returns the gradient of the function's output (before dropout) in
 * f->dfo; *dfin is where the function's backward adds its input's
 * gradient (dx in post-norm, f->dln in pre-norm, for sub_back_in).
 */
static const float *sub_back_out(const struct tf_net *n, struct fwd *f,
				 const struct sub_acts *s,
				 const struct ln_w *ln, struct ln_w *lng,
				 const float *dy, float *dx, int N,
				 float **dfin)
{
	size_t k = (size_t)N * n->d;
	const float *dsum = dy;

	if (n->pre) {
		memcpy(dx, dy, sizeof(float) * k);
		memset(f->dln, 0, sizeof(float) * k);
		*dfin = f->dln;
	} else {
		memset(dx, 0, sizeof(float) * k);
		layernorm_backward(dx, lng->g, lng->b, dy, s->sum, ln->g,
				   s->mean, s->rstd, N, n->d);
		dsum = dx;
		*dfin = dx;
	}
	/* a copy even without dropout: the function's backward adds into
	 * *dfin, which may be dsum */
	if (f->drop > 0) {
		memset(f->dfo, 0, sizeof(float) * k);
		dropout_backward(f->dfo, dsum, s->mask, k, f->drop);
	} else {
		memcpy(f->dfo, dsum, sizeof(float) * k);
	}
	return f->dfo;
}

/* Pre-norm: the layer norm in front of the function, into dx. */
static void sub_back_in(const struct tf_net *n, const struct fwd *f,
			const struct sub_acts *s, const struct ln_w *ln,
			struct ln_w *lng, const float *x, float *dx, int N)
{
	if (n->pre)
		layernorm_backward(dx, lng->g, lng->b, f->dln, x, ln->g,
				   s->mean, s->rstd, N, n->d);
}

/* Pre-norm's final layer norm: dy -> dx (post-norm: dx = dy). */
static void final_ln_back(const struct tf_net *n, const struct sub_acts *s,
			  const struct ln_w *ln, struct ln_w *lng,
			  const float *x, const float *dy, float *dx, int N)
{
	size_t k = (size_t)N * n->d;

	if (!n->pre) {
		memcpy(dx, dy, sizeof(float) * k);
		return;
	}
	memset(dx, 0, sizeof(float) * k);
	layernorm_backward(dx, lng->g, lng->b, dy, x, ln->g, s->mean, s->rstd,
			   N, n->d);
}

static void swap(float **a, float **b)
{
	float *t = *a;

	*a = *b;
	*b = t;
}

/* The input of sub-layer s of a stack: the previous sub-layer's output. */
static const float *sub_output(const struct tf_net *n,
			       const struct sub_acts *s)
{
	return n->pre ? s->sum : s->ln;
}

/* From dlogits (in f->logits) back to every gradient in n->g. */
static void backward(struct tf_net *n, struct fwd *f)
{
	int N = f->B * f->S, M = f->B * f->T, d = n->d, l;
	struct mha_dims ds = mha_dims_of(n, f, f->T, f->T, f->tlen, 1);
	struct mha_dims dc = mha_dims_of(n, f, f->T, f->S, f->slen, 0);
	struct mha_dims es = mha_dims_of(n, f, f->S, f->S, f->slen, 0);
	const struct tf_params *w = &n->w;
	struct tf_params *g = &n->g;
	float *dy = f->dA, *dx = f->dB, *dfin;
	const float *dfo, *x, *u;

	/* logits = Yo out.W^T + out.b, Yo the rows out_row of Y (out.b's
	 * gradient: the loss's) */
	memset(dy, 0, sizeof(float) * f->nout * d);
	linear_backward(dy, g->out_W, NULL, f->logits, f->Yo, w->out_W,
			f->nout, d, n->tgt_vocab);
	memset(dx, 0, sizeof(float) * M * d);
	for (l = 0; l < f->nout; l++)
		memcpy(dx + (size_t)f->out_row[l] * d, dy + (size_t)l * d,
		       sizeof(float) * d);
	x = n->dec_layers ? sub_output(n, &f->dec[n->dec_layers - 1].s_ffn)
		: f->y0;
	final_ln_back(n, &f->dec_ln, &w->dec_ln, &g->dec_ln, x,
		      dx, dy, M);
	memset(f->dE, 0, sizeof(float) * N * d);
	for (l = n->dec_layers - 1; l >= 0; l--) {
		const struct tf_dec_layer *lw = &w->dec[l];
		struct tf_dec_layer *lg = &g->dec[l];
		struct dec_acts *e = &f->dec[l];
		const float *y0 = l ? sub_output(n, &f->dec[l - 1].s_ffn)
			: f->y0;
		const float *y1 = sub_output(n, &e->s_self);
		const float *y2 = sub_output(n, &e->s_cross);

		dfo = sub_back_out(n, f, &e->s_ffn, &lw->ln3, &lg->ln3, dy, dx,
				   M, &dfin);
		u = n->pre ? e->s_ffn.ln : y2;
		ffn_backward(dfin, &lg->ffn, f->dh, dfo, u, e->h, &lw->ffn, M,
			     d, n->ffn);
		sub_back_in(n, f, &e->s_ffn, &lw->ln3, &lg->ln3, y2, dx, M);
		swap(&dx, &dy);

		dfo = sub_back_out(n, f, &e->s_cross, &lw->ln2, &lg->ln2, dy,
				   dx, M, &dfin);
		u = n->pre ? e->s_cross.ln : y1;
		mha_backward(dfin, f->dE, &lg->cross, dfo, &e->cross, u, f->E,
			     &lw->cross, &dc, f->dmha);
		sub_back_in(n, f, &e->s_cross, &lw->ln2, &lg->ln2, y1, dx, M);
		swap(&dx, &dy);

		dfo = sub_back_out(n, f, &e->s_self, &lw->ln1, &lg->ln1, dy,
				   dx, M, &dfin);
		u = n->pre ? e->s_self.ln : y0;
		mha_backward(dfin, dfin, &lg->self, dfo, &e->self, u, u,
			     &lw->self, &ds, f->dmha);
		sub_back_in(n, f, &e->s_self, &lw->ln1, &lg->ln1, y0, dx, M);
		swap(&dx, &dy);
	}
	/* dy: the gradient of the decoder's input, the dropped-out sums */
	if (f->drop > 0) {
		memset(dx, 0, sizeof(float) * M * d);
		dropout_backward(dx, dy, f->my0, (size_t)M * d, f->drop);
		swap(&dx, &dy);
	}
	tf_embed_backward(n, g->tgt_emb, f->dec_in, M, dy);

	x = n->enc_layers ? sub_output(n, &f->enc[n->enc_layers - 1].s_ffn)
		: f->x0;
	final_ln_back(n, &f->enc_ln, &w->enc_ln, &g->enc_ln, x,
		      f->dE, dy, N);
	for (l = n->enc_layers - 1; l >= 0; l--) {
		const struct tf_enc_layer *lw = &w->enc[l];
		struct tf_enc_layer *lg = &g->enc[l];
		struct enc_acts *e = &f->enc[l];
		const float *x0 = l ? sub_output(n, &f->enc[l - 1].s_ffn)
			: f->x0;
		const float *x1 = sub_output(n, &e->s_att);

		dfo = sub_back_out(n, f, &e->s_ffn, &lw->ln2, &lg->ln2, dy, dx,
				   N, &dfin);
		u = n->pre ? e->s_ffn.ln : x1;
		ffn_backward(dfin, &lg->ffn, f->dh, dfo, u, e->h, &lw->ffn, N,
			     d, n->ffn);
		sub_back_in(n, f, &e->s_ffn, &lw->ln2, &lg->ln2, x1, dx, N);
		swap(&dx, &dy);

		dfo = sub_back_out(n, f, &e->s_att, &lw->ln1, &lg->ln1, dy, dx,
				   N, &dfin);
		u = n->pre ? e->s_att.ln : x0;
		mha_backward(dfin, dfin, &lg->self, dfo, &e->att, u, u,
			     &lw->self, &es, f->dmha);
		sub_back_in(n, f, &e->s_att, &lw->ln1, &lg->ln1, x0, dx, N);
		swap(&dx, &dy);
	}
	if (f->drop > 0) {
		memset(dx, 0, sizeof(float) * N * d);
		dropout_backward(dx, dy, f->m0, (size_t)N * d, f->drop);
		swap(&dx, &dy);
	}
	tf_embed_backward(n, g->src_emb, f->src_ids, N, dy);
}

/* ---- a batch of pairs: training and teacher-forced scoring ------------- */

static int check_ids(const struct batch_ids *b, int vocab, const char *what)
{
	size_t i;
	int k;

	if (b->B < 1 || b->S < 1) {
		err_set("transformer: empty %s batch (%d x %d)", what, b->B,
			b->S);
		return -1;
	}
	for (k = 0; k < b->B; k++)
		if (b->len[k] < 1 || b->len[k] > b->S) {
			err_set("transformer: %s sentence %d has length %d "
				"outside 1..%d", what, k, b->len[k], b->S);
			return -1;
		}
	for (i = 0; i < (size_t)b->B * b->S; i++)
		if (b->ids[i] < 0 || b->ids[i] >= vocab) {
			err_set("transformer: %s id %d outside the vocabulary "
				"(%d)", what, (int)b->ids[i], vocab);
			return -1;
		}
	return 0;
}

/* Checks the batch, lays out f and runs the forward pass to f->logits. */
static int forward_batch(struct fwd *f, const struct tf_net *n,
			 const struct batch_ids *src,
			 const struct batch_ids *tgt, float drop, int train,
			 struct rng *r)
{
	int b, t;

	if (check_ids(src, n->src_vocab, "source") < 0 ||
	    check_ids(tgt, n->tgt_vocab, "target") < 0)
		return -1;
	if (src->B != tgt->B) {
		err_set("transformer: %d sources for %d targets", src->B,
			tgt->B);
		return -1;
	}
	memset(f, 0, sizeof(*f));
	f->B = src->B;
	f->S = src->S;
	f->T = tgt->S;
	f->drop = drop;
	f->train = train;
	f->slen = src->len;
	f->tlen = tgt->len;
	f->src_ids = src->ids;
	f->tgt_ids = train ? tgt->ids : NULL;
	if (plan_alloc(f, n) < 0)
		return -1;
	for (b = 0; b < f->B; b++) {
		const int32_t *y = tgt->ids + (size_t)b * f->T;
		int32_t *in = f->dec_in + (size_t)b * f->T;

		in[0] = 1;	/* <s> */
		for (t = 1; t < f->T; t++)
			in[t] = y[t - 1];
	}
	tf_embed_forward(n, f->x0, src->ids, f->B, f->S, 0, n->w.src_emb);
	encoder_forward(n, f, r);
	decoder_forward(n, f, r);
	return 0;
}

/* A training key of the config, or its default. */
static double train_key(const struct model *m, const char *key, double def)
{
	double v;

	if (!config_get(&m->cfg, key) || config_double(&m->cfg, key, &v) < 0)
		return def;
	return v;
}

static double tf_train_batch(struct model *m, const struct batch_ids *src,
			     const struct batch_ids *tgt, float scale,
			     double *nll, int *ntok)
{
	struct tf_net *n = m->net;
	float drop = m->training ? (float)train_key(m, "dropout",
						    DEFAULT_DROPOUT) : 0.0f;
	float eps = (float)train_key(m, "label_smoothing",
				     DEFAULT_LABEL_SMOOTHING);
	struct fwd f;
	double loss;

	if (!(drop >= 0 && drop < 1) || !(eps >= 0 && eps < 1)) {
		err_set("transformer: dropout (%g) and label_smoothing (%g) "
			"must be in [0, 1)", drop, eps);
		return -1;
	}
	if (!m->g) {
		err_set("transformer: train_batch on a model without "
			"gradients");
		return -1;
	}
	if (forward_batch(&f, n, src, tgt, drop, 1, &m->rng) < 0)
		return -1;
	/* logits + out.b; dlogits overwrite the logits; out.b's gradient */
	loss = xent_biased_forward_backward(f.logits, f.logits, n->w.out_b,
					    n->g.out_b, f.out_tgt, f.nout,
					    n->tgt_vocab, eps, scale, nll,
					    ntok);
	backward(n, &f);
	return loss;
}

int transformer_logp(const struct model *m, const struct batch_ids *src,
		     const struct batch_ids *tgt, float *logp)
{
	const struct tf_net *n = m->net;
	struct fwd f;

	if (forward_batch(&f, n, src, tgt, 0.0f, 0, NULL) < 0)
		return -1;
	log_softmax_rows(logp, f.logits, f.B * f.T, n->tgt_vocab);
	return 0;
}

/* ---- the pipeline's stages on frames ----------------------------------- */

static int tf_embed(const struct model *m, struct frame **fr, int nf)
{
	const struct tf_net *n = m->net;
	int i;

	for (i = 0; i < nf; i++) {
		struct tensor *ids, t;
		uint64_t dim[2];
		int S;

		if (model_check_ids(fr[i], "src.ids", n->src_vocab,
				    "tokenize") < 0)
			return -1;
		ids = frame_find(fr[i], "src.ids");
		S = (int)ids->dim[0];
		dim[0] = S;
		dim[1] = n->d;
		if (tensor_init(&t, "src.emb", DT_F32, 2, dim) < 0)
			return -1;
		tf_embed_forward(n, t.data, ids->data, 1, S, 0, n->w.src_emb);
		if (!frame_put(fr[i], &t)) {
			tensor_free(&t);
			return -1;
		}
	}
	return 0;
}

int tf_gather_rows(const struct tf_net *n, struct frame **fr, int nf,
		       const char *name, const char *stage, float **x,
		       int **len)
{
	int i, S = 0;

	*x = NULL;
	*len = malloc(sizeof(int) * (nf ? nf : 1));
	if (!*len)
		goto oom;
	for (i = 0; i < nf; i++) {
		struct tensor *t = frame_need(fr[i], name, DT_F32, 2, stage);

		if (!t)
			goto fail;
		if (t->dim[1] != (uint64_t)n->d || t->dim[0] > 1 << 20) {
			err_set("frame %llu: %s is [%llu, %llu], the model "
				"needs [S, %d]", (unsigned long long)fr[i]->number,
				name, (unsigned long long)t->dim[0],
				(unsigned long long)t->dim[1], n->d);
			goto fail;
		}
		(*len)[i] = (int)t->dim[0];
		if ((*len)[i] > S)
			S = (*len)[i];
	}
	*x = calloc((size_t)nf * S * n->d + 1, sizeof(float));
	if (!*x)
		goto oom;
	for (i = 0; i < nf; i++)
		memcpy(*x + (size_t)i * S * n->d, frame_find(fr[i], name)->data,
		       sizeof(float) * (*len)[i] * n->d);
	return S;
oom:
	err_set("out of memory for %d frames of %s", nf, name);
fail:
	free(*x);
	free(*len);
	*x = NULL;
	*len = NULL;
	return -1;
}

/* Puts rows [len, d] of x as record name into frame f. */
static int put_rows(const struct tf_net *n, struct frame *f, const char *name,
		    const float *x, int len)
{
	uint64_t dim[2] = { (uint64_t)len, (uint64_t)n->d };
	struct tensor t;

	if (tensor_init_copy(&t, name, DT_F32, 2, dim, x) < 0)
		return -1;
	if (!frame_put(f, &t)) {
		tensor_free(&t);
		return -1;
	}
	return 0;
}

static int tf_encode(const struct model *m, struct frame **fr, int nf)
{
	const struct tf_net *n = m->net;
	struct fwd f;
	float *x;
	int *len, S, i, rc = -1;

	S = tf_gather_rows(n, fr, nf, "src.emb", "embed", &x, &len);
	if (S < 0)
		return -1;
	memset(&f, 0, sizeof(f));
	f.B = nf;
	f.S = S;
	f.slen = len;
	if (S > 0) {
		if (plan_alloc(&f, n) < 0)
			goto out;
		memcpy(f.x0, x, sizeof(float) * nf * S * n->d);
		encoder_forward(n, &f, NULL);
	}
	for (i = 0; i < nf; i++)
		if (put_rows(n, fr[i], "enc.out",
			     S ? f.E + (size_t)i * S * n->d : x, len[i]) < 0)
			goto out;
	rc = 0;
out:
	free(x);
	free(len);
	return rc;
}

static int tf_attend(const struct model *m, struct frame **fr, int nf)
{
	const struct tf_net *n = m->net;
	float *E, *kv = NULL;
	int *len, S, i, l, rc = -1;
	char name[32];

	S = tf_gather_rows(n, fr, nf, "enc.out", "encode", &E, &len);
	if (S < 0)
		return -1;
	kv = malloc(sizeof(float) * ((size_t)nf * S * n->d + 1));
	if (!kv) {
		err_set("out of memory for %d frames of att.*", nf);
		goto out;
	}
	for (l = 0; l < n->dec_layers; l++) {
		const struct mha_w *w = &n->w.dec[l].cross;
		int kind;

		for (kind = 0; kind < 2 && S > 0; kind++) {
			linear_forward(kv, E, kind ? w->vW : w->kW,
				       kind ? w->vb : w->kb, nf * S, n->d,
				       n->d);
			snprintf(name, sizeof(name), "att.%d.%c", l,
				 kind ? 'v' : 'k');
			for (i = 0; i < nf; i++)
				if (put_rows(n, fr[i], name,
					     kv + (size_t)i * S * n->d,
					     len[i]) < 0)
					goto out;
		}
	}
	rc = 0;
out:
	free(kv);
	free(E);
	free(len);
	return rc;
}

const struct arch arch_transformer = {
	.name = "transformer",
	.declare = tf_declare,
	.bind = tf_bind,
	.init = tf_init,
	.defaults = tf_defaults,
	.embed = tf_embed,
	.encode = tf_encode,
	.attend = tf_attend,
	.dec_new = tf_dec_new,
	.dec_step = tf_dec_step,
	.dec_select = tf_dec_select,
	.dec_sentence = tf_dec_sentence,
	.dec_srclen = tf_dec_srclen,
	.dec_attw_planes = tf_dec_attw_planes,
	.dec_free = tf_dec_free,
	.train_batch = tf_train_batch,
};
