/*
 * attention_avx512.c: the pieces of the fused attention's blocks
 * (kern_impl.h, struct attn_blocks) with 512-bit vectors: the products 6
 * query rows by 32 keys or 32 columns, 12 accumulators, half the loads
 * and broadcasts per multiply-add of the AVX2 pieces; the backward's rank
 * updates of dk and dv, transposed, 8 columns by 32 keys; the exp and
 * gradient passes of a row 16 lanes at a time.  The rest of the blocks
 * is attention_avx2.c's.  Heads of at most 32 rows and keys take a
 * whole-head path of this file's own (below) instead.
 */
#include <immintrin.h>
#include <math.h>

#include "kernels/kern_impl.h"

#define QR ATTN_QR
#define KB ATTN_KB

/* s's columns j .. j + 16 n (n 1 or 2 vectors) from kt's at k */
static inline __attribute__((always_inline)) void
scores_cols_512(float s[QR][KB], const float *const q[QR], const float *k,
		long sp, int j, int dk, __m512 vs, int n)
{
	__m512 c[QR][2];
#pragma GCC unroll 6
	for (int r = 0; r < QR; r++)
		c[r][0] = c[r][1] = _mm512_setzero_ps();
	for (int d = 0; d < dk; d++, k += sp) {
		__m512 b0 = _mm512_loadu_ps(k);
		__m512 b1 = n > 1 ? _mm512_loadu_ps(k + 16) : b0;
#pragma GCC unroll 6
		for (int r = 0; r < QR; r++) {
			__m512 a = _mm512_set1_ps(q[r][d]);
			c[r][0] = _mm512_fmadd_ps(a, b0, c[r][0]);
			if (n > 1)
				c[r][1] = _mm512_fmadd_ps(a, b1, c[r][1]);
		}
	}
#pragma GCC unroll 6
	for (int r = 0; r < QR; r++) {
		_mm512_storeu_ps(&s[r][j], _mm512_mul_ps(vs, c[r][0]));
		if (n > 1)
			_mm512_storeu_ps(&s[r][j + 16], _mm512_mul_ps(vs, c[r][1]));
	}
}

/* 32 keys at a time, the last 16 alone when no more are left. */
static void scores_512(float s[QR][KB], const float *const q[QR],
		       const float *kt, long sp, int j0, int nb, int dk,
		       float scale)
{
	__m512 vs = _mm512_set1_ps(scale);
	for (int j = 0; j < nb; j += 32) {
		if (nb - j > 16)
			scores_cols_512(s, q, kt + j0 + j, sp, j, dk, vs, 2);
		else
			scores_cols_512(s, q, kt + j0 + j, sp, j, dk, vs, 1);
	}
}

/* o's columns 0 .. w (w <= 32; whole vectors when w is 32) += p v, or
 * = p v when first */
static inline void pv_cols_512(float *o, long dp, float p[QR][KB],
			       const float *v, long vs, int nk, int w,
			       int first)
{
	__mmask16 m0 = w >= 16 ? 0xffff : (__mmask16)((1u << w) - 1);
	__mmask16 m1 = w >= 32 ? 0xffff :
		       w <= 16 ? 0 : (__mmask16)((1u << (w - 16)) - 1);
	__m512 c[QR][2];
#pragma GCC unroll 6
	for (int r = 0; r < QR; r++) {
		c[r][0] = first ? _mm512_setzero_ps() : _mm512_loadu_ps(o + r * dp);
		c[r][1] = first ? _mm512_setzero_ps() :
			  _mm512_loadu_ps(o + r * dp + 16);
	}
	for (int j = 0; j < nk; j++, v += vs) {
		__m512 b0, b1;
		if (w == 32) {
			b0 = _mm512_loadu_ps(v);
			b1 = _mm512_loadu_ps(v + 16);
		} else {
			b0 = _mm512_maskz_loadu_ps(m0, v);
			b1 = _mm512_maskz_loadu_ps(m1, v + 16);
		}
#pragma GCC unroll 6
		for (int r = 0; r < QR; r++) {
			__m512 a = _mm512_set1_ps(p[r][j]);
			c[r][0] = _mm512_fmadd_ps(a, b0, c[r][0]);
			c[r][1] = _mm512_fmadd_ps(a, b1, c[r][1]);
		}
	}
#pragma GCC unroll 6
	for (int r = 0; r < QR; r++) {
		_mm512_storeu_ps(o + r * dp, c[r][0]);
		_mm512_storeu_ps(o + r * dp + 16, c[r][1]);
	}
}

