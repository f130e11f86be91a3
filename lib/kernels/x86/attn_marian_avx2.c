/*
 * attn_marian_avx2.c: attn_marian_row (attn_step.h) on AVX2 and FMA, the
 * same bits as attn_marian.c's portable row: a score's chain of fmas over
 * dk in order, eight keys at a time (one chain a lane), or its 16 lanes
 * two registers of 8 and their sum in the form's tree; Marian's softmax
 * with its Cephes exp eight at a time; the context's chains over the keys
 * in order, eight columns at a time.  Keys and values in f16 go by the
 * scalar loops (compiled here with FMA: the same chains).
 */
#include <immintrin.h>
#include <math.h>
#include <string.h>

#include "base/f16.h"
#include "kernels/attn_step.h"
#include "kernels/kern_impl.h"
#include "vmath_avx2.h"

/* marian_exp (attn_marian.c) of eight values. */
static inline __m256 exp8(__m256 x)
{
	const __m256 one = _mm256_set1_ps(1.0f);

	x = _mm256_min_ps(x, _mm256_set1_ps(88.3762626647949f));
	x = _mm256_max_ps(x, _mm256_set1_ps(-88.3762626647949f));
	__m256 fx = _mm256_floor_ps(_mm256_fmadd_ps(
		x, _mm256_set1_ps(1.44269504088896341f), _mm256_set1_ps(0.5f)));
	x = _mm256_fnmadd_ps(fx, _mm256_set1_ps(0.693359375f), x);
	x = _mm256_fnmadd_ps(fx, _mm256_set1_ps(-2.12194440e-4f), x);
	__m256 z = _mm256_mul_ps(x, x);
	__m256 y = _mm256_fmadd_ps(_mm256_set1_ps(1.9875691500E-4f), x,
				   _mm256_set1_ps(1.3981999507E-3f));
	y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(8.3334519073E-3f));
	y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(4.1665795894E-2f));
	y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(1.6666665459E-1f));
	y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(5.0000001201E-1f));
	y = _mm256_add_ps(_mm256_fmadd_ps(y, z, x), one);
	__m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvttps_epi32(fx),
						       _mm256_set1_epi32(0x7f)),
				      23);
	return _mm256_mul_ps(y, _mm256_castsi256_ps(e));
}

/* marian_softmax (attn_marian.c): the lengths in lanes by exp8. */
static void softmax(float *s, int n)
{
	int lanes = n % 8 == 0 ? 8 : n % 4 == 0 ? 4 : 1;
	float acc[8], mx = s[0], sum = 0;

	if (lanes == 1) {
		marian_softmax(s, n);
		return;
	}
	for (int j = 1; j < n; j++)
		mx = mx < s[j] ? s[j] : mx;
	__m256 vm = _mm256_set1_ps(mx), a8 = _mm256_setzero_ps();
	__m128 a4 = _mm_setzero_ps();
	FOR_LANES(j, (long)n, r) {
		__m256 e = exp8(_mm256_sub_ps(ldr(s + j, r), vm));
		str(s + j, r, e);
		if (lanes == 8) {
			a8 = _mm256_add_ps(a8, e);
		} else {
			a4 = _mm_add_ps(a4, _mm256_castps256_ps128(e));
			if (r > 4)
				a4 = _mm_add_ps(a4, _mm256_extractf128_ps(e, 1));
		}
	}
	if (lanes == 8)
		_mm256_storeu_ps(acc, a8);
	else
		_mm_storeu_ps(acc, a4);
	for (int l = 0; l < lanes; l++)
		sum += acc[l];
	__m256 vs = _mm256_set1_ps(sum);
	FOR_LANES(j, (long)n, r)
		str(s + j, r, _mm256_div_ps(ldr(s + j, r), vs));
}

/* A score's 16 lanes, lo (0-7) and hi (8-15), added as adjacent pairs
 * (marian_lanes16 with pair 1). */
static inline float pairs16(__m256 lo, __m256 hi)
{
	/* p = a_2i + a_2i+1 as [p0 p1 p4 p5 | p2 p3 p6 p7]; q = p_2i +
	 * p_2i+1 as [q0 q2 . . | q1 q3 . .]; then q0 + q1, q2 + q3 */
	__m256 p = _mm256_hadd_ps(lo, hi);
	__m256 q = _mm256_hadd_ps(p, p);
	__m128 r = _mm_add_ps(_mm256_castps256_ps128(q),
			      _mm256_extractf128_ps(q, 1));
	return _mm_cvtss_f32(_mm_add_ss(r, _mm_movehdup_ps(r)));
}

/* s [n] = the scores (attn_step.h's forms) of query q by the f32 keys k
 * (rows of ks), times scale. */
static void scores_f32(float *s, const float *q, const float *k, long ks,
		       int n, int dk, float scale, int form)
{
	int j = 0;

	if (form != MARIAN_SCORE_CHAIN) {
		for (; j < n; j++) {
			const float *kj = k + j * ks;
			__m256 lo = _mm256_setzero_ps(), hi = lo;
			for (long c = 0; c < dk; c += 16) {
				long r = dk - c;
				/* past dk, 0 0 added (OpenBLAS's masked
				 * loads; ldr loads nothing for r <= 0) */
				lo = _mm256_fmadd_ps(ldr(q + c, r), ldr(kj + c, r),
						     lo);
				hi = _mm256_fmadd_ps(ldr(q + c + 8, r - 8),
						     ldr(kj + c + 8, r - 8), hi);
			}
			float v = form == MARIAN_SCORE_PAIRS || j < (n & ~3) ?
				  pairs16(lo, hi) :
				  hsum256(_mm256_add_ps(hi, lo));
			s[j] = v * scale;
		}
		return;
	}
	const __m256i idx = _mm256_mullo_epi32(
		_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
		_mm256_set1_epi32((int)ks));
	for (; j + 8 <= n && ks <= (1 << 27); j += 8) {
		const float *kj = k + j * ks;
		__m256 acc = _mm256_setzero_ps();
		for (int c = 0; c < dk; c++)
			acc = _mm256_fmadd_ps(_mm256_set1_ps(q[c]),
					      _mm256_i32gather_ps(kj + c, idx, 4),
					      acc);
		_mm256_storeu_ps(s + j, _mm256_mul_ps(acc,
						      _mm256_set1_ps(scale)));
	}
	for (; j < n; j++) {
		float acc = 0;
		for (int c = 0; c < dk; c++)
			acc = fmaf(q[c], k[j * ks + c], acc);
		s[j] = acc * scale;
	}
}

void attn_marian_row_avx2(float *out, float *w, long wn, const float *q,
			  const void *k, long ks, const void *v, long vs,
			  int n, int H, int dk, float scale, int f16, int form,
			  float *s)
{
	if (f16) {
		attn_marian_row_ref(out, w, wn, q, k, ks, v, vs, n, H, dk,
				    scale, f16, form, s);
		return;
	}
	for (int h = 0; h < H; h++) {
		const float *vh = (const float *)v + h * dk;
		float *oh = out + h * dk;

		scores_f32(s, q + h * dk, (const float *)k + h * dk, ks, n, dk,
			   scale, form);
		if (n > 0)
			softmax(s, n);
		FOR_LANES(c, (long)dk, r) {
			__m256 acc = _mm256_setzero_ps();
			for (int j = 0; j < n; j++)
				acc = _mm256_fmadd_ps(_mm256_set1_ps(s[j]),
						      ldr(vh + j * vs + c, r),
						      acc);
			str(oh + c, r, acc);
		}
		if (w)
			memcpy(w + h * wn, s, sizeof(float) * n);
	}
}
