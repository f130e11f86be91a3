/*
 * kern_ref.c: the portable scalar reference of the element-wise, row-wise,
 * GRU and LSTM kernels: plain loops over libm, the yardstick of the vector
 * versions and the path of machines without AVX2.
 */
#include <math.h>

#include "attn_step.h"
#include "kern_impl.h"

static void vexp_ref(float *y, const float *x, size_t n)
{
	for (size_t i = 0; i < n; i++)
		y[i] = expf(x[i]);
}

static void vtanh_ref(float *y, const float *x, size_t n)
{
	for (size_t i = 0; i < n; i++)
		y[i] = tanhf(x[i]);
}

/* Written so that neither branch overflows: exp of a non-positive number. */
static float sigmoidf(float x)
{
	if (x >= 0)
		return 1 / (1 + expf(-x));
	float e = expf(x);
	return e / (1 + e);
}

static void vsigmoid_ref(float *y, const float *x, size_t n)
{
	for (size_t i = 0; i < n; i++)
		y[i] = sigmoidf(x[i]);
}

static void bias_forward_ref(float *x, const float *b, int rows, int n)
{
	for (int r = 0; r < rows; r++)
		for (int i = 0; i < n; i++)
			x[(size_t)r * n + i] += b[i];
}

static void relu_forward_ref(float *y, const float *x, size_t n)
{
	for (size_t i = 0; i < n; i++)
		y[i] = x[i] > 0 ? x[i] : 0;
}

static void relu_backward_ref(float *dx, const float *dy, const float *y,
			      size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (y[i] > 0)
			dx[i] += dy[i];
}

static float row_max(const float *x, int n)
{
	float m = -INFINITY;

	for (int i = 0; i < n; i++)
		if (x[i] > m || isnan(x[i]))
			m = x[i];
	return m;
}

/* A row of -inf only (every entry masked) has no distribution: its softmax
 * is all zeros and its log-softmax all -inf. */
static void softmax_rows_ref(float *y, const float *x, int rows, int n)
{
	for (int r = 0; r < rows; r++, x += n, y += n) {
		float m = row_max(x, n), sum = 0;
		if (m == -INFINITY) {
			for (int i = 0; i < n; i++)
				y[i] = 0;
			continue;
		}
		for (int i = 0; i < n; i++) {
			y[i] = expf(x[i] - m);
			sum += y[i];
		}
		float inv = 1 / sum;
		for (int i = 0; i < n; i++)
			y[i] *= inv;
	}
}

static void log_softmax_rows_ref(float *y, const float *x, int rows, int n)
{
	for (int r = 0; r < rows; r++, x += n, y += n) {
		float m = row_max(x, n), sum = 0;
		if (m == -INFINITY) {
			for (int i = 0; i < n; i++)
				y[i] = -INFINITY;
			continue;
		}
		for (int i = 0; i < n; i++)
			sum += expf(x[i] - m);
		float lse = m + logf(sum);
		for (int i = 0; i < n; i++)
			y[i] = x[i] - lse;
	}
}

static float softmax_xent_row_ref(float *y, const float *z, int n, float a,
				  float c, float *zsum)
{
	float m = row_max(z, n), sum = 0, s = 0;

	for (int i = 0; i < n; i++)
		s += z[i];
	for (int i = 0; i < n; i++) {
		y[i] = expf(z[i] - m);
		sum += y[i];
	}
	float r = a / sum;
	for (int i = 0; i < n; i++)
		y[i] = y[i] * r - c;
	*zsum = s;
	return m + logf(sum);
}

static void softmax_backward_ref(float *dx, const float *dy, const float *y,
				 int rows, int n)
{
	for (int r = 0; r < rows; r++, dx += n, dy += n, y += n) {
		float dot = 0;
		for (int i = 0; i < n; i++)
			dot += dy[i] * y[i];
		for (int i = 0; i < n; i++)
			dx[i] += y[i] * (dy[i] - dot);
	}
}

/* Two passes (mean, then the squares about it), not E[x^2] - E[x]^2,
 * which cancels badly when the mean is large. */
static void layernorm_forward_ref(float *y, float *mean, float *rstd,
				  const float *x, const float *g,
				  const float *b, int rows, int n, float eps)
{
	for (int r = 0; r < rows; r++, x += n, y += n) {
		float m = 0, v = 0;
		for (int i = 0; i < n; i++)
			m += x[i];
		m /= n;
		for (int i = 0; i < n; i++)
			v += (x[i] - m) * (x[i] - m);
		v /= n;
		float s = 1 / sqrtf(v + eps);
		for (int i = 0; i < n; i++)
			y[i] = (x[i] - m) * s * g[i] + b[i];
		if (mean)
			mean[r] = m;
		if (rstd)
			rstd[r] = s;
	}
}