static void pv_512(float *o, long dp, float p[QR][KB], const float *v,
		   long vs, int nk, int dk, int first)
{
	for (int d = 0; d < dk; d += 32) {
		if (dk - d >= 32)
			pv_cols_512(o + d, dp, p, v + d, vs, nk, 32, first);
		else
			pv_cols_512(o + d, dp, p, v + d, vs, nk, dk - d, first);
	}
}

/*
 * e^x for x <= 88 as exp256 (vmath_avx2.h) computes it, the scaling by
 * 2^n one vscalefps, which is right down to the subnormals; NaN stays
 * NaN, -inf gives 0.
 */
static inline __m512 exp512(__m512 x)
{
	const __m512 log2e = _mm512_set1_ps(1.44269504088896341f);
	const __m512 ln2_hi = _mm512_set1_ps(0.693359375f);
	const __m512 ln2_lo = _mm512_set1_ps(-2.12194440e-4f);

	x = _mm512_max_ps(_mm512_set1_ps(-104.0f), x);
	__m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, log2e),
					_MM_FROUND_TO_NEAREST_INT |
					_MM_FROUND_NO_EXC);
	__m512 r = _mm512_fnmadd_ps(n, ln2_hi, x);
	r = _mm512_fnmadd_ps(n, ln2_lo, r);
	__m512 p = _mm512_set1_ps(1.9875691500e-4f);
	p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3981999507e-3f));
	p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
	p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
	p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
	p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
	p = _mm512_fmadd_ps(p, _mm512_mul_ps(r, r), r);
	return _mm512_scalef_ps(_mm512_add_ps(p, _mm512_set1_ps(1.0f)), n);
}

/* The lanes of keys j .. j + 15 that the row of dropout key rk keeps
 * (cut1: attn_drop_cut - 1): attn_drop_hash, 16 lanes. */
static inline __mmask16 keep16(__m512i rk, int j, __m512i cut1)
{
	__m512i x = _mm512_add_epi32(_mm512_set1_epi32(j),
		_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12,
				  13, 14, 15));
	x = _mm512_xor_si512(rk, _mm512_mullo_epi32(x,
			     _mm512_set1_epi32((int)ATTN_DROP_GOLD)));
	x = _mm512_xor_si512(x, _mm512_srli_epi32(x, 16));
	x = _mm512_mullo_epi32(x, _mm512_set1_epi32((int)ATTN_DROP_M1));
	x = _mm512_xor_si512(x, _mm512_srli_epi32(x, 15));
	x = _mm512_mullo_epi32(x, _mm512_set1_epi32((int)ATTN_DROP_M2));
	x = _mm512_xor_si512(x, _mm512_srli_epi32(x, 16));
	return _mm512_cmpgt_epi32_mask(_mm512_srli_epi32(x, 8), cut1);
}

static float exp_row_512(float *s, float m, int valid, int nb,
			 const struct attn_drop *d, int j0)
{
	__m512 vm = _mm512_set1_ps(m), sum = _mm512_setzero_ps();
	__m512i rk = _mm512_set1_epi32((int)d->rk);
	__m512i cut1 = _mm512_set1_epi32(d->cut - 1);
	for (int j = 0; j < nb; j += 16) {
		__m512 e = exp512(_mm512_sub_ps(_mm512_loadu_ps(s + j), vm));
		if (valid - j < 16)
			e = _mm512_maskz_mov_ps(valid - j > 0 ? (__mmask16)
						((1u << (valid - j)) - 1) : 0, e);
		sum = _mm512_add_ps(sum, e);
		if (d->on)
			e = _mm512_maskz_mov_ps(keep16(rk, j0 + j, cut1), e);
		_mm512_storeu_ps(s + j, e);
	}
	return _mm512_reduce_add_ps(sum);
}

