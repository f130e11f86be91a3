/* lstm.c: the LSTM layer of doc/MODELS.md over padded batches; see lstm.h. */
#include <string.h>

#include "kernels/kernels.h"
#include "layers.h"
#include "lstm.h"

void lstm_step_forward(float *hnew, float *cnew, float *act, float *pre,
		       const float *h, const float *c, const float *U, int B,
		       int n)
{
	/* pre [B, 4n] += h [B, n] . U^T */
	sgemm(0, 1, B, 4 * n, n, 1.0f, h, n, U, n, 1.0f, pre, 4 * n);
	lstm_cell_forward(act, cnew, hnew, pre, c, B, n);
}

void lstm_step_backward(float *dpre, float *dh, float *dc, const float *dhnew,
			const float *dcnew, const float *act, const float *c,
			const float *cnew, const float *U, int B, int n)
{
	lstm_cell_backward(dpre, dc, dhnew, dcnew, act, c, cnew, B, n);
	/* dh [B, n] += dpre [B, 4n] . U [4n, n] */
	sgemm(0, 0, B, n, 4 * n, 1.0f, dpre, 4 * n, U, n, 1.0f, dh, n);
}

/* Zeroes the rows of block x [B, n] whose sequences end before input t. */
static void mask_padding(float *x, const int *len, int t, int B, int n)
{
	for (int b = 0; len && b < B; b++)
		if (t >= len[b])
			memset(x + (size_t)b * n, 0, (size_t)n * sizeof(float));
}

void lstm_forward(float *hs, float *cs, float *act, const float *x,
		  const float *W, const float *U, const float *b,
		  const int *len, int S, int B, int in, int n)
{
	size_t bn = (size_t)B * n;

	/* the input terms of every step at once, into act (the cell
	 * turns each step's block into its gates in place) */
	linear_forward(act, x, W, b, S * B, in, 4 * n);
	for (int t = 0; t < S; t++) {
		float *a = act + (size_t)t * 4 * bn;

		lstm_step_forward(hs + (t + 1) * bn, cs + (t + 1) * bn, a, a,
				  hs + t * bn, cs + t * bn, U, B, n);
		mask_padding(hs + (t + 1) * bn, len, t, B, n);
		mask_padding(cs + (t + 1) * bn, len, t, B, n);
	}
}

void lstm_backward(float *dx, float *dW, float *dU, float *db, float *dhs,
		   float *dcs, float *dpre, const float *hs, const float *cs,
		   const float *act, const float *x, const float *W,
		   const float *U, const int *len, int S, int B, int in,
		   int n)
{
	size_t bn = (size_t)B * n;

	/* the steps in reverse: step t's new state's gradient is complete
	 * when every later step has added its carry */
	for (int t = S - 1; t >= 0; t--) {
		float *dh = dhs + (t + 1) * bn, *dc = dcs + (t + 1) * bn;

		/* a padding state was forced to zero: nothing flows back */
		mask_padding(dh, len, t, B, n);
		mask_padding(dc, len, t, B, n);
		lstm_step_backward(dpre + t * 4 * bn, dhs + t * bn,
				   dcs + t * bn, dh, dc, act + t * 4 * bn,
				   cs + t * bn, cs + (t + 1) * bn, U, B, n);
	}
	/* the weights' gradients over every step at once */
	linear_backward(dx, dW, db, dpre, x, W, S * B, in, 4 * n);
	/* dU [4n, n] += dpre^T [4n, S B] . hs[0 .. S-1] [S B, n] */
	sgemm(1, 0, 4 * n, n, S * B, 1.0f, dpre, 4 * n, hs, n, 1.0f, dU, n);
}
