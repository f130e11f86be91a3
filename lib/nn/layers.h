/*
 * layers.h: the neural-network layers the models are built from, each a
 * forward function and a backward function that ADDS into its d-buffers
 * (the caller zeroes them).  The folder:
 *
 *   layers.h   this map; linear, cross-entropy, dropout, the feed-forward
 *              layer and the position encodings
 *   linear.c   linear_forward/backward, linear_relu_forward
 *   xent.c     label-smoothed cross-entropy with its gradient
 *   guided.c   guided alignment's cross-entropy over one attention head
 *   dropout.c  inverted dropout fused with a residual sum
 *   ffn.c      the position-wise feed-forward layer (Transformer)
 *   posenc.c   the positions of the Transformer: sinusoidal encodings
 *              and rotary embeddings (RoPE)
 *   mha.h/.c   multi-head attention over the fused attention kernel
 *   gru.h/.c   the GRU layer and its step (the recurrent models)
 *   lstm.h/.c  the LSTM layer and its step (seq2seq)
 *   ssru.h/.c  the SSRU layer and its step (the Transformer's decoder
 *              with dec_self=ssru, Bergamot's students)
 *   window.h   attention by location for the recurrent decoder: the
 *              diagonal (diagonal.c), Graves' soft window (window.c) and
 *              the context of weights (context.c)
 *
 * Shapes are row-major; rows are positions.  The layers use the kernels
 * (kernels/kernels.h) and nothing above them: a model's own arrangement
 * of them (residuals, layer norms, the parameter names) lives with the
 * model under models/.
 */
#ifndef ATTN_LAYERS_H
#define ATTN_LAYERS_H

#include <stddef.h>
#include <stdint.h>
#include "base/rng.h"

/*
 * Linear map y = x W^T + b of doc/MODELS.md (W stored [out, in]).
 * x [N, in], W [out, in], b [out] or NULL, y [N, out] (overwritten).
 * Where W has an int8 pack registered (linear_int8_add), the product is
 * that pack's int8 one (gemm_packed.h: each row of x quantised alone, so
 * a row's result does not depend on N); else sgemm's.
 */
void linear_forward(float *y, const float *x, const float *W, const float *b,
		    int N, int in, int out);
/* linear_forward, then y = max(y, 0): in an int8 product's last pass
 * (its end, gemm_packed.h's relu), the same values without another pass
 * over y. */
void linear_relu_forward(float *y, const float *x, const float *W,
			 const float *b, int N, int in, int out);
/*
 * The int8 packs of a process's int8 models (model_load), found by the
 * address of their dequantised weights W: linear_int8_add registers p
 * (p->N x p->K) for W (0, or -1 out of memory), linear_int8_remove
 * forgets W's (before p is freed).
 */
struct wpack;
int linear_int8_add(const float *W, const struct wpack *p);
void linear_int8_remove(const float *W);
/*
 * dx [N, in] += dy W;  dW [out, in] += dy^T x;  db [out] += sum of dy rows.
 * Any of dx, dW, db may be NULL.
 */
void linear_backward(float *dx, float *dW, float *db, const float *dy,
		     const float *x, const float *W, int N, int in, int out);

/*
 * Cross-entropy with label smoothing eps (doc/MODELS.md, Training), over the
 * rows of logits [N, V] with reference ids tgt [N]; rows whose reference is
 * XENT_PAD (a padding position, marked so by the caller) are skipped.  Not
 * id 0: that is </s> in Marian's vocabularies, and a model that never saw
 * it as a target never learns to stop.  The target distribution of a row
 * is (1 - eps) onehot(tgt) + eps / V.
 * Returns the sum of the rows' losses (>= 0), or -1 (err_msg()) out of
 * memory; *nll (may be NULL) gets the sum of -log p(tgt) (for
 * perplexity), *count (may be NULL) the rows counted.
 * dlogits [N, V] (may be NULL, may equal logits) is OVERWRITTEN with
 * scale * (softmax(logits) - target), zero on skipped rows.
 */
#define XENT_PAD (-1)
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

