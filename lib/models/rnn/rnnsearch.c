/*
 * rnnsearch.c: the recurrent models of doc/MODELS.md, rnnsearch (Bahdanau,
 * Cho and Bengio 2014, Appendix A) and rnnencdec (the encoder-decoder
 * without attention): their parameters, initialisation and the pipeline's
 * stages embed, encode and attend.  The decoder is in rnn_decoder.c,
 * training in rnn_train.c.
 *
 * rnnsearch attends in one of three ways (config key `attention`,
 * doc/MODELS.md): `additive`, the paper's and the default (a model
 * without the key is one); `diagonal`, Bahdanau's two cursors in sync; and
 * `window`, Graves' soft window.  Only the weights over the source differ:
 * the context, the decoder and the deep output are the same.
 *
 * Dropout: the RNNsearch paper trains without it, so these models ignore
 * the `dropout` key.
 */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "base/errmsg.h"
#include "nn/gru.h"
#include "kernels/kernels.h"
#include "nn/layers.h"
#include "rnn_common.h"
#include "rnnsearch.h"

/* ---- parameters ----------------------------------------------------------- */

/* The sizes a parameter's shape is made of. */
enum rnn_dim { D_NONE, D_VS, D_VT, D_M, D_N, D_2N, D_3N, D_NA, D_L, D_2L,
	       D_DC, D_3K };
/* The paper's initialisation (doc/MODELS.md, Training). */
enum rnn_init {
	I_NORMAL,	/* N(0, 0.01^2): every other matrix, the embeddings */
	I_ATT,		/* N(0, 0.001^2): Wa and Ua */
	I_ORTHO,	/* random orthogonal n x n blocks: the recurrent U */
	I_ZERO,		/* biases and va */
	I_WIN,		/* the window's bias: importances 1/K, else 0 */
};
/* Which models have a tensor: rnnsearch (whatever its attention),
 * rnnencdec, both, or rnnsearch with additive or window attention. */
enum { SEARCH = 1, ENCDEC = 2, BOTH = 3, ADDITIVE = 4, WINDOW = 8 };

static const struct rnn_tensor {
	const char *name;
	size_t off;		/* of the pointer in struct rnn_params */
	int models;		/* SEARCH, ENCDEC or BOTH */
	enum rnn_dim d0, d1;	/* d1 D_NONE: a vector */
	enum rnn_init init;
} rnn_tensors[] = {
#define P(field) offsetof(struct rnn_params, field)
	{ "src.emb",	P(src_emb),  BOTH,   D_VS, D_M,    I_NORMAL },
	{ "enc.fwd.W",	P(fwd_W),    BOTH,   D_3N, D_M,    I_NORMAL },
	{ "enc.fwd.U",	P(fwd_U),    BOTH,   D_3N, D_N,    I_ORTHO },
	{ "enc.fwd.b",	P(fwd_b),    BOTH,   D_3N, D_NONE, I_ZERO },
	{ "enc.bwd.W",	P(bwd_W),    SEARCH, D_3N, D_M,    I_NORMAL },
	{ "enc.bwd.U",	P(bwd_U),    SEARCH, D_3N, D_N,    I_ORTHO },
	{ "enc.bwd.b",	P(bwd_b),    SEARCH, D_3N, D_NONE, I_ZERO },
	{ "enc.sum.W",	P(sum_W),    ENCDEC, D_N,  D_N,    I_NORMAL },
	{ "enc.sum.b",	P(sum_b),    ENCDEC, D_N,  D_NONE, I_ZERO },
	{ "tgt.emb",	P(tgt_emb),  BOTH,   D_VT, D_M,    I_NORMAL },
	{ "dec.init.W",	P(init_W),   BOTH,   D_N,  D_N,    I_NORMAL },
	{ "dec.init.b",	P(init_b),   BOTH,   D_N,  D_NONE, I_ZERO },
	{ "att.W",	P(att_W),    ADDITIVE, D_NA, D_N,  I_ATT },
	{ "att.U",	P(att_U),    ADDITIVE, D_NA, D_2N, I_ATT },
	{ "att.b",	P(att_b),    ADDITIVE, D_NA, D_NONE, I_ZERO },
	{ "att.v",	P(att_v),    ADDITIVE, D_NA, D_NONE, I_ZERO },
	{ "dec.win.W",	P(win_W),    WINDOW, D_3K, D_N,    I_NORMAL },
	{ "dec.win.b",	P(win_b),    WINDOW, D_3K, D_NONE, I_WIN },
	{ "dec.W",	P(dec_W),    BOTH,   D_3N, D_M,    I_NORMAL },
	{ "dec.U",	P(dec_U),    BOTH,   D_3N, D_N,    I_ORTHO },
	{ "dec.C",	P(dec_C),    BOTH,   D_3N, D_DC,   I_NORMAL },
	{ "dec.b",	P(dec_b),    BOTH,   D_3N, D_NONE, I_ZERO },
	{ "out.U",	P(out_U),    BOTH,   D_2L, D_N,    I_NORMAL },
	{ "out.V",	P(out_V),    BOTH,   D_2L, D_M,    I_NORMAL },
	{ "out.C",	P(out_C),    BOTH,   D_2L, D_DC,   I_NORMAL },
	{ "out.b",	P(out_b),    BOTH,   D_2L, D_NONE, I_ZERO },
	{ "out.W",	P(out_W),    BOTH,   D_VT, D_L,    I_NORMAL },
	{ "out.bias",	P(out_bias), BOTH,   D_VT, D_NONE, I_ZERO },
#undef P
};
#define NTENSORS (sizeof rnn_tensors / sizeof rnn_tensors[0])

