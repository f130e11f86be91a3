/* fake_arch.c: the tests' trainable toy architecture; see fake_arch.h. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "base/errmsg.h"
#include "fake_arch.h"
#include "kernels/kernels.h"
#include "nn/layers.h"

struct fake_net {
	int dim;
	float *src_emb, *tgt_emb, *out_W, *out_b;
	float *d_src_emb, *d_tgt_emb, *d_out_W, *d_out_b;
};

static int fake_declare(struct model *m)
{
	long d;

	if (config_int(&m->cfg, "dim", &d) < 0)
		return -1;
	if (d < 1 || d > 1024) {
		err_set("config: dim=%ld is out of range", d);
		return -1;
	}
	if (model_add_param(m, "src.emb", 2, m->src_vocab, d) < 0 ||
	    model_add_param(m, "tgt.emb", 2, m->tgt_vocab, d) < 0 ||
	    model_add_param(m, "out.W", 2, m->tgt_vocab, d) < 0)
		return -1;
	return model_add_param(m, "out.b", 1, m->tgt_vocab, 0);
}

static int fake_bind(struct model *m)
{
	struct fake_net *n = calloc(1, sizeof *n);
	const char *names[4] = { "src.emb", "tgt.emb", "out.W", "out.b" };
	float **w[4], **g[4];
	int i;

	if (!n)
		return -1;
	w[0] = &n->src_emb, w[1] = &n->tgt_emb, w[2] = &n->out_W;
	w[3] = &n->out_b;
	g[0] = &n->d_src_emb, g[1] = &n->d_tgt_emb, g[2] = &n->d_out_W;
	g[3] = &n->d_out_b;
	for (i = 0; i < 4; i++) {
		struct param *p = model_param(m, names[i]);

		*w[i] = p->w;
		*g[i] = p->g;
	}
	n->dim = model_param(m, "src.emb")->dim[1];
	m->net = n;
	return 0;
}

static void fake_init(struct model *m)
{
	size_t i;

	for (i = 0; i < m->nw; i++)
		m->w[i] = 0.1 * rng_normal(&m->rng);
}

static const char *const fake_defaults[] = { "dim=4", "poison=-1", NULL };

/* Puts a copy of rows [S, dim] of `from` (or of the table rows of ids). */
static int put_rows(struct frame *f, const char *name, const float *from,
		    const int32_t *ids, const float *table, int S, int dim)
{
	struct tensor t;
	uint64_t shape[2] = { S, dim };
	int i;

	if (tensor_init(&t, name, DT_F32, 2, shape) < 0)
		return -1;
	for (i = 0; i < S; i++)
		memcpy((float *)t.data + (size_t)i * dim,
		       ids ? table + (size_t)ids[i] * dim : from +
		       (size_t)i * dim, dim * sizeof(float));
	return frame_put(f, &t) ? 0 : -1;
}

static int fake_embed(const struct model *m, struct frame **f, int n)
{
	const struct fake_net *net = m->net;
	int i;

	for (i = 0; i < n; i++) {
		struct tensor *t = frame_need(f[i], "src.ids", DT_I32, 1,
					      "tokenize");

		if (!t || put_rows(f[i], "src.emb", NULL, t->data,
				   net->src_emb, t->dim[0], net->dim) < 0)
			return -1;
	}
	return 0;
}

static int copy_stage(const struct model *m, struct frame **f, int n,
		      const char *in, const char *out, const char *stage)
{
	const struct fake_net *net = m->net;
	int i;

	for (i = 0; i < n; i++) {
		struct tensor *t = frame_need(f[i], in, DT_F32, 2, stage);

		if (!t || put_rows(f[i], out, t->data, NULL, NULL, t->dim[0],
				   net->dim) < 0)
			return -1;
	}
	return 0;
}

static int fake_encode(const struct model *m, struct frame **f, int n)
{
	return copy_stage(m, f, n, "src.emb", "enc.out", "embed");
}

static int fake_attend(const struct model *m, struct frame **f, int n)
{
	return copy_stage(m, f, n, "enc.out", "att.keys", "encode");
}

struct decoder {
	const struct model *m;
	int n, width, smax;
	float **keys;		/* [n] -> [S, dim] */
	int *slen;		/* [n] */
	int *sent, *pos;	/* [n * width] per hypothesis */
	int *tsent, *tpos;
	float *h;
};

static struct decoder *fake_dec_new(const struct model *m,
				    const struct dec_opts *o,
				    struct frame **f,
				    int n, int width)
{
	const struct fake_net *net = m->net;
	struct decoder *d = calloc(1, sizeof *d);
	int i, cap = n * width;

	if (!d)
		return NULL;
	d->m = m;
	d->n = n;
	d->width = width;
	d->keys = calloc(n, sizeof *d->keys);
	d->slen = calloc(n, sizeof *d->slen);
	d->sent = calloc(cap, sizeof(int));
	d->pos = calloc(cap, sizeof(int));
	d->tsent = calloc(cap, sizeof(int));
	d->tpos = calloc(cap, sizeof(int));
	d->h = calloc((size_t)cap * net->dim, sizeof(float));
	for (i = 0; i < n; i++) {
		struct tensor *t = frame_need(f[i], "att.keys", DT_F32, 2,
					      "attend");

		if (!t)
			goto fail;
		d->keys[i] = t->data;
		d->slen[i] = t->dim[0];
		if (d->slen[i] > d->smax)
			d->smax = d->slen[i];
		d->sent[i] = i;
	}
	return d;
fail:
	m->arch->dec_free(d);
	return NULL;
}

