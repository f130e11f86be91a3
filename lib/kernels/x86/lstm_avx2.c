/*
 * lstm_avx2.c: the AVX2 LSTM cell (kernels.h), on vectors of 8 with
 * masked tails, over the tanh and sigmoid of vmath_avx2.h; the same
 * equations as kern_ref.c's, within those functions' errors.
 */
#include "kernels/kern_impl.h"
#include "vmath_avx2.h"

void lstm_cell_forward_avx2(float *act, float *cnew, float *hnew,
			    const float *pre, const float *c, int B, int n)
{
	for (int b = 0; b < B; b++) {
		const float *p = pre + (size_t)b * 4 * n;
		float *a = act + (size_t)b * 4 * n;
		size_t o = (size_t)b * n;
		FOR_LANES(k, (long)n, m) {
			__m256 i = sigmoid256(ldr(p + k, m));
			__m256 f = sigmoid256(ldr(p + n + k, m));
			__m256 g = tanh256(ldr(p + 2 * n + k, m));
			__m256 og = sigmoid256(ldr(p + 3 * n + k, m));
			/* f c + i g: the product i g rounded first, as the
			 * reference's sum of two products is not fused */
			__m256 cn = _mm256_add_ps(_mm256_mul_ps(f,
							ldr(c + o + k, m)),
						  _mm256_mul_ps(i, g));
			str(a + k, m, i);
			str(a + n + k, m, f);
			str(a + 2 * n + k, m, g);
			str(a + 3 * n + k, m, og);
			str(cnew + o + k, m, cn);
			str(hnew + o + k, m, _mm256_mul_ps(og, tanh256(cn)));
		}
	}
}

void lstm_cell_backward_avx2(float *dpre, float *dc, const float *dhnew,
			     const float *dcnew, const float *act,
			     const float *c, const float *cnew, int B, int n)
{
	const __m256 one = _mm256_set1_ps(1.0f);
	for (int b = 0; b < B; b++) {
		const float *a = act + (size_t)b * 4 * n;
		float *d = dpre + (size_t)b * 4 * n;
		size_t o = (size_t)b * n;
		FOR_LANES(k, (long)n, m) {
			__m256 i = ldr(a + k, m), f = ldr(a + n + k, m);
			__m256 g = ldr(a + 2 * n + k, m);
			__m256 og = ldr(a + 3 * n + k, m);
			__m256 t = tanh256(ldr(cnew + o + k, m));
			__m256 dh = ldr(dhnew + o + k, m);
			__m256 dcn = dcnew ? ldr(dcnew + o + k, m) :
					     _mm256_setzero_ps();
			dcn = _mm256_fmadd_ps(_mm256_mul_ps(dh, og),
					      _mm256_fnmadd_ps(t, t, one), dcn);
			str(d + k, m, _mm256_mul_ps(_mm256_mul_ps(dcn, g),
				_mm256_mul_ps(i, _mm256_sub_ps(one, i))));
			str(d + n + k, m, _mm256_mul_ps(
				_mm256_mul_ps(dcn, ldr(c + o + k, m)),
				_mm256_mul_ps(f, _mm256_sub_ps(one, f))));
			str(d + 2 * n + k, m, _mm256_mul_ps(
				_mm256_mul_ps(dcn, i),
				_mm256_fnmadd_ps(g, g, one)));
			str(d + 3 * n + k, m, _mm256_mul_ps(
				_mm256_mul_ps(dh, t),
				_mm256_mul_ps(og, _mm256_sub_ps(one, og))));
			str(dc + o + k, m, _mm256_fmadd_ps(dcn, f,
							  ldr(dc + o + k, m)));
		}
	}
}
