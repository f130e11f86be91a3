/*
 * ssru.h: the SSRU, the "simpler simple recurrent unit" of Kim et al.
 * 2019 ("From Research to Production and Back: Ludicrously Fast Neural
 * Machine Translation"), as Marian computes it (src/rnn/cells.h, class
 * SSRU: applyInput, applyState; its highway() is
 * sigmoid(t) y + (1 - sigmoid(t)) x, src/graph/node_operators_binary.h,
 * HighwayNodeOp).  Bergamot's students put it in place of the decoder's
 * self-attention (doc/MODELS.md, Transformer: the SSRU decoder).  Input
 * x_t, cell c_t, all [d]:
 *
 *   f_t = sigmoid(Wf x_t + bf)               the forget gate
 *   c_t = f_t * c_{t-1} + (1 - f_t) * (W x_t),     c_0 = 0
 *   y_t = relu(c_t)
 *
 * W and Wf [d, d] (attn's [out, in]), bf [d]; W x has no bias.  The state
 * a step carries is c alone (one vector per sequence), not y.
 */
#ifndef ATTN_SSRU_H
#define ATTN_SSRU_H

struct ssru_w {
	float *W, *Wf, *bf;		/* [d, d], [d, d], [d] */
};

/* What the layer keeps for its backward pass, each [B*T, d]. */
struct ssru_acts {
	float *xw;			/* W x */
	float *f;			/* the gates, after the sigmoid */
	float *c;			/* the cells */
};

/*
 * One step of n independent rows (a decoder's hypotheses): on entry c
 * [n, d] holds each row's c_{t-1}, xw [n, d] its W x_t and f [n, d] its
 * Wf x_t + bf; c becomes c_t, f the gates f_t and y [n, d] = relu(c_t).
 * The four apart (restrict: the loop vectorises).
 */
void ssru_step_forward(float *restrict y, float *restrict c,
		       const float *restrict xw, float *restrict f, int n,
		       int d);

/*
 * The layer over B sequences of T rows each, x [B*T, d], row b*T + t
 * position t of sequence b, each from c_0 = 0: y [B*T, d], and a's
 * arrays kept.  Padding after a sequence's end changes none of its
 * rows (the recurrence only looks back).
 */
void ssru_forward(float *y, struct ssru_acts *a, const float *x,
		  const struct ssru_w *w, int B, int T, int d);
/*
 * Its backward pass from dy [B*T, d]: dx [B*T, d] += and dw's arrays +=
 * (dx may be NULL).  dxw and dfp [B*T, d] are scratch.
 */
void ssru_backward(float *dx, struct ssru_w *dw, float *dxw, float *dfp,
		   const float *dy, const float *x, const struct ssru_acts *a,
		   const struct ssru_w *w, int B, int T, int d);

#endif
