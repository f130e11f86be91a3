/*
 * attn_step_avx512.c: the AVX-512 kernel of attn_step.h, the AVX2 one's
 * method (attn_step_avx2.c) on sixteen lanes: a key's score by a dot
 * product along its head's dk (sixteen columns an instruction, eight keys
 * side by side), the exponentials sixteen at a time, and the values added
 * into the output by blocks of rows with a head's sums in registers.  Every
 * partial vector is a masked load or store, so a head of any dk reads no
 * byte past its keys and values.  Keys and values in f16 are widened by
 * vcvtph2ps as they are loaded.
 */
#include <immintrin.h>
#include <math.h>
#include <string.h>

#include "kernels/attn_step.h"
#include "vmath_avx512.h"

#define VBLOCK 8
#define KAHEAD 4

#define INLINE static inline __attribute__((always_inline))

/* The first rem lanes (all sixteen when rem >= 16). */
INLINE __mmask16 lanes16(long rem)
{
	return rem >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << rem) - 1);
}

INLINE __m512 ld(const float *p, long rem)
{
	return rem >= 16 ? _mm512_loadu_ps(p) :
			   _mm512_maskz_loadu_ps(lanes16(rem), p);
}

INLINE void st(float *p, long rem, __m512 x)
{
	if (rem >= 16)
		_mm512_storeu_ps(p, x);
	else
		_mm512_mask_storeu_ps(p, lanes16(rem), x);
}

/* p [i, i + 16) of keys or values (f32, or f16 where f16), zeros past
 * rem. */
