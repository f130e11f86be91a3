/*
 * transformer_stages.c: the Transformer's stages of the pipeline on
 * frames (model.h): embed src.ids -> src.emb, encode src.emb -> enc.out,
 * attend enc.out -> att.{l}.k and att.{l}.v, the cross-attention's keys
 * and values of every decoder layer l.  Each runs its frames as one
 * padded batch.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/errmsg.h"
#include "transformer_batch.h"

int tf_embed(const struct model *m, struct frame **fr, int nf)
{
	const struct tf_net *n = m->net;
	int i;

	for (i = 0; i < nf; i++) {
		struct tensor *ids, t;
		uint64_t dim[2];
		int S;

		if (model_check_ids(fr[i], "src.ids", n->src_vocab,
				    "tokenize") < 0)
			return -1;
		ids = frame_find(fr[i], "src.ids");
		S = (int)ids->dim[0];
		dim[0] = S;
		dim[1] = n->d;
		if (tensor_init(&t, "src.emb", DT_F32, 2, dim) < 0)
			return -1;
		tf_embed_forward(n, t.data, ids->data, 1, S, 0, n->w.src_emb);
		if (!frame_put(fr[i], &t)) {
			tensor_free(&t);
			return -1;
		}
	}
	return 0;
}

int tf_gather_rows(const struct tf_net *n, struct frame **fr, int nf,
		       const char *name, const char *stage, float **x,
		       int **len)
{
	int i, S = 0;

	*x = NULL;
	*len = malloc(sizeof(int) * (nf ? nf : 1));
	if (!*len)
		goto oom;
	for (i = 0; i < nf; i++) {
		struct tensor *t = frame_need(fr[i], name, DT_F32, 2, stage);

		if (!t)
			goto fail;
		if (t->dim[1] != (uint64_t)n->d || t->dim[0] > 1 << 20) {
			err_set("frame %llu: %s is [%llu, %llu], the model "
				"needs [S, %d]", (unsigned long long)fr[i]->number,
				name, (unsigned long long)t->dim[0],
				(unsigned long long)t->dim[1], n->d);
			goto fail;
		}
		(*len)[i] = (int)t->dim[0];
		if ((*len)[i] > S)
			S = (*len)[i];
	}
	*x = calloc((size_t)nf * S * n->d + 1, sizeof(float));
	if (!*x)
		goto oom;
	for (i = 0; i < nf; i++)
		memcpy(*x + (size_t)i * S * n->d, frame_find(fr[i], name)->data,
		       sizeof(float) * (*len)[i] * n->d);
	return S;
oom:
	err_set("out of memory for %d frames of %s", nf, name);
fail:
	free(*x);
	free(*len);
	*x = NULL;
	*len = NULL;
	return -1;
}

/* Puts rows [len, d] of x as record name into frame f. */
static int put_rows(const struct tf_net *n, struct frame *f, const char *name,
		    const float *x, int len)
{
	uint64_t dim[2] = { (uint64_t)len, (uint64_t)n->d };
	struct tensor t;

	if (tensor_init_copy(&t, name, DT_F32, 2, dim, x) < 0)
		return -1;
	if (!frame_put(f, &t)) {
		tensor_free(&t);
		return -1;
	}
	return 0;
}

int tf_encode(const struct model *m, struct frame **fr, int nf)
{
	const struct tf_net *n = m->net;
	struct fwd f;
	float *x;
	int *len, S, i, rc = -1;

	S = tf_gather_rows(n, fr, nf, "src.emb", "embed", &x, &len);
	if (S < 0)
		return -1;
	memset(&f, 0, sizeof(f));
	f.B = nf;
	f.S = S;
	f.slen = len;
	if (S > 0) {
		if (tf_plan_alloc(&f, n) < 0)
			goto out;
		memcpy(f.x0, x, sizeof(float) * nf * S * n->d);
		tf_encoder_forward(n, &f, NULL);
	}
	for (i = 0; i < nf; i++)
		if (put_rows(n, fr[i], "enc.out",
			     S ? f.E + (size_t)i * S * n->d : x, len[i]) < 0)
			goto out;
	rc = 0;
out:
	free(x);
	free(len);
	return rc;
}

int tf_attend(const struct model *m, struct frame **fr, int nf)
{
	const struct tf_net *n = m->net;
	float *E, *kv = NULL;
	int *len, S, i, l, rc = -1;
	char name[32];

	S = tf_gather_rows(n, fr, nf, "enc.out", "encode", &E, &len);
	if (S < 0)
		return -1;
	kv = malloc(sizeof(float) * ((size_t)nf * S * n->d + 1));
	if (!kv) {
		err_set("out of memory for %d frames of att.*", nf);
		goto out;
	}
	for (l = 0; l < n->dec_layers; l++) {
		const struct mha_w *w = &n->w.dec[l].cross;
		int kind;

		for (kind = 0; kind < 2 && S > 0; kind++) {
			linear_forward(kv, E, kind ? w->vW : w->kW,
				       kind ? w->vb : w->kb, nf * S, n->d,
				       n->d);
			snprintf(name, sizeof(name), "att.%d.%c", l,
				 kind ? 'v' : 'k');
			for (i = 0; i < nf; i++)
				if (put_rows(n, fr[i], name,
					     kv + (size_t)i * S * n->d,
					     len[i]) < 0)
					goto out;
		}
	}
	rc = 0;
out:
	free(kv);
	free(E);
	free(len);
	return rc;
}

