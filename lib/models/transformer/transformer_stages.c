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
#include "models/frames.h"
#include "transformer_batch.h"

int tf_embed(const struct model *m, struct frame **fr, int nf)
{
	const struct tf_net *n = m->net;
	int i;

	for (i = 0; i < nf; i++) {
		const struct tensor *ids;
		const int32_t *id;
		float *x;
		int S;

		if (model_check_ids(fr[i], "src.ids", n->src_vocab,
				    "tokenize") < 0)
			return -1;
		/* the record, not its payload, may move as the frame grows */
		ids = frame_find(fr[i], "src.ids");
		id = ids->data;
		S = (int)ids->dim[0];
		if (S > tf_pos_limit(n)) {
			err_set("frame %llu: src.ids has %d tokens, more "
				"than max_pos=%d of this model's learned "
				"positions", (unsigned long long)fr[i]->number,
				S, n->max_pos);
			return -1;
		}
		x = frame_put_rows(fr[i], "src.emb", S, n->d, NULL);
		if (!x)
			return -1;
		tf_embed_forward(n, x, id, 1, S, 0, 0);
	}
	return 0;
}

int tf_encode(const struct model *m, struct frame **fr, int nf)
{
	const struct tf_net *n = m->net;
	struct fwd f;
	float *x;
	int *len, S, rc = -1;

	S = frames_gather(fr, nf, "src.emb", n->d, "embed", &x, &len);
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
	if (frames_put(fr, nf, "enc.out", n->d, f.E, S, len) < 0)
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
	int *len, S, l, rc = -1;
	char name[32];

	S = frames_gather(fr, nf, "enc.out", n->d, "encode", &E, &len);
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
			if (frames_put(fr, nf, name, n->d, kv, S, len) < 0)
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

