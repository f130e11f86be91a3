/* posenc.c: the Transformer's input: scaled embeddings plus sinusoidal
 * position encodings; see transformer.h. */
#include <math.h>
#include <stddef.h>
#include "kernels/kernels.h"
#include "models/transformer/transformer.h"

float posenc(int p, int i, int d)
{
	/* PE(p, 2k) = sin(p / 10000^(2k/d)), PE(p, 2k+1) = cos(the same) */
	double angle = p / pow(10000.0, (double)(i - i % 2) / d);

	return (float)(i % 2 ? cos(angle) : sin(angle));
}

void posenc_table(float *pe, int rows, int d)
{
	/* posenc() for every (p, i), with each column's divisor computed
	 * once rather than rows times (the same doubles, so the same bits) */
	double div;
	int p, i;

	for (i = 0; i < d; i++) {
		div = pow(10000.0, (double)(i - i % 2) / d);
		for (p = 0; p < rows; p++)
			pe[(size_t)p * d + i] = (float)(i % 2 ? cos(p / div)
							      : sin(p / div));
	}
}

void posenc_add(const struct tf_net *n, float *x, int rows, int p0)
{
	int r, i, d = n->d;

	for (r = 0; r < rows; r++) {
		float *xr = x + (size_t)r * d;
		int p = p0 + r;

		if (p < TF_PE_ROWS) {
			const float *pe = n->pe + (size_t)p * d;

			for (i = 0; i < d; i++)
				xr[i] += pe[i];
		} else {
			for (i = 0; i < d; i++)
				xr[i] += posenc(p, i, d);
		}
	}
}

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
		posenc_add(n, x + (size_t)b * T * n->d, T, p0);
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