static int fake_dec_step(struct decoder *d, int nh, const int32_t *prev,
			 float *logp, float *attw)
{
	const struct fake_net *net = d->m->net;
	int V = d->m->tgt_vocab, dim = net->dim, i, k;

	for (i = 0; i < nh; i++) {
		int s = d->sent[i], j = d->pos[i];

		if (j >= d->slen[s])
			j = d->slen[s] - 1;
		for (k = 0; k < dim; k++)
			d->h[(size_t)i * dim + k] =
				d->keys[s][(size_t)j * dim + k] +
				net->tgt_emb[(size_t)prev[i] * dim + k];
		if (attw) {
			memset(attw + (size_t)i * d->smax, 0,
			       d->smax * sizeof(float));
			attw[(size_t)i * d->smax + j] = 1;
		}
		d->pos[i]++;
	}
	linear_forward(logp, d->h, net->out_W, net->out_b, nh, dim, V);
	log_softmax_rows(logp, logp, nh, V);
	return 0;
}

static int fake_dec_select(struct decoder *d, int nh, const int *parent)
{
	int i;

	for (i = 0; i < nh; i++) {
		d->tsent[i] = d->sent[parent[i]];
		d->tpos[i] = d->pos[parent[i]];
	}
	memcpy(d->sent, d->tsent, nh * sizeof(int));
	memcpy(d->pos, d->tpos, nh * sizeof(int));
	return 0;
}

static int fake_dec_sentence(const struct decoder *d, int i)
{
	return d->sent[i];
}

static int fake_dec_srclen(const struct decoder *d, int s)
{
	return d->slen[s];
}

static void fake_dec_free(struct decoder *d)
{
	if (!d)
		return;
	free(d->keys);
	free(d->slen);
	free(d->sent);
	free(d->pos);
	free(d->tsent);
	free(d->tpos);
	free(d->h);
	free(d);
}

static double fake_train_batch(struct model *m, const struct batch_ids *src,
			       const struct batch_ids *tgt, float scale,
			       int dropout, double *nll, int *ntok)
{
	const struct fake_net *net = m->net;
	int B = tgt->B, T = tgt->S, dim = net->dim, V = m->tgt_vocab;
	int N = B * T, b, i, k;
	float *h = calloc((size_t)N * dim, sizeof(float));
	float *dh = calloc((size_t)N * dim, sizeof(float));
	float *logits = malloc((size_t)N * V * sizeof(float));
	int *srow = malloc(N * sizeof(int)), *prow = malloc(N * sizeof(int));
	int32_t *trow = malloc(N * sizeof(int32_t));
	double loss;
	long poison;

	if (config_int(&m->cfg, "poison", &poison) < 0)
		poison = -1;
	for (i = 0; i < N; i++)
		if (tgt->ids[i] == poison) {	/* a batch that goes wrong */
			N = 0;
			break;
		}
	if (N == 0) {
		free(h);
		free(dh);
		free(logits);
		free(srow);
		free(prow);
		free(trow);
		*nll = NAN;
		*ntok = 0;
		return NAN;
	}
	for (b = 0; b < B; b++)
		for (i = 0; i < T; i++) {
			int r = b * T + i, j = i < src->len[b] ? i :
				src->len[b] - 1;

			srow[r] = src->ids[b * src->S + j];
			prow[r] = i ? tgt->ids[b * T + i - 1] : 1;
			for (k = 0; k < dim; k++)
				h[(size_t)r * dim + k] =
				    net->src_emb[(size_t)srow[r] * dim + k] +
				    net->tgt_emb[(size_t)prow[r] * dim + k];
		}
	/* the targets, padding (id 0 past each length) marked XENT_PAD */
	for (b = 0; b < B; b++)
		for (i = 0; i < T; i++)
			trow[b * T + i] = i < tgt->len[b] ? tgt->ids[b * T + i] :
				XENT_PAD;
	linear_forward(logits, h, net->out_W, net->out_b, N, dim, V);
	loss = xent_forward_backward(logits, logits, trow, N, V,
				     0.0f, scale, nll, ntok);
	linear_backward(dh, net->d_out_W, net->d_out_b, logits, h,
			net->out_W, N, dim, V);
	for (i = 0; i < N; i++) {
		if (trow[i] == XENT_PAD)
			continue;
		for (k = 0; k < dim; k++) {
			net->d_src_emb[(size_t)srow[i] * dim + k] +=
				dh[(size_t)i * dim + k];
			net->d_tgt_emb[(size_t)prow[i] * dim + k] +=
				dh[(size_t)i * dim + k];
		}
	}
	free(h);
	free(dh);
	free(logits);
	free(srow);
	free(prow);
	free(trow);
	return loss;
}

const struct arch arch_fake = {
	.name = "fake",
	.declare = fake_declare,
	.bind = fake_bind,
	.init = fake_init,
	.defaults = fake_defaults,
	.embed = fake_embed,
	.encode = fake_encode,
	.attend = fake_attend,
	.dec_new = fake_dec_new,
	.dec_step = fake_dec_step,
	.dec_select = fake_dec_select,
	.dec_sentence = fake_dec_sentence,
	.dec_srclen = fake_dec_srclen,
	.dec_free = fake_dec_free,
	.train_batch = fake_train_batch,
};

void fake_arch_register(void)
{
	static int done;

	if (!done)
		arch_register(&arch_fake);
	done = 1;
}