static int dim_size(const struct rnn_net *net, enum rnn_dim d)
{
	switch (d) {
	case D_VS: return net->Vs;
	case D_VT: return net->Vt;
	case D_M:  return net->m;
	case D_N:  return net->n;
	case D_2N: return 2 * net->n;
	case D_3N: return 3 * net->n;
	case D_NA: return net->na;
	case D_L:  return net->l;
	case D_2L: return 2 * net->l;
	case D_DC: return net->dc;
	case D_3K: return 3 * net->K;
	default:   return 1;
	}
}

static int has_tensor(const struct rnn_net *net, const struct rnn_tensor *t)
{
	int has = ENCDEC;

	if (net->attention)
		has = SEARCH | (net->kind == ATT_ADDITIVE ? ADDITIVE :
				net->kind == ATT_WINDOW ? WINDOW : 0);
	return (t->models & has) != 0;
}

static float **field(struct rnn_params *p, const struct rnn_tensor *t)
{
	return (float **)((char *)p + t->off);
}

/*
 * rnnsearch's attention from the config: `attention` (absent: additive,
 * as every model made before the key); the window's `window_k` (absent:
 * 10); the diagonal's `diag_ratio`, which it cannot do without (absent or
 * 0: not measured).
 */
static int attention_keys(const struct model *m, struct rnn_net *net)
{
	const char *a = config_get(&m->cfg, "attention");

	if (!a || strcmp(a, "additive") == 0) {
		net->kind = ATT_ADDITIVE;
		return model_size_key(m, "att", &net->na);
	}
	if (strcmp(a, "window") == 0) {
		net->kind = ATT_WINDOW;
		net->K = 10;
		return config_get(&m->cfg, "window_k") ?
			model_size_key(m, "window_k", &net->K) : 0;
	}
	if (strcmp(a, "diagonal") != 0) {
		err_set("config: attention=%s is not additive, diagonal or "
			"window", a);
		return -1;
	}
	net->kind = ATT_DIAGONAL;
	if (config_get(&m->cfg, "diag_ratio") &&
	    config_double(&m->cfg, "diag_ratio", &net->ratio) < 0)
		return -1;
	if (net->ratio == 0) {
		err_set("config: attention=diagonal needs diag_ratio, the "
			"mean source length over the mean target length "
			"(train-step --init measures it from the pairs given)");
		return -1;
	}
	if (!(net->ratio > 0 && net->ratio <= 1e6)) {
		err_set("config: diag_ratio=%g is not in (0, 1e6]",
			net->ratio);
		return -1;
	}
	return 0;
}

static int rnn_declare(struct model *m, int attention)
{
	struct rnn_net *net = calloc(1, sizeof *net);
	size_t i;

	if (!net) {
		err_set("out of memory");
		return -1;
	}
	free(m->net);
	m->net = net;
	net->attention = attention;
	net->Vs = m->src_vocab;
	net->Vt = m->tgt_vocab;
	if (model_size_key(m, "emb", &net->m) < 0 ||
	    model_size_key(m, "hidden", &net->n) < 0 ||
	    model_size_key(m, "maxout", &net->l) < 0 ||
	    (attention && attention_keys(m, net) < 0))
		return -1;
	net->da = attention ? 2 * net->n : net->n;
	net->dc = net->da;
	for (i = 0; i < NTENSORS; i++) {
		const struct rnn_tensor *t = &rnn_tensors[i];

		if (has_tensor(net, t) &&
		    model_add_param(m, t->name, t->d1 == D_NONE ? 1 : 2,
				    dim_size(net, t->d0),
				    dim_size(net, t->d1)) < 0)
			return -1;
	}
	return 0;
}

