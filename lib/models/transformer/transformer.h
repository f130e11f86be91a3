/*
 * transformer.h: the inside of arch_transformer (Vaswani et al. 2017, as
 * doc/MODELS.md gives it): its named parameter pointers and the layers it is
 * built from.  Rows are positions: x [N, d] holds N = B * T rows, B
 * sentences padded to T positions each.
 */
#ifndef ATTN_TRANSFORMER_H
#define ATTN_TRANSFORMER_H

#include <stddef.h>
#include <stdint.h>
#include "base/rng.h"
#include "models/frames.h"
#include "models/model.h"
#include "nn/layers.h"
#include "nn/mha.h"
#include "nn/ssru.h"

/* ---- parameters -------------------------------------------------------- */

/* (struct mha_w is nn/mha.h's, struct ffn_w nn/layers.h's.) */
struct ln_w {
	float *g, *b;		/* [d] */
};

struct tf_enc_layer {
	struct mha_w self;
	struct ln_w ln1, ln2;
	struct ffn_w ffn;
};

struct tf_dec_layer {
	struct mha_w self, cross;	/* self: dec_self=attention only */
	struct ssru_w ssru;		/* dec_self=ssru only */
	struct ln_w ln1, ln2, ln3;
	struct ffn_w ffn;
};

/* Every parameter (or every gradient) of the model, by name. */
struct tf_params {
	float *src_emb, *tgt_emb;	/* equal with tie=all */
	float *src_pos, *tgt_pos;	/* pos=learned [max_pos, d], else
					   NULL */
	struct tf_enc_layer *enc;	/* [enc_layers] */
	struct tf_dec_layer *dec;	/* [dec_layers] */
	struct ln_w enc_ln, dec_ln;	/* pre-norm only, else NULL */
	float *out_W, *out_b;		/* out_W is tgt_emb when tied */
};

/* tie: none; tgt: the output layer is tgt.emb; all: src.emb too; src:
 * the source's embedding is the target's, the output layer its own
 * (Marian's tied-embeddings-src). */
enum { TIE_NONE, TIE_TGT, TIE_ALL, TIE_SRC };

/* pos: sinusoidal encodings added to the embeddings (the default), rotary
 * queries and keys of self-attention, a trained table added, or Marian's
 * layout of the sinusoidal encodings added. */
enum { POS_SINUSOIDAL, POS_ROPE, POS_LEARNED, POS_MARIAN };

/* Positions whose encoding (sinusoidal or rotary) bind() tabulates; later
 * ones are computed. */
#define TF_PE_ROWS 512
/* pos=learned's max_pos when the config does not say. */
#define TF_MAX_POS_STR "512"

/* m->net: sizes from the config, then the parameters and gradients. */
struct tf_net {
	int d, heads, dk, ffn, enc_layers, dec_layers, src_vocab, tgt_vocab;
	int pre;		/* norm=pre */
	int kv_in;		/* pre_kv=input: pre-norm's self-attention
				   keys and values from the sub-layer's
				   input, not its layer norm (Marian) */
	int tie;		/* TIE_* */
	int pos;		/* POS_* */
	int max_pos;		/* pos=learned: positions of the table */
	int swish;		/* ffn_act=swish (else relu) */
	int ssru;		/* dec_self=ssru: an SSRU in place of the
				   decoder's self-attention */
	int marian;		/* pos=marian: a model of Marian's, in its
				   arithmetic where attn's differs (the
				   layer norm's sums, as native Marian;
				   doc/MODELS.md) */
	float ln_eps;
	float emb_scale;	/* sqrt(d) */
	struct tf_params w, g;	/* g's pointers NULL when not training */
	float *pe;		/* [TF_PE_ROWS, d] sinusoidal encodings
				   (pos=sinusoidal or marian) */
	float *rope;		/* [TF_PE_ROWS, dk] rope_table (pos=rope) */
};

/* ---- the input layer (transformer_layers.c) ---------------------------- */

/*
 * x [B*T, d] = emb[ids] * sqrt(d) + P(p0 + t) for ids [B, T] of the
 * source (tgt 0) or target (1) side: P the sinusoidal encodings, the
 * side's learned table (src.pos.emb, tgt.pos.emb), or nothing with
 * pos=rope.  With pos=learned, p0 + T must not exceed max_pos: the
 * callers check (tf_pos_limit) and say where.
 */
void tf_embed_forward(const struct tf_net *n, float *x, const int32_t *ids,
		      int B, int T, int p0, int tgt);
/* The gradients of the side's embedding and learned table from dx [B*T,
 * d] of tf_embed_forward with p0 0; dx is scaled in place. */
