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

/*
 * glibc's expf (2.27 on: sysdeps/ieee754/flt-32/e_expf.c, in libm's FMA
 * variant, read from its disassembly) on eight floats, to the bit: Marian's
 * softmax of a row whose length is not a multiple of 4 calls expf.  In
 * double: k = round(x 32 / ln 2) by adding 1.5 2^52, r = x 32 / ln 2 - k
 * (both by fma), 2^(r / 32) by a cubic, times 2^(k / 32) from a table of
 * 2^(i / 32) and the exponent; rounded once to float.  Of the lanes with
 * |x| >= 88 (libm's other path), those below -0x1.9fe368p6 give 0 and
 * those below -0x1.9d1d9ep6 2^-149 (0x1.4p-75 squared), as libm's
 * underflow cases; the overflows and NaNs go to libm's expf itself.
 */
static const double exp2_32nds[32] = {	/* 2^(i / 32), rounded */
	0x1.p+0, 0x1.059b0d3158574p+0,
	0x1.0b5586cf9890fp+0, 0x1.11301d0125b51p+0,
	0x1.172b83c7d517bp+0, 0x1.1d4873168b9aap+0,
	0x1.2387a6e756238p+0, 0x1.29e9df51fdee1p+0,
	0x1.306fe0a31b715p+0, 0x1.371a7373aa9cbp+0,
	0x1.3dea64c123422p+0, 0x1.44e086061892dp+0,
	0x1.4bfdad5362a27p+0, 0x1.5342b569d4f82p+0,
	0x1.5ab07dd485429p+0, 0x1.6247eb03a5585p+0,
	0x1.6a09e667f3bcdp+0, 0x1.71f75e8ec5f74p+0,
	0x1.7a11473eb0187p+0, 0x1.82589994cce13p+0,
	0x1.8ace5422aa0dbp+0, 0x1.93737b0cdc5e5p+0,
	0x1.9c49182a3f090p+0, 0x1.a5503b23e255dp+0,
	0x1.ae89f995ad3adp+0, 0x1.b7f76f2fb5e47p+0,
	0x1.c199bdd85529cp+0, 0x1.cb720dcef9069p+0,
	0x1.d5818dcfba487p+0, 0x1.dfc97337b9b5fp+0,
	0x1.ea4afa2a490dap+0, 0x1.f50765b6e4540p+0,
};

static inline __m128 glibc_expf4(__m128 x)
{
	const __m256d n_ln2 = _mm256_set1_pd(0x1.71547652b82fep+5),
		      shift = _mm256_set1_pd(0x1.8p+52);
	__m256d xd = _mm256_cvtps_pd(x);
	__m256d kr = _mm256_fmadd_pd(n_ln2, xd, shift);
	__m256d r = _mm256_fmsub_pd(n_ln2, xd, _mm256_sub_pd(kr, shift));
	__m256i ki = _mm256_castpd_si256(kr);
	/* 2^(k / 32): the table's 2^((k mod 32) / 32), k div 32 added to
	 * its exponent (the bits of k past 17 fall off the top) */
	__m256d t = _mm256_i64gather_pd(
		exp2_32nds, _mm256_and_si256(ki, _mm256_set1_epi64x(31)), 8);
	__m256d sc = _mm256_castsi256_pd(_mm256_add_epi64(
		_mm256_castpd_si256(t),
		_mm256_slli_epi64(_mm256_srli_epi64(ki, 5), 52)));
	__m256d z = _mm256_fmadd_pd(_mm256_set1_pd(0x1.c6af84b912394p-20), r,
				    _mm256_set1_pd(0x1.ebfce50fac4f3p-13));
	__m256d y = _mm256_fmadd_pd(r, _mm256_set1_pd(0x1.62e42ff0c52d6p-6),
				    _mm256_set1_pd(1.0));
	y = _mm256_fmadd_pd(z, _mm256_mul_pd(r, r), y);
	return _mm256_cvtpd_ps(_mm256_mul_pd(y, sc));
}

