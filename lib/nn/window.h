/*
 * window.h: attention by location for the recurrent decoder, the two
 * alternatives to rnnsearch's additive attention (doc/MODELS.md):
 *
 *   diagonal.c  Bahdanau's two cursors in sync: target step i looks at
 *               source position min(len-1, round(i r)) alone
 *   window.c    Graves' soft window (2013, section 5): K Gaussians over
 *               the source positions whose centres only move forward
 *   context.c   the context of any attention weights, ctx = sum_j a_j v_j
 *
 * Each makes weights a [B, S] for B rows over S source positions, zero
 * at padding (j >= len[b]), that the context then averages by.  Backward
 * functions ADD into their d-buffers, as layers.h's do.
 */
#ifndef ATTN_WINDOW_H
#define ATTN_WINDOW_H

/* The source position min(len - 1, round(i r)) of target step i >= 0
 * (round half up), for len >= 1. */
int diagonal_position(int i, double r, int len);
/* a [B, S]: one at diagonal_position(i, r, len[b]) of row b, zero
 * elsewhere (rows with len[b] < 1 all zero).  No parameters, so no
 * backward pass of its own: the context's carries the gradient. */
void diagonal_forward(float *a, int i, double r, const int *len, int B,
		      int S);

/*
 * The soft window of one decoder step for B rows and K Gaussians, from
 * the linear layer's output p [B, 3K] (rows [a_1..a_K, b_1..b_K,
 * k_1..k_K]) and the previous positions kprev [B, K]:
 *   alpha = exp(a), beta = exp(b), kappa [B, K] = kprev + exp(k)
 *   phi [B, S]: phi[j] = sum_k alpha_k exp(-beta_k (kappa_k - u)^2)
 * with u = j + 1 (positions counted from 1, as in the paper, so that
 * kappa_0 = 0 and a first step of exp(0) = 1 looks at the first
 * position), for j < len[b]; zero beyond.  kappa may not alias kprev.
 */
void window_forward(float *phi, float *kappa, const float *p,
		    const float *kprev, const int *len, int B, int S, int K);
/*
 * Its backward pass from dphi [B, S]: dp [B, 3K] +=.  dkappa [B, K] holds
 * on entry the gradient of the loss by kappa_i from the steps after this
 * one (zero after the last), and on return the gradient by kappa_{i-1}:
 * run the steps in reverse with one dkappa.  kappa is the forward pass's.
 */
void window_backward(float *dp, float *dkappa, const float *dphi,
		     const float *p, const float *kappa, const int *len,
		     int B, int S, int K);

/*
 * ctx [B, dv] = sum_{j < len[b]} a[b, j] v[b, j] for weights a [B, S] and
 * values v [B, S, dv] (v rows dv apart).  Backward: da [B, S] +=
 * dctx[b] . v[b, j] for j < len[b]; dv [B, S, dv] (may be NULL) +=
 * a[b, j] dctx[b].
 */
void context_forward(float *ctx, const float *a, const float *v,
		     const int *len, int B, int S, int dv);
void context_backward(float *da, float *dv, const float *dctx,
		      const float *a, const float *v, const int *len, int B,
		      int S, int ndv);

#endif
