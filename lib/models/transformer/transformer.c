/*
 * transformer.c: arch_transformer, the Transformer of Vaswani et al. 2017
 * as doc/MODELS.md gives it: its config, its parameters (declared, bound and
 * initialised in doc/MODELS.md's order) and its table of operations.  The
 * rest, by file:
 *
 *   transformer_layers.c    its input layer and residual sub-layers
 *   transformer_batch.c     a padded batch's activations; training and
 *                           teacher-forced scoring of a batch
 *   transformer_forward.c   the encoder and decoder over a batch
 *   transformer_backward.c  their backward pass
 *   transformer_stages.c    the pipeline's stages: embed, encode, attend
 *   transformer_dec.c       the step-by-step decoder: its state
 *                           (transformer_dec.h), dec_select
 *   transformer_dec_step.c  a step of it
 *   transformer_dec_pack.c  its packed weight matrices
 *
 * The layers it shares with other models are nn/'s.  Positions (config
 * key pos; doc/MODELS.md, Transformer: the positions): sinusoidal
 * encodings added to the embeddings (the default, and a model without the
 * key), rotary queries and keys in every self-attention (rope), or a
 * learned table per side (learned, src.pos.emb and tgt.pos.emb of max_pos
 * rows).  The decoder's first sub-layer (config key dec_self): the
 * paper's masked self-attention (attention, the default, and a model
 * without the key) or the SSRU of Bergamot's students (ssru, nn/ssru.h:
 * dec.{l}.ssru.W, .Wf, .bf in place of dec.{l}.self.*).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/errmsg.h"
#include "transformer.h"

/*
 * The paper's base model is d_model=512 heads=8 ffn=2048 with 6+6 layers;
 * these defaults are a smaller model of the same shape.  Its training
 * settings override the RNNsearch paper's (model_keys.c): Adam with beta2 0.98
 * and eps 1e-9, the noam schedule (lr 1 gives the paper's rate), no
 * gradient clipping, dropout 0.1 (sub-layer outputs, embedding sums and,
 * as tensor2tensor, attention weights) and label smoothing 0.1.
 * The paper's post-norm, untied embeddings, warmup 4000 and batches of
 * about 25000 target tokens learn little in an hour of one core; the
 * defaults are those that do in 35 minutes (examples/recipes.sh):
 * pre-norm, every embedding tied (one joint vocabulary), warmup 300 and
 * batches of 2000 target tokens.  (Hours of training want more dropout,
 * a longer warm-up and larger batches: examples/bible-transformer.sh.)
 */
static const char *const tf_defaults[] = {
	"d_model=256", "heads=4", "ffn=1024", "enc_layers=3", "dec_layers=3",
	"norm=pre", "tie=all", "ln_eps=1e-05",
	"optim=adam", "beta1=0.9", "beta2=0.98", "adam_eps=1e-9",
	"schedule=noam", "lr=1", "warmup=300", "clip=0", "dropout=0.1",
	"label_smoothing=0.1", "batch_tokens=2000", NULL,
};

/* ---- sizes and parameters ---------------------------------------------- */

