/*
 * guided.c: guided alignment's loss over one head's attention, with its
 * gradient; see layers.h.  One row (sentence b, query t) at a time, as
 * Marian's "ce" cost: the reference row normalised to sum to 1, and the
 * cross-entropy against the softmax of that row's scores, computed here
 * from the queries and keys (the fused attention kernel keeps no
 * probabilities).  Rows are few (the target's units), so it runs on one
 * thread, in row order: the result does not depend on the threads.
 */
#include <math.h>
#include <stdlib.h>
#include "base/errmsg.h"
#include "layers.h"

/* z [n] = x [dk] . the rows of y (row stride ys) times sc. */
static void scores(float *z, const float *x, const float *y, size_t ys,
		   int n, int dk, float sc)
{
	int s, i;

	for (s = 0; s < n; s++) {
		const float *r = y + (size_t)s * ys;
		float acc = 0;

		for (i = 0; i < dk; i++)
			acc += x[i] * r[i];
		z[s] = acc * sc;
	}
}

double guided_forward_backward(float *dq, float *dk, const float *q,
			       const float *k, const float *ref,
			       const int *klen, int B, int Tq, int Tk, int d,
			       int heads, int head, int shift, float weight,
			       float scale)
{
	int dh = d / heads, b, t, s, i;
	float sc = 1.0f / sqrtf((float)dh);
	float *z = malloc((Tk ? Tk : 1) * sizeof *z);
	double loss = 0;

	if (!z) {
		err_set("guided alignment: out of memory");
		return -1;
	}
	for (b = 0; b < B; b++) {
		/* head h's columns of sentence b */
		const float *kb = k + (size_t)b * Tk * d + (size_t)head * dh;
		float *dkb = dk + (size_t)b * Tk * d + (size_t)head * dh;
		int S = klen[b] < Tk ? klen[b] : Tk;

		for (t = 0; t + shift < Tq; t++) {
			size_t row = (size_t)b * Tq + t + shift;
			const float *a = ref + (row - shift) * Tk;
			const float *qt = q + row * d + (size_t)head * dh;
			float *dqt = dq + row * d + (size_t)head * dh;
			double sum = 0, mx = -INFINITY, e = 0, lse, l = 0;

			for (s = 0; s < S; s++)
				sum += a[s];
			if (!(sum > 0))
				continue;	/* no link: no loss */
			scores(z, qt, kb, d, S, dh, sc);
			for (s = 0; s < S; s++)
				if (z[s] > mx)
					mx = z[s];
			for (s = 0; s < S; s++)
				e += exp(z[s] - mx);
			lse = mx + log(e);
			for (s = 0; s < S; s++) {
				double r = a[s] / sum, p = exp(z[s] - lse);
				/* dL/dz = weight (p - r), times the
				 * scores' own scale into q and k */
				float g = (float)(weight * scale * (p - r)) *
					  sc;

				if (r > 0)
					l -= r * (z[s] - lse);
				if (g == 0)
					continue;
				for (i = 0; i < dh; i++) {
					dqt[i] += g * kb[(size_t)s * d + i];
					dkb[(size_t)s * d + i] += g * qt[i];
				}
			}
			loss += weight * l;
		}
	}
	free(z);
	return loss;
}