/* dt's rows d .. d + nd (dims, nd <= 8), columns j .. j + 16 nv (keys,
 * nv 1 or 2 vectors) += sum over r of src[r][d + i] c[r][j ..]. */
static inline __attribute__((always_inline)) void
rank_tile_512(float *dt, long sp, float c[][KB], const float *const src[],
	      int nr, int j, int d, int nd, int nv)
{
	__m512 acc[8][2];
#pragma GCC unroll 8
	for (int i = 0; i < nd; i++) {
		acc[i][0] = _mm512_loadu_ps(dt + (d + i) * sp + j);
		acc[i][1] = nv > 1 ? _mm512_loadu_ps(dt + (d + i) * sp + j + 16) :
			    acc[i][0];
	}
	for (int r = 0; r < nr; r++) {
		__m512 b0 = _mm512_loadu_ps(&c[r][j]);
		__m512 b1 = nv > 1 ? _mm512_loadu_ps(&c[r][j + 16]) : b0;
		const float *x = src[r] + d;
#pragma GCC unroll 8
		for (int i = 0; i < nd; i++) {
			__m512 a = _mm512_set1_ps(x[i]);
			acc[i][0] = _mm512_fmadd_ps(a, b0, acc[i][0]);
			if (nv > 1)
				acc[i][1] = _mm512_fmadd_ps(a, b1, acc[i][1]);
		}
	}
#pragma GCC unroll 8
	for (int i = 0; i < nd; i++) {
		_mm512_storeu_ps(dt + (d + i) * sp + j, acc[i][0]);
		if (nv > 1)
			_mm512_storeu_ps(dt + (d + i) * sp + j + 16, acc[i][1]);
	}
}

/* rank_tile_512 with nv constant: 8 dims at a time, then the rest by
 * 4, 2, 1. */
static inline __attribute__((always_inline)) void
rank_cols_512(float *dt, long sp, float c[][KB], const float *const src[],
	      int nr, int j, int dk, int nv)
{
	int d = 0;
	for (; d + 8 <= dk; d += 8)
		rank_tile_512(dt, sp, c, src, nr, j, d, 8, nv);
	if (d + 4 <= dk) {
		rank_tile_512(dt, sp, c, src, nr, j, d, 4, nv);
		d += 4;
	}
	if (d + 2 <= dk) {
		rank_tile_512(dt, sp, c, src, nr, j, d, 2, nv);
		d += 2;
	}
	if (d < dk)
		rank_tile_512(dt, sp, c, src, nr, j, d, 1, nv);
}

/* 32 keys at a time, the last 16 alone when no more are left. */
static void rank_512(float *dt, long sp, float c[][KB],
		     const float *const src[], int nr, int nb, int dk)
{
	for (int j = 0; j < nb; j += 32) {
		if (nb - j > 16)
			rank_cols_512(dt, sp, c, src, nr, j, dk, 2);
		else
			rank_cols_512(dt, sp, c, src, nr, j, dk, 1);
	}
}

static void grad_row_512(float *p, float *ds, int valid, int nb,
			 const struct attn_drop *d, int j0, float lse, float D,
			 float scale, float zs)
{
	__m512 vl = _mm512_set1_ps(lse), vd = _mm512_set1_ps(D);
	__m512 sc = _mm512_set1_ps(scale), vz = _mm512_set1_ps(zs);
	__m512i rk = _mm512_set1_epi32((int)d->rk);
	__m512i cut1 = _mm512_set1_epi32(d->cut - 1);
	for (int j = 0; j < nb; j += 16) {
		__m512 e = exp512(_mm512_sub_ps(_mm512_loadu_ps(p + j), vl));
		__m512 dp = _mm512_loadu_ps(ds + j);
		if (valid - j < 16)
			e = _mm512_maskz_mov_ps(valid - j > 0 ? (__mmask16)
						((1u << (valid - j)) - 1) : 0, e);
		if (d->on) {
			__m512 z = _mm512_maskz_mov_ps(keep16(rk, j0 + j, cut1),
						       vz);
			dp = _mm512_mul_ps(dp, z);
			_mm512_storeu_ps(p + j, _mm512_mul_ps(e, z));
		} else {
			_mm512_storeu_ps(p + j, e);
		}
		_mm512_storeu_ps(ds + j, _mm512_mul_ps(_mm512_mul_ps(e,
				 _mm512_sub_ps(dp, vd)), sc));
	}
}

