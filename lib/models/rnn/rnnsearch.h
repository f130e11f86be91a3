/*
 * rnnsearch.h: inside the recurrent models of doc/MODELS.md, rnnsearch
 * (Bahdanau et al. 2014) and rnnencdec (its baseline without attention):
 * their named parameters and the layers that the pipeline's stages
 * (rnnsearch.c), the step-wise decoder (rnn_decoder.c) and training
 * (rnn_train.c) share.  Not installed for users: model.h is the interface.
 */
#ifndef ATTN_RNNSEARCH_H
#define ATTN_RNNSEARCH_H

#include "models/arena.h"
#include "models/frames.h"
#include "models/model.h"
#include "nn/gru.h"

/* One pointer per parameter of doc/MODELS.md; NULL where the model has none. */
struct rnn_params {
	float *src_emb;				/* [src_vocab, m] */
	float *fwd_W, *fwd_U, *fwd_b;		/* [3n, m], [3n, n], [3n] */
	float *bwd_W, *bwd_U, *bwd_b;		/* rnnsearch */
	float *sum_W, *sum_b;			/* rnnencdec: [n, n], [n] */
	float *tgt_emb;				/* [tgt_vocab, m] */
	float *init_W, *init_b;			/* [n, n], [n] */
	float *att_W, *att_U, *att_b, *att_v;	/* additive: [n', n], [n', 2n], [n'], [n'] */
	float *win_W, *win_b;			/* window: [3K, n], [3K] */
	float *dec_W, *dec_U, *dec_C, *dec_b;	/* [3n, m], [3n, n], [3n, dc], [3n] */
	float *out_U, *out_V, *out_C, *out_b;	/* [2l, n], [2l, m], [2l, dc], [2l] */
	float *out_W, *out_bias;		/* [tgt_vocab, l], [tgt_vocab] */
};

/* rnnsearch's ways of attending, config key `attention`
 * (doc/MODELS.md). */
enum rnn_att { ATT_ADDITIVE, ATT_DIAGONAL, ATT_WINDOW };

/* m->net of both models. */
struct rnn_net {
	int attention;		/* 1: rnnsearch, 0: rnnencdec */
	enum rnn_att kind;	/* rnnsearch's attention */
	int K;			/* window: window_k, the Gaussians */
	double ratio;		/* diagonal: diag_ratio, source per target */
	int m, n, na, l;	/* emb, hidden, att (0 but additive), maxout */
	int Vs, Vt;		/* src_vocab, tgt_vocab */
	int da;			/* width of an annotation (enc.out): 2n or n */
	int dc;			/* width of the decoder's context: 2n or n */
	struct rnn_params w, g;	/* g all NULL when not training */
};

/*
 * The encoder over B sentences of len[b] <= S positions, from x [S, B, m]
 * (time-major embeddings): the forward (and for rnnsearch the backward)
 * GRU's states hs[d] [S + 1, B, n] and caches (gru.h), in
 * rnn_encoder_floats() floats bound by rnn_encoder_bind(), and the
 * annotations ann [B, S, da] (zero at padding).
 */
struct rnn_encoder {
	float *hs[2];
	struct gru_cache c[2];
};
size_t rnn_encoder_floats(const struct rnn_net *net, int S, int B);
void rnn_encoder_bind(const struct rnn_net *net, struct rnn_encoder *e,
		      float *mem, int S, int B);
void rnn_encoder_forward(const struct rnn_net *net, struct rnn_encoder *e,
			 float *ann, const float *x, const int *len, int S,
			 int B);
/*
 * The initial state from a sentence's annotations ann [len, da]:
 * rnn_init_offset() is where (in floats) the n values it starts from lie
 * (rnnsearch: bwd h_1; rnnencdec: fwd h_S); from those h [B, n],
 * rnn_init_forward() makes
 * s0 [B, n] = tanh(Ws h + bs), and for rnnencdec first the context
 * c [B, n] = tanh(Wc h + bc) (s0 then from c).
 */
size_t rnn_init_offset(const struct rnn_net *net, int len);
void rnn_init_forward(const struct rnn_net *net, float *s0, float *c,
		      const float *h, int B);

/* The output layer of N rows: logits [N, tgt_vocab] = Wo t + bw from
 * t [N, l], the deep output's maxout. */
void rnn_logits_forward(const struct rnn_net *net, int N, const float *t,
			float *logits);

/* y [B, n] = tanh(x [B, n] W^T + b), W [n, n]: s_0 and rnnencdec's c. */
void tanh_linear_forward(float *y, const float *x, const float *W,
			 const float *b, int B, int n);
/* Its backward from dy: dy is overwritten with the pre-activations'
 * gradient; adds into dx (may be NULL), dW, db. */
void tanh_linear_backward(float *dx, float *dW, float *db, float *dy,
			  const float *y, const float *x, const float *W,
			  int B, int n);

/* A record [n] (f32) of frame f, written by stage. */
const float *rnn_need_vector(const struct frame *f, const char *name, int n,
			     const char *stage);

/* The step-wise decoder of model.h (rnn_decoder.c). */
struct decoder *rnn_dec_new(const struct model *m, const struct dec_opts *o,
			struct frame **f, int n, int width);
int rnn_dec_step(struct decoder *d, int nh, const int32_t *prev, float *logp,
		 float *attw);
int rnn_dec_select(struct decoder *d, int nh, const int *parent);
void rnn_dec_free(struct decoder *d);
/* (its accessors are rnn_common.h's, seq2seq's too) */

/* Training (rnn_train.c). */
double rnn_train_batch(struct model *m, const struct batch_ids *src,
		       const struct batch_ids *tgt, float scale, int dropout, double *nll,
		       int *ntok);

#endif
