/*
 * mha.c: multi-head attention of doc/MODELS.md on top of the fused attention
 * kernel: projections as one sgemm over every row of the batch, the heads
 * as column blocks of d_k inside the [rows, d] matrices.  Dropout on the
 * attention weights (training) is the kernel's: one draw of the run's
 * generator seeds its mask, which the backward pass makes again.  With
 * rotary positions, the queries and keys are rotated after their
 * projections (a->q, a->k hold them rotated).
 */
#include <math.h>
#include <string.h>
#include "kernels/kernels.h"
#include "layers.h"
#include "mha.h"

/* The kernel's view of the forward pass. */
static struct attn_args attn_view(const struct mha_acts *a,
				  const struct mha_dims *dm)
{
	int d = dm->d, dk = d / dm->heads;

	return (struct attn_args){
		.B = dm->B, .H = dm->heads, .T = dm->Tq, .S = dm->Tk, .dk = dk,
		.scale = 1.0f / sqrtf((float)dk),
		.q = a->q, .q_bs = (long)dm->Tq * d, .q_rs = d,
		.k = a->k, .v = a->v, .kv_bs = (long)dm->Tk * d, .kv_rs = d,
		.out = a->ctx, .o_bs = (long)dm->Tq * d, .o_rs = d,
		.klen = dm->klen, .causal = dm->causal, .q_pos0 = 0,
		.lse = a->lse, .dropout = dm->dropout, .seed = a->seed,
		.marian = dm->marian,
	};
}

void mha_forward(float *out, struct mha_acts *a, const float *x,
		 const float *mem, const struct mha_w *w,
		 const struct mha_dims *dm, struct rng *r)
{
	/* x [B*Tq, d], mem [B*Tk, d] -> out [B*Tq, d] */
	int d = dm->d, Nq = dm->B * dm->Tq, Nk = dm->B * dm->Tk;

	a->seed = dm->dropout > 0 ? rng_next(r) : 0;
	struct attn_args at = attn_view(a, dm);

	linear_forward(a->q, x, w->qW, w->qb, Nq, d, d);
	linear_forward(a->k, mem, w->kW, w->kb, Nk, d, d);
	linear_forward(a->v, mem, w->vW, w->vb, Nk, d, d);
	if (dm->qpos)
		rope_forward(a->q, dm->qpos, Nq, dm->heads, d / dm->heads,
			     dm->cs, dm->cs_rows);
	if (dm->kpos)
		rope_forward(a->k, dm->kpos, Nk, dm->heads, d / dm->heads,
			     dm->cs, dm->cs_rows);
	attention_forward(&at);
	linear_forward(out, a->ctx, w->oW, w->ob, Nq, d, d);
}

/* y [n] += x [n] */
static void add_rows(float *y, const float *x, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		y[i] += x[i];
}

size_t mha_scratch_floats(const struct mha_dims *dm)
{
	return 2 * (size_t)dm->B * dm->Tq * dm->d
		+ 2 * (size_t)dm->B * dm->Tk * dm->d;
}

void mha_backward(float *dx, float *dmem, struct mha_w *dw, const float *dout,
		  const struct mha_acts *a, const float *x, const float *mem,
		  const struct mha_w *w, const struct mha_dims *dm,
		  float *scratch)
{
	int d = dm->d, Nq = dm->B * dm->Tq, Nk = dm->B * dm->Tk;
	float *dctx = scratch, *dq = dctx + (size_t)Nq * d;
	float *dk = dq + (size_t)Nq * d, *dv = dk + (size_t)Nk * d;
	struct attn_args at = attn_view(a, dm);

	/* out = ctx Wo^T + bo */
	sgemm(0, 0, Nq, d, d, 1.0f, dout, d, w->oW, d, 0.0f, dctx, d);
	linear_backward(NULL, dw->oW, dw->ob, dout, a->ctx, w->oW, Nq, d, d);
	memset(dq, 0, sizeof(float) * ((size_t)2 * Nk + Nq) * d);
	attention_backward(&at, dctx, dq, dk, dv);
	if (dm->gq)
		add_rows(dq, dm->gq, (size_t)Nq * d);
	if (dm->gk)
		add_rows(dk, dm->gk, (size_t)Nk * d);
	if (dm->qpos)
		rope_backward(dq, dm->qpos, Nq, dm->heads, d / dm->heads,
			      dm->cs, dm->cs_rows);
	if (dm->kpos)
		rope_backward(dk, dm->kpos, Nk, dm->heads, d / dm->heads,
			      dm->cs, dm->cs_rows);
	linear_backward(dx, dw->qW, dw->qb, dq, x, w->qW, Nq, d, d);
	linear_backward(dmem, dw->kW, dw->kb, dk, mem, w->kW, Nk, d, d);
	linear_backward(dmem, dw->vW, dw->vb, dv, mem, w->vW, Nk, d, d);
}
