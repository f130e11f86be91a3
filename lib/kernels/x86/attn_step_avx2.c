/*
 * attn_step_avx2.c: the AVX2+FMA kernel of attn_step.h: a key's scores by
 * a dot product along each head's dk, the exponentials eight at a time,
 * and the values added into the output row eight columns at a time.
 */
#include <math.h>
#include <string.h>

#include "kernels/attn_step.h"
#include "vmath_avx2.h"

void attn_step_row_avx2(float *out, float *w, long wn, const float *q,
			const float *k, long ks, const float *v, long vs, int n,
			int H, int dk, float scale)
{
	float s[ATTN_STEP_HEADS][ATTN_STEP_CHUNK] __attribute__((aligned(32)));
	float mx[ATTN_STEP_HEADS], sum[ATTN_STEP_HEADS];
	int d = H * dk;

	memset(out, 0, sizeof(float) * d);
	for (int h = 0; h < H; h++) {
		mx[h] = -INFINITY;
		sum[h] = 0;
	}
	for (int j0 = 0; j0 < n; j0 += ATTN_STEP_CHUNK) {
		int m = n - j0 < ATTN_STEP_CHUNK ? n - j0 : ATTN_STEP_CHUNK;
		/* the scores, key row by key row */
		for (int j = 0; j < m; j++) {
			const float *kj = k + (j0 + j) * ks;
			for (int h = 0; h < H; h++) {
				const float *qh = q + h * dk, *kh = kj + h * dk;
				__m256 c = _mm256_setzero_ps();
				FOR_LANES(e, dk, rem)
					c = _mm256_fmadd_ps(ldr(qh + e, rem),
							    ldr(kh + e, rem), c);
				s[h][j] = hsum256(c) * scale;
			}
		}
		/* their softmax, head by head */
		for (int h = 0; h < H; h++) {
			float *sh = s[h];
			if (w)
				memcpy(w + h * wn + j0, sh, sizeof(float) * m);
			__m256 vmx = _mm256_set1_ps(-INFINITY);
			FOR_LANES(j, m, rem)
				vmx = _mm256_max_ps(vmx, _mm256_blendv_ps(
					_mm256_set1_ps(-INFINITY),
					ldr(sh + j, rem), lanes(rem)));
			float cmx = hmax256(vmx);
			if (cmx > mx[h]) {
				float r = expf(mx[h] - cmx);
				__m256 vr = _mm256_set1_ps(r);
				sum[h] *= r;
				for (int e = h * dk; j0 > 0 && e < (h + 1) * dk;
				     e += 8) {
					long rem = (h + 1) * dk - e;
					str(out + e, rem, _mm256_mul_ps(vr,
						ldr(out + e, rem)));
				}
				mx[h] = cmx;
			}
			__m256 vsum = _mm256_setzero_ps();
			vmx = _mm256_set1_ps(mx[h]);
			FOR_LANES(j, m, rem) {
				__m256 p = _mm256_and_ps(exp256(_mm256_sub_ps(
					ldr(sh + j, rem), vmx)), lanes(rem));
				vsum = _mm256_add_ps(vsum, p);
				str(sh + j, rem, p);
			}
			sum[h] += hsum256(vsum);
		}
		/* the values, row by row */
		for (int j = 0; j < m; j++) {
			const float *vj = v + (j0 + j) * vs;
			for (int h = 0; h < H; h++) {
				__m256 p = _mm256_set1_ps(s[h][j]);
				float *o = out + h * dk;
				const float *vh = vj + h * dk;
				FOR_LANES(e, dk, rem)
					str(o + e, rem, _mm256_fmadd_ps(p,
						ldr(vh + e, rem), ldr(o + e, rem)));
			}
		}
	}
	for (int h = 0; h < H && n > 0; h++) {
		__m256 inv = _mm256_set1_ps(1 / sum[h]);
		float *o = out + h * dk;
		FOR_LANES(e, dk, rem)
			str(o + e, rem, _mm256_mul_ps(inv, ldr(o + e, rem)));
		__m256 vmx = _mm256_set1_ps(mx[h]);
		float *wh = w ? w + h * wn : NULL;
		for (int j = 0; wh && j < n; j += 8) {
			long rem = n - j;
			str(wh + j, rem, _mm256_mul_ps(inv, exp256(
				_mm256_sub_ps(ldr(wh + j, rem), vmx))));
		}
	}
}
