/*
 * transformer_backward.c: the backward pass of the Transformer's encoder
 * and decoder over a padded batch (transformer_batch.h), from the
 * gradient of the logits to every parameter's, in the reverse order of
 * transformer_forward.c.
 */
#include <string.h>
#include "kernels/kernels.h"
#include "transformer_batch.h"

/*
 * Backward of a sub-layer's output half: from dy, the gradient of its
 * output, sets dx to the residual path's share of its input's gradient and
 * returns the gradient of the function's output (before dropout) in
 * f->dfo; *dfin is where the function's backward adds its input's
 * gradient (dx in post-norm, f->dln in pre-norm, for sub_back_in).
 */
static const float *sub_back_out(const struct tf_net *n, struct fwd *f,
				 const struct sub_acts *s,
				 const struct ln_w *ln, struct ln_w *lng,
				 const float *dy, float *dx, int N,
				 float **dfin)
{
	size_t k = (size_t)N * n->d;
	const float *dsum = dy;

	if (n->pre) {
		memcpy(dx, dy, sizeof(float) * k);
		memset(f->dln, 0, sizeof(float) * k);
		*dfin = f->dln;
	} else {
		memset(dx, 0, sizeof(float) * k);
		layernorm_backward(dx, lng->g, lng->b, dy, s->sum, ln->g,
				   s->mean, s->rstd, N, n->d);
		dsum = dx;
		*dfin = dx;
	}
	/* a copy even without dropout: the function's backward adds into
	 * *dfin, which may be dsum */
	if (f->drop > 0) {
		memset(f->dfo, 0, sizeof(float) * k);
		dropout_backward(f->dfo, dsum, s->mask, k, f->drop);
	} else {
		memcpy(f->dfo, dsum, sizeof(float) * k);
	}
	return f->dfo;
}

/* Pre-norm: the layer norm in front of the function, into dx. */
static void sub_back_in(const struct tf_net *n, const struct fwd *f,
			const struct sub_acts *s, const struct ln_w *ln,
			struct ln_w *lng, const float *x, float *dx, int N)
{
	if (n->pre)
		layernorm_backward(dx, lng->g, lng->b, f->dln, x, ln->g,
				   s->mean, s->rstd, N, n->d);
}

/* Pre-norm's final layer norm: dy -> dx (post-norm: dx = dy). */
static void final_ln_back(const struct tf_net *n, const struct sub_acts *s,
			  const struct ln_w *ln, struct ln_w *lng,
			  const float *x, const float *dy, float *dx, int N)
{
	size_t k = (size_t)N * n->d;

	if (!n->pre) {
		memcpy(dx, dy, sizeof(float) * k);
		return;
	}
	memset(dx, 0, sizeof(float) * k);
	layernorm_backward(dx, lng->g, lng->b, dy, x, ln->g, s->mean, s->rstd,
			   N, n->d);
}

static void swap(float **a, float **b)
{
	float *t = *a;

	*a = *b;
	*b = t;
}

/* The input of sub-layer s of a stack: the previous sub-layer's output. */
static const float *sub_output(const struct tf_net *n,
			       const struct sub_acts *s)
{
	return n->pre ? s->sum : s->ln;
}

