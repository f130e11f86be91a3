/*
 * transformer_marian.c: what the Transformer needs to hold Marian's
 * models (doc/MODELS.md, Transformer: Marian's variants): its layout of
 * the sinusoidal encodings (pos=marian) and the swish activation of the
 * feed-forward layer (ffn_act=swish), forward and backward.
 *
 * Marian's encodings (its inits::sinusoidalPositionEmbeddings,
 * src/graph/node_initializers.cpp l. 215-234), in float as it computes
 * them, to the bit (libm's logf, expf, sinf and cosf; its int8 products
 * turn a last bit into another quantised value): with h = d / 2 (a
 * float) timescales and the increment c = logf(10000) / (h - 1),
 * position p (from 0) has sinf(p expf(i -c)) in dimension i < h and
 * cosf(p expf(i -c)) in dimension (int)h + i: the sines in the first
 * half, the cosines in the second (Vaswani et al.'s interleave sin and
 * cos, with 10000^(-2i/d)).  An odd d has (int)h + 1 timescales, the
 * last sine written over the first cosine.
 */
#include <math.h>
#include <string.h>
#include "kernels/kernels.h"
#include "transformer.h"

float tf_marian_pe(int p, int i, int d)
{
	float h = (float)d / 2;
	/* (d 2: one timescale, increment 0, not Marian's NaN) */
	float c = h > 1 ? logf(10000.f) / (h - 1.f) : 0;
	int ih = (int)h;

	/* the sine of timescale ih (odd d) is written after the cosine of
	 * timescale 0 */
	if (i < ih || (i == ih && d % 2))
		return sinf((float)p * expf((float)i * -c));
	return cosf((float)p * expf((float)(i - ih) * -c));
}

void tf_marian_pe_table(float *pe, int rows, int d)
{
	int p, i;

	for (p = 0; p < rows; p++)
		for (i = 0; i < d; i++)
			pe[(size_t)p * d + i] = tf_marian_pe(p, i, d);
}

void tf_marian_pe_add(float *x, int rows, int d, int p0, const float *pe,
		      int pe_rows)
{
	int r, i;

	for (r = 0; r < rows; r++) {
		float *xr = x + (size_t)r * d;
		int p = p0 + r;

		if (p < pe_rows)
			for (i = 0; i < d; i++)
				xr[i] += pe[(size_t)p * d + i];
		else
			for (i = 0; i < d; i++)
				xr[i] += tf_marian_pe(p, i, d);
	}
}

/* h = a sigmoid(a), element by element (in place when h is a). */
void tf_swish(float *h, const float *a, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		h[i] = a[i] / (1.0f + expf(-a[i]));
}

void tf_ffn_forward(const struct tf_net *n, float *y, float *h, float *a,
		    const float *x, const struct ffn_w *w, int N)
{
	if (!n->swish) {
		ffn_forward(y, h, x, w, N, n->d, n->ffn);
		return;
	}
	/* a [N, f] = x W1^T + b1; h = swish(a); y = h W2^T + b2 */
	linear_forward(a, x, w->W1, w->b1, N, n->d, n->ffn);
	tf_swish(h, a, (size_t)N * n->ffn);
	linear_forward(y, h, w->W2, w->b2, N, n->ffn, n->d);
}

void tf_ffn_backward(const struct tf_net *n, float *dx, struct ffn_w *dw,
		     float *dh, const float *dy, const float *x,
		     const float *h, const float *a, const struct ffn_w *w,
		     int N)
{
	size_t i, k = (size_t)N * n->ffn;
	int d = n->d, f = n->ffn;

	if (!n->swish) {
		ffn_backward(dx, dw, dh, dy, x, h, w, N, d, f);
		return;
	}
	/* dh = dy W2; da = dh swish'(a), swish'(a) = s + a s (1 - s) */
	sgemm(0, 0, N, f, d, 1.0f, dy, d, w->W2, f, 0.0f, dh, f);
	for (i = 0; i < k; i++) {
		float s = 1.0f / (1.0f + expf(-a[i]));

		dh[i] *= s + a[i] * s * (1.0f - s);
	}
	linear_backward(NULL, dw->W2, dw->b2, dy, h, w->W2, N, f, d);
	linear_backward(dx, dw->W1, dw->b1, dh, x, w->W1, N, d, f);
}
