/*
 * kern_rows_avx2.c: the AVX2 row-wise and GRU kernels: softmax, layer
 * norm, bias, ReLU and the GRU gate arithmetic, on vectors of 8 with masked
 * tails (FOR_LANES), over the exp, tanh and sigmoid of vmath_avx2.h.
 */
#include <math.h>

#include "kernels/kern_impl.h"
#include "vmath_avx2.h"

void bias_forward_avx2(float *x, const float *b, int rows, int n)
{
	for (int r = 0; r < rows; r++, x += n)
		FOR_LANES(i, n, m)
			str(x + i, m, _mm256_add_ps(ldr(x + i, m), ldr(b + i, m)));
}

void relu_forward_avx2(float *y, const float *x, size_t n)
{
	FOR_LANES(i, (long)n, m)
		str(y + i, m, _mm256_max_ps(ldr(x + i, m), _mm256_setzero_ps()));
}

void relu_backward_avx2(float *dx, const float *dy, const float *y, size_t n)
{
	FOR_LANES(i, (long)n, m) {
		__m256 pos = _mm256_cmp_ps(ldr(y + i, m), _mm256_setzero_ps(),
					   _CMP_GT_OQ);
		str(dx + i, m, _mm256_add_ps(ldr(dx + i, m),
					    _mm256_and_ps(pos, ldr(dy + i, m))));
	}
}

/* Multiplies and adds apart, never fused, as the reference: the same bits. */
void adam_update_avx2(float *w, float *m, float *v, const float *g, size_t n,
		      const struct adam_args *a)
{
	__m256 lr = _mm256_set1_ps(a->lr), eps = _mm256_set1_ps(a->eps);
	__m256 b1 = _mm256_set1_ps(a->b1), b2 = _mm256_set1_ps(a->b2);
	__m256 nb1 = _mm256_set1_ps(1 - a->b1), nb2 = _mm256_set1_ps(1 - a->b2);
	__m256 c1 = _mm256_set1_ps(a->c1), c2 = _mm256_set1_ps(a->c2);
	__m256 gs = _mm256_set1_ps(a->gscale);

	FOR_LANES(i, (long)n, r) {
		__m256 gi = _mm256_mul_ps(ldr(g + i, r), gs);
		__m256 mi = _mm256_add_ps(_mm256_mul_ps(b1, ldr(m + i, r)),
					  _mm256_mul_ps(nb1, gi));
		__m256 vi = _mm256_add_ps(_mm256_mul_ps(b2, ldr(v + i, r)),
					  _mm256_mul_ps(_mm256_mul_ps(nb2, gi),
							gi));
		__m256 den = _mm256_add_ps(_mm256_sqrt_ps(_mm256_mul_ps(vi, c2)),
					   eps);
		__m256 step = _mm256_div_ps(_mm256_mul_ps(lr,
							  _mm256_mul_ps(mi, c1)),
					    den);

		str(m + i, r, mi);
		str(v + i, r, vi);
		str(w + i, r, _mm256_sub_ps(ldr(w + i, r), step));
	}
}

/* The maximum of a row; NaN if it holds one (as the reference).  Two
 * running maxima (max is exact in any order), a mask only for the last
 * partial vector: a decoder step takes this over every vocabulary row. */
