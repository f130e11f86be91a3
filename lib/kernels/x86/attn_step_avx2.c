/*
 * attn_step_avx2.c: the AVX2+FMA kernel of attn_step.h: a key's scores by
 * a dot product along each head's dk (the key rows prefetched a few
 * ahead), the exponentials eight at a time, and the values added into the
 * output by blocks of rows, a head's sums held in registers along a block.
 * Keys and values stored in f16 are widened by F16C as they are loaded;
 * the arithmetic is the same.
 */
#include <math.h>
#include <string.h>

#include "kernels/attn_step.h"
#include "vmath_avx2.h"

/*
 * o [dk] += p_j v_j over the block's rows j < mb in order (v_j at v + j vs),
 * each column's sum in a register along the block (64 columns at a time,
 * 8 chains of FMAs, and the rest of a head in up to 8 more), so that o is
 * read and written once a block, not once a row; every entry's sequence
 * of FMAs is the row-by-row one.
 */
#define VBLOCK 8
#define KAHEAD 4

#define INLINE static inline __attribute__((always_inline))

/* p [i, i + 8) of keys or values (f32, or f16 where f16), zeros past
 * rem. */
INLINE __m256 ldkv(const void *p, long i, long rem, int f16)
{
	const uint16_t *h = (const uint16_t *)p + i;
	uint16_t t[8] = { 0 };

	if (!f16)
		return ldr((const float *)p + i, rem);
	if (rem >= 8)
		return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)h));
	memcpy(t, h, sizeof(uint16_t) * rem);
	return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)t));
}

/* Asks for up to 8 (at most rows, none if rows <= 0) rows of d keys from
 * k + i (elements, es bytes each), ks apart. */
INLINE void prefetch_rows(const void *k, long i, long ks, int rows, int d,
			  long es)
{
	for (int r = 0; r < rows && r < 8; r++) {
		const char *kf = (const char *)k + (i + r * ks) * es;
		for (long b = 0; b < es * d; b += 64)
			_mm_prefetch(kf + b, _MM_HINT_T0);
	}
}

/* [q . k_i over dk for the 8 key rows k + i + r ks, r < 8]: eight chains
 * of FMAs side by side, then added across by a tree of hadds. */
INLINE __m256 dot8(const float *q, const void *k, long i, long ks, int dk,
		   int f16)
{
	__m256 a[8];

#pragma GCC unroll 8
	for (int r = 0; r < 8; r++)
		a[r] = _mm256_setzero_ps();
	FOR_LANES(e, dk, rem) {
		__m256 qv = ldr(q + e, rem);
#pragma GCC unroll 8
		for (int r = 0; r < 8; r++)
			a[r] = _mm256_fmadd_ps(qv, ldkv(k, i + r * ks + e, rem,
							f16), a[r]);
	}
	/* [r0 r1 r0 r1 | r0 r1 r0 r1] pair sums, then quads, then halves */
	__m256 t0 = _mm256_hadd_ps(a[0], a[1]), t1 = _mm256_hadd_ps(a[2], a[3]);
	__m256 t2 = _mm256_hadd_ps(a[4], a[5]), t3 = _mm256_hadd_ps(a[6], a[7]);
	__m256 u0 = _mm256_hadd_ps(t0, t1), u1 = _mm256_hadd_ps(t2, t3);

	return _mm256_add_ps(_mm256_permute2f128_ps(u0, u1, 0x20),
			     _mm256_permute2f128_ps(u0, u1, 0x31));
}

/* o [cols] += p_j v_j over j < mb, the cols (at most 64) in nv vectors
 * held in registers along the block, the last vector's lanes to rem. */
INLINE void add_block(float *o, const void *v, long vs, const float *p,
		      int mb, int nv, long rem, int f16)
{
	__m256 a[8];

#pragma GCC unroll 8
	for (int i = 0; i < nv; i++)
		a[i] = ldr(o + 8 * i, i == nv - 1 ? rem : 8);
	for (int j = 0; j < mb; j++) {
		__m256 pj = _mm256_set1_ps(p[j]);
#pragma GCC unroll 8
		for (int i = 0; i < nv; i++)
			a[i] = _mm256_fmadd_ps(pj, ldkv(v, j * vs + 8 * i,
					       i == nv - 1 ? rem : 8, f16),
					       a[i]);
	}
#pragma GCC unroll 8
	for (int i = 0; i < nv; i++)
		str(o + 8 * i, i == nv - 1 ? rem : 8, a[i]);
}

/* add_block with nv a constant in each call, so that its loops unroll
 * and a[] stays in registers (a head of dk 32 read o and wrote it back
 * for every key: a chain through memory, 13% of the Firefox-shaped
 * student's greedy decode) */
