/*
 * context.c: the context of attention weights (window.h), a weighted sum
 * of value rows; plain loops: at a decoder step it is S dot products,
 * small next to the GRU's products.
 */
#include <stddef.h>

#include "window.h"

void context_forward(float *ctx, const float *a, const float *v,
		     const int *len, int B, int S, int dv)
{
	for (int b = 0; b < B; b++) {
		float *c = ctx + (size_t)b * dv;
		const float *ab = a + (size_t)b * S;

		for (int k = 0; k < dv; k++)
			c[k] = 0;
		for (int j = 0; j < len[b]; j++) {
			const float *vj = v + ((size_t)b * S + j) * dv;

			if (ab[j] == 0)		/* the diagonal's gather */
				continue;
			for (int k = 0; k < dv; k++)
				c[k] += ab[j] * vj[k];
		}
	}
}

void context_backward(float *da, float *dv, const float *dctx,
		      const float *a, const float *v, const int *len, int B,
		      int S, int ndv)
{
	for (int b = 0; b < B; b++) {
		const float *dc = dctx + (size_t)b * ndv;

		for (int j = 0; j < len[b]; j++) {
			size_t r = (size_t)b * S + j;
			const float *vj = v + r * ndv;
			float s = 0;

			for (int k = 0; k < ndv; k++)
				s += dc[k] * vj[k];
			da[r] += s;
			if (dv)
				for (int k = 0; k < ndv; k++)
					dv[r * ndv + k] += a[r] * dc[k];
		}
	}
}
