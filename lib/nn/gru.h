/*
 * gru.h: the GRU of doc/MODELS.md (the paper's: the reset gate multiplies the
 * state before U, one bias per gate, rows z, r, h) as a layer over a batch
 * of padded sequences, and the one step that the decoders share with it.
 */
#ifndef ATTN_GRU_H
#define ATTN_GRU_H

#include <stddef.h>

/*
 * One step for B rows, U [3n, n].  On entry pre [B, 3n] holds every input
 * term (W x + b, and the decoder's C c); the step adds U_zr h and
 * U_h (r * h), and writes the gates zr [B, 2n], rh [B, n] = r * h, the
 * candidate hh [B, n] and the new state hnew [B, n] from h [B, n].
 */
void gru_step_forward(float *hnew, float *pre, float *zr, float *rh,
		      float *hh, const float *h, const float *U, int B, int n);
/*
 * Its backward: from dhnew [B, n], adds the gradients of the
 * pre-activations into dpre [B, 3n] and of the old state into dh [B, n].
 * drh [B, n] is scratch.  The gradient of U is left to gru_dU, over many
 * steps at once.
 */
void gru_step_backward(float *dpre, float *dh, float *drh, const float *dhnew,
		       const float *zr, const float *hh, const float *h,
		       const float *U, int B, int n);
/*
 * dU [3n, n] += over N rows (steps times batch): dpre_zr^T h for the z and
 * r blocks, dpre_h^T rh for the h block; dpre [N, 3n], h, rh [N, n].
 */
void gru_dU(float *dU, const float *dpre, const float *h, const float *rh,
	    int N, int n);

/*
 * What the layer keeps of its forward pass for the backward pass, every
 * array time-major [S, B, ...]: pre [S, B, 3n], zr [S, B, 2n], hh and rh
 * [S, B, n].  gru_cache_floats() floats at mem, bound by gru_cache_bind().
 */
struct gru_cache {
	float *pre, *zr, *hh, *rh;
};
size_t gru_cache_floats(int S, int B, int n);
void gru_cache_bind(struct gru_cache *c, float *mem, int S, int B, int n);

/*
 * The layer over B sequences of len[b] <= S inputs each, time-major: x
 * [S, B, in], W [3n, in], U [3n, n], b [3n].  States hs [S + 1, B, n]:
 * forwards, hs[t + 1] is the state after input t and hs[0] = h_0 = 0;
 * backwards (reverse), hs[t] is the state after input t, hs[S] = 0, so
 * each sequence starts at its own last input.  The state at a padding
 * position (t >= len[b]) is zero, so padding never changes a result.
 * Either way the states before inputs 0..S-1 of the walk are contiguous.
 */
void gru_forward(float *hs, struct gru_cache *c, const float *x,
		 const float *W, const float *U, const float *b,
		 const int *len, int S, int B, int in, int n, int reverse);
/*
 * Backward: dhs [S + 1, B, n] holds the gradients of the states hs and is
 * used up (each step adds its carry into it).  Adds into dx [S, B, in]
 * (may be NULL), dW, dU, db; dpre [S, B, 3n] and drh [B, n] are scratch.
 */
void gru_backward(float *dx, float *dW, float *dU, float *db, float *dhs,
		  float *dpre, float *drh, const float *hs,
		  const struct gru_cache *c, const float *x, const float *W,
		  const float *U, const int *len, int S, int B, int in, int n,
		  int reverse);

#endif
