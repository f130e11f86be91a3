/*
 * lstm.h: the LSTM of doc/MODELS.md (seq2seq; gates i, f, g, o, no
 * peepholes) as a layer over a batch of padded sequences, and the one
 * step that the step-wise decoder shares with it.
 */
#ifndef ATTN_LSTM_H
#define ATTN_LSTM_H

#include <stddef.h>

/*
 * One step for B rows, U [4n, n].  On entry pre [B, 4n] holds the input
 * terms W x + b; the step adds U h (h [B, n]) and writes the gates' values
 * act [B, 4n] (act may be pre: the cell reads each element's four
 * pre-activations before it writes them), the new cell cnew and state
 * hnew [B, n] from c [B, n].
 */
void lstm_step_forward(float *hnew, float *cnew, float *act, float *pre,
		       const float *h, const float *c, const float *U, int B,
		       int n);
/*
 * Its backward from dhnew and dcnew [B, n] (dcnew NULL: none): writes
 * dpre [B, 4n] and adds the old state's and cell's gradients into dh and
 * dc [B, n].  U's gradient is left to the caller, over many steps at once.
 */
void lstm_step_backward(float *dpre, float *dh, float *dc, const float *dhnew,
			const float *dcnew, const float *act, const float *c,
			const float *cnew, const float *U, int B, int n);

/*
 * The layer over B sequences of len[b] <= S inputs each (len NULL: all
 * S), time-major: x [S, B, in], W [4n, in], U [4n, n], b [4n].  States
 * hs and cells cs [S + 1, B, n]: hs[0] and cs[0] hold the initial ones
 * (the caller's), hs[t + 1] the state after input t.  The state and cell
 * at a padding position (t >= len[b]) are zero, so that padding never
 * changes a result and sequence b's last ones are hs[len[b]], cs[len[b]].
 * act [S, B, 4n] keeps the gates for the backward pass.
 */
void lstm_forward(float *hs, float *cs, float *act, const float *x,
		  const float *W, const float *U, const float *b,
		  const int *len, int S, int B, int in, int n);
/*
 * Backward: dhs and dcs [S + 1, B, n] hold the gradients of the states
 * and cells and are used up (each step adds its carry into them: blocks
 * 0 end as the initial ones' gradients).  Adds into dx [S, B, in] (may be
 * NULL), dW, dU, db; dpre [S, B, 4n] is scratch.
 */
void lstm_backward(float *dx, float *dW, float *dU, float *db, float *dhs,
		   float *dcs, float *dpre, const float *hs, const float *cs,
		   const float *act, const float *x, const float *W,
		   const float *U, const int *len, int S, int B, int in,
		   int n);

#endif
