/*
 * layers.h: the layers that every model shares, each a forward function
 * and a backward function that ADDS into its d-buffers (the caller zeroes
 * them).  Architecture-specific layers live with their model.
 */
#ifndef ATTN_LAYERS_H
#define ATTN_LAYERS_H

#include <stdint.h>

/*
 * Linear map y = x W^T + b of MODELS.md (W stored [out, in]).
 * x [N, in], W [out, in], b [out] or NULL, y [N, out] (overwritten).
 */
void linear_forward(float *y, const float *x, const float *W, const float *b,
		    int N, int in, int out);
/*
 * dx [N, in] += dy W;  dW [out, in] += dy^T x;  db [out] += sum of dy rows.
 * Any of dx, dW, db may be NULL.
 */
void linear_backward(float *dx, float *dW, float *db, const float *dy,
		     const float *x, const float *W, int N, int in, int out);

/*
 * Cross-entropy with label smoothing eps (MODELS.md, Training), over the
 * rows of logits [N, V] with reference ids tgt [N]; rows whose reference is
 * <pad> (0) are skipped.  The target distribution of a row is
 * (1 - eps) onehot(tgt) + eps / V.
 * Returns the sum of the rows' losses; *nll (may be NULL) gets the sum of
 * -log p(tgt) (for perplexity), *count (may be NULL) the rows counted.
 * dlogits [N, V] (may be NULL, may equal logits) is OVERWRITTEN with
 * scale * (softmax(logits) - target), zero on skipped rows.
 */
double xent_forward_backward(float *dlogits, const float *logits,
			     const int32_t *tgt, int N, int V, float eps,
			     float scale, double *nll, int *count);
/*
 * The same over logits + bias (bias [V] added to each row, as
 * linear_forward would, as the row is taken), and dbias [V] (may be NULL;
 * needs dlogits) += the sum of dlogits' rows, as bias_backward would: an
 * output layer's bias without passes of its own over [N, V].
 */
double xent_biased_forward_backward(float *dlogits, const float *logits,
				    const float *bias, float *dbias,
				    const int32_t *tgt, int N, int V,
				    float eps, float scale, double *nll,
				    int *count);

#endif
