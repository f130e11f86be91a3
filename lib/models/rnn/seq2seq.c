/*
 * seq2seq.c: the seq2seq model of doc/MODELS.md (Sutskever, Vinyals and
 * Le 2014): its parameters, initialisation and the pipeline's stages
 * embed, encode and attend.  The decoder is in seq2seq_decoder.c, the
 * layer stacks in seq2seq_stack.c, training in seq2seq_train.c.
 *
 * encode reads the source (reversed with `reverse`, </s> last) through
 * the encoder's L layers and writes the top layer's states, enc.out
 * [S, n] in source order, and every layer's last state and cell, enc.h
 * and enc.c [L n]; attend passes the two on as the decoder's memory,
 * att.h and att.c: there is nothing to attend to.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/errmsg.h"
#include "kernels/kernels.h"
#include "models/frames.h"
#include "rnn_common.h"
#include "rnnsearch.h"
#include "seq2seq.h"

/* ---- parameters ---------------------------------------------------------- */

/* Declares parameter name [d0, d1] (d1 0: a vector [d0]), or with decl 0
 * points *w and *g at it, checked. */
static int one_param(struct model *m, int decl, const char *name, int d0,
		     int d1, float **w, float **g)
{
	struct param *p;

	if (decl)
		return model_add_param(m, name, d1 ? 2 : 1, d0, d1);
	p = model_param(m, name);
	if (!p || p->dim[0] != d0 || p->dim[1] != (d1 ? d1 : 1)) {
		err_set("parameter '%s' is missing or disagrees with the "
			"config", name);
		return -1;
	}
	*w = p->w;
	*g = p->g;
	return 0;
}

/* Declares (decl) or binds every parameter, in doc/MODELS.md's order. */
static int each_param(struct model *m, struct s2s_net *net, int decl)
{
	struct s2s_params *w = &net->w, *g = &net->g;
	char name[PARAM_NAME_MAX];
	int n = net->n;

	if (one_param(m, decl, "src.emb", net->Vs, net->m, &w->src_emb,
		      &g->src_emb) < 0)
		return -1;
	for (int side = 0; side < 2; side++) {
		const char *pre = side ? "dec" : "enc";
		struct s2s_layer *lw = side ? w->dec : w->enc;
		struct s2s_layer *lg = side ? g->dec : g->enc;

		if (side && one_param(m, decl, "tgt.emb", net->Vt, net->m,
				      &w->tgt_emb, &g->tgt_emb) < 0)
			return -1;
		for (int l = 0; l < net->L; l++) {
			int in = l ? n : net->m, rc;

			snprintf(name, sizeof name, "%s.%d.W", pre, l);
			rc = one_param(m, decl, name, 4 * n, in, &lw[l].W,
				       &lg[l].W);
			snprintf(name, sizeof name, "%s.%d.U", pre, l);
			rc |= one_param(m, decl, name, 4 * n, n, &lw[l].U,
					&lg[l].U);
			snprintf(name, sizeof name, "%s.%d.b", pre, l);
			rc |= one_param(m, decl, name, 4 * n, 0, &lw[l].b,
					&lg[l].b);
			if (rc)
				return -1;
		}
	}
	if (one_param(m, decl, "out.W", net->Vt, n, &w->out_W, &g->out_W) < 0 ||
	    one_param(m, decl, "out.b", net->Vt, 0, &w->out_b, &g->out_b) < 0)
		return -1;
	return 0;
}

/* `reverse`: 0 or 1 (a model file states it). */
static int reverse_key(const struct model *m, int *out)
{
	long v;

	if (config_int(&m->cfg, "reverse", &v) < 0)
		return -1;
	if (v != 0 && v != 1) {
		err_set("config: reverse=%ld is not 0 or 1", v);
		return -1;
	}
	*out = (int)v;
	return 0;
}

