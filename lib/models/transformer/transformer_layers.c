/*
 * transformer_layers.c: the Transformer's own layers, over nn/'s: the
 * input, scaled embeddings plus the positions (the sinusoidal encodings
 * of nn/posenc.c from the model's table, or a learned table; pos=rope
 * adds none, its positions are in the self-attention, nn/mha.c); and a
 * residual sub-layer's two halves around its function.  See
 * transformer.h.
 */
#include <limits.h>
#include <stddef.h>
#include <string.h>
#include "kernels/kernels.h"
#include "transformer.h"

int tf_pos_limit(const struct tf_net *n)
{
	return n->pos == POS_LEARNED ? n->max_pos : INT_MAX;
}

void tf_embed_forward(const struct tf_net *n, float *x, const int32_t *ids,
		      int B, int T, int p0, int tgt)
{
	/* x [B*T, d] = emb[ids] * sqrt(d) + P(p0 + t) */
	const float *emb = tgt ? n->w.tgt_emb : n->w.src_emb;
	const float *P = tgt ? n->w.tgt_pos : n->w.src_pos;
	size_t i, rows = (size_t)B * T, d = n->d;
	int b, t;

	for (i = 0; i < rows && ids[i] >= 0; i++)
		;
	if (i == rows)
		embedding_forward(x, ids, (int)rows, emb, n->d);
	else	/* bos_id -1 (the target's only): a zero vector */
		for (i = 0; i < rows; i++) {
			if (ids[i] >= 0)
				embedding_forward(x + i * d, ids + i, 1, emb,
						  n->d);
			else
				memset(x + i * d, 0, sizeof(float) * d);
		}
	for (i = 0; i < rows * d; i++)
		x[i] *= n->emb_scale;
	for (b = 0; b < B; b++) {
		float *xb = x + (size_t)b * T * d;

		if (n->pos == POS_SINUSOIDAL)
			posenc_add(xb, T, n->d, p0, n->pe, TF_PE_ROWS);
		else if (n->pos == POS_MARIAN)
			tf_marian_pe_add(xb, T, n->d, p0, n->pe, TF_PE_ROWS);
		else if (n->pos == POS_LEARNED)
			for (t = 0; t < T; t++)
				for (i = 0; i < d; i++)
					xb[t * d + i] +=
						P[(size_t)(p0 + t) * d + i];
	}
}

void tf_embed_backward(const struct tf_net *n, const int32_t *ids, int B,
		       int T, float *dx, int tgt)
{
	/* dP[t] += dx[b, t]; demb[ids] += sqrt(d) * dx */
	float *demb = tgt ? n->g.tgt_emb : n->g.src_emb;
	float *dP = tgt ? n->g.tgt_pos : n->g.src_pos;
	size_t i, rows = (size_t)B * T, d = n->d;
	int b, t;

	if (n->pos == POS_LEARNED)
		for (b = 0; b < B; b++)
			for (t = 0; t < T; t++)
				for (i = 0; i < d; i++)
					dP[t * d + i] +=
						dx[((size_t)b * T + t) * d + i];
	for (i = 0; i < rows * d; i++)
		dx[i] *= n->emb_scale;
	for (i = 0; i < rows && ids[i] >= 0; i++)
		;
	if (i == rows)
		embedding_backward(demb, ids, (int)rows, dx, n->d);
	else	/* a zero vector (bos_id -1) has no parameters */
		for (i = 0; i < rows; i++)
			if (ids[i] >= 0)
				embedding_backward(demb, ids + i, 1,
						   dx + i * d, n->d);
}

/* The layer norm of the model's family: Marian's sums for its models. */
static void tf_layernorm(const struct tf_net *n, float *y, float *mean,
			 float *rstd, const float *x, const struct ln_w *ln,
			 int N)
{
	if (n->marian)
		layernorm_marian_forward(y, mean, rstd, x, ln->g, ln->b, N,
					 n->d, n->ln_eps);
	else
		layernorm_forward(y, mean, rstd, x, ln->g, ln->b, N, n->d,
				  n->ln_eps);
}

const float *tf_sub_in(const struct tf_net *n, struct sub_acts *s,
		       const struct ln_w *ln, const float *x, int N)
{
	if (!n->pre)
		return x;
	tf_layernorm(n, s->ln, s->mean, s->rstd, x, ln, N);
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
	tf_layernorm(n, s->ln, s->mean, s->rstd, s->sum, ln, N);
	return s->ln;
}