static int rnnsearch_declare(struct model *m)
{
	return rnn_declare(m, 1);
}

static int rnnencdec_declare(struct model *m)
{
	return rnn_declare(m, 0);
}

static int rnn_bind(struct model *m)
{
	struct rnn_net *net = m->net;
	size_t i;

	for (i = 0; i < NTENSORS; i++) {
		const struct rnn_tensor *t = &rnn_tensors[i];
		struct param *p;

		if (!has_tensor(net, t))
			continue;
		p = model_param(m, t->name);
		if (!p || p->dim[0] != dim_size(net, t->d0) ||
		    p->dim[1] != dim_size(net, t->d1)) {
			err_set("parameter '%s' is missing or disagrees with "
				"the config", t->name);
			return -1;
		}
		*field(&net->w, t) = p->w;
		*field(&net->g, t) = p->g;
	}
	return 0;
}

static void fill_normal(float *w, size_t n, double sd, struct rng *r)
{
	for (size_t i = 0; i < n; i++)
		w[i] = (float)(sd * rng_normal(r));
}

/*
 * A random orthogonal n x n matrix (rows orthonormal): a Gaussian one
 * through Gram-Schmidt, twice over for orthogonality to float precision
 * (a Gaussian matrix has full rank with probability 1).
 */
static void fill_orthogonal(float *q, int n, struct rng *r)
{
	fill_normal(q, (size_t)n * n, 1.0, r);
	for (int i = 0; i < n; i++) {
		float *v = q + (size_t)i * n;

		for (int pass = 0; pass < 2; pass++)
			for (int j = 0; j < i; j++) {
				const float *u = q + (size_t)j * n;
				double dot = 0;

				for (int k = 0; k < n; k++)
					dot += (double)v[k] * u[k];
				for (int k = 0; k < n; k++)
					v[k] -= (float)(dot * u[k]);
			}
		double norm = 0;
		for (int k = 0; k < n; k++)
			norm += (double)v[k] * v[k];
		norm = sqrt(norm);
		for (int k = 0; k < n; k++)
			v[k] = (float)(v[k] / norm);
	}
}

static void rnn_init(struct model *m)
{
	struct rnn_net *net = m->net;
	size_t i;

	for (i = 0; i < NTENSORS; i++) {
		const struct rnn_tensor *t = &rnn_tensors[i];
		float *w;
		size_t size;

		if (!has_tensor(net, t))
			continue;
		w = *field(&net->w, t);
		size = (size_t)dim_size(net, t->d0) * dim_size(net, t->d1);
		switch (t->init) {
		case I_NORMAL:
			fill_normal(w, size, 0.01, &m->rng);
			break;
		case I_ATT:
			fill_normal(w, size, 0.001, &m->rng);
			break;
		case I_ORTHO:	/* one block per gate z, r, h */
			for (int g = 0; g < 3; g++)
				fill_orthogonal(w + (size_t)g * net->n * net->n,
						net->n, &m->rng);
			break;
		case I_ZERO:
			memset(w, 0, size * sizeof(float));
			break;
		case I_WIN:	/* the Gaussians' importances sum to 1 */
			memset(w, 0, size * sizeof(float));
			for (int k = 0; k < net->K; k++)
				w[k] = (float)-log(net->K);
			break;
		}
	}
}

/* ---- layers shared by the stages, the decoder and training ---------------- */

void tanh_linear_forward(float *y, const float *x, const float *W,
			 const float *b, int B, int n)
{
	linear_forward(y, x, W, b, B, n, n);
	vtanh(y, y, (size_t)B * n);
}

void tanh_linear_backward(float *dx, float *dW, float *db, float *dy,
			  const float *y, const float *x, const float *W,
			  int B, int n)
{
	for (size_t i = 0; i < (size_t)B * n; i++)
		dy[i] *= 1 - y[i] * y[i];
	linear_backward(dx, dW, db, dy, x, W, B, n, n);
}

size_t rnn_encoder_floats(const struct rnn_net *net, int S, int B)
{
	int dirs = net->attention ? 2 : 1;

	return dirs * ((size_t)(S + 1) * B * net->n +
		       gru_cache_floats(S, B, net->n));
}

