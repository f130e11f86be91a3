/*
 * search_force.c: forced decoding, the log-probabilities of given target
 * ids (tgt.ids, hyp.ids) step by step: search.h's search_force and
 * search_force_batches, for score and the dev loss.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "base/errmsg.h"
#include "search_impl.h"

/* Forced decoding of all of f in one batch: see search_force. */
static int force_batch(const struct model *m, const struct dec_opts *dec,
		       struct frame **f, int n, const char *name,
		       int want_attw, struct hyp *out)
{
	const struct arch *a = m->arch;
	const char *stage = strcmp(name, "tgt.ids") == 0 ?
			    "tokenize --pairs" : "decode --tensors";
	struct decoder *d = NULL;
	const struct shortlist *sl;
	int V = m->tgt_vocab, P, L = 1, H = 1, smax = 0, tmax = 0, y;
	int *sent = NULL, *parent = NULL, nh, t, i, r, rc = -1;
	int32_t *prev = NULL;
	float *logp = NULL, *attw = NULL;

	memset(out, 0, n * sizeof *out);
	if (n == 0)
		return 0;
	for (i = 0; i < n; i++) {
		const struct tensor *ids;

		if (model_check_ids(f[i], name, V, stage) < 0)
			goto fail;
		ids = frame_find(f[i], name);
		out[i].len = ids->dim[0];
		out[i].ids = malloc(out[i].len * sizeof(int32_t));
		if (!out[i].ids)
			goto oom;
		memcpy(out[i].ids, ids->data, out[i].len * sizeof(int32_t));
		if (out[i].len > tmax)
			tmax = out[i].len;
	}
	d = a->dec_new(m, dec, f, n, 1);
	if (!d)
		goto fail;
	sl = a->dec_shortlist ? a->dec_shortlist(d) : NULL;
	if (a->dec_attw_planes)
		a->dec_attw_planes(d, &L, &H);
	P = L * H;
	for (i = 0; i < n; i++) {
		out[i].S = a->dec_srclen(d, i);
		out[i].L = L;
		out[i].H = H;
		if (out[i].S > smax)
			smax = out[i].S;
		if (want_attw && !(out[i].attw = calloc((size_t)P * out[i].len
					* out[i].S + 1, sizeof(float))))
			goto oom;
	}
	sent = malloc(n * sizeof *sent);
	parent = malloc(n * sizeof *parent);
	prev = malloc(n * sizeof *prev);
	logp = malloc((size_t)n * V * sizeof *logp);
	if (want_attw)
		attw = malloc(((size_t)n * P * smax + 1) * sizeof *attw);
	if (!sent || !parent || !prev || !logp || (want_attw && !attw))
		goto oom;
	for (i = 0; i < n; i++)
		sent[i] = i;
	for (nh = n, t = 1; nh > 0; t++) {
		int nn = 0;

		for (r = 0; r < nh; r++)
			prev[r] = t == 1 ? m->bos_id : out[sent[r]].ids[t - 2];
		if (a->dec_step(d, nh, prev, logp, attw) < 0)
			goto fail;
		for (r = 0; r < nh; r++) {
			struct hyp *h = &out[sent[r]];
			int p;

			/* a unit outside the shortlist has probability 0 */
			y = place(sl, sent[r], h->ids[t - 1]);
			h->score += y < 0 ? -INFINITY :
				    logp[(size_t)r * V + y];
			for (p = 0; attw && p < P; p++)
				memcpy(h->attw + ((size_t)p * h->len + t - 1) *
				       h->S, attw + ((size_t)r * P + p) * smax,
				       h->S * sizeof(float));
			if (t < h->len) {
				parent[nn] = r;
				sent[nn++] = sent[r];
			}
		}
		nh = nn;
		if (nh > 0 && !identity(parent, nh) &&
		    a->dec_select(d, nh, parent) < 0)
			goto fail;
	}
	for (i = 0; i < n; i++)
		out[i].norm = out[i].score / out[i].len;
	rc = 0;
	goto done;
oom:
	err_set("out of memory in forced decoding");
fail:
	for (i = 0; i < n; i++)
		hyp_free(&out[i]);
done:
	if (d)
		a->dec_free(d);
	free(sent);
	free(parent);
	free(prev);
	free(logp);
	free(attw);
	return rc;
}

struct force_args {
	const struct model *m;
	const struct dec_opts *dec;
	const char *name;
	int want_attw;
};

static int force_run(const void *args, struct frame **f, int n, void *out)
{
	const struct force_args *a = args;

	return force_batch(a->m, a->dec, f, n, a->name, a->want_attw, out);
}

static void force_drop(void *elem)
{
	hyp_free(elem);
}

int search_force_batches(const struct model *m, const struct dec_opts *dec,
			 struct frame **f, const int *start, int nb,
			 const char *name, int want_attw, struct hyp *out)
{
	struct force_args a = { m, dec, name, want_attw };
	struct deal dl = { .run = force_run, .drop = force_drop,
			   .args = &a, .size = sizeof *out };

	memset(out, 0, start[nb] * sizeof *out);
	return search_deal(&dl, f, start, nb, out);
}

int search_force(const struct model *m, const struct dec_opts *dec,
		 struct frame **f, int n, const char *name, int want_attw,
		 struct hyp *out)
{
	int start[2] = { 0, n };

	return search_force_batches(m, dec, f, start, 1, name, want_attw,
				    out);
}
