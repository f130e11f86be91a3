/*
 * seq2seq.h: inside the seq2seq model of doc/MODELS.md (Sutskever, Vinyals
 * and Le 2014): deep LSTMs, the source read reversed, the decoder started
 * from the encoder's last states, no attention.  Its named parameters and
 * the layer stacks that the pipeline's stages (seq2seq.c), the step-wise
 * decoder (seq2seq_decoder.c) and training (seq2seq_train.c) share.  Not
 * installed for users: model.h is the interface.
 */
#ifndef ATTN_SEQ2SEQ_H
#define ATTN_SEQ2SEQ_H

#include <stdint.h>

#include "base/rng.h"
#include "models/model.h"

/* One LSTM layer's parameters: W [4n, in], U [4n, n], b [4n]. */
struct s2s_layer {
	float *W, *U, *b;
};

/* One pointer per parameter of doc/MODELS.md; enc and dec [L]. */
struct s2s_params {
	float *src_emb, *tgt_emb;	/* [src_vocab, m], [tgt_vocab, m] */
	struct s2s_layer *enc, *dec;
	float *out_W, *out_b;		/* [tgt_vocab, n], [tgt_vocab] */
};

/* m->net: one block, the layer tables after it. */
struct s2s_net {
	int m, n, L;		/* emb, hidden, layers */
	int reverse;		/* the source read backwards (</s> last) */
	float dropout;		/* rate on the layers' inputs and the output */
	int Vs, Vt;		/* src_vocab, tgt_vocab */
	struct s2s_params w, g;	/* g's pointers NULL when not training */
};

/* The source position read at time t of a sentence of len ids: with
 * reverse, the words backwards and then the last id (</s>). */
static inline int s2s_read_pos(const struct s2s_net *net, int t, int len)
{
	return net->reverse && t < len - 1 ? len - 2 - t : t;
}

/*
 * A stack of L LSTM layers over B sequences of S steps, time-major, with
 * what its backward pass needs: per layer the states and cells hs[l],
 * cs[l] [S + 1, B, n] (blocks 0 the initial ones, the caller's), the gates
 * act[l] [S, B, 4n], the input in[l] it read ([S, B, m] for layer 0, else
 * [S, B, n]) and, with dropout on, the inputs after dropout xd[l] and
 * their masks mask[l]; and the top layer's output after dropout,
 * out [S, B, n], with its mask.  s2s_stack_size() bytes at mem, laid out by
 * s2s_stack_bind().
 */
#define S2S_LAYERS_MAX 64		/* the config's `layers`, at most */
struct s2s_stack {
	int L, S, B, m, n;
	float p;			/* the dropout rate: 0 at inference */
	float *hs[S2S_LAYERS_MAX], *cs[S2S_LAYERS_MAX];
	float *act[S2S_LAYERS_MAX], *xd[S2S_LAYERS_MAX], *out;
	const float *in[S2S_LAYERS_MAX];
	uint8_t *mask[S2S_LAYERS_MAX + 1];	/* [L]: the output's */
};
size_t s2s_stack_size(const struct s2s_net *net, int S, int B, float p);
void s2s_stack_bind(const struct s2s_net *net, struct s2s_stack *st,
		    void *mem, int S, int B, float p);
/*
 * Forward from x [S, B, m] through layers w [L] (len as lstm.h's, NULL:
 * no padding), dropout drawn from r; each layer's hs[l][0], cs[l][0] set
 * by the caller.  The top layer's states after dropout in st->out.
 */
void s2s_stack_forward(const struct s2s_net *net, struct s2s_stack *st,
		       const struct s2s_layer *w, const float *x,
		       const int *len, struct rng *r);
/*
 * Backward, from the gradients dout [S, B, n] of st->out (NULL: none) and
 * those the caller put in dhs[l], dcs[l] [S + 1, B, n] (the last states'
 * and cells'), which are used up; blocks 0 end as the initial states'
 * gradients.  Adds into g's layers and dx [S, B, m] (may be NULL);
 * scratch: dpre [S, B, 4n], dxl [S, B, max(m, n)].
 */
void s2s_stack_backward(const struct s2s_net *net, struct s2s_stack *st,
			const struct s2s_layer *w, struct s2s_layer *g,
			float *const *dhs, float *const *dcs,
			const float *dout, float *dx, float *dpre, float *dxl,
			const int *len);

/* The step-wise decoder of model.h (seq2seq_decoder.c). */
struct decoder *s2s_dec_new(const struct model *m, const struct dec_opts *o,
			struct frame **f, int n, int width);
int s2s_dec_step(struct decoder *d, int nh, const int32_t *prev, float *logp,
		 float *attw);
int s2s_dec_select(struct decoder *d, int nh, const int *parent);
void s2s_dec_free(struct decoder *d);

/* Training (seq2seq_train.c). */
double s2s_train_batch(struct model *m, const struct batch_ids *src,
		       const struct batch_ids *tgt, float scale, int dropout, double *nll,
		       int *ntok);

#endif
