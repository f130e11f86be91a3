/*
 * transformer_layers.c: the Transformer's input layer, scaled embeddings
 * plus the sinusoidal position encodings (nn/posenc.c) from the model's
 * table; see transformer.h.
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
