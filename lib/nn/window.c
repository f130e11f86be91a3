/*
 * window.c: Graves' soft window ("Generating Sequences with Recurrent
 * Neural Networks", 2013, section 5) over the source positions (window.h).
 * Scalar loops in double: K S exponentials a step, small next to the
 * decoder's GRU.
 */
#include <math.h>
#include <stddef.h>

#include "window.h"

void window_forward(float *phi, float *kappa, const float *p,
		    const float *kprev, const int *len, int B, int S, int K)
{
	for (int b = 0; b < B; b++) {
		const float *pb = p + (size_t)b * 3 * K;
		float *kb = kappa + (size_t)b * K, *f = phi + (size_t)b * S;

		for (int k = 0; k < K; k++)
			kb[k] = (float)(kprev[(size_t)b * K + k] +
					exp(pb[2 * K + k]));
		for (int j = 0; j < S; j++) {
			double s = 0;

			for (int k = 0; j < len[b] && k < K; k++) {
				double d = kb[k] - (j + 1);

				s += exp(pb[k]) * exp(-exp(pb[K + k]) * d * d);
			}
			f[j] = (float)s;
		}
	}
}

void window_backward(float *dp, float *dkappa, const float *dphi,
		     const float *p, const float *kappa, const int *len,
		     int B, int S, int K)
{
	for (int b = 0; b < B; b++) {
		const float *pb = p + (size_t)b * 3 * K;
		const float *kb = kappa + (size_t)b * K;
		const float *df = dphi + (size_t)b * S;
		float *db = dp + (size_t)b * 3 * K, *dk = dkappa + (size_t)b * K;

		for (int k = 0; k < K; k++) {
			double alpha = exp(pb[k]), beta = exp(pb[K + k]);
			double dalpha = 0, dbeta = 0, dkap = 0;

			for (int j = 0; j < len[b]; j++) {
				double d = kb[k] - (j + 1);
				double e = exp(-beta * d * d);
				double g = df[j] * alpha * e;

				dalpha += df[j] * e;
				dbeta -= g * d * d;
				dkap -= 2 * g * beta * d;
			}
			dk[k] += (float)dkap;
			db[k] += (float)(dalpha * alpha);
			db[K + k] += (float)(dbeta * beta);
			/* kappa_i = kappa_{i-1} + exp(k): the total by
			 * kappa_i is also the one by kappa_{i-1} */
			db[2 * K + k] += (float)(dk[k] * exp(pb[2 * K + k]));
		}
	}
}