/*
 * Guided alignment (Garg et al. 2019; Marian's --guided-alignment, its
 * "ce" cost): a cross-entropy between head `head` of an attention's
 * probabilities and a reference alignment.  Queries q [B*Tq, d] over keys
 * k [B*Tk, d], the heads column blocks of dh = d / heads (as mha.h's):
 *
 *	p[b,t,s] = softmax over s < klen[b] of q[b,t,head] . k[b,s,head]
 *		   / sqrt(dh)
 *
 * ref [B, Tq, Tk] holds the reference's weights (1 for a link, 0 for
 * none; those at s >= klen[b] are ignored); each row is normalised to sum
 * to 1, and a row of zeros (a query with no link, or padding) adds no
 * loss.  Row t is the reference of query t + shift (shift 0 or 1; the
 * last shift rows of ref are then unused).  The loss is
 *
 *	L = weight * sum over b, t of - sum over s of r[b,t,s]
 *					log p[b,t+shift,s]
 *
 * with r the normalised rows; returned (-1 with err_msg() out of memory),
 * and scale * dL/dq, scale * dL/dk ADDED into dq [B*Tq, d] and dk
 * [B*Tk, d] (head's columns only).
 */
double guided_forward_backward(float *dq, float *dk, const float *q,
			       const float *k, const float *ref,
			       const int *klen, int B, int Tq, int Tk, int d,
			       int heads, int head, int shift, float weight,
			       float scale);

/*
 * Inverted dropout with rate p, and the residual sum after it: y [n] =
 * a + x * keep / (1 - p) (a NULL: without a), keep drawn from r into mask
 * [n] (16 bits of rng_next per element).  p 0: y = a + x, and no draws,
 * no mask.  y may equal x or a.
 */
void dropout_forward(float *y, uint8_t *mask, const float *a, const float *x,
		     size_t n, float p, struct rng *r);
/* dx [n] += dy * keep / (1 - p), keep from dropout_forward's mask. */
void dropout_backward(float *dx, const float *dy, const uint8_t *mask,
		      size_t n, float p);

/* The feed-forward layer's parameters. */
struct ffn_w {
	float *W1, *b1, *W2, *b2;	/* [f, d], [f], [d, f], [d] */
};

/*
 * FFN(x) = W2 relu(W1 x + b1) + b2 on rows x [N, d]: h [N, f] (saved for
 * the backward pass), y [N, d].
 */
void ffn_forward(float *y, float *h, const float *x, const struct ffn_w *w,
		 int N, int d, int f);
/* dx [N, d] += and dw += from dy [N, d]; dh [N, f] is scratch. */
void ffn_backward(float *dx, struct ffn_w *dw, float *dh, const float *dy,
		  const float *x, const float *h, const struct ffn_w *w,
		  int N, int d, int f);

/*
 * The sinusoidal position encodings of doc/MODELS.md: posenc() is position
 * p's dimension i of d; posenc_table() fills pe [rows, d] with them for
 * positions 0 .. rows-1, and posenc_add() adds them to x [rows, d], row
 * r getting position p0 + r: from the table pe [pe_rows, d] where it
 * reaches, computed beyond (the same bits either way).  No parameters,
 * so no backward pass: the gradient passes through unchanged.
 */
float posenc(int p, int i, int d);
void posenc_table(float *pe, int rows, int d);
void posenc_add(float *x, int rows, int d, int p0, const float *pe,
		int pe_rows);

/*
 * The rotary position embedding of Su et al. 2021 (RoFormer), in place
 * on x [rows, heads * dh] (dh even): in every head, the pair of
 * dimensions (2i, 2i+1) of row r, i < dh/2, is rotated by the angle
 * pos[r] * theta_i, theta_i = 10000^(-2i/dh):
 *
 *   x'[2i]   = x[2i] cos - x[2i+1] sin
 *   x'[2i+1] = x[2i] sin + x[2i+1] cos
 *
 * The pairs are the paper's interleaved ones, not GPT-NeoX's halves
 * (i, i + dh/2).  Rotating queries and keys makes q.k depend on their
 * positions only through pos_q - pos_k.  cos and sin come from the table
 * cs [cs_rows, dh] (rope_table: (cos, sin) of pair i of position p at
 * cs[p, 2i], cs[p, 2i+1]) where it reaches, computed beyond (the same
 * bits either way).  No parameters: rope_backward turns dx [rows,
 * heads * dh], the gradient of the rotated rows, into that of the rows
 * before, in place (the rotation by the opposite angle).
 */
void rope_table(float *cs, int rows, int dh);
void rope_forward(float *x, const int *pos, int rows, int heads, int dh,
		  const float *cs, int cs_rows);
void rope_backward(float *dx, const int *pos, int rows, int heads, int dh,
		   const float *cs, int cs_rows);

#endif