/*
 * Marian's layer norm (kernels.h): the sum of x (sq 0) or of the squares
 * of x - m (sq 1) in its lanes and order.
 */
static float marian_row_sum(const float *x, int n, float m, int sq)
{
	float l[8] = { 0 }, a[4];
	int n8 = n / 8 * 8, i;

	for (i = 0; i < n8; i++) {
		float e = x[i] - m;
		l[i % 8] += sq ? e * e : x[i];
	}
	for (int k = 0; k < 4; k++)
		a[k] = n8 ? l[k] + l[k + 4] : 0;
	if (n - i >= 4)
		for (int k = 0; k < 4; k++, i++)
			a[k] = sq ? fmaf(x[i] - m, x[i] - m, a[k]) : a[k] + x[i];
	float s = (a[0] + a[2]) + (a[1] + a[3]);
	for (; i < n; i++)
		s = sq ? fmaf(x[i] - m, x[i] - m, s) : s + x[i];
	return s;
}

static void layernorm_marian_ref(float *y, float *mean, float *rstd,
				 const float *x, const float *g,
				 const float *b, int rows, int n, float eps)
{
	float inv_n = 1.0f / (float)n;

	for (int r = 0; r < rows; r++, x += n, y += n) {
		float m = marian_row_sum(x, n, 0, 0) * inv_n;
		float rs = 1.0f / sqrtf(fmaf(marian_row_sum(x, n, m, 1), inv_n,
					     eps));
		for (int i = 0; i < n; i++)
			y[i] = fmaf(x[i] - m, g[i] * rs, b[i]);
		if (mean)
			mean[r] = m;
		if (rstd)
			rstd[r] = rs;
	}
}

/*
 * With xhat = (x - mean) * rstd and dn = dy * g:
 *   dx = rstd * (dn - mean(dn) - xhat * mean(dn * xhat)).
 */
static void layernorm_backward_dx_ref(float *dx, const float *dy,
				      const float *x, const float *g,
				      const float *mean, const float *rstd,
				      int rows, int n)
{
	for (int r = 0; r < rows; r++, dx += n, dy += n, x += n) {
		float m = mean[r], s = rstd[r], dn_mean = 0, dnx_mean = 0;
		for (int i = 0; i < n; i++) {
			float dn = dy[i] * g[i];
			dn_mean += dn;
			dnx_mean += dn * (x[i] - m) * s;
		}
		dn_mean /= n;
		dnx_mean /= n;
		for (int i = 0; i < n; i++) {
			float xhat = (x[i] - m) * s;
			dx[i] += s * (dy[i] * g[i] - dn_mean - xhat * dnx_mean);
		}
	}
}

static void gru_gates_forward_ref(float *zr, float *rh, const float *pre,
				  const float *h, int B, int n)
{
	for (int b = 0; b < B; b++) {
		const float *p = pre + (size_t)b * 3 * n;
		float *g = zr + (size_t)b * 2 * n;
		for (int i = 0; i < 2 * n; i++)
			g[i] = sigmoidf(p[i]);
		for (int i = 0; i < n; i++)
			rh[(size_t)b * n + i] = g[n + i] * h[(size_t)b * n + i];
	}
}

static void gru_state_forward_ref(float *hnew, float *hh, const float *pre,
				  const float *zr, const float *h, int B,
				  int n)
{
	for (int b = 0; b < B; b++) {
		const float *p = pre + (size_t)b * 3 * n + 2 * n;
		const float *z = zr + (size_t)b * 2 * n;
		size_t o = (size_t)b * n;
		for (int i = 0; i < n; i++) {
			hh[o + i] = tanhf(p[i]);
			hnew[o + i] = (1 - z[i]) * h[o + i] + z[i] * hh[o + i];
		}
	}
}

static void gru_state_backward_ref(float *dpre, float *dh, const float *dhnew,
				   const float *hh, const float *zr,
				   const float *h, int B, int n)
{
	for (int b = 0; b < B; b++) {
		float *dz = dpre + (size_t)b * 3 * n, *dc = dz + 2 * n;
		const float *z = zr + (size_t)b * 2 * n;
		size_t o = (size_t)b * n;
		for (int i = 0; i < n; i++) {
			float d = dhnew[o + i], c = hh[o + i];
			dz[i] += d * (c - h[o + i]) * z[i] * (1 - z[i]);
			dc[i] += d * z[i] * (1 - c * c);
			dh[o + i] += d * (1 - z[i]);
		}
	}
}