INLINE void add_values(float *o, const void *v, long vs, const float *p,
		       int mb, int dk, int f16)
{
	int e = 0;

	for (; e + 64 <= dk; e += 64)
		add_block(o + e, (const char *)v + e * (f16 ? 2 : 4), vs, p,
			  mb, 8, 8, f16);
	if (e == dk)
		return;
	const void *ve = (const char *)v + e * (f16 ? 2 : 4);
	int nv = (dk - e + 7) / 8;
	long rem = dk - e - 8 * (nv - 1);
	switch (nv) {
	case 1: add_block(o + e, ve, vs, p, mb, 1, rem, f16); break;
	case 2: add_block(o + e, ve, vs, p, mb, 2, rem, f16); break;
	case 3: add_block(o + e, ve, vs, p, mb, 3, rem, f16); break;
	case 4: add_block(o + e, ve, vs, p, mb, 4, rem, f16); break;
	case 5: add_block(o + e, ve, vs, p, mb, 5, rem, f16); break;
	case 6: add_block(o + e, ve, vs, p, mb, 6, rem, f16); break;
	case 7: add_block(o + e, ve, vs, p, mb, 7, rem, f16); break;
	default: add_block(o + e, ve, vs, p, mb, 8, rem, f16); break;
	}
}

INLINE void step_row(float *out, float *w, long wn, const float *q,
		     const void *k, long ks, const void *v, long vs, int n,
		     int H, int dk, float scale, int f16)
{
	float s[ATTN_STEP_HEADS][ATTN_STEP_CHUNK] __attribute__((aligned(32)));
	float mx[ATTN_STEP_HEADS], sum[ATTN_STEP_HEADS];
	int d = H * dk;
	long es = f16 ? 2 : 4;	/* bytes of an element of k */

	memset(out, 0, sizeof(float) * d);
	for (int h = 0; h < H; h++) {
		mx[h] = -INFINITY;
		sum[h] = 0;
	}
	for (int j0 = 0; j0 < n; j0 += ATTN_STEP_CHUNK) {
		int m = n - j0 < ATTN_STEP_CHUNK ? n - j0 : ATTN_STEP_CHUNK;
		/* the scores, eight keys at a time (eight independent sums,
		 * added across at the end), then the rest one by one; the
		 * rows come from memory and the hardware's prefetchers do not
		 * look a row ahead, so the rows after them are asked for */
		int j = 0;
		for (; j + 8 <= m; j += 8) {
			long kj = (j0 + j) * ks;
			prefetch_rows(k, kj + 8 * ks, ks, n - (j0 + j + 8), d,
				      es);
			for (int h = 0; h < H; h++)
				_mm256_store_ps(s[h] + j, _mm256_mul_ps(
					dot8(q + h * dk, k, kj + h * dk, ks, dk,
					     f16), _mm256_set1_ps(scale)));
		}
		for (; j < m; j++) {
			long kj = (j0 + j) * ks;
			prefetch_rows(k, kj + KAHEAD * ks, ks,
				      j0 + j + KAHEAD < n, d, es);
			for (int h = 0; h < H; h++) {
				const float *qh = q + h * dk;
				long kh = kj + h * dk;
				__m256 c = _mm256_setzero_ps();
				FOR_LANES(e, dk, rem)
					c = _mm256_fmadd_ps(ldr(qh + e, rem),
							    ldkv(k, kh + e, rem,
								 f16), c);
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
				add_values(out + h * dk, (const char *)v +
					   ((j0 + jb) * vs + h * dk) * es, vs,
					   s[h] + jb, m - jb < VBLOCK ? m - jb :
					   VBLOCK, dk, f16);
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

void attn_step_row_avx2(float *out, float *w, long wn, const float *q,
			const void *k, long ks, const void *v, long vs, int n,
			int H, int dk, float scale, int f16)
{
	if (f16)
		step_row(out, w, wn, q, k, ks, v, vs, n, H, dk, scale, 1);
	else
		step_row(out, w, wn, q, k, ks, v, vs, n, H, dk, scale, 0);
}

void kv_to_f16_avx2(uint16_t *dst, const float *src, size_t n)
{
	size_t i = 0;
	uint16_t t[8];

	for (; i + 8 <= n; i += 8)
		_mm_storeu_si128((__m128i *)(dst + i), _mm256_cvtps_ph(
			_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT));
	if (i < n) {
		_mm_storeu_si128((__m128i *)t, _mm256_cvtps_ph(
			ldr(src + i, (long)(n - i)),
			_MM_FROUND_TO_NEAREST_INT));
		memcpy(dst + i, t, sizeof(uint16_t) * (n - i));
	}
}
