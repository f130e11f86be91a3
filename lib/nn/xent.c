/*
 * xent.c: cross-entropy with label smoothing; see layers.h.  Rows are
 * split over the thread pool; each row takes one pass of exponentials
 * (softmax_xent_row), and the rows' losses are summed in row order so the
 * result does not depend on the threads.
 */
#include <stdlib.h>
#include <string.h>
#include "base/errmsg.h"
#include "kernels/kernels.h"
#include "layers.h"

struct xent_ctx {
	float *dlogits, *dbias;		/* dbias: only on one thread */
	const float *logits, *bias;
	const int32_t *tgt;
	int V;
	float eps, scale;
	double *loss, *nll;	/* [N] per row */
	int oom;		/* a thread could not get its row buffer */
};

static void xent_rows(void *arg, int64_t lo, int64_t hi)
{
	const struct xent_ctx *c = arg;
	int V = c->V;
	float eps = c->eps, scale = c->scale, floor = scale * eps / V;
	float *tmp = c->dlogits ? NULL : malloc(V * sizeof(float));
	int64_t i;

	if (!c->dlogits && !tmp) {
		__atomic_store_n(&((struct xent_ctx *)c)->oom, 1,
				 __ATOMIC_RELAXED);
		return;
	}
	for (i = lo; i < hi; i++) {
		const float *z = c->logits + (size_t)i * V;
		float *p = c->dlogits ? c->dlogits + (size_t)i * V : tmp;
		int32_t t = c->tgt[i];
		float zt, zsum;
		double lse;

		c->loss[i] = c->nll[i] = 0;
		if (t == XENT_PAD) {
			if (c->dlogits)
				memset(p, 0, sizeof(float) * V);
			if (c->dbias)
				bias_backward(c->dbias, p, 1, V);
			continue;
		}
		/* the bias while the row is in cache: no pass of its own */
		if (c->bias) {
			if (p != z)
				memcpy(p, z, sizeof(float) * V);
			bias_forward(p, c->bias, 1, V);
			z = p;
		}
		/* -sum_v q_v log p_v, q = (1 - eps) onehot(t) + eps / V, with
		 * log p_v = z_v - lse; p overwrites z: z_t first */
		zt = z[t];
		lse = softmax_xent_row(p, z, V, scale, floor, &zsum);
		c->loss[i] = -(1.0 - eps) * (zt - lse) -
			     (double)eps / V * (zsum - V * lse);
		c->nll[i] = lse - zt;
		/* p = scale (softmax - eps / V): now minus scale (1 - eps) at t */
		p[t] -= scale * (1.0f - eps);
		if (c->dbias)
			bias_backward(c->dbias, p, 1, V);
	}
	free(tmp);
}

double xent_forward_backward(float *dlogits, const float *logits,
			     const int32_t *tgt, int N, int V, float eps,
			     float scale, double *nll, int *count)
{
	return xent_biased_forward_backward(dlogits, logits, NULL, NULL, tgt,
					    N, V, eps, scale, nll, count);
}

double xent_biased_forward_backward(float *dlogits, const float *logits,
				    const float *bias, float *dbias,
				    const int32_t *tgt, int N, int V,
				    float eps, float scale, double *nll,
				    int *count)
{
	/* On one thread the rows come in order, and each adds into dbias
	 * while in cache: bias_backward's order, so its bits.  On more, a
	 * pass of bias_backward after them. */
	int one = kern_threads() == 1;
	struct xent_ctx c = {
		dlogits, one ? dbias : NULL, logits, bias, tgt, V, eps, scale,
		NULL, NULL, 0,
	};
	double loss = 0, nll_sum = 0;
	int i, rows = 0;

	c.loss = malloc((N ? N : 1) * 2 * sizeof(double));
	if (!c.loss)
		goto oom;
	c.nll = c.loss + N;
	kern_parallel_for(N, 8, xent_rows, &c);
	if (c.oom) {
		free(c.loss);
		goto oom;
	}
	if (dbias && !one)
		bias_backward(dbias, dlogits, N, V);
	for (i = 0; i < N; i++) {
		if (tgt[i] == XENT_PAD)
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
oom:
	err_set("cross-entropy: out of memory for %d rows of %d", N, V);
	return -1;
}