void tf_embed_backward(const struct tf_net *n, const int32_t *ids, int B,
		       int T, float *dx, int tgt);
/* The positions a sentence may have: max_pos with pos=learned, else no
 * limit (INT_MAX). */
int tf_pos_limit(const struct tf_net *n);

/* ---- residual sub-layers (transformer_layers.c) ------------------------ */

/* One residual sub-layer (self-attention, cross-attention or FFN). */
struct sub_acts {
	float *ln, *mean, *rstd;	/* its layer norm [N, d], [N], [N] */
	float *fo;			/* the function's output */
	float *sum;			/* input + fo */
	uint8_t *mask;			/* dropout of fo (NULL: none) */
};

/* Before a sub-layer's function: its input, layer-normed in pre-norm. */
const float *tf_sub_in(const struct tf_net *n, struct sub_acts *s,
		       const struct ln_w *ln, const float *x, int N);
/* After it (output in s->fo): dropout and the residual sum in one pass,
 * and post-norm's layer norm; returns the sub-layer's output (s->ln or
 * s->sum). */
const float *tf_sub_out(const struct tf_net *n, struct sub_acts *s,
			const struct ln_w *ln, const float *x, int N,
			float drop, struct rng *r);

/* ---- Marian's variants (transformer_marian.c) ------------------------- */

/* pos=marian: position p's dimension i of d, as Marian lays them out
 * (sines in the first half, cosines in the second; doc/MODELS.md); the
 * table of positions 0 .. rows-1; and their sum into x [rows, d], row r
 * at position p0 + r, from the table where it reaches. */
float tf_marian_pe(int p, int i, int d);
void tf_marian_pe_table(float *pe, int rows, int d);
void tf_marian_pe_add(float *x, int rows, int d, int p0, const float *pe,
		      int pe_rows);
/* h [n] = a sigmoid(a) (h may be a). */
void tf_swish(float *h, const float *a, size_t n);
/*
 * The FFN with n's activation: nn/'s ffn_forward for relu; for swish
 * y [N, d] = swish(x W1^T + b1) W2^T + b2, keeping the pre-activation
 * a [N, f] and h = swish(a) for the backward pass (a unused with relu).
 */
void tf_ffn_forward(const struct tf_net *n, float *y, float *h, float *a,
		    const float *x, const struct ffn_w *w, int N);
/* Its backward pass, as ffn_backward: dx += and dw += from dy; dh
 * [N, f] scratch. */
void tf_ffn_backward(const struct tf_net *n, float *dx, struct ffn_w *dw,
		     float *dh, const float *dy, const float *x,
		     const float *h, const float *a, const struct ffn_w *w,
		     int N);

/* ---- the pipeline's stages (transformer_stages.c) ---------------------- */

int tf_embed(const struct model *m, struct frame **fr, int nf);
int tf_encode(const struct model *m, struct frame **fr, int nf);
int tf_attend(const struct model *m, struct frame **fr, int nf);

/* frames_gather (models/frames.h) of rows [S_i, d]: transformer_dec.c's
 * name for it. */
static inline int tf_gather_rows(const struct tf_net *n, struct frame **fr,
				 int nf, const char *name, const char *stage,
				 float **x, int **len)
{
	return frames_gather(fr, nf, name, n->d, stage, x, len);
}

/* ---- the step-by-step decoder (transformer_dec*.c) --------------------- */

struct decoder *tf_dec_new(const struct model *m, const struct dec_opts *o,
			struct frame **f, int n, int width);
int tf_dec_step(struct decoder *d, int nh, const int32_t *prev, float *logp,
		float *attw);
int tf_dec_select(struct decoder *d, int nh, const int *parent);
int tf_dec_sentence(const struct decoder *d, int i);
int tf_dec_srclen(const struct decoder *d, int sentence);
void tf_dec_attw_planes(const struct decoder *d, int *L, int *H);
void tf_dec_free(struct decoder *d);
const struct shortlist *tf_dec_shortlist(const struct decoder *d);

/* ---- a batch of pairs (transformer_batch.c) ---------------------------- */

double tf_train_batch(struct model *m, const struct batch_ids *src,
		      const struct batch_ids *tgt, float scale, int dropout, double *nll,
		      int *ntok);

/*
 * Teacher-forced log-probabilities of a batch (no dropout): logp
 * [B, T, tgt_vocab] for inputs <s> tgt[0 .. T-2], as train_batch computes
 * them.
 */
int transformer_logp(const struct model *m, const struct batch_ids *src,
		     const struct batch_ids *tgt, float *logp);

#endif