void rnn_encoder_bind(const struct rnn_net *net, struct rnn_encoder *e,
		      float *mem, int S, int B)
{
	memset(e, 0, sizeof *e);
	for (int d = 0; d < (net->attention ? 2 : 1); d++) {
		e->hs[d] = mem;
		mem += (size_t)(S + 1) * B * net->n;
		gru_cache_bind(&e->c[d], mem, S, B, net->n);
		mem += gru_cache_floats(S, B, net->n);
	}
}

struct encode_job {
	const struct rnn_net *net;
	struct rnn_encoder *e;
	const float *x;
	const int *len;
	int S, B;
};

/* Directions lo .. hi-1 (0 forwards, 1 backwards), one per thread: a
 * step's products are too small to split well, a direction is not. */
static void encode_directions(void *arg, int64_t lo, int64_t hi)
{
	const struct encode_job *j = arg;
	const struct rnn_params *w = &j->net->w;

	for (int64_t d = lo; d < hi; d++)
		gru_forward(j->e->hs[d], &j->e->c[d], j->x,
			    d ? w->bwd_W : w->fwd_W, d ? w->bwd_U : w->fwd_U,
			    d ? w->bwd_b : w->fwd_b, j->len, j->S, j->B,
			    j->net->m, j->net->n, (int)d);
}

void rnn_encoder_forward(const struct rnn_net *net, struct rnn_encoder *e,
			 float *ann, const float *x, const int *len, int S,
			 int B)
{
	struct encode_job j = { net, e, x, len, S, B };
	int n = net->n, da = net->da;

	kern_parallel_for(net->attention ? 2 : 1, 1, encode_directions, &j);
	/* ann [B, S, da]: row (b, t) = [fwd state after t; bwd state after t] */
	for (int b = 0; b < B; b++)
		for (int t = 0; t < S; t++) {
			float *a = ann + ((size_t)b * S + t) * da;
			size_t o = (size_t)b * n;

			memcpy(a, e->hs[0] + (t + 1) * (size_t)B * n + o,
			       n * sizeof(float));
			if (net->attention)
				memcpy(a + n, e->hs[1] + t * (size_t)B * n + o,
				       n * sizeof(float));
		}
}

size_t rnn_init_offset(const struct rnn_net *net, int len)
{
	/* rnnsearch: the backward state at the first position; rnnencdec:
	 * the forward state at the last */
	return net->attention ? (size_t)net->n : (size_t)(len - 1) * net->n;
}

void rnn_init_forward(const struct rnn_net *net, float *s0, float *c,
		      const float *h, int B)
{
	const struct rnn_params *w = &net->w;

	if (!net->attention) {
		tanh_linear_forward(c, h, w->sum_W, w->sum_b, B, net->n);
		h = c;
	}
	tanh_linear_forward(s0, h, w->init_W, w->init_b, B, net->n);
}

/* ---- the pipeline's stages ------------------------------------------------ */

const float *rnn_need_vector(const struct frame *f, const char *name, int n,
			     const char *stage)
{
	const struct tensor *t = frame_need(f, name, DT_F32, 1, stage);

	if (!t || frame_check_input(f, t) < 0)
		return NULL;
	if (t->dim[0] != (uint64_t)n) {
		err_set("frame %llu: record '%s' is [%llu]; the model wants "
			"[%d]", (unsigned long long)f->number, name,
			(unsigned long long)t->dim[0], n);
		return NULL;
	}
	return t->data;
}

static int rnn_embed(const struct model *m, struct frame **f, int n)
{
	const struct rnn_net *net = m->net;

	for (int i = 0; i < n; i++) {
		const struct tensor *ids;
		const int32_t *id;
		float *out;
		int S;

		if (model_check_ids(f[i], "src.ids", net->Vs, "tokenize") < 0)
			return -1;
		ids = frame_find(f[i], "src.ids");
		id = ids->data;
		S = (int)ids->dim[0];
		out = frame_put_rows(f[i], "src.emb", S, net->m, NULL);
		if (!out)
			return -1;
		embedding_forward(out, id, S, net->w.src_emb, net->m);
	}
	return 0;
}