static inline __m256 glibc_expf8(__m256 x)
{
	__m256i top = _mm256_and_si256(
		_mm256_srli_epi32(_mm256_castps_si256(x), 20),
		_mm256_set1_epi32(0x7ff));
	int odd = _mm256_movemask_ps(_mm256_castsi256_ps(
		_mm256_cmpgt_epi32(top, _mm256_set1_epi32(0x42a))));
	__m256 y = _mm256_set_m128(glibc_expf4(_mm256_extractf128_ps(x, 1)),
				   glibc_expf4(_mm256_castps256_ps128(x)));

	if (odd) {
		const __m256 uf = _mm256_set1_ps(-0x1.9fe368p6f),
			     may_uf = _mm256_set1_ps(-0x1.9d1d9ep6f);

		y = _mm256_blendv_ps(y, _mm256_set1_ps(0x1p-149f),
				     _mm256_cmp_ps(x, may_uf, _CMP_LT_OQ));
		y = _mm256_blendv_ps(y, _mm256_setzero_ps(),
				     _mm256_cmp_ps(x, uf, _CMP_LT_OQ));
		odd = _mm256_movemask_ps(_mm256_cmp_ps(
			x, _mm256_set1_ps(0x1.62e42ep6f), _CMP_NLE_UQ));
	}
	if (odd) {
		float xs[8], ys[8];

		_mm256_storeu_ps(xs, x);
		_mm256_storeu_ps(ys, y);
		for (int l = 0; l < 8; l++)
			if (odd >> l & 1)
				ys[l] = expf(xs[l]);
		y = _mm256_loadu_ps(ys);
	}
	return y;
}

/*
 * marian_softmax (attn_marian.c) of eight rows of n at once, a row a lane:
 * t [n][8], row r's score j at t[8 j + r], in place.  Each lane's
 * operations are the row's: the maximum (max_ps(s, mx) is mx < s ? s :
 * mx), the exps (glibc's expf, or with n a multiple of 8 or 4 Cephes'),
 * their sums (lanes of 8 or 4 keys, then those in order; or in order),
 * the quotients.
 */
static void softmax8(float *t, int n)
{
	int lanes = n % 8 == 0 ? 8 : n % 4 == 0 ? 4 : 1;
	__m256 mx = _mm256_loadu_ps(t), sum = _mm256_setzero_ps(), acc[8];

	for (int j = 1; j < n; j++)
		mx = _mm256_max_ps(_mm256_loadu_ps(t + 8 * j), mx);
	if (lanes == 1) {
		for (int j = 0; j < n; j++) {
			__m256 e = glibc_expf8(_mm256_sub_ps(
				_mm256_loadu_ps(t + 8 * j), mx));
			_mm256_storeu_ps(t + 8 * j, e);
			sum = _mm256_add_ps(sum, e);
		}
	} else {
		for (int l = 0; l < lanes; l++)
			acc[l] = _mm256_setzero_ps();
		for (int j = 0; j < n; j += lanes)
			for (int l = 0; l < lanes; l++) {
				__m256 e = exp8(_mm256_sub_ps(
					_mm256_loadu_ps(t + 8 * (j + l)), mx));
				_mm256_storeu_ps(t + 8 * (j + l), e);
				acc[l] = _mm256_add_ps(acc[l], e);
			}
		for (int l = 0; l < lanes; l++)
			sum = _mm256_add_ps(sum, acc[l]);
	}
	for (int j = 0; j < n; j++)
		_mm256_storeu_ps(t + 8 * j, _mm256_div_ps(
			_mm256_loadu_ps(t + 8 * j), sum));
}

/* Rows r < nr (<= 8) of scores S (row r at S + r n) into t [n][8] (row r
 * in lane r, zeros past nr), and their softmax (softmax8). */
