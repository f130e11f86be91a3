/*
 * xent.c: cross-entropy with label smoothing; see layers.h.  Rows are
 * split over the thread pool; each row's log-softmax and exponentials are
 * the vector kernels, and the rows' losses are summed in row order so the
 * result does not depend on the threads.
 */
#include <stdlib.h>
#include "err.h"
#include "kernels.h"
#include "layers.h"

struct xent_ctx {
	float *dlogits;
	const float *logits;
	const int32_t *tgt;
	int V;
	float eps, scale;
	double *loss, *nll;	/* [N] per row */
};

static void xent_rows(void *arg, int64_t lo, int64_t hi)
{
	const struct xent_ctx *c = arg;
	int V = c->V, v;
	float *tmp = c->dlogits ? NULL : malloc(V * sizeof(float));
	int64_t i;

	if (!c->dlogits && !tmp)
		abort();	/* V floats: nothing sensible to do without */
	for (i = lo; i < hi; i++) {
		const float *z = c->logits + (size_t)i * V;
		float *lp = c->dlogits ? c->dlogits + (size_t)i * V : tmp;
		int32_t t = c->tgt[i];
		double sum = 0;

		c->loss[i] = c->nll[i] = 0;
		if (t == 0) {
			for (v = 0; c->dlogits && v < V; v++)
				lp[v] = 0;
			continue;
		}
		/* -sum_v q_v log p_v, q = (1 - eps) onehot(t) + eps / V */
		log_softmax_rows(lp, z, 1, V);
		for (v = 0; v < V; v++)
			sum += lp[v];
		c->loss[i] = -(1.0 - c->eps) * lp[t] - c->eps / V * sum;
		c->nll[i] = -lp[t];
		if (!c->dlogits)
			continue;
		vexp(lp, lp, V);
		for (v = 0; v < V; v++)
			lp[v] = c->scale * (lp[v] - c->eps / V);
		lp[t] -= c->scale * (1.0f - c->eps);
	}
	free(tmp);
}

double xent_forward_backward(float *dlogits, const float *logits,
			     const int32_t *tgt, int N, int V, float eps,
			     float scale, double *nll, int *count)
{
	struct xent_ctx c = {
		dlogits, logits, tgt, V, eps, scale, NULL, NULL,
	};
	double loss = 0, nll_sum = 0;
	int i, rows = 0;

	c.loss = malloc((N ? N : 1) * 2 * sizeof(double));
	if (!c.loss)
		abort();
	c.nll = c.loss + N;
	kern_parallel_for(N, 8, xent_rows, &c);
	for (i = 0; i < N; i++) {
		if (tgt[i] == 0)
			continue;
		loss += c.loss[i];
		nll_sum += c.nll[i];
		rows++;
	}
	free(c.loss);
	if (nll)
		*nll = nll_sum;
	if (count)
		*count = rows;
	return loss;
}
