/* ssru.c: the SSRU layer and its step; see ssru.h. */
#include <stddef.h>
#include "kernels/kernels.h"
#include "layers.h"
#include "ssru.h"

/* c_t from the gate f, c_{t-1} and W x_t: the one expression both paths
 * use, so that a step and a sequence round alike (and their gates are
 * the kernels' vsigmoid, element by element the same anywhere in an
 * array; expf one value at a time took a fifth of the Firefox student's
 * decoding). */
static float cell(float f, float prev, float xw)
{
	return f * prev + (1.0f - f) * xw;
}

void ssru_step_forward(float *restrict y, float *restrict c,
		       const float *restrict xw, float *restrict f, int n,
		       int d)
{
	size_t i = 0, k = (size_t)n * d;
	int l;

	vsigmoid(f, f, k);
	for (; i + 8 <= k; i += 8)	/* in eights, which -O2 vectorises */
		for (l = 0; l < 8; l++) {
			float v = cell(f[i + l], c[i + l], xw[i + l]);

			c[i + l] = v;
			y[i + l] = v > 0.0f ? v : 0.0f;
		}
	for (; i < k; i++) {
		c[i] = cell(f[i], c[i], xw[i]);
		y[i] = c[i] > 0.0f ? c[i] : 0.0f;
	}
}

void ssru_forward(float *y, struct ssru_acts *a, const float *x,
		  const struct ssru_w *w, int B, int T, int d)
{
	int N = B * T, b, t, j;

	/* xw [N, d] = x W^T; f [N, d] = sigmoid(x Wf^T + bf) */
	linear_forward(a->xw, x, w->W, NULL, N, d, d);
	linear_forward(a->f, x, w->Wf, w->bf, N, d, d);
	vsigmoid(a->f, a->f, (size_t)N * d);
	for (b = 0; b < B; b++)
		for (t = 0; t < T; t++) {
			size_t r = ((size_t)b * T + t) * d;

			for (j = 0; j < d; j++) {
				float f = a->f[r + j];
				float prev = t ? a->c[r - d + j] : 0.0f;

				a->c[r + j] = cell(f, prev, a->xw[r + j]);
				y[r + j] = a->c[r + j] > 0.0f ? a->c[r + j]
					: 0.0f;
			}
		}
}

void ssru_backward(float *dx, struct ssru_w *dw, float *dxw, float *dfp,
		   const float *dy, const float *x, const struct ssru_acts *a,
		   const struct ssru_w *w, int B, int T, int d)
{
	int N = B * T, b, t, j;

	for (b = 0; b < B; b++) {
		/* g_t = dL/dc_t = dy_t relu'(c_t) + g_{t+1} f_{t+1}, backwards,
		 * kept in dxw for the pass after */
		for (t = T - 1; t >= 0; t--) {
			size_t r = ((size_t)b * T + t) * d;

			for (j = 0; j < d; j++) {
				float g = a->c[r + j] > 0.0f ? dy[r + j]
					: 0.0f;

				if (t + 1 < T)
					g += dxw[r + d + j] * a->f[r + d + j];
				dxw[r + j] = g;
			}
		}
		/* then d(W x_t) = g_t (1 - f_t) and, f_t = sigmoid(p_t),
		 * dp_t = g_t (c_{t-1} - W x_t) f_t (1 - f_t) */
		for (t = 0; t < T; t++) {
			size_t r = ((size_t)b * T + t) * d;

			for (j = 0; j < d; j++) {
				float f = a->f[r + j], g = dxw[r + j];
				float prev = t ? a->c[r - d + j] : 0.0f;

				dfp[r + j] = g * (prev - a->xw[r + j]) * f *
					(1.0f - f);
				dxw[r + j] = g * (1.0f - f);
			}
		}
	}
	linear_backward(dx, dw->W, NULL, dxw, x, w->W, N, d, d);
	linear_backward(dx, dw->Wf, dw->bf, dfp, x, w->Wf, N, d, d);
}
