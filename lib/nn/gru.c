/* gru.c: the GRU layer of doc/MODELS.md over padded batches; see gru.h. */
#include <string.h>

#include "gru.h"
#include "kernels/kernels.h"
#include "layers.h"

void gru_step_forward(float *hnew, float *pre, float *zr, float *rh,
		      float *hh, const float *h, const float *U, int B, int n)
{
	/* pre [B, 3n]: z and r parts += h [B, n] . U_zr^T, U_zr [2n, n] */
	sgemm(0, 1, B, 2 * n, n, 1.0f, h, n, U, n, 1.0f, pre, 3 * n);
	gru_gates_forward(zr, rh, pre, h, B, n);
	/* h part += (r * h) [B, n] . U_h^T, U_h [n, n] */
	sgemm(0, 1, B, n, n, 1.0f, rh, n, U + (size_t)2 * n * n, n, 1.0f,
	      pre + 2 * n, 3 * n);
	gru_state_forward(hnew, hh, pre, zr, h, B, n);
}

void gru_step_backward(float *dpre, float *dh, float *drh, const float *dhnew,
		       const float *zr, const float *hh, const float *h,
		       const float *U, int B, int n)
{
	gru_state_backward(dpre, dh, dhnew, hh, zr, h, B, n);
	/* drh [B, n] = dpre_h [B, n] . U_h [n, n] */
	sgemm(0, 0, B, n, n, 1.0f, dpre + 2 * n, 3 * n, U + (size_t)2 * n * n,
	      n, 0.0f, drh, n);
	gru_gates_backward(dpre, dh, drh, zr, h, B, n);
	/* dh [B, n] += dpre_zr [B, 2n] . U_zr [2n, n] */
	sgemm(0, 0, B, n, 2 * n, 1.0f, dpre, 3 * n, U, n, 1.0f, dh, n);
}

void gru_dU(float *dU, const float *dpre, const float *h, const float *rh,
	    int N, int n)
{
	/* dU_zr [2n, n] += dpre_zr^T [2n, N] . h [N, n] */
	sgemm(1, 0, 2 * n, n, N, 1.0f, dpre, 3 * n, h, n, 1.0f, dU, n);
	/* dU_h [n, n] += dpre_h^T [n, N] . rh [N, n] */
	sgemm(1, 0, n, n, N, 1.0f, dpre + 2 * n, 3 * n, rh, n, 1.0f,
	      dU + (size_t)2 * n * n, n);
}

size_t gru_cache_floats(int S, int B, int n)
{
	return (size_t)S * B * 7 * n;
}

void gru_cache_bind(struct gru_cache *c, float *mem, int S, int B, int n)
{
	size_t sb = (size_t)S * B * n;

	c->pre = mem;
	c->zr = c->pre + 3 * sb;
	c->hh = c->zr + 2 * sb;
	c->rh = c->hh + sb;
}

/* Where the walk's step t reads its old state and writes its new one. */
static size_t prev_block(int t, int reverse)
{
	return reverse ? (size_t)t + 1 : (size_t)t;
}

static size_t next_block(int t, int reverse)
{
	return reverse ? (size_t)t : (size_t)t + 1;
}

/* Zeroes the rows of state block t that are padding. */
static void mask_padding(float *h, const int *len, int t, int B, int n)
{
	for (int b = 0; b < B; b++)
		if (t >= len[b])
			memset(h + (size_t)b * n, 0, (size_t)n * sizeof(float));
}

void gru_forward(float *hs, struct gru_cache *c, const float *x,
		 const float *W, const float *U, const float *b,
		 const int *len, int S, int B, int in, int n, int reverse)
{
	size_t bn = (size_t)B * n;

	/* the input terms of every step at once: pre [S*B, 3n] = x W^T + b */
	linear_forward(c->pre, x, W, b, S * B, in, 3 * n);
	memset(hs + (reverse ? (size_t)S : 0) * bn, 0, bn * sizeof(float));
	for (int k = 0; k < S; k++) {
		int t = reverse ? S - 1 - k : k;
		float *h = hs + prev_block(t, reverse) * bn;
		float *hnew = hs + next_block(t, reverse) * bn;

		gru_step_forward(hnew, c->pre + t * 3 * bn, c->zr + t * 2 * bn,
				 c->rh + t * bn, c->hh + t * bn, h, U, B, n);
		mask_padding(hnew, len, t, B, n);
	}
}

void gru_backward(float *dx, float *dW, float *dU, float *db, float *dhs,
		  float *dpre, float *drh, const float *hs,
		  const struct gru_cache *c, const float *x, const float *W,
		  const float *U, const int *len, int S, int B, int in, int n,
		  int reverse)
{
	size_t bn = (size_t)B * n;

	memset(dpre, 0, (size_t)S * 3 * bn * sizeof(float));
	/* the walk in reverse: dhs of step t's new state is complete when
	 * every later step has added its carry */
	for (int k = S - 1; k >= 0; k--) {
		int t = reverse ? S - 1 - k : k;
		float *dhnew = dhs + next_block(t, reverse) * bn;

		/* a padding state was forced to zero: nothing flows back */
		mask_padding(dhnew, len, t, B, n);
		gru_step_backward(dpre + t * 3 * bn,
				  dhs + prev_block(t, reverse) * bn, drh, dhnew,
				  c->zr + t * 2 * bn, c->hh + t * bn,
				  hs + prev_block(t, reverse) * bn, U, B, n);
	}
	/* the weights' gradients over every step at once; the old states
	 * of steps 0..S-1 are the contiguous blocks from prev_block(0) */
	linear_backward(dx, dW, db, dpre, x, W, S * B, in, 3 * n);
	gru_dU(dU, dpre, hs + prev_block(0, reverse) * bn, c->rh, S * B, n);
}