static int s2s_declare(struct model *m)
{
	struct s2s_net *net;
	int L;

	if (model_size_key(m, "layers", &L) < 0)
		return -1;
	/* the net and its four layer tables in one block */
	net = calloc(1, sizeof *net + 4 * (size_t)L * sizeof(struct s2s_layer));
	if (!net) {
		err_set("out of memory");
		return -1;
	}
	free(m->net);
	m->net = net;
	net->L = L;
	net->w.enc = (struct s2s_layer *)(net + 1);
	net->w.dec = net->w.enc + L;
	net->g.enc = net->w.dec + L;
	net->g.dec = net->g.enc + L;
	net->Vs = m->src_vocab;
	net->Vt = m->tgt_vocab;
	if (model_size_key(m, "emb", &net->m) < 0 ||
	    model_size_key(m, "hidden", &net->n) < 0 ||
	    reverse_key(m, &net->reverse) < 0)
		return -1;
	return each_param(m, net, 1);
}

static int s2s_bind(struct model *m)
{
	return each_param(m, m->net, 0);
}

static void fill_uniform(float *w, size_t n, double a, struct rng *r)
{
	for (size_t i = 0; i < n; i++)
		w[i] = (float)(a * (2 * rng_uniform(r) - 1));
}

/*
 * The paper's initialisation, U(-0.08, 0.08), for every matrix and
 * embedding; biases 0 but the forget gate's, 1, so that a fresh cell
 * keeps what it holds (Gers et al. 2000; Jozefowicz et al. 2015).
 */
static void s2s_init(struct model *m)
{
	struct s2s_net *net = m->net;
	size_t n = net->n;

	for (int i = 0; i < m->nparam; i++) {
		struct param *p = &m->param[i];

		if (p->rank == 2)
			fill_uniform(p->w, p->n, 0.08, &m->rng);
		else
			memset(p->w, 0, p->n * sizeof(float));
	}
	for (int l = 0; l < net->L; l++)
		for (size_t k = 0; k < n; k++)
			net->w.enc[l].b[n + k] = net->w.dec[l].b[n + k] = 1;
}

/* ---- the pipeline's stages ----------------------------------------------- */

static int s2s_embed(const struct model *m, struct frame **f, int n)
{
	const struct s2s_net *net = m->net;

	for (int i = 0; i < n; i++) {
		const struct tensor *ids;
		float *out;
		int S;

		if (model_check_ids(f[i], "src.ids", net->Vs, "tokenize") < 0)
			return -1;
		ids = frame_find(f[i], "src.ids");
		S = (int)ids->dim[0];
		out = frame_put_rows(f[i], "src.emb", S, net->m, NULL);
		if (!out)
			return -1;
		embedding_forward(out, ids->data, S, net->w.src_emb, net->m);
	}
	return 0;
}

