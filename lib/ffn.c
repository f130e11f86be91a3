/* ffn.c: the position-wise feed-forward layer; see transformer.h. */
#include "kernels.h"
#include "layers.h"
#include "transformer.h"

void ffn_forward(float *y, float *h, const float *x, const struct ffn_w *w,
		 int N, int d, int f)
{
	/* h [N, f] = relu(x W1^T + b1); y [N, d] = h W2^T + b2 */
	linear_forward(h, x, w->W1, w->b1, N, d, f);
	relu_forward(h, h, (size_t)N * f);
	linear_forward(y, h, w->W2, w->b2, N, f, d);
}

void ffn_backward(float *dx, struct ffn_w *dw, float *dh, const float *dy,
		  const float *x, const float *h, const struct ffn_w *w,
		  int N, int d, int f)
{
	size_t i;

	/* dh [N, f] = dy [N, d] W2 [d, f], overwritten; then the weights */
	sgemm(0, 0, N, f, d, 1.0f, dy, d, w->W2, f, 0.0f, dh, f);
	linear_backward(NULL, dw->W2, dw->b2, dy, h, w->W2, N, f, d);
	/* through the relu: h > 0 exactly where its input was (a select,
	 * not a branch: the signs are as random as a coin) */
	for (i = 0; i < (size_t)N * f; i++) {
		float g = dh[i];

		dh[i] = h[i] > 0.0f ? g : 0.0f;
	}
	linear_backward(dx, dw->W1, dw->b1, dh, x, w->W1, N, d, f);
}