static const struct attn_blocks blocks_avx512 = {
	scores_512, pv_512, exp_row_512, rank_512, grad_row_512
};

/*
 * A head of at most 32 query rows, 32 keys and 64 columns (T = S = 16 or
 * 32 in training), whole: the blocks' overheads (the online softmax's
 * bookkeeping, rows padded to 6, the backward's transpositions of dk and
 * dv, calls per piece) are most of its time.  K (and V) are transposed
 * to [64][32]; a row's scores are NV registers (NV = 1 for up to 16
 * keys, 2 for 32), 8 rows side by side, the rows of Q (or dout)
 * broadcast in place; the softmax and its gradient are done in those
 * registers; the products with the keys or the rows as the inner
 * dimension go 8 rows by 32 columns, each row written once.  The rows
 * past T repeat row 0, their scores masked.
 */
#define SMALL 32
#define SMALL_DK 64

struct small_head {
	int nr, smax, nk[SMALL];        /* nr: T rounded up to 8 */
	__mmask16 dm[4];                /* the columns below dk, by 16 */
	float kt[SMALL_DK][SMALL] __attribute__((aligned(64)));
	float p[SMALL][SMALL] __attribute__((aligned(64)));
};

static void small_init(struct small_head *w, const struct attn_args *a,
		       int b)
{
	w->nr = (a->T + 7) / 8 * 8;
	w->smax = 0;
	for (int t = 0; t < w->nr; t++) {
		w->nk[t] = t < a->T ? attn_nkeys(a, b, t) : 0;
		w->smax = w->nk[t] > w->smax ? w->nk[t] : w->smax;
	}
	for (int u = 0; u < 4; u++) {
		int c = a->dk - 16 * u;
		w->dm[u] = c >= 16 ? 0xffff : c <= 0 ? 0 :
			   (__mmask16)((1u << c) - 1);
	}
}

/* x[r] = row t0 + r of the T at x0 (stride xs); the rows past T row 0
 * again, their scores masked. */
static inline void small_rows(const float *x[8], const float *x0, long xs,
			      int t0, int T)
{
	for (int r = 0; r < 8; r++)
		x[r] = x0 + (t0 + r < T ? t0 + r : 0) * xs;
}

/* xt = rows 0 .. smax-1 of x (stride xs) transposed, 16 nv columns; the
 * columns past smax are copies of the first (finite where x is; their
 * scores are masked). */
static void small_transpose(float xt[][SMALL], const struct small_head *w,
			    const float *x, long xs, int dk, int nv)
{
	const float *rows[SMALL];
	for (int j = 0; j < 16 * nv; j++)
		rows[j] = x + (j < w->smax ? j : 0) * xs;
	int d = 0;
	for (; d + 8 <= dk; d += 8)
		for (int j = 0; j < 16 * nv; j += 8)
			gemm_t8_avx2(rows + j, d, xt[d] + j, SMALL);
	for (; d < dk; d++)
		for (int j = 0; j < 16 * nv; j++)
			xt[d][j] = rows[j][d];
}

/* s[r][v] = x[r] . xt over dk columns, keys 16 v .., r < 8. */
static inline __attribute__((always_inline)) void
small_scores(__m512 s[8][2], const float *const x[8], float xt[][SMALL],
	     int dk, int nv)
{
#pragma GCC unroll 8
	for (int r = 0; r < 8; r++)
		s[r][0] = s[r][1] = _mm512_setzero_ps();
	for (int d = 0; d < dk; d++) {
		__m512 k0 = _mm512_load_ps(xt[d]);
		__m512 k1 = nv > 1 ? _mm512_load_ps(xt[d] + 16) : k0;
#pragma GCC unroll 8
		for (int r = 0; r < 8; r++) {
			__m512 q = _mm512_set1_ps(x[r][d]);
			s[r][0] = _mm512_fmadd_ps(q, k0, s[r][0]);
			if (nv > 1)
				s[r][1] = _mm512_fmadd_ps(q, k1, s[r][1]);
		}
	}
}

