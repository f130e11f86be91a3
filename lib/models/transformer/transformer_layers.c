/*
 * transformer_layers.c: the Transformer's own layers, over nn/'s: the
 * input, scaled embeddings plus the sinusoidal position encodings
 * (nn/posenc.c) from the model's table; and a residual sub-layer's two
 * halves around its function.  See transformer.h.
 */
#include <stddef.h>
#include "kernels/kernels.h"
#include "transformer.h"

void tf_embed_forward(const struct tf_net *n, float *x, const int32_t *ids,
		      int B, int T, int p0, const float *emb)
{
	/* x [B*T, d] = emb[ids] * sqrt(d) + PE(p0 + t) */
	size_t i, rows = (size_t)B * T;
	int b;

	embedding_forward(x, ids, (int)rows, emb, n->d);
	for (i = 0; i < rows * n->d; i++)
		x[i] *= n->emb_scale;
	for (b = 0; b < B; b++)
		posenc_add(x + (size_t)b * T * n->d, T, n->d, p0, n->pe,
			   TF_PE_ROWS);
}

void tf_embed_backward(const struct tf_net *n, float *demb,
		       const int32_t *ids, int rows, float *dx)
{
	/* demb[ids] += sqrt(d) * dx; dx [rows, d] is scaled in place */
	size_t i;

	for (i = 0; i < (size_t)rows * n->d; i++)
		dx[i] *= n->emb_scale;
	embedding_backward(demb, ids, rows, dx, n->d);
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

