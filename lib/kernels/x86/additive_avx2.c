/*
 * additive_avx2.c: Bahdanau's additive attention for one sentence with
 * AVX2: the scores over vectors of na with tanh256, the context and the
 * gradients over vectors of dv and na; the softmax over the S scores is
 * scalar (S is small).  Formulas: additive_ref.c.
 */
#include <math.h>
#include <string.h>

#include "kernels/kern_impl.h"
#include "vmath_avx2.h"

/* e = va . tanh(wq + k) over na */
static float score(const float *wq, const float *k, const float *va, int na)
{
	__m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
	int i = 0;
	for (; i + 16 <= na; i += 16) {
		__m256 t0 = tanh256(_mm256_add_ps(_mm256_loadu_ps(wq + i),
						  _mm256_loadu_ps(k + i)));
		__m256 t1 = tanh256(_mm256_add_ps(_mm256_loadu_ps(wq + i + 8),
						  _mm256_loadu_ps(k + i + 8)));
		s0 = _mm256_fmadd_ps(_mm256_loadu_ps(va + i), t0, s0);
		s1 = _mm256_fmadd_ps(_mm256_loadu_ps(va + i + 8), t1, s1);
	}
	for (; i < na; i += 8) {
		long m = na - i;
		__m256 t = tanh256(_mm256_add_ps(ldr(wq + i, m), ldr(k + i, m)));
		s0 = _mm256_fmadd_ps(ldr(va + i, m), t, s0);
	}
	return hsum256(_mm256_add_ps(s0, s1));
}

void additive_forward_avx2(float *ctx, float *a, const float *wq,
			   const float *keys, const float *va,
			   const float *ann, int len, int S, int na, int dv)
{
	float m = -INFINITY, sum = 0;

	for (int j = 0; j < len; j++) {
		a[j] = score(wq, keys + (size_t)j * na, va, na);
		if (a[j] > m)
			m = a[j];
	}
	for (int j = 0; j < len; j++) {
		a[j] = expf(a[j] - m);
		sum += a[j];
	}
	for (int j = 0; j < len; j++)
		a[j] /= sum;
	for (int j = len; j < S; j++)
		a[j] = 0;
	/* ctx (in L1) gains four rows of ann at a time, each read along
	 * its length: sequential streams the prefetcher follows. */
	memset(ctx, 0, sizeof(float) * dv);
	for (int j = 0; j < len; j += 4) {
		const float *h[4];
		__m256 w[4];
		for (int u = 0; u < 4; u++) {
			int ju = j + u < len ? j + u : j;
			h[u] = ann + (size_t)ju * dv;
			w[u] = _mm256_set1_ps(j + u < len ? a[j + u] : 0);
		}
		FOR_LANES(i, dv, m) {
			__m256 c = ldr(ctx + i, m);
			c = _mm256_fmadd_ps(w[0], ldr(h[0] + i, m), c);
			c = _mm256_fmadd_ps(w[1], ldr(h[1] + i, m), c);
			c = _mm256_fmadd_ps(w[2], ldr(h[2] + i, m), c);
			c = _mm256_fmadd_ps(w[3], ldr(h[3] + i, m), c);
			str(ctx + i, m, c);
		}
	}
}

void additive_backward_avx2(float *dwq, float *dkeys, float *dva, float *dann,
			    const float *dctx, const float *a, const float *wq,
			    const float *keys, const float *va,
			    const float *ann, int len, int S, int na, int dv)
{
	float sum = 0;
	const __m256 one = _mm256_set1_ps(1.0f);

	if (len <= 0)
		return;
	float da[len];
	for (int j = 0; j < len; j++) {
		const float *h = ann + (size_t)j * dv;
		float *dh = dann ? dann + (size_t)j * dv : NULL;
		__m256 s = _mm256_setzero_ps(), aj = _mm256_set1_ps(a[j]);
		FOR_LANES(i, dv, m) {
			__m256 g = ldr(dctx + i, m);
			s = _mm256_fmadd_ps(g, ldr(h + i, m), s);
			if (dh)
				str(dh + i, m, _mm256_fmadd_ps(aj, g, ldr(dh + i, m)));
		}
		da[j] = hsum256(s);
		sum += a[j] * da[j];
	}
	for (int j = 0; j < len; j++) {
		const float *k = keys + (size_t)j * na;
		float *dk = dkeys ? dkeys + (size_t)j * na : NULL;
		__m256 de = _mm256_set1_ps(a[j] * (da[j] - sum));
		FOR_LANES(i, na, m) {
			__m256 t = tanh256(_mm256_add_ps(ldr(wq + i, m), ldr(k + i, m)));
			__m256 du = _mm256_mul_ps(_mm256_mul_ps(de, ldr(va + i, m)),
						  _mm256_fnmadd_ps(t, t, one));
			if (dva)
				str(dva + i, m, _mm256_fmadd_ps(de, t, ldr(dva + i, m)));
			if (dwq)
				str(dwq + i, m, _mm256_add_ps(ldr(dwq + i, m), du));
			if (dk)
				str(dk + i, m, _mm256_add_ps(ldr(dk + i, m), du));
		}
	}
}