/* The lanes of keys 16 v .. of the first n. */
static inline __mmask16 small_valid(int n, int v)
{
	n -= 16 * v;
	return n >= 16 ? 0xffff : n <= 0 ? 0 : (__mmask16)((1u << n) - 1);
}

/* o[r], r < 8, = sum over i < ni of c[r rs + i is] y[i] (y rows stride
 * ys, 32 columns masked by m0, m1): rs SMALL, is 1 for P V and dS K
 * (rows of P or dS), rs 1, is SMALL for their transposes' products. */
static inline __attribute__((always_inline)) void
small_prod(__m512 o[8][2], const float *c, int rs, int is, const float *y,
	   long ys, int ni, __mmask16 m0, __mmask16 m1)
{
#pragma GCC unroll 8
	for (int r = 0; r < 8; r++)
		o[r][0] = o[r][1] = _mm512_setzero_ps();
	for (int i = 0; i < ni; i++, c += is, y += ys) {
		__m512 b0 = _mm512_maskz_loadu_ps(m0, y);
		__m512 b1 = _mm512_maskz_loadu_ps(m1, y + 16);
#pragma GCC unroll 8
		for (int r = 0; r < 8; r++) {
			__m512 x = _mm512_set1_ps(c[r * rs]);
			o[r][0] = _mm512_fmadd_ps(x, b0, o[r][0]);
			o[r][1] = _mm512_fmadd_ps(x, b1, o[r][1]);
		}
	}
}

/* Rows r < min(8, n) of x (stride xs, 32 columns masked by m0, m1) =
 * f[r] o[r], or += o[r] when f is NULL. */
static inline __attribute__((always_inline)) void
small_store(float *x, long xs, int n, __m512 o[8][2], const float *f,
	    __mmask16 m0, __mmask16 m1)
{
#pragma GCC unroll 8
	for (int r = 0; r < 8; r++, x += xs) {
		if (r >= n)
			break;
		if (f) {
			__m512 v = _mm512_set1_ps(f[r]);
			o[r][0] = _mm512_mul_ps(v, o[r][0]);
			o[r][1] = _mm512_mul_ps(v, o[r][1]);
		} else {
			o[r][0] = _mm512_add_ps(o[r][0], _mm512_maskz_loadu_ps(m0, x));
			o[r][1] = _mm512_add_ps(o[r][1],
						_mm512_maskz_loadu_ps(m1, x + 16));
		}
		_mm512_mask_storeu_ps(x, m0, o[r][0]);
		_mm512_mask_storeu_ps(x + 16, m1, o[r][1]);
	}
}

/* Row t's dropout factors (0 or 1 / (1 - p); 1 without), keys 16 v ... */
static inline __m512 small_drop(const struct attn_args *a, int b, int h,
				int t, int v, float zs)
{
	if (!(a->dropout > 0))
		return _mm512_set1_ps(1);
	__m512i rk = _mm512_set1_epi32((int)attn_drop_row(a, b, h, t));
	__m512i cut1 = _mm512_set1_epi32(attn_drop_cut(a) - 1);
	return _mm512_maskz_mov_ps(keep16(rk, 16 * v, cut1), _mm512_set1_ps(zs));
}

