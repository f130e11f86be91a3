/* ffn.c: the position-wise feed-forward layer; see layers.h. */
#include "kernels/kernels.h"
#include "layers.h"

void ffn_forward(float *y, float *h, const float *x, const struct ffn_w *w,
		 int N, int d, int f)
{
	/* h [N, f] = relu(x W1^T + b1); y [N, d] = h W2^T + b2 */
	linear_relu_forward(h, x, w->W1, w->b1, N, d, f);
	linear_forward(y, h, w->W2, w->b2, N, f, d);
}

/*
 * dh [n] = 0 where h [n] (the relu's output) is not > 0: h > 0 exactly
 * where the relu's input was.  A select, not a branch (the signs are as
 * random as a coin), in eights that the compiler vectorises.
 */
static void relu_mask(float *restrict dh, const float *restrict h, size_t n)
{
	size_t i;
	int k;

	for (i = 0; i + 8 <= n; i += 8)
		for (k = 0; k < 8; k++) {
			float g = dh[i + k];

			dh[i + k] = h[i + k] > 0.0f ? g : 0.0f;
		}
	for (; i < n; i++) {
		float g = dh[i];

		dh[i] = h[i] > 0.0f ? g : 0.0f;
	}
}

void ffn_backward(float *dx, struct ffn_w *dw, float *dh, const float *dy,
		  const float *x, const float *h, const struct ffn_w *w,
		  int N, int d, int f)
{
	/* dh [N, f] = dy [N, d] W2 [d, f], overwritten, masked while much
	 * of it is still in cache; then the weights */
	sgemm(0, 0, N, f, d, 1.0f, dy, d, w->W2, f, 0.0f, dh, f);
	relu_mask(dh, h, (size_t)N * f);
	linear_backward(NULL, dw->W2, dw->b2, dy, h, w->W2, N, f, d);
	linear_backward(dx, dw->W1, dw->b1, dh, x, w->W1, N, d, f);
}