static void gru_gates_backward_ref(float *dpre, float *dh, const float *drh,
				   const float *zr, const float *h, int B,
				   int n)
{
	for (int b = 0; b < B; b++) {
		float *dr = dpre + (size_t)b * 3 * n + n;
		const float *r = zr + (size_t)b * 2 * n + n;
		size_t o = (size_t)b * n;
		for (int i = 0; i < n; i++) {
			float d = drh[o + i];
			dr[i] += d * h[o + i] * r[i] * (1 - r[i]);
			dh[o + i] += d * r[i];
		}
	}
}

/* The LSTM cell (kernels.h): gates i, f, g, o. */
static void lstm_cell_forward_ref(float *act, float *cnew, float *hnew,
				  const float *pre, const float *c, int B,
				  int n)
{
	for (int b = 0; b < B; b++) {
		const float *p = pre + (size_t)b * 4 * n;
		float *a = act + (size_t)b * 4 * n;
		size_t o = (size_t)b * n;
		for (int k = 0; k < n; k++) {
			a[k] = sigmoidf(p[k]);
			a[n + k] = sigmoidf(p[n + k]);
			a[2 * n + k] = tanhf(p[2 * n + k]);
			a[3 * n + k] = sigmoidf(p[3 * n + k]);
			cnew[o + k] = a[n + k] * c[o + k] +
				      a[k] * a[2 * n + k];
			hnew[o + k] = a[3 * n + k] * tanhf(cnew[o + k]);
		}
	}
}

static void lstm_cell_backward_ref(float *dpre, float *dc, const float *dhnew,
				   const float *dcnew, const float *act,
				   const float *c, const float *cnew, int B,
				   int n)
{
	for (int b = 0; b < B; b++) {
		const float *a = act + (size_t)b * 4 * n;
		float *d = dpre + (size_t)b * 4 * n;
		size_t o = (size_t)b * n;
		for (int k = 0; k < n; k++) {
			float i = a[k], f = a[n + k], g = a[2 * n + k];
			float og = a[3 * n + k], t = tanhf(cnew[o + k]);
			float dh = dhnew[o + k];
			/* the cell's gradient: its own, and through h */
			float dcn = (dcnew ? dcnew[o + k] : 0) +
				    dh * og * (1 - t * t);
			d[k] = dcn * g * i * (1 - i);
			d[n + k] = dcn * c[o + k] * f * (1 - f);
			d[2 * n + k] = dcn * i * (1 - g * g);
			d[3 * n + k] = dh * t * og * (1 - og);
			dc[o + k] += dcn * f;
		}
	}
}

/* The order of operations is the AVX2 version's, for the same bits. */
static void adam_update_ref(float *w, float *m, float *v, const float *g,
			    size_t n, const struct adam_args *a)
{
	for (size_t i = 0; i < n; i++) {
		float gi = g[i] * a->gscale;

		m[i] = a->b1 * m[i] + (1 - a->b1) * gi;
		v[i] = a->b2 * v[i] + (1 - a->b2) * gi * gi;
		w[i] -= a->lr * (m[i] * a->c1) / (sqrtf(v[i] * a->c2) + a->eps);
	}
}

const struct kern_ops kern_ops_ref = {
	.name = "reference",
	.gemm = NULL,
	.vexp = vexp_ref,
	.vtanh = vtanh_ref,
	.vsigmoid = vsigmoid_ref,
	.bias_forward = bias_forward_ref,
	.relu_forward = relu_forward_ref,
	.relu_backward = relu_backward_ref,
	.softmax_rows = softmax_rows_ref,
	.log_softmax_rows = log_softmax_rows_ref,
	.softmax_backward = softmax_backward_ref,
	.softmax_xent_row = softmax_xent_row_ref,
	.layernorm_forward = layernorm_forward_ref,
	.layernorm_marian = layernorm_marian_ref,
	.attn_marian_row = attn_marian_row_ref,
	.attn_marian_head = attn_marian_head_ref,
	.layernorm_backward_dx = layernorm_backward_dx_ref,
	.adam_update = adam_update_ref,
	.gru_gates_forward = gru_gates_forward_ref,
	.gru_state_forward = gru_state_forward_ref,
	.gru_state_backward = gru_state_backward_ref,
	.gru_gates_backward = gru_gates_backward_ref,
	.lstm_cell_forward = lstm_cell_forward_ref,
	.lstm_cell_backward = lstm_cell_backward_ref,
	.attn_step_row = attn_step_row_ref,
	.kv_to_f16 = kv_to_f16_ref,
	.attn_head_forward = attn_head_forward_ref,
	.attn_head_backward = attn_head_backward_ref,
	.additive_forward = additive_forward_ref,
	.additive_backward = additive_backward_ref,
};
