/*
 * transformer_batch.h: a padded batch inside the Transformer: B sentences
 * of up to S source and T target positions as [B*S, d] and [B*T, d]
 * matrices, every activation the forward pass keeps for the backward
 * pass laid out in one workspace (transformer_batch.c), and the passes
 * over them (transformer_forward.c, transformer_backward.c).  Padding is
 * masked in attention (klen), so it never changes a real position's
 * result.
 */
#ifndef ATTN_TRANSFORMER_BATCH_H
#define ATTN_TRANSFORMER_BATCH_H

#include "transformer.h"

struct enc_acts {
	struct sub_acts s_att, s_ffn;
	struct mha_acts att;
	float *h;			/* FFN hidden [N, f] */
	float *a;			/* its pre-activation (swish only) */
};

struct dec_acts {
	struct sub_acts s_self, s_cross, s_ffn;
	struct mha_acts self, cross;	/* self: dec_self=attention */
	struct ssru_acts ssru;		/* dec_self=ssru */
	float *h, *a;
};

/* Everything a forward pass keeps, and the backward pass's scratch. */
struct fwd {
	int B, S, T;			/* T 0: the encoder only */
	float drop;			/* dropout rate, 0 when off */
	int train;			/* keep what the backward pass needs */
	const int *slen, *tlen;
	const int32_t *src_ids;		/* [B*S] */
	int *spos, *tpos;		/* [B*S], [B*T] the rows' positions
					   (pos=rope's rotations) */
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
	/* guided alignment: the cross-attention of decoder layer
	 * guide_layer (-1: none) gets the gradients gq [B*T, d], gk
	 * [B*S, d] of its queries and keys */
	int guide_layer;
	float *gq, *gk;
	/* backward scratch */
	float *dA, *dB, *dln, *dfo, *dE, *dh, *dmha;
	float *dxw, *dfp;		/* [B*T, d] the SSRU's */
};

/*
 * Lays out f's buffers (f's sizes, flags and inputs set) in the calling
 * thread's workspace, kept from batch to batch; 0 or -1 (out of memory).
 */
int tf_plan_alloc(struct fwd *f, const struct tf_net *n);
/* The attention of f's batch: Tq queries over Tk keys, klen [B]; pos:
 * self-attention's positions of the rows (f->spos, f->tpos), rotated
 * with pos=rope; NULL for cross-attention. */
struct mha_dims tf_mha_dims(const struct tf_net *n, const struct fwd *f,
			    int Tq, int Tk, const int *klen, int causal,
			    const int *pos);

/* The encoder over f->x0 (the embedding sums, before dropout), to f->E;
 * r may be NULL when f->drop is 0. */
void tf_encoder_forward(const struct tf_net *n, struct fwd *f,
			struct rng *r);
/* The decoder over f->dec_in and f->E, to f->logits. */
void tf_decoder_forward(const struct tf_net *n, struct fwd *f,
			struct rng *r);
/* From dlogits (in f->logits) back to every gradient in n->g. */
void tf_backward(struct tf_net *n, struct fwd *f);

#endif