static void softmax_rows8(float *t, const float *S, int nr, int n)
{
	for (int j = 0; j < n; j++)
		for (int r = 0; r < 8; r++)
			t[8 * j + r] = r < nr ? S[r * n + j] : 0;
	if (n > 0)
		softmax8(t, n);
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

/* OpenBLAS's REDUCE_4 on the 16 lanes of four keys' scores (lo: lanes
 * 0-7, hi: 8-15): within each four lanes (a0 + a1) + (a2 + a3), then the
 * fours ((f0 + f1) + (f2 + f3)); the four sums. */
static inline __m128 reduce4(const __m256 lo[4], const __m256 hi[4])
{
	__m256 f[2];

	for (int h = 0; h < 2; h++) {
		const __m256 *x = h ? hi : lo;
		__m256 r0 = _mm256_unpacklo_ps(x[0], x[1]);
		__m256 r1 = _mm256_unpackhi_ps(x[0], x[1]);
		__m256 r2 = _mm256_unpacklo_ps(x[2], x[3]);
		__m256 r3 = _mm256_unpackhi_ps(x[2], x[3]);
		__m256 t0 = _mm256_shuffle_ps(r0, r2, _MM_SHUFFLE(1, 0, 1, 0));
		__m256 t1 = _mm256_shuffle_ps(r0, r2, _MM_SHUFFLE(3, 2, 3, 2));
		__m256 t2 = _mm256_shuffle_ps(r1, r3, _MM_SHUFFLE(1, 0, 1, 0));
		__m256 t3 = _mm256_shuffle_ps(r1, r3, _MM_SHUFFLE(3, 2, 3, 2));
		f[h] = _mm256_add_ps(_mm256_add_ps(t0, t1), _mm256_add_ps(t2, t3));
	}
	/* f[0]: fours 0 | 1, f[1]: fours 2 | 3 */
	return _mm_add_ps(_mm_add_ps(_mm256_castps256_ps128(f[0]),
				     _mm256_extractf128_ps(f[0], 1)),
			  _mm_add_ps(_mm256_castps256_ps128(f[1]),
				     _mm256_extractf128_ps(f[1], 1)));
}

/* The 16 lanes of key kj's score with q: lo (0-7), hi (8-15). */
static inline __attribute__((always_inline)) void
lanes16(__m256 *lo, __m256 *hi, const float *q, const float *kj, int dk)
{
	__m256 l = _mm256_setzero_ps(), h = l;

	/* past dk, 0 0 added (OpenBLAS's masked loads; ldr loads nothing
	 * for r <= 0) */
	for (long c = 0; c < dk; c += 16) {
		long r = dk - c;
		if (r >= 16) {
			l = _mm256_fmadd_ps(_mm256_loadu_ps(q + c),
					    _mm256_loadu_ps(kj + c), l);
			h = _mm256_fmadd_ps(_mm256_loadu_ps(q + c + 8),
					    _mm256_loadu_ps(kj + c + 8), h);
		} else {
			l = _mm256_fmadd_ps(ldr(q + c, r), ldr(kj + c, r), l);
			h = _mm256_fmadd_ps(ldr(q + c + 8, r - 8),
					    ldr(kj + c + 8, r - 8), h);
		}
	}
	*lo = l;
	*hi = h;
}

/* The lanes forms of scores_f32 (below): dk constant where inlined, so
 * that a key's 16 lanes go without a loop and stay in registers. */
static inline __attribute__((always_inline)) void
scores_lanes(float *s, const float *q, const float *k, long ks, int n,
	     int dk, float scale, int form)
{
	int j = 0;

	/* the keys of REDUCE_4, four at a time */
	for (; j + 4 <= (n & ~3); j += 4) {
		__m256 lo[4], hi[4];
#pragma GCC unroll 4
		for (int m = 0; m < 4; m++)
			lanes16(&lo[m], &hi[m], q, k + (j + m) * ks, dk);
		_mm_storeu_ps(s + j, _mm_mul_ps(reduce4(lo, hi),
						_mm_set1_ps(scale)));
	}
	for (; j < n; j++) {
		__m256 lo, hi;
		lanes16(&lo, &hi, q, k + j * ks, dk);
		float v = form == MARIAN_SCORE_PAIRS || j < (n & ~3) ?
			  pairs16(lo, hi) : hsum256(_mm256_add_ps(hi, lo));
		s[j] = v * scale;
	}
}

/* s [n] = the scores (attn_step.h's forms) of query q by the f32 keys k
 * (rows of ks), times scale. */
static void scores_f32(float *s, const float *q, const float *k, long ks,
		       int n, int dk, float scale, int form)
{
	int j = 0;

	if (form != MARIAN_SCORE_CHAIN) {
		if (dk == 32)	/* the heads of d 256 and 8 heads */
			scores_lanes(s, q, k, ks, n, 32, scale, form);
		else if (dk == 64)	/* d 512, 8 heads */
			scores_lanes(s, q, k, ks, n, 64, scale, form);
		else
			scores_lanes(s, q, k, ks, n, dk, scale, form);
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

/* nb (1 to 8) blocks of 8 columns of the context (below), rem of them
 * left from out: nb constant where inlined, so that the chains stay in
 * registers.  w_j at w[8 j] (a lane of softmax8's rows). */
static inline __attribute__((always_inline)) void
context_cols(float *out, const float *w, const float *v, long vs, int n,
	     int nb, long rem)
{
	__m256 acc[8];
	__m256i tail = mask256(rem - 8 * (nb - 1));

	for (int b = 0; b < nb; b++)
		acc[b] = _mm256_setzero_ps();
	for (int j = 0; j < n; j++) {
		const float *vj = v + j * vs;
		__m256 wj = _mm256_set1_ps(w[8 * j]);

		for (int b = 0; b < nb - 1; b++)
			acc[b] = _mm256_fmadd_ps(wj, _mm256_loadu_ps(vj + 8 * b),
						 acc[b]);
		acc[nb - 1] = _mm256_fmadd_ps(
			wj, _mm256_maskload_ps(vj + 8 * (nb - 1), tail),
			acc[nb - 1]);
	}
	for (int b = 0; b < nb; b++)
		str(out + 8 * b, rem - 8 * b, acc[b]);
}

/* out [dk] = sum over j < n of w_j v_j (w_j at w[8 j]), one fma chain a
 * column over the keys in order: the columns 64 at a time, up to eight chains side by
 * side (one alone waits on each fma's latency). */
static void context(float *out, const float *w, const float *v, long vs,
		    int n, int dk)
{
	for (int c0 = 0; c0 < dk; c0 += 64) {
		long rem = dk - c0;

		switch (rem >= 64 ? 8 : (int)(rem + 7) / 8) {
#define CONTEXT_COLS(nb) \
		case nb: \
			context_cols(out + c0, w, v + c0, vs, n, nb, rem); \
			break;
		CONTEXT_COLS(1) CONTEXT_COLS(2) CONTEXT_COLS(3) CONTEXT_COLS(4)
		CONTEXT_COLS(5) CONTEXT_COLS(6) CONTEXT_COLS(7) CONTEXT_COLS(8)
#undef CONTEXT_COLS
		}
	}
}

/* The context of rows r < nr of t (softmax_rows8) by their values
 * (v + r vr, rows of vs) into out + r os; their weights, with w, at w +
 * r ws. */
static void contexts8(float *out, long os, float *w, long ws, const float *t,
		      int nr, const float *v, long vr, long vs, int n, int dk)
{
	for (int r = 0; r < nr; r++) {
		context(out + r * os, t + r, v + r * vr, vs, n, dk);
		for (int j = 0; w && j < n; j++)
			w[r * ws + j] = t[8 * j + r];
	}
}

/* s: ATTN_MARIAN_SCRATCH(n) floats: eight rows' scores, then t. */
void attn_marian_row_avx2(float *out, float *w, long wn, const float *q,
			  const void *k, long ks, const void *v, long vs,
			  int n, int H, int dk, float scale, int f16, int form,
			  float *s)
{
	float *t = s + 8 * (size_t)n;

	if (f16) {
		attn_marian_row_ref(out, w, wn, q, k, ks, v, vs, n, H, dk,
				    scale, f16, form, s);
		return;
	}
	for (int h0 = 0; h0 < H; h0 += 8) {
		int nr = H - h0 < 8 ? H - h0 : 8;

		for (int r = 0; r < nr; r++)
			scores_f32(s + r * n, q + (h0 + r) * dk,
				   (const float *)k + (h0 + r) * dk, ks, n, dk,
				   scale, form);
		softmax_rows8(t, s, nr, n);
		contexts8(out + h0 * dk, dk, w ? w + h0 * wn : NULL, wn, t,
			  nr, (const float *)v + h0 * dk, dk, vs, n, dk);
	}
}

/* s [n] = the scores (one fma chain each) of query q by the keys
 * transposed, kt [dk, np]: 32 keys at a time, four chains side by side. */
static void scores_kt(float *s, const float *q, const float *kt, int np,
		      int n, int dk, float scale)
{
	const __m256 sc = _mm256_set1_ps(scale);

	for (int j = 0; j < n; j += 32) {
		__m256 a[4] = { _mm256_setzero_ps(), _mm256_setzero_ps(),
				_mm256_setzero_ps(), _mm256_setzero_ps() };
		for (int c = 0; c < dk; c++) {
			const float *kc = kt + c * np + j;
			__m256 qc = _mm256_set1_ps(q[c]);
#pragma GCC unroll 4
			for (int b = 0; b < 4; b++)
				a[b] = _mm256_fmadd_ps(
					qc, _mm256_loadu_ps(kc + 8 * b), a[b]);
		}
		for (int b = 0; b < 4 && n - j > 8 * b; b++)
			str(s + j + 8 * b, n - j - 8 * b, _mm256_mul_ps(a[b], sc));
	}
}

/*
 * attn_marian_head (attn_step.h), eight rows at a time: with small, each
 * row's scores as attn_marian_row's in its form; else (one fma chain a
 * score) the keys transposed once, kt [dk, np] (np = n rounded up to 32,
 * zeros past n), so that each row's scores go a key a lane, 32 at a
 * time, with whole loads.  s: ATTN_MARIAN_SCRATCH(n) floats, then kt.
 */
void attn_marian_head_avx2(float *out, long os, float *w, long ws,
			   const float *q, long qs, const float *k, long ks,
			   const float *v, long vs, int rows, int n, int dk,
			   float scale, int small, int nq, float *s)
{
	int np = (n + 31) / 32 * 32;
	float *t = s + 8 * (size_t)n, *kt = s + ATTN_MARIAN_SCRATCH(n);

	for (int c = 0; !small && c < dk; c++) {
		for (int j = 0; j < n; j++)
			kt[c * np + j] = k[j * ks + c];
		for (int j = n; j < np; j++)
			kt[c * np + j] = 0;
	}
	for (int t0 = 0; t0 < rows; t0 += 8) {
		int nr = rows - t0 < 8 ? rows - t0 : 8;

		for (int r = 0; r < nr; r++) {
			const float *qt = q + (t0 + r) * qs;
			float *sr = s + r * n;

			if (small)
				scores_f32(sr, qt, k, ks, n, dk, scale,
					   t0 + r < (nq & ~3) ?
					   MARIAN_SCORE_PAIRS :
					   MARIAN_SCORE_LANES);
			else
				scores_kt(sr, qt, kt, np, n, dk, scale);
		}
		softmax_rows8(t, s, nr, n);
		contexts8(out + t0 * os, os, w ? w + t0 * ws : NULL, ws, t, nr,
			  v, 0, vs, n, dk);
	}
}
