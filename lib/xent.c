/* xent.c: cross-entropy with label smoothing; see layers.h. */
#include <math.h>
#include <stddef.h>
#include "layers.h"

double xent_forward_backward(float *dlogits, const float *logits,
			     const int32_t *tgt, int N, int V, float eps,
			     float scale, double *nll, int *count)
{
	double loss = 0, nll_sum = 0;
	int i, v, rows = 0;

	for (i = 0; i < N; i++) {
		const float *z = logits + (size_t)i * V;
		float *dz = dlogits ? dlogits + (size_t)i * V : NULL;
		double max, sum, lse, sumz;
		float p;

		if (tgt[i] == 0) {
			if (dz)
				for (v = 0; v < V; v++)
					dz[v] = 0;
			continue;
		}
		max = z[0];
		for (v = 1; v < V; v++)
			if (z[v] > max)
				max = z[v];
		sum = 0;
		sumz = 0;
		for (v = 0; v < V; v++) {
			sum += exp(z[v] - max);
			sumz += z[v];
		}
		lse = max + log(sum);
		/* -sum_v q_v log p_v with log p_v = z_v - lse */
		loss += -(1.0 - eps) * (z[tgt[i]] - lse)
			- eps / V * (sumz - (double)V * lse);
		nll_sum += lse - z[tgt[i]];
		rows++;
		if (!dz)
			continue;
		for (v = 0; v < V; v++) {
			p = (float)exp(z[v] - lse);
			dz[v] = scale * (p - eps / V);
		}
		dz[tgt[i]] -= scale * (1.0f - eps);
	}
	if (nll)
		*nll = nll_sum;
	if (count)
		*count = rows;
	return loss;
}