/* Reads and checks the sizes of n from m's config. */
static int read_sizes(const struct model *m, struct tf_net *n)
{
	const char *norm = config_get(&m->cfg, "norm");
	const char *tie = config_get(&m->cfg, "tie");
	const char *pos = config_get(&m->cfg, "pos");
	const char *act = config_get(&m->cfg, "ffn_act");
	const char *self = config_get(&m->cfg, "dec_self");
	const char *kv = config_get(&m->cfg, "pre_kv");
	double eps = 1e-5;

	if (model_size_key(m, "src_vocab", &n->src_vocab) < 0 ||
	    model_size_key(m, "tgt_vocab", &n->tgt_vocab) < 0 ||
	    model_size_key(m, "d_model", &n->d) < 0 ||
	    model_size_key(m, "heads", &n->heads) < 0 ||
	    model_size_key(m, "ffn", &n->ffn) < 0 ||
	    model_size_key(m, "enc_layers", &n->enc_layers) < 0 ||
	    model_size_key(m, "dec_layers", &n->dec_layers) < 0)
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
	/* a model without the key is one from before it: norm */
	if (kv && strcmp(kv, "norm") && strcmp(kv, "input")) {
		err_set("model.config: pre_kv must be norm or input, not %s",
			kv);
		return -1;
	}
	n->kv_in = n->pre && kv && !strcmp(kv, "input");
	if (tie && !strcmp(tie, "none"))
		n->tie = TIE_NONE;
	else if (tie && !strcmp(tie, "tgt"))
		n->tie = TIE_TGT;
	else if (tie && !strcmp(tie, "all"))
		n->tie = TIE_ALL;
	else if (tie && !strcmp(tie, "src"))
		n->tie = TIE_SRC;
	else {
		err_set("model.config: tie must be none, tgt, all or src, not "
			"%s", tie ? tie : "missing");
		return -1;
	}
	if ((n->tie == TIE_ALL || n->tie == TIE_SRC) &&
	    n->src_vocab != n->tgt_vocab) {
		err_set("model.config: tie=%s needs src_vocab (%d) equal to "
			"tgt_vocab (%d)", tie, n->src_vocab, n->tgt_vocab);
		return -1;
	}
	/* a model without the key is one from before it: relu */
	if (!act || !strcmp(act, "relu"))
		n->swish = 0;
	else if (!strcmp(act, "swish"))
		n->swish = 1;
	else {
		err_set("model.config: ffn_act must be relu or swish, not %s",
			act);
		return -1;
	}
	/* a model without the key is one from before it: attention */
	if (!self || !strcmp(self, "attention"))
		n->ssru = 0;
	else if (!strcmp(self, "ssru"))
		n->ssru = 1;
	else {
		err_set("model.config: dec_self must be attention or ssru, "
			"not %s", self);
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
	/* a model without the key is one from before it: sinusoidal */
	if (!pos || !strcmp(pos, "sinusoidal"))
		n->pos = POS_SINUSOIDAL;
	else if (!strcmp(pos, "rope"))
		n->pos = POS_ROPE;
	else if (!strcmp(pos, "learned"))
		n->pos = POS_LEARNED;
	else if (!strcmp(pos, "marian"))
		n->pos = POS_MARIAN;
	else {
		err_set("model.config: pos must be sinusoidal, rope, learned "
			"or marian, not %s", pos);
		return -1;
	}
	n->marian = n->pos == POS_MARIAN;
	if (n->pos == POS_ROPE && n->dk % 2) {
		err_set("model.config: pos=rope rotates pairs of dimensions: "
			"d_model/heads=%d must be even", n->dk);
		return -1;
	}
	if (n->pos == POS_LEARNED) {
		if (model_size_key(m, "max_pos", &n->max_pos) < 0)
			return -1;
	} else if (config_get(&m->cfg, "max_pos")) {
		err_set("model.config: max_pos is for pos=learned only");
		return -1;
	}
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
	/* the PE table, or rope's in its place ([TF_PE_ROWS, dk], smaller) */
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
	if (n->pos == POS_SINUSOIDAL) {
		n->pe = (float *)(p + off + 2 * (le + ld));
		posenc_table(n->pe, TF_PE_ROWS, n->d);
	} else if (n->pos == POS_MARIAN) {
		n->pe = (float *)(p + off + 2 * (le + ld));
		tf_marian_pe_table(n->pe, TF_PE_ROWS, n->d);
	} else if (n->pos == POS_ROPE) {
		n->rope = (float *)(p + off + 2 * (le + ld));
		rope_table(n->rope, TF_PE_ROWS, n->dk);
	}
	return n;
}

/* Declares (declare) or binds every parameter, in doc/MODELS.md's order. */
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

static void par_ssru(struct walker *wk, struct ssru_w *w, struct ssru_w *g,
		     int d, const char *pfx)
{
	par(wk, &w->W, &g->W, 2, d, d, "%s.W", pfx);
	par(wk, &w->Wf, &g->Wf, 2, d, d, "%s.Wf", pfx);
	par(wk, &w->bf, &g->bf, 1, d, 0, "%s.bf", pfx);
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

	if (n->tie != TIE_ALL && n->tie != TIE_SRC)
		par(&wk, &w->src_emb, &g->src_emb, 2, n->src_vocab, d,
		    "src.emb");
	par(&wk, &w->tgt_emb, &g->tgt_emb, 2, n->tgt_vocab, d, "tgt.emb");
	if (n->pos == POS_LEARNED) {
		par(&wk, &w->src_pos, &g->src_pos, 2, n->max_pos, d,
		    "src.pos.emb");
		par(&wk, &w->tgt_pos, &g->tgt_pos, 2, n->max_pos, d,
		    "tgt.pos.emb");
	}
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

		if (n->ssru) {
			snprintf(pfx, sizeof(pfx), "dec.%d.ssru", l);
			par_ssru(&wk, &lw->ssru, &lg->ssru, d, pfx);
		} else {
			snprintf(pfx, sizeof(pfx), "dec.%d.self", l);
			par_mha(&wk, &lw->self, &lg->self, d, pfx);
		}
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
	if (n->tie == TIE_NONE || n->tie == TIE_SRC)
		par(&wk, &w->out_W, &g->out_W, 2, n->tgt_vocab, d, "out.W");
	par(&wk, &w->out_b, &g->out_b, 1, n->tgt_vocab, 0, "out.b");
	if (n->tie == TIE_ALL || n->tie == TIE_SRC) {
		w->src_emb = w->tgt_emb;
		g->src_emb = g->tgt_emb;
	}
	if (n->tie == TIE_TGT || n->tie == TIE_ALL) {
		w->out_W = w->tgt_emb;
		g->out_W = g->tgt_emb;
	}
	return wk.err;
}

static int tf_declare(struct model *m)
{
	struct tf_net *n;
	const char *pos = config_get(&m->cfg, "pos");
	int rc;

	/* the model file states the size of its table */
	if (pos && !strcmp(pos, "learned") &&
	    !config_get(&m->cfg, "max_pos") &&
	    config_set(&m->cfg, "max_pos", TF_MAX_POS_STR) < 0)
		return -1;
	n = net_alloc(m);
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

/* ---- the table --------------------------------------------------------- */

const struct arch arch_transformer = {
	.name = "transformer",
	.dec_caps = DEC_BF16 | DEC_KV_F16 | DEC_ZERO_BOS,
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
	.dec_shortlist = tf_dec_shortlist,
	.train_batch = tf_train_batch,
};
