/*
 * attention_ref.c: the reference scaled dot-product attention of one
 * (batch item, head), a query row at a time: an online softmax over the
 * keys, one at a time, with the output row as the accumulator; or, when
 * weights are asked for, the row of scores in the weights themselves.
 * Dropout multiplies each weight by its factor (drop) in the product with
 * V only: the sums and lse are those of the whole softmax.  A score of
 * -inf (the additive mask's) adds nothing; a row of them gives zeros.
 * The other weights (act, no_norm; kernels.h) go through row_act, or
 * scale the softmax's sum by exp(m) rather than divide by it.
 */
#include <math.h>
#include <string.h>

#include "kern_impl.h"

static float dot(const float *x, const float *y, int n)
{
	float s = 0;

	for (int i = 0; i < n; i++)
		s += x[i] * y[i];
	return s;
}

static void axpy(float *y, float a, const float *x, int n)
{
	for (int i = 0; i < n; i++)
		y[i] += a * x[i];
}

static void scale(float *y, float a, int n)
{
	for (int i = 0; i < n; i++)
		y[i] *= a;
}

/* Weight j's dropout factor in the row of key rk: 0 or 1 / (1 - p);
 * 1 without dropout. */
static float drop(const struct attn_args *a, uint32_t rk, int j)
{
	if (!(a->dropout > 0))
		return 1;
	return (int32_t)(attn_drop_hash(rk, j) >> 8) >= attn_drop_cut(a) ?
	       attn_drop_scale(a) : 0;
}

/* Key j's score in row t: scaled, plus the mask's entry (mr: the mask's
 * row t, or NULL). */
static float score(const struct attn_args *a, const float *q,
		   const float *k, const float *mr, int j)
{
	float s = dot(q, k + j * a->kv_rs, a->dk) * a->scale;

	return mr ? s + mr[j] : s;
}

/* Row t through the weights row w [S]: returns the log-sum-exp. */
static float row_with_weights(const struct attn_args *a, const float *q,
			      const float *k, const float *v, float *o,
			      float *w, const float *mr, int nk, uint32_t rk)
{
	float m = -INFINITY, sum = 0;

	for (int j = 0; j < nk; j++) {
		w[j] = score(a, q, k, mr, j);
		if (w[j] > m)
			m = w[j];
	}
	memset(o, 0, sizeof(float) * a->dk);
	if (m == -INFINITY) {	/* every key masked */
		memset(w, 0, sizeof(float) * a->S);
		return -INFINITY;
	}
	for (int j = 0; j < nk; j++) {
		w[j] = expf(w[j] - m);
		sum += w[j];
	}
	for (int j = nk; j < a->S; j++)
		w[j] = 0;
	float f = a->no_norm ? expf(m) : 1 / sum;
	for (int j = 0; j < nk; j++) {
		w[j] *= f;
		axpy(o, w[j] * drop(a, rk, j), v + j * a->kv_rs, a->dk);
	}
	return m + logf(sum);
}

/* Row t online: m the running maximum, l the running sum of exp(s - m). */
static float row_online(const struct attn_args *a, const float *q,
			const float *k, const float *v, float *o,
			const float *mr, int nk, uint32_t rk)
{
	float m = -INFINITY, l = 0;

	memset(o, 0, sizeof(float) * a->dk);
	for (int j = 0; j < nk; j++) {
		float s = score(a, q, k, mr, j);
		if (s == -INFINITY)
			continue;
		if (s > m) {
			float c = expf(m - s);
			l *= c;
			scale(o, c, a->dk);
			m = s;
		}
		float p = expf(s - m);
		l += p;
		axpy(o, p * drop(a, rk, j), v + j * a->kv_rs, a->dk);
	}
	if (l == 0)
		return -INFINITY;
	scale(o, a->no_norm ? expf(m) : 1 / l, a->dk);
	return m + logf(l);
}

float attn_act(int act, float s)
{
	if (s == -INFINITY)
		return 0;
	if (act == ATTN_RELU)
		return s > 0 ? s : 0;
	return 0.5f * s * (1 + erff(s * (float)M_SQRT1_2));   /* ATTN_GELU */
}

float attn_act_row(float *s, int act, int valid, int nb,
		   const struct attn_drop *d, int j0)
{
	float sum = 0;

	for (int j = 0; j < nb; j++) {
		float w = j < valid ? attn_act(act, s[j]) : 0;
		sum += w;
		if (d->on && (int32_t)(attn_drop_hash(d->rk, j0 + j) >> 8) <
			     d->cut)
			w = 0;
		s[j] = w;
	}
	return sum;
}

/* Row t with act other than the softmax: w_j = act(s_j) (into w [S] when
 * given), out = sum_j w_j drop_j v_j, both divided by sum_j w_j unless
 * no_norm. */