static inline __attribute__((always_inline)) void
forward_small(const struct attn_args *a, int b, int h, int nv)
{
	int dk = a->dk, T = a->T;
	long ko = b * a->kv_bs + h * dk;
	struct small_head w;
	float inv[SMALL];

	small_init(&w, a, b);
	small_transpose(w.kt, &w, a->k + ko, a->kv_rs, dk, nv);
	float zs = a->dropout > 0 ? attn_drop_scale(a) : 1;
	__m512 vs = _mm512_set1_ps(a->scale);
	for (int t0 = 0; t0 < w.nr; t0 += 8) {
		__m512 s[8][2];
		const float *x[8];
		small_rows(x, a->q + b * a->q_bs + h * dk, a->q_rs, t0, T);
		small_scores(s, x, w.kt, dk, nv);
#pragma GCC unroll 8
		for (int r = 0; r < 8; r++) {
			int t = t0 + r;
			__mmask16 v0 = small_valid(w.nk[t], 0);
			__mmask16 v1 = small_valid(w.nk[t], 1);
			__m512 s0 = _mm512_mask_mul_ps(_mm512_set1_ps(-INFINITY),
						       v0, s[r][0], vs);
			__m512 s1 = _mm512_mask_mul_ps(_mm512_set1_ps(-INFINITY),
						       v1, s[r][1], vs);
			float m = _mm512_reduce_max_ps(nv > 1 ?
						       _mm512_max_ps(s0, s1) : s0);
			__m512 vm = _mm512_set1_ps(m);
			__m512 e0 = _mm512_maskz_mov_ps(v0,
					exp512(_mm512_sub_ps(s0, vm)));
			__m512 e1 = _mm512_maskz_mov_ps(v1,
					exp512(_mm512_sub_ps(s1, vm)));
			float l = _mm512_reduce_add_ps(nv > 1 ?
						       _mm512_add_ps(e0, e1) : e0);
			inv[t] = !w.nk[t] ? 0 : a->no_norm ? expf(m) : 1 / l;
			if (w.nk[t] && a->dropout > 0) {
				e0 = _mm512_mul_ps(e0, small_drop(a, b, h, t, 0, zs));
				if (nv > 1)
					e1 = _mm512_mul_ps(e1, small_drop(a, b, h, t,
								  1, zs));
			}
			_mm512_store_ps(w.p[t], e0);
			if (nv > 1)
				_mm512_store_ps(w.p[t] + 16, e1);
			if (a->lse && t < T)
				a->lse[((size_t)b * a->H + h) * T + t] =
					w.nk[t] ? m + logf(l) : -INFINITY;
		}
	}
	for (int t0 = 0; t0 < T; t0 += 8)
		for (int d = 0; d < dk; d += 32) {
			__m512 o[8][2];
			small_prod(o, w.p[t0], SMALL, 1, a->v + ko + d, a->kv_rs,
				   w.smax, w.dm[d / 16], w.dm[d / 16 + 1]);
			small_store(a->out + b * a->o_bs + t0 * a->o_rs + h * dk + d,
				    a->o_rs, T - t0, o, inv + t0, w.dm[d / 16],
				    w.dm[d / 16 + 1]);
		}
}

/* The whole-head path has no additive mask and no act but the softmax:
 * the blocks have them. */
static int small_head(const struct attn_args *a)
{
	return a->T <= SMALL && a->S <= SMALL && a->dk <= SMALL_DK &&
	       !a->mask && a->act == ATTN_SOFTMAX;
}

void attn_head_forward_avx512(const struct attn_args *a, int b, int h)
{
	if (small_head(a) && !a->weights) {
		if (a->S <= 16)
			forward_small(a, b, h, 1);
		else
			forward_small(a, b, h, 2);
		return;
	}
	attn_head_forward_blocks(a, b, h, &blocks_avx512);
}

/*
 * The backward pass of a small head (the blocks' formulas): P from the
 * scores and lse, dP = dout V^T; then Z P (into w.p) and dS = P (Z dP -
 * dout . out) scale (into ds), 8 rows at a time; dv += (Z P)^T dout and
 * dk += dS^T Q, 8 keys by 32 columns at a time, and dq += dS K.
 */
