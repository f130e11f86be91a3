/*
 * attn_step_avx2.c: the AVX2+FMA kernel of attn_step.h: a key's scores by
 * a dot product along each head's dk (the key rows prefetched a few
 * ahead), the exponentials eight at a time, and the values added into the
 * output by blocks of rows, a head's sums held in registers along a block.
 */
#include <math.h>
#include <string.h>

#include "kernels/attn_step.h"
#include "vmath_avx2.h"

/*
 * o [dk] += p_j v_j over the block's rows j < mb in order (v_j at v + j vs),
 * each column's sum in a register along the block where 64 columns remain
 * (8 chains of FMAs), so that o is read and written once a block, not once
 * a row; every entry's sequence of FMAs is the row-by-row one.
 */
#define VBLOCK 8
#define KAHEAD 4
static inline void add_values(float *o, const float *v, long vs,
			      const float *p, int mb, int dk)
{
	int e = 0;

	for (; e + 64 <= dk; e += 64) {
		__m256 a[8];
#pragma GCC unroll 8
		for (int i = 0; i < 8; i++)
			a[i] = _mm256_loadu_ps(o + e + 8 * i);
		for (int j = 0; j < mb; j++) {
			__m256 pj = _mm256_set1_ps(p[j]);
			const float *vj = v + j * vs + e;
#pragma GCC unroll 8
			for (int i = 0; i < 8; i++)
				a[i] = _mm256_fmadd_ps(pj, _mm256_loadu_ps(vj +
						       8 * i), a[i]);
		}
#pragma GCC unroll 8
		for (int i = 0; i < 8; i++)
			_mm256_storeu_ps(o + e + 8 * i, a[i]);
	}
	for (int j = 0; e < dk && j < mb; j++) {
		__m256 pj = _mm256_set1_ps(p[j]);
		for (long c = e, rem = dk - c; c < dk; c += 8, rem = dk - c)
			str(o + c, rem, _mm256_fmadd_ps(pj, ldr(v + j * vs + c,
					rem), ldr(o + c, rem)));
	}
}

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
		/* the scores, key row by key row; the rows come from memory
		 * and the hardware's prefetchers do not look a row ahead, so
		 * the row KAHEAD on is asked for now */
		for (int j = 0; j < m; j++) {
			const float *kj = k + (j0 + j) * ks;
			if (j0 + j + KAHEAD < n) {
				const char *kf = (const char *)(kj + KAHEAD *
								ks);
				for (long b = 0; b < (long)sizeof(float) * d;
				     b += 64)
					_mm_prefetch(kf + b, _MM_HINT_T0);
			}
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
		/* the values, VBLOCK rows at a time, their head by head */
		for (int jb = 0; jb < m; jb += VBLOCK)
			for (int h = 0; h < H; h++)
				add_values(out + h * dk, v + (j0 + jb) * vs +
					   h * dk, vs, s[h] + jb, m - jb < VBLOCK ?
					   m - jb : VBLOCK, dk);
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