static void row_act(const struct attn_args *a, const float *q,
		    const float *k, const float *v, float *o, float *w,
		    const float *mr, int nk, uint32_t rk)
{
	float sum = 0;

	memset(o, 0, sizeof(float) * a->dk);
	for (int j = 0; j < nk; j++) {
		float x = attn_act(a->act, score(a, q, k, mr, j));
		sum += x;
		if (w)
			w[j] = x;
		axpy(o, x * drop(a, rk, j), v + j * a->kv_rs, a->dk);
	}
	float f = a->no_norm ? 1 : sum != 0 ? 1 / sum : 0;
	scale(o, f, a->dk);
	if (w) {
		scale(w, f, nk);
		memset(w + nk, 0, sizeof(float) * (a->S - nk));
	}
}

void attn_head_forward_ref(const struct attn_args *a, int b, int h)
{
	const float *k = a->k + b * a->kv_bs + h * a->dk;
	const float *v = a->v + b * a->kv_bs + h * a->dk;

	for (int t = 0; t < a->T; t++) {
		const float *q = a->q + b * a->q_bs + t * a->q_rs + h * a->dk;
		float *o = a->out + b * a->o_bs + t * a->o_rs + h * a->dk;
		size_t row = ((size_t)b * a->H + h) * a->T + t;
		float *w = a->weights ? a->weights + row * a->S : NULL;
		const float *mr = a->mask ? a->mask + (size_t)t * a->S : NULL;
		int nk = attn_nkeys(a, b, t);
		uint32_t rk = attn_drop_row(a, b, h, t);
		float lse;

		if (nk == 0) {
			memset(o, 0, sizeof(float) * a->dk);
			if (w)
				memset(w, 0, sizeof(float) * a->S);
			lse = -INFINITY;
		} else if (a->act != ATTN_SOFTMAX) {
			row_act(a, q, k, v, o, w, mr, nk, rk);
			lse = NAN;
		} else if (w) {
			lse = row_with_weights(a, q, k, v, o, w, mr, nk, rk);
		} else {
			lse = row_online(a, q, k, v, o, mr, nk, rk);
		}
		if (a->lse && a->act == ATTN_SOFTMAX)
			a->lse[row] = lse;
	}
}

/* The log-sum-exp of row t's scores, when the forward pass kept none. */
static float row_lse(const struct attn_args *a, const float *q,
		     const float *k, const float *mr, int nk)
{
	float m = -INFINITY, l = 0;

	for (int j = 0; j < nk; j++) {
		float s = score(a, q, k, mr, j);
		if (s == -INFINITY)
			continue;
		if (s > m) {
			l *= expf(m - s);
			m = s;
		}
		l += expf(s - m);
	}
	return m + logf(l);
}

/*
 * With p = exp(s - lse) recomputed from the scores and z = drop(j):
 *   dv_j += p z dout;  dp = z dout . v_j;  ds = p (dp - dout . out);
 *   dq += scale ds k_j;  dk_j += scale ds q
 * (dout . out = sum_j p_j dp_j, out being sum_j p_j z v_j).
 */
void attn_head_backward_ref(const struct attn_args *a, int b, int h,
			    const float *dout, float *dq, float *dk, float *dv)
{
	long ko = b * a->kv_bs + h * a->dk;
	const float *k = a->k + ko, *v = a->v + ko;

	for (int t = 0; t < a->T; t++) {
		long qo = b * a->q_bs + t * a->q_rs + h * a->dk;
		long oo = b * a->o_bs + t * a->o_rs + h * a->dk;
		size_t row = ((size_t)b * a->H + h) * a->T + t;
		const float *q = a->q + qo, *go = dout + oo;
		const float *mr = a->mask ? a->mask + (size_t)t * a->S : NULL;
		int nk = attn_nkeys(a, b, t);
		uint32_t rk = attn_drop_row(a, b, h, t);

		if (nk == 0)
			continue;
		float lse = a->lse ? a->lse[row] : row_lse(a, q, k, mr, nk);
		if (lse == -INFINITY)	/* every key masked: no gradient */
			continue;
		float D = dot(go, a->out + oo, a->dk);
		for (int j = 0; j < nk; j++) {
			long r = j * a->kv_rs;
			float s = score(a, q, k, mr, j);
			float p = expf(s - lse), z = drop(a, rk, j);
			if (dv)
				axpy(dv + ko + r, p * z, go, a->dk);
			float ds = p * (z * dot(go, v + r, a->dk) - D) * a->scale;
			if (dq)
				axpy(dq + qo, ds, k + r, a->dk);
			if (dk)
				axpy(dk + ko + r, ds, q, a->dk);
		}
	}
}