static float row_max(const float *x, long n)
{
	__m256 m0 = _mm256_set1_ps(-INFINITY), m1 = m0;
	__m256 b0 = _mm256_setzero_ps(), b1 = b0;
	long i = 0;

	for (; i + 16 <= n; i += 16) {
		__m256 v0 = _mm256_loadu_ps(x + i), v1 = _mm256_loadu_ps(x + i + 8);
		m0 = _mm256_max_ps(m0, v0);
		m1 = _mm256_max_ps(m1, v1);
		b0 = _mm256_or_ps(b0, _mm256_cmp_ps(v0, v0, _CMP_UNORD_Q));
		b1 = _mm256_or_ps(b1, _mm256_cmp_ps(v1, v1, _CMP_UNORD_Q));
	}
	for (long m = n - i; i < n; i += 8, m = n - i) {
		__m256 v = _mm256_blendv_ps(_mm256_set1_ps(-INFINITY),
					    ldr(x + i, m), lanes(m));
		m0 = _mm256_max_ps(m0, v);
		b0 = _mm256_or_ps(b0, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
	}
	return _mm256_movemask_ps(_mm256_or_ps(b0, b1)) ? NAN
	       : hmax256(_mm256_max_ps(m0, m1));
}

/* y = exp(x - mx) over a row; returns the sum (added in the order it
 * always was: the tail's mask only where the row ends). */
static float exp_row(float *y, const float *x, long n, float mx)
{
	__m256 s = _mm256_setzero_ps(), vm = _mm256_set1_ps(mx);
	long i = 0;

	for (; i + 8 <= n; i += 8) {
		__m256 e = exp256(_mm256_sub_ps(_mm256_loadu_ps(x + i), vm));
		if (y)
			_mm256_storeu_ps(y + i, e);
		s = _mm256_add_ps(s, e);
	}
	if (i < n) {
		long m = n - i;
		__m256 e = exp256(_mm256_sub_ps(ldr(x + i, m), vm));
		e = _mm256_and_ps(e, lanes(m));
		if (y)
			str(y + i, m, e);
		s = _mm256_add_ps(s, e);
	}
	return hsum256(s);
}

static void scale_row(float *y, long n, float a)
{
	__m256 va = _mm256_set1_ps(a);
	FOR_LANES(i, n, m)
		str(y + i, m, _mm256_mul_ps(ldr(y + i, m), va));
}

void softmax_rows_avx2(float *y, const float *x, int rows, int n)
{
	for (int r = 0; r < rows; r++, x += n, y += n) {
		float mx = row_max(x, n);
		if (mx == -INFINITY) {  /* every entry masked */
			FOR_LANES(i, (long)n, m)
				str(y + i, m, _mm256_setzero_ps());
			continue;
		}
		scale_row(y, n, 1 / exp_row(y, x, n, mx));
	}
}

void log_softmax_rows_avx2(float *y, const float *x, int rows, int n)
{
	for (int r = 0; r < rows; r++, x += n, y += n) {
		float mx = row_max(x, n);
		if (mx == -INFINITY) {
			FOR_LANES(i, (long)n, m)
				str(y + i, m, _mm256_set1_ps(-INFINITY));
			continue;
		}
		__m256 v = _mm256_set1_ps(mx + logf(exp_row(NULL, x, n, mx)));
		FOR_LANES(i, (long)n, m)
			str(y + i, m, _mm256_sub_ps(ldr(x + i, m), v));
	}
}

/* Three passes: the maximum and sum, the exponentials, the scaling. */
float softmax_xent_row_avx2(float *y, const float *z, int n, float a,
			    float c, float *zsum)
{
	__m256 mx = _mm256_set1_ps(-INFINITY), bad = _mm256_setzero_ps();
	__m256 s = _mm256_setzero_ps();

	FOR_LANES(i, (long)n, m) {
		__m256 v = ldr(z + i, m);	/* zero past the end */

		s = _mm256_add_ps(s, v);
		mx = _mm256_max_ps(mx, _mm256_blendv_ps(_mm256_set1_ps(-INFINITY),
							v, lanes(m)));
		bad = _mm256_or_ps(bad, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
	}
	*zsum = hsum256(s);
	float top = _mm256_movemask_ps(bad) ? NAN : hmax256(mx);
	float sum = exp_row(y, z, n, top);
	__m256 r = _mm256_set1_ps(a / sum), vc = _mm256_set1_ps(c);

	FOR_LANES(i, (long)n, m)
		str(y + i, m, _mm256_fmsub_ps(ldr(y + i, m), r, vc));
	return top + logf(sum);
}

static float dot_row(const float *x, const float *y, long n)
{
	__m256 s = _mm256_setzero_ps();
	FOR_LANES(i, n, m)
		s = _mm256_fmadd_ps(ldr(x + i, m), ldr(y + i, m), s);
	return hsum256(s);
}

void softmax_backward_avx2(float *dx, const float *dy, const float *y,
			   int rows, int n)
{
	for (int r = 0; r < rows; r++, dx += n, dy += n, y += n) {
		__m256 d = _mm256_set1_ps(dot_row(dy, y, n));
		FOR_LANES(i, (long)n, m) {
			__m256 g = _mm256_sub_ps(ldr(dy + i, m), d);
			str(dx + i, m, _mm256_fmadd_ps(ldr(y + i, m), g,
						      ldr(dx + i, m)));
		}
	}
}

void layernorm_forward_avx2(float *y, float *mean, float *rstd,
			    const float *x, const float *g, const float *b,
			    int rows, int n, float eps)
{
	for (int r = 0; r < rows; r++, x += n, y += n) {
		__m256 s = _mm256_setzero_ps();
		FOR_LANES(i, (long)n, m)
			s = _mm256_add_ps(s, ldr(x + i, m));
		float mu = hsum256(s) / n;
		__m256 vm = _mm256_set1_ps(mu), v = _mm256_setzero_ps();
		FOR_LANES(i, (long)n, m) {
			__m256 d = _mm256_and_ps(_mm256_sub_ps(ldr(x + i, m), vm),
						 lanes(m));
			v = _mm256_fmadd_ps(d, d, v);
		}
		float rs = 1 / sqrtf(hsum256(v) / n + eps);
		__m256 vr = _mm256_set1_ps(rs);
		FOR_LANES(i, (long)n, m) {
			__m256 xh = _mm256_mul_ps(_mm256_sub_ps(ldr(x + i, m), vm), vr);
			str(y + i, m, _mm256_fmadd_ps(xh, ldr(g + i, m), ldr(b + i, m)));
		}
		if (mean)
			mean[r] = mu;
		if (rstd)
			rstd[r] = rs;
	}
}

/* Marian's layer norm (kernels.h): the sum of x (sq 0) or of the squares
 * of x - m (sq 1) in its lanes and order. */
static float marian_row_sum(const float *x, int n, float m, int sq)
{
	__m256 vm = _mm256_set1_ps(m), l8 = _mm256_setzero_ps();
	__m128 a = _mm_setzero_ps();
	int n8 = n / 8 * 8, i;

	for (i = 0; i < n8; i += 8) {
		__m256 v = _mm256_loadu_ps(x + i);
		if (sq) {
			v = _mm256_sub_ps(v, vm);
			v = _mm256_mul_ps(v, v);
		}
		l8 = _mm256_add_ps(l8, v);
	}
	if (n8)
		a = _mm_add_ps(_mm256_castps256_ps128(l8),
			       _mm256_extractf128_ps(l8, 1));
	if (n - i >= 4) {
		__m128 v = _mm_loadu_ps(x + i);
		if (sq) {
			v = _mm_sub_ps(v, _mm256_castps256_ps128(vm));
			a = _mm_fmadd_ps(v, v, a);
		} else {
			a = _mm_add_ps(a, v);
		}
		i += 4;
	}
	a = _mm_add_ps(a, _mm_movehl_ps(a, a));	/* a0 + a2, a1 + a3 */
	float s = _mm_cvtss_f32(_mm_add_ss(a, _mm_movehdup_ps(a)));
	for (; i < n; i++)
		s = sq ? fmaf(x[i] - m, x[i] - m, s) : s + x[i];
	return s;
}

void layernorm_marian_avx2(float *y, float *mean, float *rstd,
			   const float *x, const float *g, const float *b,
			   int rows, int n, float eps)
{
	float inv_n = 1.0f / (float)n;

	for (int r = 0; r < rows; r++, x += n, y += n) {
		float m = marian_row_sum(x, n, 0, 0) * inv_n;
		float rs = 1.0f / sqrtf(fmaf(marian_row_sum(x, n, m, 1), inv_n,
					     eps));
		__m256 vm = _mm256_set1_ps(m), vr = _mm256_set1_ps(rs);
		FOR_LANES(j, (long)n, k) {
			__m256 e = _mm256_sub_ps(ldr(x + j, k), vm);
			__m256 gr = _mm256_mul_ps(ldr(g + j, k), vr);
			str(y + j, k, _mm256_fmadd_ps(e, gr, ldr(b + j, k)));
		}
		if (mean)
			mean[r] = m;
		if (rstd)
			rstd[r] = rs;
	}
}

void layernorm_backward_dx_avx2(float *dx, const float *dy, const float *x,
				const float *g, const float *mean,
				const float *rstd, int rows, int n)
{
	for (int r = 0; r < rows; r++, dx += n, dy += n, x += n) {
		__m256 vm = _mm256_set1_ps(mean[r]), vs = _mm256_set1_ps(rstd[r]);
		__m256 s1 = _mm256_setzero_ps(), s2 = _mm256_setzero_ps();
		FOR_LANES(i, (long)n, m) {
			__m256 dn = _mm256_mul_ps(ldr(dy + i, m), ldr(g + i, m));
			__m256 xh = _mm256_mul_ps(_mm256_sub_ps(ldr(x + i, m), vm), vs);
			s1 = _mm256_add_ps(s1, dn);
			s2 = _mm256_fmadd_ps(dn, xh, s2);
		}
		__m256 m1 = _mm256_set1_ps(hsum256(s1) / n);
		__m256 m2 = _mm256_set1_ps(hsum256(s2) / n);
		FOR_LANES(i, (long)n, m) {
			__m256 dn = _mm256_mul_ps(ldr(dy + i, m), ldr(g + i, m));
			__m256 xh = _mm256_mul_ps(_mm256_sub_ps(ldr(x + i, m), vm), vs);
			__m256 t = _mm256_fnmadd_ps(xh, m2, _mm256_sub_ps(dn, m1));
			str(dx + i, m, _mm256_fmadd_ps(vs, t, ldr(dx + i, m)));
		}
	}
}

/* ---- GRU (kernels.h) --------------------------------------------------- */

void gru_gates_forward_avx2(float *zr, float *rh, const float *pre,
			    const float *h, int B, int n)
{
	for (int b = 0; b < B; b++) {
		const float *p = pre + (size_t)b * 3 * n, *hb = h + (size_t)b * n;
		float *z = zr + (size_t)b * 2 * n, *o = rh + (size_t)b * n;
		FOR_LANES(i, 2L * n, m)
			str(z + i, m, sigmoid256(ldr(p + i, m)));
		FOR_LANES(i, (long)n, m)
			str(o + i, m, _mm256_mul_ps(ldr(z + n + i, m), ldr(hb + i, m)));
	}
}

void gru_state_forward_avx2(float *hnew, float *hh, const float *pre,
			    const float *zr, const float *h, int B, int n)
{
	for (int b = 0; b < B; b++) {
		const float *p = pre + (size_t)b * 3 * n + 2 * n;
		const float *z = zr + (size_t)b * 2 * n, *hb = h + (size_t)b * n;
		float *c = hh + (size_t)b * n, *o = hnew + (size_t)b * n;
		FOR_LANES(i, (long)n, m) {
			__m256 t = tanh256(ldr(p + i, m)), hv = ldr(hb + i, m);
			str(c + i, m, t);
			/* (1 - z) h + z t = h + z (t - h) */
			str(o + i, m, _mm256_fmadd_ps(ldr(z + i, m),
						     _mm256_sub_ps(t, hv), hv));
		}
	}
}

void gru_state_backward_avx2(float *dpre, float *dh, const float *dhnew,
			     const float *hh, const float *zr, const float *h,
			     int B, int n)
{
	const __m256 one = _mm256_set1_ps(1.0f);
	for (int b = 0; b < B; b++) {
		float *dz = dpre + (size_t)b * 3 * n, *dc = dz + 2 * n;
		const float *z = zr + (size_t)b * 2 * n;
		size_t o = (size_t)b * n;
		FOR_LANES(i, (long)n, m) {
			__m256 d = ldr(dhnew + o + i, m), c = ldr(hh + o + i, m);
			__m256 zv = ldr(z + i, m), hv = ldr(h + o + i, m);
			__m256 dsz = _mm256_mul_ps(zv, _mm256_sub_ps(one, zv));
			str(dz + i, m, _mm256_fmadd_ps(_mm256_mul_ps(d, _mm256_sub_ps(c, hv)),
						      dsz, ldr(dz + i, m)));
			__m256 dt = _mm256_fnmadd_ps(c, c, one);
			str(dc + i, m, _mm256_fmadd_ps(_mm256_mul_ps(d, zv), dt,
						      ldr(dc + i, m)));
			str(dh + o + i, m, _mm256_fmadd_ps(d, _mm256_sub_ps(one, zv),
							  ldr(dh + o + i, m)));
		}
	}
}

void gru_gates_backward_avx2(float *dpre, float *dh, const float *drh,
			     const float *zr, const float *h, int B, int n)
{
	const __m256 one = _mm256_set1_ps(1.0f);
	for (int b = 0; b < B; b++) {
		float *dr = dpre + (size_t)b * 3 * n + n;
		const float *r = zr + (size_t)b * 2 * n + n;
		size_t o = (size_t)b * n;
		FOR_LANES(i, (long)n, m) {
			__m256 d = ldr(drh + o + i, m), rv = ldr(r + i, m);
			__m256 dsr = _mm256_mul_ps(rv, _mm256_sub_ps(one, rv));
			str(dr + i, m, _mm256_fmadd_ps(_mm256_mul_ps(d, ldr(h + o + i, m)),
						      dsr, ldr(dr + i, m)));
			str(dh + o + i, m, _mm256_fmadd_ps(d, rv, ldr(dh + o + i, m)));
		}
	}
}
