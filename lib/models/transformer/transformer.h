/*
 * transformer.h: the inside of arch_transformer (Vaswani et al. 2017, as
 * MODELS.md gives it): its named parameter pointers and the layers it is
 * built from.  Rows are positions: x [N, d] holds N = B * T rows, B
 * sentences padded to T positions each.
 */
#ifndef ATTN_TRANSFORMER_H
#define ATTN_TRANSFORMER_H

#include <stddef.h>
#include <stdint.h>
#include "models/model.h"
#include "base/rng.h"

/* ---- parameters -------------------------------------------------------- */

struct mha_w {			/* MHA(X, M): Q/K/V/O projections */
	float *qW, *qb, *kW, *kb, *vW, *vb, *oW, *ob;	/* [d, d], [d] */
};

struct ln_w {
	float *g, *b;		/* [d] */
};

struct ffn_w {
	float *W1, *b1, *W2, *b2;	/* [f, d], [f], [d, f], [d] */
};

struct tf_enc_layer {
	struct mha_w self;
	struct ln_w ln1, ln2;
	struct ffn_w ffn;
};

struct tf_dec_layer {
	struct mha_w self, cross;
	struct ln_w ln1, ln2, ln3;
	struct ffn_w ffn;
};

/* Every parameter (or every gradient) of the model, by name. */
struct tf_params {
	float *src_emb, *tgt_emb;	/* equal with tie=all */
	struct tf_enc_layer *enc;	/* [enc_layers] */
	struct tf_dec_layer *dec;	/* [dec_layers] */
	struct ln_w enc_ln, dec_ln;	/* pre-norm only, else NULL */
	float *out_W, *out_b;		/* out_W is tgt_emb when tied */
};

enum { TIE_NONE, TIE_TGT, TIE_ALL };

/* Positions whose encoding bind() tabulates; later ones are computed. */
#define TF_PE_ROWS 512

/* m->net: sizes from the config, then the parameters and gradients. */
struct tf_net {
	int d, heads, dk, ffn, enc_layers, dec_layers, src_vocab, tgt_vocab;
	int pre;		/* norm=pre */
	int tie;		/* TIE_* */
	float ln_eps;
	float emb_scale;	/* sqrt(d) */
	struct tf_params w, g;	/* g's pointers NULL when not training */
	float *pe;		/* [TF_PE_ROWS, d] sinusoidal encodings */
};

/* ---- layers (each backward ADDS into its d-buffers) -------------------- */

/* x [rows, d] += PE(p0 + r) for row r (MODELS.md's sinusoids). */
void posenc_add(const struct tf_net *n, float *x, int rows, int p0);
/* For the tables: the encoding of position p, dimension i. */
float posenc(int p, int i, int d);
/* pe [rows, d] = posenc(p, i, d) for every position p < rows. */
void posenc_table(float *pe, int rows, int d);

/* x [B*T, d] = emb[ids] * sqrt(d) + PE(p0 + t) for ids [B, T]. */
void tf_embed_forward(const struct tf_net *n, float *x, const int32_t *ids,
		      int B, int T, int p0, const float *emb);
/* demb[ids] += sqrt(d) * dx; dx [rows, d] is scaled in place */
void tf_embed_backward(const struct tf_net *n, float *demb,
		       const int32_t *ids, int rows, float *dx);

/*
 * Inverted dropout with rate p, and the residual sum after it: y = a +
 * x * keep / (1 - p) (a NULL: without a), keep drawn from r into mask [n]
 * (16 bits of rng_next per element).  p 0: y = a + x, and no draws, no
 * mask.  y may equal x or a.
 * dropout_backward: dx += dy * keep / (1 - p).
 */
void dropout_forward(float *y, uint8_t *mask, const float *a, const float *x,
		     size_t n, float p, struct rng *r);
void dropout_backward(float *dx, const float *dy, const uint8_t *mask,
		      size_t n, float p);

/*
 * FFN(x) = W2 relu(W1 x + b1) + b2 on rows x [N, d]: h [N, f] (saved for
 * the backward pass), y [N, d].  The backward uses dh [N, f] as scratch.
 */
void ffn_forward(float *y, float *h, const float *x, const struct ffn_w *w,
		 int N, int d, int f);
void ffn_backward(float *dx, struct ffn_w *dw, float *dh, const float *dy,
		  const float *x, const float *h, const struct ffn_w *w,
		  int N, int d, int f);

/*
 * Multi-head attention of B sentences: queries x [B*Tq, d] over memory
 * mem [B*Tk, d] (mem == x for self-attention); klen [B] masks memory
 * rows at and after klen[b]; causal masks keys after the query.  The
 * activations kept for the backward pass:
 */
struct mha_acts {
	float *q, *k, *v;	/* [B*Tq, d], [B*Tk, d], [B*Tk, d] */
	float *ctx;		/* [B*Tq, d] heads side by side, before Wo */
	float *lse;		/* [B, H, Tq] */
	uint64_t seed;		/* of the attention dropout's mask, which
				   the backward kernel makes again */
};

struct mha_dims {
	int B, Tq, Tk, d, heads;
	const int *klen;
	int causal;
	float dropout;		/* on the attention weights; 0: off */
};

/* out [B*Tq, d]; a's buffers filled (lse may be NULL at inference). */
void mha_forward(float *out, struct mha_acts *a, const float *x,
		 const float *mem, const struct mha_w *w,
		 const struct mha_dims *dm, struct rng *r);
/*
 * dx [B*Tq, d] += from the queries; dmem [B*Tk, d] += from the keys and
 * values (dmem may equal dx for self-attention); dw += the weights'.
 * scratch: mha_scratch_floats(dm) floats, contents ignored.
 */
void mha_backward(float *dx, float *dmem, struct mha_w *dw, const float *dout,
		  const struct mha_acts *a, const float *x, const float *mem,
		  const struct mha_w *w, const struct mha_dims *dm,
		  float *scratch);
size_t mha_scratch_floats(const struct mha_dims *dm);

/* ---- residual sub-layers (transformer.c) -------------------------------- */

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

/*
 * Reads record name, f32 [S_i, d], of every frame into *x [nf, S, d],
 * zero-padded to the longest S; *len [nf] gets each S_i (both malloc'ed).
 * Returns S, or -1 (stage: the program that writes the record).
 */
int tf_gather_rows(const struct tf_net *n, struct frame **fr, int nf,
		   const char *name, const char *stage, float **x, int **len);

/* ---- the step-by-step decoder (transformer_dec.c) ---------------------- */

struct decoder *tf_dec_new(const struct model *m, struct frame **f, int n,
			   int width);
int tf_dec_step(struct decoder *d, int nh, const int32_t *prev, float *logp,
		float *attw);
int tf_dec_select(struct decoder *d, int nh, const int *parent);
int tf_dec_sentence(const struct decoder *d, int i);
int tf_dec_srclen(const struct decoder *d, int sentence);
void tf_dec_attw_planes(const struct decoder *d, int *L, int *H);
void tf_dec_free(struct decoder *d);

/* ---- the decoder's log-probabilities without a cache, for tests -------- */

/*
 * Teacher-forced log-probabilities of a batch (no dropout): logp
 * [B, T, tgt_vocab] for inputs <s> tgt[0 .. T-2], as train_batch computes
 * them.
 */
int transformer_logp(const struct model *m, const struct batch_ids *src,
		     const struct batch_ids *tgt, float *logp);

#endif