static int s2s_encode(const struct model *m, struct frame **f, int nf)
{
	const struct s2s_net *net = m->net;
	size_t n = net->n, bn = (size_t)nf * n, mm = net->m;
	struct s2s_stack st;
	float *emb, *x = NULL, *top = NULL, *hc = NULL;
	void *mem = NULL;
	int *len, S, rc = -1;

	S = frames_gather(f, nf, "src.emb", net->m, "embed", &emb, &len);
	if (S < 0)
		return -1;
	x = calloc((size_t)S * nf * mm, sizeof(float));
	top = malloc((size_t)nf * S * n * sizeof(float));
	hc = malloc(2 * net->L * n * sizeof(float));
	mem = malloc(s2s_stack_size(net, S, nf, 0));
	if (!x || !top || !hc || !mem) {
		err_set("out of memory");
		goto out;
	}
	/* time-major x [S, nf, m] in the order of reading */
	for (int b = 0; b < nf; b++)
		for (int t = 0; t < len[b]; t++)
			memcpy(x + ((size_t)t * nf + b) * mm,
			       emb + ((size_t)b * S + s2s_read_pos(net, t,
								  len[b])) * mm,
			       mm * sizeof(float));
	s2s_stack_bind(net, &st, mem, S, nf, 0);
	for (int l = 0; l < net->L; l++) {
		memset(st.hs[l], 0, bn * sizeof(float));
		memset(st.cs[l], 0, bn * sizeof(float));
	}
	s2s_stack_forward(net, &st, net->w.enc, x, len, NULL);
	/* enc.out row j: the top state after reading position j (the
	 * order of reading is its own inverse) */
	for (int b = 0; b < nf; b++)
		for (int j = 0; j < len[b]; j++)
			memcpy(top + ((size_t)b * S + j) * n,
			       st.out + ((size_t)s2s_read_pos(net, j, len[b]) *
					 nf + b) * n, n * sizeof(float));
	if (frames_put(f, nf, "enc.out", net->n, top, S, len) < 0)
		goto out;
	for (int b = 0; b < nf; b++) {
		size_t last = (size_t)len[b] * bn + b * n;

		for (int l = 0; l < net->L; l++) {
			memcpy(hc + l * n, st.hs[l] + last, n * sizeof(float));
			memcpy(hc + (net->L + l) * n, st.cs[l] + last,
			       n * sizeof(float));
		}
		if (!frame_put_rows(f[b], "enc.h", net->L * net->n, 0, hc) ||
		    !frame_put_rows(f[b], "enc.c", net->L * net->n, 0,
				    hc + net->L * n))
			goto out;
	}
	rc = 0;
out:
	free(emb);
	free(len);
	free(x);
	free(top);
	free(hc);
	free(mem);
	return rc;
}

/* att.h and att.c, the decoder's first states: the encoder's last. */
static int s2s_attend(const struct model *m, struct frame **f, int n)
{
	const struct s2s_net *net = m->net;
	int size = net->L * net->n;

	for (int b = 0; b < n; b++) {
		const float *h, *c;
		int S;

		if (!frame_rows(f[b], "enc.out", net->n, "encode", &S) ||
		    !(h = rnn_need_vector(f[b], "enc.h", size, "encode")) ||
		    !(c = rnn_need_vector(f[b], "enc.c", size, "encode")))
			return -1;
		/* the frame's records move as it grows: copy h first */
		float *hc = malloc(2 * (size_t)size * sizeof(float));
		if (!hc) {
			err_set("out of memory");
			return -1;
		}
		memcpy(hc, h, size * sizeof(float));
		memcpy(hc + size, c, size * sizeof(float));
		int ok = frame_put_rows(f[b], "att.h", size, 0, hc) &&
			 frame_put_rows(f[b], "att.c", size, 0, hc + size);
		free(hc);
		if (!ok)
			return -1;
	}
	return 0;
}

/* ---- the table ----------------------------------------------------------- */

/* Small models by default, as the other recurrent models'; the paper's
 * are emb=1000 hidden=1000 layers=4.  Adam at 0.001 on batches of 2000
 * target tokens, the recipe of the other recurrent models, so that a
 * comparison changes the model alone. */
static const char *const s2s_defaults[] = {
	"emb=256", "hidden=256", "layers=2", "reverse=1", "dropout=0",
	"optim=adam", "lr=0.001", "batch_tokens=2000", NULL,
};

const struct arch arch_seq2seq = {
	.name = "seq2seq",
	.declare = s2s_declare,
	.bind = s2s_bind,
	.init = s2s_init,
	.defaults = s2s_defaults,
	.embed = s2s_embed,
	.encode = s2s_encode,
	.attend = s2s_attend,
	.dec_new = s2s_dec_new,
	.dec_step = s2s_dec_step,
	.dec_select = s2s_dec_select,
	.dec_sentence = rnn_dec_sentence,
	.dec_srclen = rnn_dec_srclen,
	.dec_shortlist = rnn_dec_shortlist,
	.dec_attw_planes = NULL,
	.dec_free = s2s_dec_free,
	.train_batch = s2s_train_batch,
};
