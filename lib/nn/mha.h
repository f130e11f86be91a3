/*
 * mha.h: multi-head attention of doc/MODELS.md (Vaswani et al. 2017) over B
 * sentences, on top of the fused attention kernel (kernels.h): queries
 * x [B*Tq, d] over memory mem [B*Tk, d] (mem == x for self-attention),
 * the heads as column blocks of d / heads in the [rows, d] matrices.
 */
#ifndef ATTN_MHA_H
#define ATTN_MHA_H

#include <stddef.h>
#include <stdint.h>
#include "base/rng.h"

/* MHA(X, M)'s parameters: the Q/K/V/O projections. */
struct mha_w {
	float *qW, *qb, *kW, *kb, *vW, *vb, *oW, *ob;	/* [d, d], [d] */
};

/* The activations kept for the backward pass. */
struct mha_acts {
	float *q, *k, *v;	/* [B*Tq, d], [B*Tk, d], [B*Tk, d] */
	float *ctx;		/* [B*Tq, d] heads side by side, before Wo */
	float *lse;		/* [B, H, Tq] */
	uint64_t seed;		/* of the attention dropout's mask, which
				   the backward kernel makes again */
};

/* klen [B] masks memory rows at and after klen[b]; causal masks keys
 * after the query. */
struct mha_dims {
	int B, Tq, Tk, d, heads;
	const int *klen;
	int causal;
	float dropout;		/* on the attention weights; 0: off */
	/* rotary positions (layers.h's rope_forward) of the rows of x and
	 * mem, with rope_table cs [cs_rows, d / heads]; NULL: none */
	const int *qpos, *kpos;
	const float *cs;
	int cs_rows;
	/* mha_backward: gradients of the queries and keys [B*Tq, d],
	 * [B*Tk, d] from elsewhere (guided alignment's loss over the
	 * attention), added to the attention's own; NULL: none */
	const float *gq, *gk;
	/* native Marian's arithmetic (kernels.h attn_args.marian): only
	 * where no mha_backward follows */
	int marian;
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

#endif