void tf_backward(struct tf_net *n, struct fwd *f)
{
	int N = f->B * f->S, M = f->B * f->T, d = n->d, l;
	struct mha_dims ds = tf_mha_dims(n, f, f->T, f->T, f->tlen, 1,
					 f->tpos);
	struct mha_dims dc = tf_mha_dims(n, f, f->T, f->S, f->slen, 0, NULL);
	struct mha_dims es = tf_mha_dims(n, f, f->S, f->S, f->slen, 0,
					 f->spos);
	const struct tf_params *w = &n->w;
	struct tf_params *g = &n->g;
	float *dy = f->dA, *dx = f->dB, *dfin;
	const float *dfo, *x, *u;

	/* logits = Yo out.W^T + out.b, Yo the rows out_row of Y (out.b's
	 * gradient: the loss's) */
	memset(dy, 0, sizeof(float) * f->nout * d);
	linear_backward(dy, g->out_W, NULL, f->logits, f->Yo, w->out_W,
			f->nout, d, n->tgt_vocab);
	memset(dx, 0, sizeof(float) * M * d);
	for (l = 0; l < f->nout; l++)
		memcpy(dx + (size_t)f->out_row[l] * d, dy + (size_t)l * d,
		       sizeof(float) * d);
	x = n->dec_layers ? sub_output(n, &f->dec[n->dec_layers - 1].s_ffn)
		: f->y0;
	final_ln_back(n, &f->dec_ln, &w->dec_ln, &g->dec_ln, x,
		      dx, dy, M);
	memset(f->dE, 0, sizeof(float) * N * d);
	for (l = n->dec_layers - 1; l >= 0; l--) {
		const struct tf_dec_layer *lw = &w->dec[l];
		struct tf_dec_layer *lg = &g->dec[l];
		struct dec_acts *e = &f->dec[l];
		const float *y0 = l ? sub_output(n, &f->dec[l - 1].s_ffn)
			: f->y0;
		const float *y1 = sub_output(n, &e->s_self);
		const float *y2 = sub_output(n, &e->s_cross);

		dfo = sub_back_out(n, f, &e->s_ffn, &lw->ln3, &lg->ln3, dy, dx,
				   M, &dfin);
		u = n->pre ? e->s_ffn.ln : y2;
		tf_ffn_backward(n, dfin, &lg->ffn, f->dh, dfo, u, e->h, e->a,
				&lw->ffn, M);
		sub_back_in(n, f, &e->s_ffn, &lw->ln3, &lg->ln3, y2, dx, M);
		swap(&dx, &dy);

		dfo = sub_back_out(n, f, &e->s_cross, &lw->ln2, &lg->ln2, dy,
				   dx, M, &dfin);
		u = n->pre ? e->s_cross.ln : y1;
		dc.gq = l == f->guide_layer ? f->gq : NULL;
		dc.gk = l == f->guide_layer ? f->gk : NULL;
		mha_backward(dfin, f->dE, &lg->cross, dfo, &e->cross, u, f->E,
			     &lw->cross, &dc, f->dmha);
		sub_back_in(n, f, &e->s_cross, &lw->ln2, &lg->ln2, y1, dx, M);
		swap(&dx, &dy);

		dfo = sub_back_out(n, f, &e->s_self, &lw->ln1, &lg->ln1, dy,
				   dx, M, &dfin);
		u = n->pre ? e->s_self.ln : y0;
		if (n->ssru)
			ssru_backward(dfin, &lg->ssru, f->dxw, f->dfp, dfo, u,
				      &e->ssru, &lw->ssru, f->B, f->T, d);
		else	/* pre_kv=input: the keys' and values' share skips
			   the norm */
			mha_backward(dfin, n->kv_in ? dx : dfin, &lg->self,
				     dfo, &e->self, u, n->kv_in ? y0 : u,
				     &lw->self, &ds, f->dmha);
		sub_back_in(n, f, &e->s_self, &lw->ln1, &lg->ln1, y0, dx, M);
		swap(&dx, &dy);
	}
	/* dy: the gradient of the decoder's input, the dropped-out sums */
	if (f->drop > 0) {
		memset(dx, 0, sizeof(float) * M * d);
		dropout_backward(dx, dy, f->my0, (size_t)M * d, f->drop);
		swap(&dx, &dy);
	}
	tf_embed_backward(n, f->dec_in, f->B, f->T, dy, 1);

	x = n->enc_layers ? sub_output(n, &f->enc[n->enc_layers - 1].s_ffn)
		: f->x0;
	final_ln_back(n, &f->enc_ln, &w->enc_ln, &g->enc_ln, x,
		      f->dE, dy, N);
	for (l = n->enc_layers - 1; l >= 0; l--) {
		const struct tf_enc_layer *lw = &w->enc[l];
		struct tf_enc_layer *lg = &g->enc[l];
		struct enc_acts *e = &f->enc[l];
		const float *x0 = l ? sub_output(n, &f->enc[l - 1].s_ffn)
			: f->x0;
		const float *x1 = sub_output(n, &e->s_att);

		dfo = sub_back_out(n, f, &e->s_ffn, &lw->ln2, &lg->ln2, dy, dx,
				   N, &dfin);
		u = n->pre ? e->s_ffn.ln : x1;
		tf_ffn_backward(n, dfin, &lg->ffn, f->dh, dfo, u, e->h, e->a,
				&lw->ffn, N);
		sub_back_in(n, f, &e->s_ffn, &lw->ln2, &lg->ln2, x1, dx, N);
		swap(&dx, &dy);

		dfo = sub_back_out(n, f, &e->s_att, &lw->ln1, &lg->ln1, dy, dx,
				   N, &dfin);
		u = n->pre ? e->s_att.ln : x0;
		mha_backward(dfin, n->kv_in ? dx : dfin, &lg->self, dfo,
			     &e->att, u, n->kv_in ? x0 : u, &lw->self, &es,
			     f->dmha);
		sub_back_in(n, f, &e->s_att, &lw->ln1, &lg->ln1, x0, dx, N);
		swap(&dx, &dy);
	}
	if (f->drop > 0) {
		memset(dx, 0, sizeof(float) * N * d);
		dropout_backward(dx, dy, f->m0, (size_t)N * d, f->drop);
		swap(&dx, &dy);
	}
	tf_embed_backward(n, f->src_ids, f->B, f->S, dy, 0);
}