INLINE __m512 ldkv(const void *p, long i, long rem, int f16)
{
	const uint16_t *h = (const uint16_t *)p + i;

	if (!f16)
		return ld((const float *)p + i, rem);
	return _mm512_cvtph_ps(rem >= 16 ?
		_mm256_loadu_si256((const __m256i *)h) :
		_mm256_maskz_loadu_epi16(lanes16(rem), h));
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

/* The sum of a's sixteen lanes as eight: its halves added. */
INLINE __m256 halves(__m512 a)
{
	return _mm256_add_ps(_mm512_castps512_ps256(a),
			     _mm512_extractf32x8_ps(a, 1));
}

/* [q . k_i over dk for the 8 key rows k + i + r ks, r < 8]: eight chains
 * of FMAs side by side, each folded to eight lanes, then added across by
 * a tree of hadds. */
INLINE __m256 dot8(const float *q, const void *k, long i, long ks, int dk,
		   int f16)
{
	__m512 a[8];

#pragma GCC unroll 8
	for (int r = 0; r < 8; r++)
		a[r] = _mm512_setzero_ps();
	for (long e = 0; e < dk; e += 16) {
		long rem = dk - e;
		__m512 qv = ld(q + e, rem);
#pragma GCC unroll 8
		for (int r = 0; r < 8; r++)
			a[r] = _mm512_fmadd_ps(qv, ldkv(k, i + r * ks + e, rem,
							f16), a[r]);
	}
	__m256 t0 = _mm256_hadd_ps(halves(a[0]), halves(a[1]));
	__m256 t1 = _mm256_hadd_ps(halves(a[2]), halves(a[3]));
	__m256 t2 = _mm256_hadd_ps(halves(a[4]), halves(a[5]));
	__m256 t3 = _mm256_hadd_ps(halves(a[6]), halves(a[7]));
	__m256 u0 = _mm256_hadd_ps(t0, t1), u1 = _mm256_hadd_ps(t2, t3);

	return _mm256_add_ps(_mm256_permute2f128_ps(u0, u1, 0x20),
			     _mm256_permute2f128_ps(u0, u1, 0x31));
}

/*
 * o [w] += p_j v_j over the block's rows j < mb in order (v_j at v + j
 * vs), w <= 128 columns held in registers along the block, so that o is
 * read and written once a block, not once a row; every entry's sequence
 * of FMAs is the row-by-row one.
 */
INLINE void add_block(float *o, const void *v, long vs, const float *p,
		      int mb, int w, int f16)
{
	__m512 a[8];

#pragma GCC unroll 8
	for (int i = 0; i < 8; i++)
		a[i] = 16 * i < w ? ld(o + 16 * i, w - 16 * i) :
				    _mm512_setzero_ps();
	for (int j = 0; j < mb; j++) {
		__m512 pj = _mm512_set1_ps(p[j]);
		long vj = j * vs;
#pragma GCC unroll 8
		for (int i = 0; i < 8; i++)
			if (16 * i < w)
				a[i] = _mm512_fmadd_ps(pj, ldkv(v, vj + 16 * i,
						       w - 16 * i, f16), a[i]);
	}
#pragma GCC unroll 8
	for (int i = 0; i < 8; i++)
		if (16 * i < w)
			st(o + 16 * i, w - 16 * i, a[i]);
}

INLINE void add_values(float *o, const void *v, long vs, const float *p,
		       int mb, int dk, int f16)
{
	long es = f16 ? 2 : 4;

	for (int e = 0; e < dk; e += 128) {
		const void *ve = (const char *)v + e * es;
		int w = dk - e < 128 ? dk - e : 128;

		/* the usual heads with their widths known to the compiler */
		if (w == 128)
			add_block(o + e, ve, vs, p, mb, 128, f16);
		else if (w == 64)
			add_block(o + e, ve, vs, p, mb, 64, f16);
		else
			add_block(o + e, ve, vs, p, mb, w, f16);
	}
}

INLINE void step_row(float *out, float *w, long wn, const float *q,
		     const void *k, long ks, const void *v, long vs, int n,
		     int H, int dk, float scale, int f16)
{
	float s[ATTN_STEP_HEADS][ATTN_STEP_CHUNK] __attribute__((aligned(64)));
	float mx[ATTN_STEP_HEADS], sum[ATTN_STEP_HEADS];
	int d = H * dk;
	long es = f16 ? 2 : 4;	/* bytes of an element of k */
	const __m512 ninf = _mm512_set1_ps(-INFINITY);

	memset(out, 0, sizeof(float) * d);
	for (int h = 0; h < H; h++) {
		mx[h] = -INFINITY;
		sum[h] = 0;
	}
	for (int j0 = 0; j0 < n; j0 += ATTN_STEP_CHUNK) {
		int m = n - j0 < ATTN_STEP_CHUNK ? n - j0 : ATTN_STEP_CHUNK;
		/* the scores, eight keys at a time, then the rest one by one;
		 * the rows after them asked for (attn_step_avx2.c says why) */
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
				__m512 c = _mm512_setzero_ps();
				for (long e = 0; e < dk; e += 16)
					c = _mm512_fmadd_ps(ld(qh + e, dk - e),
							    ldkv(k, kh + e,
								 dk - e, f16),
							    c);
				s[h][j] = _mm512_reduce_add_ps(c) * scale;
			}
		}
		/* their softmax, head by head */
		for (int h = 0; h < H; h++) {
			float *sh = s[h];
			if (w)
				memcpy(w + h * wn + j0, sh, sizeof(float) * m);
			__m512 vmx = ninf;
			for (int i = 0; i < m; i += 16)
				vmx = _mm512_max_ps(vmx, _mm512_mask_loadu_ps(
					ninf, lanes16(m - i), sh + i));
			float cmx = _mm512_reduce_max_ps(vmx);
			if (cmx > mx[h]) {
				float r = expf(mx[h] - cmx);
				__m512 vr = _mm512_set1_ps(r);
				sum[h] *= r;
				for (int e = h * dk; j0 > 0 && e < (h + 1) * dk;
				     e += 16) {
					long rem = (h + 1) * dk - e;
					st(out + e, rem, _mm512_mul_ps(vr,
						ld(out + e, rem)));
				}
				mx[h] = cmx;
			}
			__m512 vsum = _mm512_setzero_ps();
			vmx = _mm512_set1_ps(mx[h]);
			for (int i = 0; i < m; i += 16) {
				__mmask16 lm = lanes16(m - i);
				__m512 p = _mm512_maskz_mov_ps(lm, exp512(
					_mm512_sub_ps(ld(sh + i, m - i), vmx)));
				vsum = _mm512_add_ps(vsum, p);
				st(sh + i, m - i, p);
			}
			sum[h] += _mm512_reduce_add_ps(vsum);
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
		__m512 inv = _mm512_set1_ps(1 / sum[h]);
		float *o = out + h * dk;
		for (long e = 0; e < dk; e += 16)
			st(o + e, dk - e, _mm512_mul_ps(inv, ld(o + e,
								dk - e)));
		__m512 vmx = _mm512_set1_ps(mx[h]);
		float *wh = w ? w + h * wn : NULL;
		for (int j = 0; wh && j < n; j += 16) {
			long rem = n - j;
			st(wh + j, rem, _mm512_mul_ps(inv, exp512(
				_mm512_sub_ps(ld(wh + j, rem), vmx))));
		}
	}
}

void attn_step_row_avx512(float *out, float *w, long wn, const float *q,
			  const void *k, long ks, const void *v, long vs,
			  int n, int H, int dk, float scale, int f16)
{
	if (f16)
		step_row(out, w, wn, q, k, ks, v, vs, n, H, dk, scale, 1);
	else
		step_row(out, w, wn, q, k, ks, v, vs, n, H, dk, scale, 0);
}
