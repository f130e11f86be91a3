/*
 * mha.c: multi-head attention of MODELS.md on top of the fused attention
 * kernel: projections as one sgemm over every row of the batch, the heads
 * as column blocks of d_k inside the [rows, d] matrices.  With dropout on
 * the attention weights (training), the weights are materialised and the
 * product with V done here, head by head, since the fused kernel has no
 * dropout.
 */
#include <math.h>
#include <string.h>
#include "kernels.h"
#include "layers.h"
#include "transformer.h"

/* The kernel's view of the forward pass. */
static struct attn_args attn_view(const struct mha_acts *a,
				  const struct mha_dims *dm, float *weights)
{
	int d = dm->d, dk = d / dm->heads;

	return (struct attn_args){
		.B = dm->B, .H = dm->heads, .T = dm->Tq, .S = dm->Tk, .dk = dk,
		.scale = 1.0f / sqrtf((float)dk),
		.q = a->q, .q_bs = (long)dm->Tq * d, .q_rs = d,
		.k = a->k, .v = a->v, .kv_bs = (long)dm->Tk * d, .kv_rs = d,
		.out = a->ctx, .o_bs = (long)dm->Tq * d, .o_rs = d,
		.klen = dm->klen, .causal = dm->causal, .q_pos0 = 0,
		.weights = weights, .lse = a->lse,
	};
}

void mha_forward(float *out, struct mha_acts *a, const float *x,
		 const float *mem, const struct mha_w *w,
		 const struct mha_dims *dm, struct rng *r)
{
	/* x [B*Tq, d], mem [B*Tk, d] -> out [B*Tq, d] */
	int d = dm->d, dk = d / dm->heads, Nq = dm->B * dm->Tq;
	int Nk = dm->B * dm->Tk, Tq = dm->Tq, Tk = dm->Tk, b, h;
	int drop = dm->dropout > 0;
	struct attn_args at = attn_view(a, dm, drop ? a->p : NULL);

	linear_forward(a->q, x, w->qW, w->qb, Nq, d, d);
	linear_forward(a->k, mem, w->kW, w->kb, Nk, d, d);
	linear_forward(a->v, mem, w->vW, w->vb, Nk, d, d);
	attention_forward(&at);
	if (drop) {
		/* ctx = dropout(P) V, replacing the kernel's P V */
		size_t np = (size_t)dm->B * dm->heads * Tq * Tk;

		dropout_forward(a->pd, a->pmask, a->p, np, dm->dropout, r);
		for (b = 0; b < dm->B; b++)
			for (h = 0; h < dm->heads; h++)
				sgemm(0, 0, Tq, dk, Tk, 1.0f,
				      a->pd + ((size_t)b * dm->heads + h) * Tq * Tk,
				      Tk, a->v + (size_t)b * Tk * d + h * dk, d,
				      0.0f, a->ctx + (size_t)b * Tq * d + h * dk,
				      d);
	}
	linear_forward(out, a->ctx, w->oW, w->ob, Nq, d, d);
}

size_t mha_scratch_floats(const struct mha_dims *dm)
{
	size_t n = 2 * (size_t)dm->B * dm->Tq * dm->d
		+ 2 * (size_t)dm->B * dm->Tk * dm->d;

	if (dm->dropout > 0)
		n += 3 * (size_t)dm->Tq * dm->Tk;
	return n;
}

/* The backward pass of dropout(softmax(scores)) V for every (b, h). */
static void attn_dropout_backward(const struct mha_acts *a,
				  const struct mha_dims *dm, const float *dctx,
				  float *dq, float *dk_, float *dv,
				  float *scratch)
{
	int d = dm->d, dk = d / dm->heads, Tq = dm->Tq, Tk = dm->Tk, b, h;
	float scale = 1.0f / sqrtf((float)dk);
	size_t np = (size_t)Tq * Tk;
	float *dpd = scratch, *dp = dpd + np, *ds = dp + np;

	for (b = 0; b < dm->B; b++) {
		for (h = 0; h < dm->heads; h++) {
			size_t po = ((size_t)b * dm->heads + h) * np;
			size_t qo = (size_t)b * Tq * d + h * dk;
			size_t ko = (size_t)b * Tk * d + h * dk;

			/* dPd [Tq, Tk] = dctx V^T; dV += Pd^T dctx */
			sgemm(0, 1, Tq, Tk, dk, 1.0f, dctx + qo, d, a->v + ko,
			      d, 0.0f, dpd, Tk);
			sgemm(1, 0, Tk, dk, Tq, 1.0f, a->pd + po, Tk,
			      dctx + qo, d, 1.0f, dv + ko, d);
			memset(dp, 0, sizeof(float) * np);
			dropout_backward(dp, dpd, a->pmask + po, np,
					 dm->dropout);
			memset(ds, 0, sizeof(float) * np);
			softmax_backward(ds, dp, a->p + po, Tq, Tk);
			/* scores = scale Q K^T */
			sgemm(0, 0, Tq, dk, Tk, scale, ds, Tk, a->k + ko, d,
			      1.0f, dq + qo, d);
			sgemm(1, 0, Tk, dk, Tq, scale, ds, Tk, a->q + qo, d,
			      1.0f, dk_ + ko, d);
		}
	}
}

void mha_backward(float *dx, float *dmem, struct mha_w *dw, const float *dout,
		  const struct mha_acts *a, const float *x, const float *mem,
		  const struct mha_w *w, const struct mha_dims *dm,
		  float *scratch)
{
	int d = dm->d, Nq = dm->B * dm->Tq, Nk = dm->B * dm->Tk;
	float *dctx = scratch, *dq = dctx + (size_t)Nq * d;
	float *dk = dq + (size_t)Nq * d, *dv = dk + (size_t)Nk * d;

	/* out = ctx Wo^T + bo */
	sgemm(0, 0, Nq, d, d, 1.0f, dout, d, w->oW, d, 0.0f, dctx, d);
	linear_backward(NULL, dw->oW, dw->ob, dout, a->ctx, w->oW, Nq, d, d);
	memset(dq, 0, sizeof(float) * ((size_t)2 * Nk + Nq) * d);
	if (dm->dropout > 0) {
		attn_dropout_backward(a, dm, dctx, dq, dk, dv,
				      dv + (size_t)Nk * d);
	} else {
		struct attn_args at = attn_view(a, dm, NULL);

		attention_backward(&at, dctx, dq, dk, dv);
	}
	linear_backward(dx, dw->qW, dw->qb, dq, x, w->qW, Nq, d, d);
	linear_backward(dmem, dw->kW, dw->kb, dk, mem, w->kW, Nk, d, d);
	linear_backward(dmem, dw->vW, dw->vb, dv, mem, w->vW, Nk, d, d);
}
