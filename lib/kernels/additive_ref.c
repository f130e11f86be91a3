/*
 * additive_ref.c: the reference of Bahdanau's additive attention for one
 * sentence of a decoder step (additive.c spreads sentences over threads).
 */
#include <math.h>
#include <string.h>

#include "kern_impl.h"

/* ctx [dv], a [S]; wq [na], keys [S, na], ann [S, dv]; len <= S keys. */
void additive_forward_ref(float *ctx, float *a, const float *wq,
			  const float *keys, const float *va, const float *ann,
			  int len, int S, int na, int dv)
{
	float m = -INFINITY, sum = 0;

	for (int j = 0; j < len; j++) {
		const float *kj = keys + (size_t)j * na;
		float e = 0;
		for (int i = 0; i < na; i++)
			e += va[i] * tanhf(wq[i] + kj[i]);
		a[j] = e;
		if (e > m)
			m = e;
	}
	for (int j = 0; j < len; j++) {
		a[j] = expf(a[j] - m);
		sum += a[j];
	}
	for (int j = len; j < S; j++)
		a[j] = 0;
	memset(ctx, 0, sizeof(float) * dv);
	for (int j = 0; j < len; j++) {
		const float *hj = ann + (size_t)j * dv;
		a[j] /= sum;
		for (int i = 0; i < dv; i++)
			ctx[i] += a[j] * hj[i];
	}
}

/*
 * da_j = dctx . ann_j, de_j = a_j (da_j - sum_k a_k da_k); with
 * t = tanh(wq + keys_j) recomputed: dva += de_j t, and
 * du = de_j va (1 - t^2) into both dwq and dkeys_j.
 */
void additive_backward_ref(float *dwq, float *dkeys, float *dva, float *dann,
			   const float *dctx, const float *a, const float *wq,
			   const float *keys, const float *va,
			   const float *ann, int len, int S, int na, int dv)
{
	float sum = 0;

	if (len <= 0)
		return;
	float da[len];
	for (int j = 0; j < len; j++) {
		const float *hj = ann + (size_t)j * dv;
		float d = 0;
		for (int i = 0; i < dv; i++)
			d += dctx[i] * hj[i];
		da[j] = d;
		sum += a[j] * d;
		if (dann)
			for (int i = 0; i < dv; i++)
				dann[(size_t)j * dv + i] += a[j] * dctx[i];
	}
	for (int j = 0; j < len; j++) {
		const float *kj = keys + (size_t)j * na;
		float de = a[j] * (da[j] - sum);
		for (int i = 0; i < na; i++) {
			float t = tanhf(wq[i] + kj[i]);
			float du = de * va[i] * (1 - t * t);
			if (dva)
				dva[i] += de * t;
			if (dwq)
				dwq[i] += du;
			if (dkeys)
				dkeys[(size_t)j * na + i] += du;
		}
	}
}
