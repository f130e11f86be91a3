/*
 * xent.c: cross-entropy with label smoothing; see layers.h.  Rows are
 * split over the thread pool; each row's log-softmax and exponentials are
 * the vector kernels, and the rows' losses are summed in row order so the
 * result does not depend on the threads.
 */
#include <stdlib.h>
#include <string.h>
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

/* The sum of x [n] in 8 interleaved partial sums: a fixed order, and no
 * chain of n dependent additions. */
static float row_sum(const float *x, int n)
{
	float part[8] = { 0 }, s = 0;
	int v, k;

	for (v = 0; v + 8 <= n; v += 8)
		for (k = 0; k < 8; k++)
			part[k] += x[v + k];
	for (; v < n; v++)
		s += x[v];
	for (k = 0; k < 8; k++)
		s += part[k];
	return s;
}

static void xent_rows(void *arg, int64_t lo, int64_t hi)
{
	const struct xent_ctx *c = arg;
	int V = c->V, v, k;
	float eps = c->eps, scale = c->scale, floor = scale * eps / V;
	float *tmp = c->dlogits ? NULL : malloc(V * sizeof(float));
	int64_t i;

	if (!c->dlogits && !tmp)
		abort();	/* V floats: nothing sensible to do without */
	for (i = lo; i < hi; i++) {
		const float *z = c->logits + (size_t)i * V;
		float *lp = c->dlogits ? c->dlogits + (size_t)i * V : tmp;
		int32_t t = c->tgt[i];

		c->loss[i] = c->nll[i] = 0;
		if (t == 0) {
			if (c->dlogits)
				memset(lp, 0, sizeof(float) * V);
			continue;
		}
		/* -sum_v q_v log p_v, q = (1 - eps) onehot(t) + eps / V */
		log_softmax_rows(lp, z, 1, V);
		c->loss[i] = -(1.0 - eps) * lp[t] -
			     (double)eps / V * row_sum(lp, V);
		c->nll[i] = -lp[t];
		if (!c->dlogits)
			continue;
		/* scale (p - q) */
		vexp(lp, lp, V);
		for (v = 0; v + 8 <= V; v += 8)	/* in eights: vectorised */
			for (k = 0; k < 8; k++)
				lp[v + k] = scale * lp[v + k] - floor;
		for (; v < V; v++)
			lp[v] = scale * lp[v] - floor;
		lp[t] -= scale * (1.0f - eps);
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