static inline __attribute__((always_inline)) void
backward_small(const struct attn_args *a, int b, int h, const float *dout,
	       float *dq, float *dk, float *dv, int nv)
{
	int n = a->dk, T = a->T;
	long ko = b * a->kv_bs + h * n, qo = b * a->q_bs + h * n;
	long oo = b * a->o_bs + h * n;
	struct small_head w;
	float vt[SMALL_DK][SMALL] __attribute__((aligned(64)));
	float ds[SMALL][SMALL] __attribute__((aligned(64)));

	small_init(&w, a, b);
	small_transpose(w.kt, &w, a->k + ko, a->kv_rs, n, nv);
	small_transpose(vt, &w, a->v + ko, a->kv_rs, n, nv);
	float zs = a->dropout > 0 ? attn_drop_scale(a) : 1;
	__m512 vs = _mm512_set1_ps(a->scale);
	for (int t0 = 0; t0 < w.nr; t0 += 8) {
		__m512 s[8][2], g[8][2];
		const float *x[8], *y[8];
		small_rows(x, a->q + qo, a->q_rs, t0, T);
		small_rows(y, dout + oo, a->o_rs, t0, T);
		small_scores(s, x, w.kt, n, nv);
		small_scores(g, y, vt, n, nv);
#pragma GCC unroll 8
		for (int r = 0; r < 8; r++) {
			int t = t0 + r;
			if (!w.nk[t]) {
				for (int v = 0; v < nv; v++) {
					_mm512_store_ps(w.p[t] + 16 * v,
							_mm512_setzero_ps());
					_mm512_store_ps(ds[t] + 16 * v,
							_mm512_setzero_ps());
				}
				continue;
			}
			__m512 lse = _mm512_set1_ps(a->lse[((size_t)b * a->H + h) *
							   T + t]);
			const float *o = a->out + oo + t * a->o_rs;
			__m512 D = _mm512_setzero_ps();
			for (int u = 0; u < 4; u++)
				D = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(w.dm[u],
							y[r] + 16 * u),
					_mm512_maskz_loadu_ps(w.dm[u], o + 16 * u), D);
			__m512 vd = _mm512_set1_ps(_mm512_reduce_add_ps(D));
			for (int v = 0; v < nv; v++) {
				__m512 p = _mm512_maskz_mov_ps(small_valid(w.nk[t], v),
					exp512(_mm512_fmsub_ps(s[r][v], vs, lse)));
				__m512 z = small_drop(a, b, h, t, v, zs);
				__m512 dp = _mm512_fmsub_ps(z, g[r][v], vd);
				_mm512_store_ps(ds[t] + 16 * v,
						_mm512_mul_ps(_mm512_mul_ps(p, dp), vs));
				_mm512_store_ps(w.p[t] + 16 * v, _mm512_mul_ps(p, z));
			}
		}
	}
	for (int j0 = 0; j0 < w.smax; j0 += 8)
		for (int d = 0; d < n; d += 32) {
			__mmask16 m0 = w.dm[d / 16], m1 = w.dm[d / 16 + 1];
			__m512 o[8][2];
			if (dv) {
				small_prod(o, w.p[0] + j0, 1, SMALL, dout + oo + d,
					   a->o_rs, T, m0, m1);
				small_store(dv + ko + j0 * a->kv_rs + d, a->kv_rs,
					    w.smax - j0, o, NULL, m0, m1);
			}
			if (dk) {
				small_prod(o, ds[0] + j0, 1, SMALL, a->q + qo + d,
					   a->q_rs, T, m0, m1);
				small_store(dk + ko + j0 * a->kv_rs + d, a->kv_rs,
					    w.smax - j0, o, NULL, m0, m1);
			}
		}
	for (int t0 = 0; dq && t0 < T; t0 += 8)
		for (int d = 0; d < n; d += 32) {
			__mmask16 m0 = w.dm[d / 16], m1 = w.dm[d / 16 + 1];
			__m512 o[8][2];
			small_prod(o, ds[t0], SMALL, 1, a->k + ko + d, a->kv_rs,
				   w.smax, m0, m1);
			small_store(dq + qo + t0 * a->q_rs + d, a->q_rs, T - t0, o,
				    NULL, m0, m1);
		}
}

void attn_head_backward_avx512(const struct attn_args *a, int b, int h,
			       const float *dout, float *dq, float *dk,
			       float *dv)
{
	if (small_head(a) && a->lse) {
		if (a->S <= 16)
			backward_small(a, b, h, dout, dq, dk, dv, 1);
		else
			backward_small(a, b, h, dout, dq, dk, dv, 2);
		return;
	}
	attn_head_backward_blocks(a, b, h, dout, dq, dk, dv, &blocks_avx512);
}