static int rnn_encode(const struct model *m, struct frame **f, int n)
{
	const struct rnn_net *net = m->net;
	struct rnn_encoder e;
	float *emb, *x = NULL, *ann = NULL, *mem = NULL;
	int *len, S, rc = -1;

	S = frames_gather(f, n, "src.emb", net->m, "embed", &emb, &len);
	if (S < 0)
		return -1;
	x = malloc((size_t)S * n * net->m * sizeof(float));
	ann = malloc((size_t)n * S * net->da * sizeof(float));
	mem = malloc(rnn_encoder_floats(net, S, n) * sizeof(float));
	if (!x || !ann || !mem) {
		err_set("out of memory");
		goto out;
	}
	/* time-major x [S, n, m] for the GRUs */
	for (int t = 0; t < S; t++)
		for (int b = 0; b < n; b++)
			memcpy(x + ((size_t)t * n + b) * net->m,
			       emb + ((size_t)b * S + t) * net->m,
			       net->m * sizeof(float));
	rnn_encoder_bind(net, &e, mem, S, n);
	rnn_encoder_forward(net, &e, ann, x, len, S, n);
	if (frames_put(f, n, "enc.out", net->da, ann, S, len) < 0)
		goto out;
	rc = 0;
out:
	free(len);
	free(emb);
	free(x);
	free(ann);
	free(mem);
	return rc;
}

static int rnn_attend(const struct model *m, struct frame **f, int n)
{
	const struct rnn_net *net = m->net;
	int nn = net->n, S, rc = -1;
	float *h = malloc(((size_t)3 * (n ? n : 1)) * nn * sizeof(float));
	float *s0, *c;

	if (!h) {
		err_set("out of memory");
		return -1;
	}
	s0 = h + (size_t)n * nn;
	c = s0 + (size_t)n * nn;
	for (int b = 0; b < n; b++) {
		const float *ann = frame_rows(f[b], "enc.out", net->da,
					      "encode", &S);
		if (!ann)
			goto out;
		memcpy(h + (size_t)b * nn, ann + rnn_init_offset(net, S),
		       nn * sizeof(float));
		if (net->attention && net->kind == ATT_ADDITIVE) {
			/* att.keys [S, n'] = enc.out Ua^T + ba */
			float *keys = frame_put_rows(f[b], "att.keys", S,
						     net->na, NULL);
			if (!keys)
				goto out;
			linear_forward(keys, ann, net->w.att_U, net->w.att_b,
				       S, net->da, net->na);
		}
	}
	rnn_init_forward(net, s0, c, h, n);
	for (int b = 0; b < n; b++) {
		if (!net->attention &&
		    !frame_put_rows(f[b], "att.ctx", nn, 0,
				    c + (size_t)b * nn))
			goto out;
		if (!frame_put_rows(f[b], "att.init", nn, 0,
				    s0 + (size_t)b * nn))
			goto out;
	}
	rc = 0;
out:
	free(h);
	return rc;
}

/* ---- the tables ----------------------------------------------------------- */

/* Small models by default; the paper's sizes are emb=620 hidden=1000
 * att=1000 maxout=500.  The paper's Adadelta learns little in an hour of
 * one core: the defaults are the recipe's (examples/bible-rnnsearch.sh),
 * Adam at 0.001 on batches of 2000 target tokens.  diag_ratio=0: not
 * measured (train-step --init PAIRS measures it), which
 * attention=diagonal refuses. */
static const char *const rnnsearch_defaults[] = {
	"emb=256", "hidden=256", "att=256", "maxout=128",
	"optim=adam", "lr=0.001", "batch_tokens=2000",
	"attention=additive", "window_k=10", "diag_ratio=0", NULL,
};
static const char *const rnnencdec_defaults[] = {
	"emb=256", "hidden=256", "maxout=128",
	"optim=adam", "lr=0.001", "batch_tokens=2000", NULL,
};

/* The functions of both architectures: they tell the two apart by
 * net->attention, which each one's declare sets. */
#define RNN_ARCH_FUNCTIONS \
	.bind = rnn_bind, \
	.init = rnn_init, \
	.embed = rnn_embed, \
	.encode = rnn_encode, \
	.attend = rnn_attend, \
	.dec_new = rnn_dec_new, \
	.dec_step = rnn_dec_step, \
	.dec_select = rnn_dec_select, \
	.dec_sentence = rnn_dec_sentence, \
	.dec_srclen = rnn_dec_srclen, \
	.dec_shortlist = rnn_dec_shortlist, \
	.dec_attw_planes = NULL, \
	.dec_free = rnn_dec_free, \
	.train_batch = rnn_train_batch

const struct arch arch_rnnsearch = {
	.name = "rnnsearch",
	.declare = rnnsearch_declare,
	.defaults = rnnsearch_defaults,
	RNN_ARCH_FUNCTIONS,
};

const struct arch arch_rnnencdec = {
	.name = "rnnencdec",
	.declare = rnnencdec_declare,
	.defaults = rnnencdec_defaults,
	RNN_ARCH_FUNCTIONS,
};
