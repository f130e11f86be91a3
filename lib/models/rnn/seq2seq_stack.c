/*
 * seq2seq_stack.c: seq2seq's stacks of LSTM layers (seq2seq.h), the
 * encoder's and the decoder's in training and the encoder's in the
 * pipeline: layer by layer over every step (a layer's input does not wait
 * on the layers above it), dropout on each layer's input and on the top
 * layer's output, never on the recurrence (Zaremba et al. 2014).
 */
#include <string.h>

#include "models/arena.h"
#include "nn/layers.h"
#include "nn/lstm.h"
#include "seq2seq.h"

static void stack_layout(const struct s2s_net *net, struct s2s_stack *st,
			 struct arena *A, int S, int B, float p)
{
	size_t sb = (size_t)S * B, n = net->n;

	memset(st, 0, sizeof *st);
	st->L = net->L;
	st->S = S;
	st->B = B;
	st->m = net->m;
	st->n = net->n;
	st->p = p;
	for (int l = 0; l < net->L; l++) {
		size_t in = l ? n : (size_t)net->m;

		st->hs[l] = arena_floats(A, (sb + B) * n);
		st->cs[l] = arena_floats(A, (sb + B) * n);
		st->act[l] = arena_floats(A, sb * 4 * n);
		if (p > 0) {
			st->xd[l] = arena_floats(A, sb * in);
			st->mask[l] = arena_take(A, sb * in);
		}
	}
	if (p > 0) {
		st->out = arena_floats(A, sb * n);
		st->mask[net->L] = arena_take(A, sb * n);
	}
}

size_t s2s_stack_size(const struct s2s_net *net, int S, int B, float p)
{
	struct arena A = { NULL, 0 };
	struct s2s_stack st;

	stack_layout(net, &st, &A, S, B, p);
	return A.used;
}

void s2s_stack_bind(const struct s2s_net *net, struct s2s_stack *st,
		    void *mem, int S, int B, float p)
{
	struct arena A = { mem, 0 };

	stack_layout(net, st, &A, S, B, p);
}

void s2s_stack_forward(const struct s2s_net *net, struct s2s_stack *st,
		       const struct s2s_layer *w, const float *x,
		       const int *len, struct rng *r)
{
	size_t bn = (size_t)st->B * st->n, sb = (size_t)st->S * st->B;

	for (int l = 0; l < st->L; l++) {
		int in = l ? st->n : st->m;
		const float *xin = l ? st->hs[l - 1] + bn : x;

		if (st->p > 0) {
			dropout_forward(st->xd[l], st->mask[l], NULL, xin,
					sb * in, st->p, r);
			xin = st->xd[l];
		}
		st->in[l] = xin;
		lstm_forward(st->hs[l], st->cs[l], st->act[l], xin, w[l].W,
			     w[l].U, w[l].b, len, st->S, st->B, in, st->n);
	}
	if (st->p > 0)
		dropout_forward(st->out, st->mask[st->L], NULL,
				st->hs[st->L - 1] + bn, sb * st->n, st->p, r);
	else
		st->out = st->hs[st->L - 1] + bn;
}

/* dst [n] += src [n], through dropout's mask when p > 0 */
static void add_back(float *dst, const float *src, const uint8_t *mask,
		     size_t n, float p)
{
	if (p > 0) {
		dropout_backward(dst, src, mask, n, p);
		return;
	}
	for (size_t i = 0; i < n; i++)
		dst[i] += src[i];
}

void s2s_stack_backward(const struct s2s_net *net, struct s2s_stack *st,
			const struct s2s_layer *w, struct s2s_layer *g,
			float *const *dhs, float *const *dcs,
			const float *dout, float *dx, float *dpre, float *dxl,
			const int *len)
{
	size_t bn = (size_t)st->B * st->n, sb = (size_t)st->S * st->B;

	if (dout)
		add_back(dhs[st->L - 1] + bn, dout, st->mask[st->L],
			 sb * st->n, st->p);
	for (int l = st->L - 1; l >= 0; l--) {
		int in = l ? st->n : st->m;
		float *to = l ? dhs[l - 1] + bn : dx;

		if (to)
			memset(dxl, 0, sb * in * sizeof(float));
		lstm_backward(to ? dxl : NULL, g[l].W, g[l].U, g[l].b, dhs[l],
			      dcs[l], dpre, st->hs[l], st->cs[l], st->act[l],
			      st->in[l], w[l].W, w[l].U, len, st->S, st->B, in,
			      st->n);
		if (to)
			add_back(to, dxl, st->mask[l], sb * in, st->p);
	}
}
