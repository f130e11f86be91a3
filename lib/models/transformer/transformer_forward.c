/*
 * transformer_forward.c: the Transformer's encoder and decoder over a
 * padded batch (transformer_batch.h), keeping what the backward pass
 * needs: doc/MODELS.md's layers, each sub-layer residual with its layer norm
 * after (post-norm, the paper) or before (pre-norm) the function; with
 * pre_kv=input (Marian's pre-norm) self-attention's queries are of the
 * layer norm, its keys and values of the sub-layer's input itself.
 */
#include <string.h>
#include "transformer_batch.h"

static void maybe_dropout(float *x, uint8_t *mask, size_t n, float p,
			  struct rng *r)
{
	if (p > 0)
		dropout_forward(x, mask, NULL, x, n, p, r);
}

/* Pre-norm's final layer norm (enc.ln, dec.ln); post-norm: x itself. */
static const float *final_ln(const struct tf_net *n, struct sub_acts *s,
			     const struct ln_w *ln, const float *x, int N)
{
	return tf_sub_in(n, s, ln, x, N);
}

void tf_encoder_forward(const struct tf_net *n, struct fwd *f,
			struct rng *r)
{
	int N = f->B * f->S, l;
	struct mha_dims dm = tf_mha_dims(n, f, f->S, f->S, f->slen, 0,
					 f->spos);
	const float *x = f->x0, *u;

	maybe_dropout(f->x0, f->m0, (size_t)N * n->d, f->drop, r);
	for (l = 0; l < n->enc_layers; l++) {
		const struct tf_enc_layer *w = &n->w.enc[l];
		struct enc_acts *e = &f->enc[l];

		u = tf_sub_in(n, &e->s_att, &w->ln1, x, N);
		mha_forward(e->s_att.fo, &e->att, u, n->kv_in ? x : u, &w->self,
			    &dm, r);
		x = tf_sub_out(n, &e->s_att, &w->ln1, x, N, f->drop, r);
		u = tf_sub_in(n, &e->s_ffn, &w->ln2, x, N);
		tf_ffn_forward(n, e->s_ffn.fo, e->h, e->a, u, &w->ffn, N);
		x = tf_sub_out(n, &e->s_ffn, &w->ln2, x, N, f->drop, r);
	}
	f->E = (float *)final_ln(n, &f->enc_ln, &n->w.enc_ln, x, N);
}

/*
 * The rows of f->Y that the output layer sees (f->nout of them): every
 * row when decoding; when training, each pair's first tlen[b], its
 * target's own positions.  Padding is told by the length, not by id 0,
 * which is </s> in Marian's vocabularies (an imported model trained on
 * must learn to stop).
 */
static const float *output_rows(const struct tf_net *n, struct fwd *f)
{
	int M = f->B * f->T, i, k = 0;

	if (!f->tgt_ids) {
		f->nout = M;
		return f->Y;
	}
	for (i = 0; i < M; i++) {
		if (i % f->T >= f->tlen[i / f->T])
			continue;
		f->out_row[k] = i;
		f->out_tgt[k] = f->tgt_ids[i];
		memcpy(f->Yo + (size_t)k * n->d, f->Y + (size_t)i * n->d,
		       sizeof(float) * n->d);
		k++;
	}
	f->nout = k;
	return f->Yo;
}

void tf_decoder_forward(const struct tf_net *n, struct fwd *f,
			struct rng *r)
{
	int M = f->B * f->T, l;
	struct mha_dims ds = tf_mha_dims(n, f, f->T, f->T, f->tlen, 1,
					 f->tpos);
	struct mha_dims dc = tf_mha_dims(n, f, f->T, f->S, f->slen, 0, NULL);
	const float *y = f->y0, *u;

	tf_embed_forward(n, f->y0, f->dec_in, f->B, f->T, 0, 1);
	maybe_dropout(f->y0, f->my0, (size_t)M * n->d, f->drop, r);
	for (l = 0; l < n->dec_layers; l++) {
		const struct tf_dec_layer *w = &n->w.dec[l];
		struct dec_acts *e = &f->dec[l];

		u = tf_sub_in(n, &e->s_self, &w->ln1, y, M);
		if (n->ssru)
			ssru_forward(e->s_self.fo, &e->ssru, u, &w->ssru, f->B,
				     f->T, n->d);
		else	/* pre_kv=input: keys and values of y itself */
			mha_forward(e->s_self.fo, &e->self, u,
				    n->kv_in ? y : u, &w->self, &ds, r);
		y = tf_sub_out(n, &e->s_self, &w->ln1, y, M, f->drop, r);
		u = tf_sub_in(n, &e->s_cross, &w->ln2, y, M);
		mha_forward(e->s_cross.fo, &e->cross, u, f->E, &w->cross, &dc,
			    r);
		y = tf_sub_out(n, &e->s_cross, &w->ln2, y, M, f->drop, r);
		u = tf_sub_in(n, &e->s_ffn, &w->ln3, y, M);
		tf_ffn_forward(n, e->s_ffn.fo, e->h, e->a, u, &w->ffn, M);
		y = tf_sub_out(n, &e->s_ffn, &w->ln3, y, M, f->drop, r);
	}
	f->Y = (float *)final_ln(n, &f->dec_ln, &n->w.dec_ln, y, M);
	y = output_rows(n, f);
	/* training: the loss adds out.b, row by row (tf_train_batch) */
	linear_forward(f->logits, y, n->w.out_W, f->train ? NULL : n->w.out_b,
		       f->nout, n->d, n->tgt_vocab);
}

