/*
 * transformer_dec.h: the inside of the Transformer's step-by-step decoder
 * (transformer.h's tf_dec_*), shared by its files:
 *
 *   transformer_dec.c        the decoder: its memory, cache slots and
 *                            hypotheses; dec_select and the accessors
 *   transformer_dec_step.c   a step: every layer for the live rows
 *   transformer_dec_pack.c   the step's weight matrices, packed once for
 *                            all the live decoders of a model
 */
#ifndef ATTN_TRANSFORMER_DEC_H
#define ATTN_TRANSFORMER_DEC_H

#include "kernels/gemm_packed.h"
#include "models/shortlist.h"
#include "transformer.h"

/* A layer's matrices, packed or not. */
struct dec_wt {
	struct wpack self_q, self_k, self_v, self_o, cross_q, cross_o;
	struct wpack W1, W2;
	struct wpack ssru_W, ssru_Wf;	/* dec_self=ssru, in self_*'s place */
};

/* The step's matrices of a model, shared by its live decoders
 * (transformer_dec_pack.c). */
struct dec_pack;

struct tf_decoder {
	const struct model *m;
	const struct tf_net *n;	/* m's */
	int pack;		/* WPACK_F32, _BF16 (o->bf16) or _I8
				   (m->int8, first) */
	struct dec_pack *packs;	/* n's, one reference */
	struct dec_wt *plain;	/* [dec_layers] unpacked, when pack has none */
	struct wpack plain_out;
	const struct dec_wt *wt;	/* [dec_layers] plain or pack's */
	const struct wpack *out_wt;
	int nsent, width, cap;	/* sentences, width, cap = nsent * width */
	int nh;			/* live hypotheses */
	int t;			/* steps done: the position of the next input */
	int S;			/* the longest source */
	int *srclen;		/* [nsent] */
	int kv16;		/* o->kv_f16: keys and values in f16 */
	size_t es;		/* bytes of one of their elements, 2 or 4 */
	char **ck, **cv;	/* per layer [nsent, S, d]: att.{l}.k, .v */
	int tcap;		/* positions a slot holds */
	char **sk, **sv;	/* per layer [cap, tcap, d]: self-attention
				   (NULL each with dec_self=ssru) */
	/* Marian's int8 without alphas (kv_hist): Marian computes a step's
	 * self-attention keys and values again for every earlier position,
	 * one product over all live hypotheses' inputs so far, whose
	 * multiplier 127 / max |x| may change with each new row; sx per
	 * layer [cap, tcap, d] keeps those inputs (else NULL) */
	int kv_hist;
	float **sx;
	float **cell;		/* dec_self=ssru: per layer [cap, d], row i
				   hypothesis i's SSRU state */
	float *cell_tmp;	/* [cap, d] dec_select's */
	int *slot, *sent;	/* [cap] per hypothesis */
	int *klen;		/* [cap] source length of each hypothesis */
	const void **kp, **vp;	/* [cap] each hypothesis' keys and values */
	int *nkeys;		/* [cap] the positions of the cache */
	int *pos;		/* [cap] the step's position t, for rope */
	int *tmp_slot, *tmp_sent, *claimed;	/* dec_select's */
	/* the step's rows, [cap, .] */
	float *x, *q, *k, *v, *ctx, *h, *logits;
	struct sub_acts sub;
	struct shortlist *sl;	/* o->shortlist: the output layer's */
};

/* The step's matrices of dc (dc->wt, dc->out_wt): its model's packed
 * ones (a reference in dc->packs), or wrapped as they are (dc->plain);
 * the packed output layer only if need_out (without, dc->out_wt must
 * not be read: a decoder with a shortlist); 0, or -1 with err_msg()
 * (transformer_dec_pack.c). */
int tf_dec_weights(struct tf_decoder *dc, int need_out);
/* Drops a reference that tf_dec_weights took (p NULL: none); the last
 * frees the packed matrices. */
void tf_dec_pack_put(struct dec_pack *p);

#endif
