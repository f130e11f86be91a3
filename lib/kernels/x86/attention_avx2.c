/*
 * attention_avx2.c: fused scaled dot-product attention of one (batch item,
 * head) with AVX2, FlashAttention-style.  The keys are transposed once per
 * head.  For a block of up to QB query rows, the keys go by blocks of KB
 * (a block of keys and of values stays in L1 while the QB rows use it, QR
 * rows at a time): each block's scores [QR, KB] come from a register-
 * blocked product, an online softmax folds them into the running maximum
 * and sum of each row, rescaling the row's output accumulator when the
 * maximum grows by more than LAZY_MAX, and the accumulator [QR, dk] gains
 * P V by a second register-blocked product.  No [T, S] matrix.  When
 * weights are asked for, the reference does the head.  Dropout zeroes the
 * dropped weights in the product with V only (the sums are the whole
 * softmax's) and scales the output by 1 / (1 - p) at the end.  The
 * additive mask, when given, is added to each block's scores; a row whose
 * scores so far are all -inf adds nothing (its maximum is still -inf).
 *
 * The backward pass recomputes the probabilities from the saved lse, and
 * the dropout mask from the seed, by the same blocks; it accumulates dk
 * and dv transposed ([dk][keys] per head, keys along the vectors, as the
 * scores' product lays them out) and adds them back at the end.  The
 * pieces inside a block (struct attn_blocks: the two products, a row's
 * exp pass, the rank updates and a row's gradient pass) come from a
 * table, which attention_avx512.c replaces.
 */
#include <math.h>
#include <string.h>

#include "kernels/kern_impl.h"
#include "vmath_avx2.h"

#define QR ATTN_QR              /* query rows of the register blocks */
#define QB (4 * QR)             /* query rows per pass over a key block */
#define KB ATTN_KB              /* keys per block */

/* s's columns j .. j + 8 n (n 1 or 2 vectors) = scale q rows . keys
 * (kt: [dk][sp] transposed keys from the first of them, zero past the
 * last key) */
static inline __attribute__((always_inline)) void
scores_cols(float s[QR][KB], const float *const q[QR], const float *k,
	    long sp, int j, int dk, __m256 vs, int n)
{
	__m256 c[QR][2];
#pragma GCC unroll 6
	for (int r = 0; r < QR; r++)
		c[r][0] = c[r][1] = _mm256_setzero_ps();
	for (int d = 0; d < dk; d++, k += sp) {
		__m256 b0 = _mm256_loadu_ps(k);
		__m256 b1 = n > 1 ? _mm256_loadu_ps(k + 8) : b0;
#pragma GCC unroll 6
		for (int r = 0; r < QR; r++) {
			__m256 a = _mm256_broadcast_ss(q[r] + d);
			c[r][0] = _mm256_fmadd_ps(a, b0, c[r][0]);
			if (n > 1)
				c[r][1] = _mm256_fmadd_ps(a, b1, c[r][1]);
		}
	}
#pragma GCC unroll 6
	for (int r = 0; r < QR; r++) {
		_mm256_store_ps(&s[r][j], _mm256_mul_ps(vs, c[r][0]));
		if (n > 1)
			_mm256_store_ps(&s[r][j + 8], _mm256_mul_ps(vs, c[r][1]));
	}
}

/* s [QR][KB] for keys j0 .. j0 + nb, nb rounded up to 8: 16 keys at a
 * time, the last 8 alone when no more are left. */
static void block_scores(float s[QR][KB], const float *const q[QR],
			 const float *kt, long sp, int j0, int nb, int dk,
			 float scale)
{
	__m256 vs = _mm256_set1_ps(scale);
	for (int j = 0; j < nb; j += 16) {
		if (nb - j > 8)
			scores_cols(s, q, kt + j0 + j, sp, j, dk, vs, 2);
		else
			scores_cols(s, q, kt + j0 + j, sp, j, dk, vs, 1);
	}
}

/* The column block of block_pv: o's columns d .. d + 16 (cut to w <= 16,
 * whole vectors when w is 16: the test outside the loop over keys). */
static inline void pv_cols(float *o, long dp, float p[QR][KB], const float *v,
			   long vs, int nk, int w, int first)
{
	__m256 c[QR][2];
#pragma GCC unroll 6
	for (int r = 0; r < QR; r++) {
		c[r][0] = first ? _mm256_setzero_ps() : _mm256_load_ps(o + r * dp);
		c[r][1] = first ? _mm256_setzero_ps() : _mm256_load_ps(o + r * dp + 8);
	}
	for (int j = 0; j < nk; j++, v += vs) {
		__m256 b0, b1;
		if (w == 16) {
			b0 = _mm256_loadu_ps(v);
			b1 = _mm256_loadu_ps(v + 8);
		} else {
			b0 = ldr(v, w);
			b1 = w > 8 ? ldr(v + 8, w - 8) : _mm256_setzero_ps();
		}
#pragma GCC unroll 6
		for (int r = 0; r < QR; r++) {
			__m256 a = _mm256_broadcast_ss(&p[r][j]);
			c[r][0] = _mm256_fmadd_ps(a, b0, c[r][0]);
			c[r][1] = _mm256_fmadd_ps(a, b1, c[r][1]);
		}
	}
#pragma GCC unroll 6
	for (int r = 0; r < QR; r++) {
		_mm256_store_ps(o + r * dp, c[r][0]);
		_mm256_store_ps(o + r * dp + 8, c[r][1]);
	}
}

/* o [QR][dp] += p [QR][KB] (first nk columns) v (rows j0.., stride vs);
 * first: o = p v, whatever o held */
static void block_pv(float *o, long dp, float p[QR][KB], const float *v,
		     long vs, int nk, int dk, int first)
{
	for (int d = 0; d < dk; d += 16) {
		if (dk - d >= 16)
			pv_cols(o + d, dp, p, v + d, vs, nk, 16, first);
		else
			pv_cols(o + d, dp, p, v + d, vs, nk, dk - d, first);
	}
}

/* dt's rows d .. d + nd (dims, nd <= 6), columns j .. j + 8 nv (keys, nv
 * 1 or 2 vectors) += sum over r of src[r][d + i] c[r][j ..]: the scores'
 * product with the roles of its operands swapped, each row r one load of
 * c and nd broadcasts from src[r]. */
static inline __attribute__((always_inline)) void
rank_tile(float *dt, long sp, float c[][KB], const float *const src[],
	  int nr, int j, int d, int nd, int nv)
{
	__m256 acc[6][2];
#pragma GCC unroll 6
	for (int i = 0; i < nd; i++) {
		acc[i][0] = _mm256_loadu_ps(dt + (d + i) * sp + j);
		acc[i][1] = nv > 1 ? _mm256_loadu_ps(dt + (d + i) * sp + j + 8) :
			    acc[i][0];
	}
	for (int r = 0; r < nr; r++) {
		__m256 b0 = _mm256_load_ps(&c[r][j]);
		__m256 b1 = nv > 1 ? _mm256_load_ps(&c[r][j + 8]) : b0;
		const float *x = src[r] + d;
#pragma GCC unroll 6
		for (int i = 0; i < nd; i++) {
			__m256 a = _mm256_broadcast_ss(x + i);
			acc[i][0] = _mm256_fmadd_ps(a, b0, acc[i][0]);
			if (nv > 1)
				acc[i][1] = _mm256_fmadd_ps(a, b1, acc[i][1]);
		}
	}
#pragma GCC unroll 6
	for (int i = 0; i < nd; i++) {
		_mm256_storeu_ps(dt + (d + i) * sp + j, acc[i][0]);
		if (nv > 1)
			_mm256_storeu_ps(dt + (d + i) * sp + j + 8, acc[i][1]);
	}
}

/* rank_tile with nv constant: 6 dims at a time, then the rest by 4, 2,
 * 1. */
static inline __attribute__((always_inline)) void
rank_cols(float *dt, long sp, float c[][KB], const float *const src[],
	  int nr, int j, int dk, int nv)
{
	int d = 0;
	for (; d + 6 <= dk; d += 6)
		rank_tile(dt, sp, c, src, nr, j, d, 6, nv);
	if (d + 4 <= dk) {
		rank_tile(dt, sp, c, src, nr, j, d, 4, nv);
		d += 4;
	}
	if (d + 2 <= dk) {
		rank_tile(dt, sp, c, src, nr, j, d, 2, nv);
		d += 2;
	}
	if (d < dk)
		rank_tile(dt, sp, c, src, nr, j, d, 1, nv);
}

/* The blocks' rank (kern_impl.h), into dt [dk][sp] transposed: 6 dims by
 * 16 keys in registers, the last 8 keys alone when no more are left. */
static void block_rank(float *dt, long sp, float c[][KB],
		       const float *const src[], int nr, int nb, int dk)
{
	for (int j = 0; j < nb; j += 16) {
		if (nb - j > 8)
			rank_cols(dt, sp, c, src, nr, j, dk, 2);
		else
			rank_cols(dt, sp, c, src, nr, j, dk, 1);
	}
}

/* xt [dk][sp] = x^T for rows 0 .. n-1 of x (stride xs), zero to sp. */
static void transpose_rows(float *xt, long sp, const float *x, long xs,
			   int n, int dk)
{
	int j = 0;
	for (; j + 8 <= n && dk >= 8; j += 8) {
		const float *rows[8];
		for (int i = 0; i < 8; i++)
			rows[i] = x + (j + i) * xs;
		int d = 0;
		for (; d + 8 <= dk; d += 8)
			gemm_t8_avx2(rows, d, xt + d * sp + j, sp);
		for (; d < dk; d++)
			for (int i = 0; i < 8; i++)
				xt[d * sp + j + i] = rows[i][d];
	}
	for (int d = 0; d < dk; d++) {
		float *o = xt + d * sp;
		for (int i = j; i < n; i++)
			o[i] = x[i * xs + d];
		if (sp > n)
			memset(o + n, 0, sizeof(float) * (sp - n));
	}
}

/* xb [n][dp] = rows 0 .. n-1 of x (stride xs), dk columns: the rows the
 * P V kernel reads, n times per block of queries.  In place, a head's
 * rows are H dk floats apart, a power of two that crowds them into a few
 * of L1's sets, from which they are evicted before their next use. */
static void copy_rows(float *xb, long dp, const float *x, long xs, int n,
		      int dk)
{
	for (int j = 0; j < n; j++)
		memcpy(xb + j * dp, x + j * xs, sizeof(float) * dk);
}

/* Rows t0 .. t0 + n - 1 of x (stride xs, dk columns; n cut at the last
 * row T) into L1 while the block before them is computed: the rows of a
 * head are far apart, and their loads and stores would otherwise wait on
 * L2 or L3 at the start of each block. */
static void prefetch_block(const float *x, long xs, int t0, int n, int T,
			   int dk, int w)
{
	for (int t = t0; t < t0 + n && t < T; t++)
		for (int d = 0; d < dk; d += 16) {
			if (w)
				__builtin_prefetch(x + t * xs + d, 1, 3);
			else
				__builtin_prefetch(x + t * xs + d, 0, 3);
		}
}

/* x rows 0 .. n-1 (stride xs) += xt^T, xt [dk][sp]: transpose_rows'
 * inverse, adding, 8 rows of x at a time (their lines, cold, then come
 * in together). */
static void add_transposed(float *x, long xs, const float *xt, long sp,
			   int n, int dk)
{
	float t[8][8] __attribute__((aligned(32)));
	const float *rows[8];
	int j = 0;
	for (; j + 8 <= n; j += 8, x += 8 * xs) {
		int d = 0;
		for (; d + 8 <= dk; d += 8) {
			for (int i = 0; i < 8; i++)
				rows[i] = xt + (d + i) * sp;
			gemm_t8_avx2(rows, j, t[0], 8);
			for (int i = 0; i < 8; i++) {
				float *o = x + i * xs + d;
				_mm256_storeu_ps(o, _mm256_add_ps(_mm256_loadu_ps(o),
						 _mm256_load_ps(t[i])));
			}
		}
		for (; d < dk; d++)
			for (int i = 0; i < 8; i++)
				x[i * xs + d] += xt[d * sp + j + i];
	}
	for (; j < n; j++, x += xs)
		for (int d = 0; d < dk; d++)
			x[d] += xt[d * sp + j];
}

/* All ones in the lanes of keys j .. j + 7 that the row of dropout key
 * rk keeps (cut1: attn_drop_cut - 1): attn_drop_hash, 8 lanes. */
static inline __m256 keep8(__m256i rk, int j, __m256i cut1)
{
	__m256i x = _mm256_add_epi32(_mm256_set1_epi32(j),
				     _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
	x = _mm256_xor_si256(rk, _mm256_mullo_epi32(x,
			     _mm256_set1_epi32((int)ATTN_DROP_GOLD)));
	x = _mm256_xor_si256(x, _mm256_srli_epi32(x, 16));
	x = _mm256_mullo_epi32(x, _mm256_set1_epi32((int)ATTN_DROP_M1));
	x = _mm256_xor_si256(x, _mm256_srli_epi32(x, 15));
	x = _mm256_mullo_epi32(x, _mm256_set1_epi32((int)ATTN_DROP_M2));
	x = _mm256_xor_si256(x, _mm256_srli_epi32(x, 16));
	return _mm256_castsi256_ps(_mm256_cmpgt_epi32(_mm256_srli_epi32(x, 8),
						      cut1));
}

/* Adds the mask's entries to the scores of the block's rows r < rows
 * (query rows t0 + r, keys j0 .. j0 + nb - 1, the first nk[r] - j0 of
 * them valid). */
static void add_mask(float s[][KB], const struct attn_args *a, int t0,
		     int rows, const int *nk, int j0, int nb)
{
	for (int r = 0; r < rows; r++) {
		const float *mr = a->mask + (size_t)(t0 + r) * a->S + j0;
		int valid = nk[r] - j0 < nb ? nk[r] - j0 : nb;
		for (int j = 0; j < valid; j++)
			s[r][j] += mr[j];
	}
}

static inline struct attn_drop drop_row(const struct attn_args *a, int b,
					int h, int t)
{
	if (!(a->dropout > 0))
		return (struct attn_drop){ 0, 0, 0 };
	return (struct attn_drop){ 1, attn_drop_row(a, b, h, t),
				   attn_drop_cut(a) };
}

/*
 * The online softmax over a block of keys j0 .., in passes over the
 * block's rows (each row's steps depend on each other, the rows' do not):
 * the scores' maximum of each row (row_max); the row's running maximum m
 * moved, with its sum l and accumulator o [dp] rescaled (raise_max), only
 * when a score passes it by more than LAZY_MAX: an exp of at most
 * e^LAZY_MAX is as exact, and the rescaling, a scalar exp and a pass over
 * o, is rare after the first block; then s = exp(s - m), its sum added to
 * l (exp_row of the blocks), zero past the valid scores and where
 * dropped.
 */
#define LAZY_MAX 8.0f

/* The largest of the first valid (> 0) scores of s. */
static inline float row_max(const float *s, int valid)
{
	__m256 m0 = _mm256_set1_ps(-INFINITY), m1 = m0;
	int j = 0;
	for (; j + 16 <= valid; j += 16) {
		m0 = _mm256_max_ps(m0, _mm256_load_ps(s + j));
		m1 = _mm256_max_ps(m1, _mm256_load_ps(s + j + 8));
	}
	for (; j < valid; j += 8)
		m0 = _mm256_max_ps(m0, _mm256_blendv_ps(m1, _mm256_load_ps(s + j),
							lanes(valid - j)));
	return hmax256(_mm256_max_ps(m0, m1));
}

static inline void raise_max(float mx, float *m, float *l, float *o, long dp)
{
	if (*l > 0) {
		float c = expf(*m - mx);
		__m256 vc = _mm256_set1_ps(c);
		*l *= c;
		for (int d = 0; d < dp; d += 8)
			_mm256_store_ps(o + d, _mm256_mul_ps(vc, _mm256_load_ps(o + d)));
	}
	*m = mx;
}

float attn_exp_row_avx2(float *s, float m, int valid, int nb,
			const struct attn_drop *d, int j0)
{
	__m256 vm = _mm256_set1_ps(m), sum = _mm256_setzero_ps();
	__m256i rk = _mm256_set1_epi32((int)d->rk);
	__m256i cut1 = _mm256_set1_epi32(d->cut - 1);
	for (int j = 0; j < nb; j += 8) {
		__m256 e = exp256(_mm256_sub_ps(_mm256_load_ps(s + j), vm));
		if (valid - j < 8)
			e = _mm256_and_ps(e, valid - j > 0 ? lanes(valid - j) :
					  _mm256_setzero_ps());
		sum = _mm256_add_ps(sum, e);
		if (d->on)
			e = _mm256_and_ps(e, keep8(rk, j0 + j, cut1));
		_mm256_store_ps(s + j, e);
	}
	return hsum256(sum);
}

/* The online softmax of a block's rows r < nr (above). */
static void softmax_block(float s[][KB], float *m, float *l, float *acc,
			  long dp, const int *nk, int j0, int nb, int nr,
			  const struct attn_drop *dr,
			  const struct attn_blocks *kb)
{
	float mx[QB];
	for (int r = 0; r < nr; r++)
		mx[r] = nk[r] > j0 ? row_max(s[r], nk[r] - j0 < nb ? nk[r] - j0 :
					     nb) : -INFINITY;
	for (int r = 0; r < nr; r++)
		if (mx[r] > m[r] + LAZY_MAX)
			raise_max(mx[r], &m[r], &l[r], acc + r * dp, dp);
	for (int r = 0; r < nr; r++) {
		if (m[r] == -INFINITY) {	/* nothing yet */
			memset(s[r], 0, sizeof(float) * nb);
			continue;
		}
		l[r] += kb->exp_row(s[r], m[r], nk[r] - j0, nb, &dr[r], j0);
	}
}

void attn_head_forward_blocks(const struct attn_args *a, int b, int h,
			      const struct attn_blocks *kb)
{
	int dk = a->dk, S = a->S;
	const float *k = a->k + b * a->kv_bs + h * dk;
	const float *v = a->v + b * a->kv_bs + h * dk;

	/* the keys any row of this item may see */
	int smax = 0;
	for (int t = 0; t < a->T && smax < S; t++) {
		int n = attn_nkeys(a, b, t);
		smax = n > smax ? n : smax;
	}
	long sp = (smax + 15) / 16 * 16, dp = (dk + 31) / 32 * 32;
	float *kt = kern_scratch(3, sizeof(float) * (sp * dk + QB * dp +
						     smax * dp));
	if (a->weights || !kt) {
		attn_head_forward_ref(a, b, h);
		return;
	}
	float *acc = kt + sp * dk, *vrows = acc + QB * dp;
	float zs = a->dropout > 0 ? attn_drop_scale(a) : 1;
	transpose_rows(kt, sp, k, a->kv_rs, smax, dk);
	copy_rows(vrows, dp, v, a->kv_rs, smax, dk);

	for (int t0 = 0; t0 < a->T; t0 += QB) {
		int rows = a->T - t0 < QB ? a->T - t0 : QB, nk[QB], kmax = 0;
		int groups = (rows + QR - 1) / QR;
		const float *q[QB];
		prefetch_block(a->q + b * a->q_bs + h * dk, a->q_rs, t0 + QB, QB,
			       a->T, dk, 0);
		prefetch_block(a->out + b * a->o_bs + h * dk, a->o_rs, t0 + QB,
			       QB, a->T, dk, 1);
		float m[QB], l[QB], s[QB][KB] __attribute__((aligned(32)));
		struct attn_drop dr[QB];
		for (int r = 0; r < QB; r++) {
			int t = t0 + (r < rows ? r : 0);
			q[r] = a->q + b * a->q_bs + t * a->q_rs + h * dk;
			nk[r] = r < rows ? attn_nkeys(a, b, t) : 0;
			dr[r] = drop_row(a, b, h, t);
			kmax = nk[r] > kmax ? nk[r] : kmax;
			m[r] = -INFINITY;
			l[r] = 0;
		}
		if (kmax == 0)  /* no block to set acc */
			memset(acc, 0, sizeof(float) * groups * QR * dp);
		for (int j0 = 0; j0 < kmax; j0 += KB) {
			int nb = kmax - j0 < KB ? kmax - j0 : KB;
			for (int g = 0; g < groups; g++)
				kb->scores(s + g * QR, q + g * QR, kt, sp, j0,
					   nb, dk, a->scale);
			if (a->mask)
				add_mask(s, a, t0, rows, nk, j0, nb);
			if (a->act != ATTN_SOFTMAX)
				for (int r = 0; r < groups * QR; r++)
					l[r] += attn_act_row(s[r], a->act,
							     nk[r] - j0, nb,
							     &dr[r], j0);
			else
				softmax_block(s, m, l, acc, dp, nk, j0, nb,
					      groups * QR, dr, kb);
			for (int g = 0; g < groups; g++)
				kb->pv(acc + g * QR * dp, dp, s + g * QR,
				       vrows + j0 * dp, dp, nb, dk, j0 == 0);
		}
		for (int r = 0; r < rows; r++) {
			float *o = a->out + b * a->o_bs + (t0 + r) * a->o_rs + h * dk;
			size_t row = ((size_t)b * a->H + h) * a->T + t0 + r;
			float f = a->act != ATTN_SOFTMAX ?
				  (a->no_norm ? 1 : l[r] != 0 ? 1 / l[r] : 0) :
				  l[r] > 0 ? (a->no_norm ? expf(m[r]) : 1 / l[r]) :
				  0;
			__m256 inv = _mm256_set1_ps(zs * f);
			FOR_LANES(d, dk, rem)
				str(o + d, rem, _mm256_mul_ps(inv, _mm256_load_ps(acc + r * dp + d)));
			if (a->lse && a->act == ATTN_SOFTMAX)
				a->lse[row] = l[r] > 0 ? m[r] + logf(l[r]) :
					      -INFINITY;
		}
	}
}

/*
 * Backward by blocks as the forward: for a block of query rows and one of
 * keys, P = exp(scale q k^T - lse) and dP = dout v^T by the scores kernel
 * on k^T and v^T; with dropout's factors Z (0 or 1 / (1 - p)), dS =
 * P (Z dP - dout . out) scale; then dv += (Z P)^T dout, dk += dS^T q
 * (rank updates) and dq += dS k (the P V kernel).
 */
void attn_head_backward_blocks(const struct attn_args *a, int b, int h,
			       const float *dout, float *dq, float *dk,
			       float *dv, const struct attn_blocks *kb)
{
	int n = a->dk;
	long ko = b * a->kv_bs + h * n;
	const float *k = a->k + ko, *v = a->v + ko;
	int smax = 0;
	for (int t = 0; t < a->T && smax < a->S; t++) {
		int c = attn_nkeys(a, b, t);
		smax = c > smax ? c : smax;
	}
	long sp = (smax + 15) / 16 * 16, dp = (n + 31) / 32 * 32;
	float *kt = kern_scratch(3, sizeof(float) * (4 * sp * n + QB * dp +
						     smax * dp));
	if (!a->lse || !kt) {
		attn_head_backward_ref(a, b, h, dout, dq, dk, dv);
		return;
	}
	float *vt = kt + sp * n, *gkt = vt + sp * n, *gvt = gkt + sp * n;
	float *gq = gvt + sp * n, *krows = gq + QB * dp;
	float zs = a->dropout > 0 ? attn_drop_scale(a) : 1;
	transpose_rows(kt, sp, k, a->kv_rs, smax, n);
	transpose_rows(vt, sp, v, a->kv_rs, smax, n);
	copy_rows(krows, dp, k, a->kv_rs, smax, n);
	memset(gkt, 0, sizeof(float) * 2 * sp * n);

	for (int t0 = 0; t0 < a->T; t0 += QB) {
		int rows = a->T - t0 < QB ? a->T - t0 : QB, nk[QB], kmax = 0;
		int groups = (rows + QR - 1) / QR, nr = groups * QR;
		const float *q[QB], *g[QB];
		long qn = b * a->q_bs + h * n, on = b * a->o_bs + h * n;
		prefetch_block(a->q + qn, a->q_rs, t0 + QB, QB, a->T, n, 0);
		prefetch_block(dout + on, a->o_rs, t0 + QB, QB, a->T, n, 0);
		prefetch_block(a->out + on, a->o_rs, t0 + QB, QB, a->T, n, 0);
		if (dq)
			prefetch_block(dq + qn, a->q_rs, t0 + QB, QB, a->T, n, 1);
		float lse[QB], D[QB];
		float p[QB][KB] __attribute__((aligned(32)));
		float ds[QB][KB] __attribute__((aligned(32)));
		struct attn_drop dr[QB];
		for (int r = 0; r < QB; r++) {
			int t = t0 + (r < rows ? r : 0);
			long oo = b * a->o_bs + t * a->o_rs + h * n;
			q[r] = a->q + b * a->q_bs + t * a->q_rs + h * n;
			g[r] = dout + oo;
			nk[r] = r < rows ? attn_nkeys(a, b, t) : 0;
			dr[r] = drop_row(a, b, h, t);
			kmax = nk[r] > kmax ? nk[r] : kmax;
			lse[r] = a->lse[((size_t)b * a->H + h) * a->T + t];
			if (lse[r] == -INFINITY)	/* every key masked */
				nk[r] = 0;
			__m256 s = _mm256_setzero_ps();
			FOR_LANES(d, n, rem)
				s = _mm256_fmadd_ps(ldr(g[r] + d, rem),
						    ldr(a->out + oo + d, rem), s);
			D[r] = hsum256(s);
		}
		if (kmax == 0)
			memset(gq, 0, sizeof(float) * nr * dp);
		for (int j0 = 0; j0 < kmax; j0 += KB) {
			int nb = kmax - j0 < KB ? kmax - j0 : KB;
			for (int gr = 0; gr < groups; gr++) {
				kb->scores(p + gr * QR, q + gr * QR, kt, sp, j0,
					   nb, n, a->scale);
				kb->scores(ds + gr * QR, g + gr * QR, vt, sp, j0,
					   nb, n, 1);
			}
			if (a->mask)
				add_mask(p, a, t0, rows, nk, j0, nb);
			for (int r = 0; r < nr; r++)
				kb->grad_row(p[r], ds[r], nk[r] - j0, nb, &dr[r],
					     j0, lse[r], D[r], a->scale, zs);
			if (dv)
				kb->rank(gvt + j0, sp, p, g, rows, nb, n);
			if (dk)
				kb->rank(gkt + j0, sp, ds, q, rows, nb, n);
			for (int gr = 0; dq && gr < groups; gr++)
				kb->pv(gq + gr * QR * dp, dp, ds + gr * QR,
				       krows + j0 * dp, dp, nb, n, j0 == 0);
		}
		for (int r = 0; dq && r < rows; r++) {
			float *o = dq + b * a->q_bs + (t0 + r) * a->q_rs + h * n;
			FOR_LANES(d, n, rem)
				str(o + d, rem, _mm256_add_ps(ldr(o + d, rem),
							      _mm256_load_ps(gq + r * dp + d)));
		}
	}
	if (dv)
		add_transposed(dv + ko, a->kv_rs, gvt, sp, smax, n);
	if (dk)
		add_transposed(dk + ko, a->kv_rs, gkt, sp, smax, n);
}

static void grad_row(float *p, float *ds, int valid, int nb,
		     const struct attn_drop *d, int j0, float lse, float D,
		     float scale, float zs)
{
	__m256 vl = _mm256_set1_ps(lse), vd = _mm256_set1_ps(D);
	__m256 sc = _mm256_set1_ps(scale), vz = _mm256_set1_ps(zs);
	__m256i rk = _mm256_set1_epi32((int)d->rk);
	__m256i cut1 = _mm256_set1_epi32(d->cut - 1);
	for (int j = 0; j < nb; j += 8) {
		__m256 e = exp256(_mm256_sub_ps(_mm256_load_ps(p + j), vl));
		__m256 dp = _mm256_load_ps(ds + j);
		if (valid - j < 8)
			e = _mm256_and_ps(e, valid - j > 0 ? lanes(valid - j) :
					  _mm256_setzero_ps());
		if (d->on) {
			__m256 z = _mm256_and_ps(vz, keep8(rk, j0 + j, cut1));
			dp = _mm256_mul_ps(dp, z);
			_mm256_store_ps(p + j, _mm256_mul_ps(e, z));
		} else {
			_mm256_store_ps(p + j, e);
		}
		_mm256_store_ps(ds + j, _mm256_mul_ps(_mm256_mul_ps(e,
				_mm256_sub_ps(dp, vd)), sc));
	}
}

static const struct attn_blocks blocks_avx2 = {
	block_scores, block_pv, attn_exp_row_avx2, block_rank, grad_row
};

void attn_head_forward_avx2(const struct attn_args *a, int b, int h)
{
	attn_head_forward_blocks(a, b, h, &blocks_avx2);
}

void attn_head_backward_avx2(const struct attn_args *a, int b, int h,
			     const float *dout, float *dq, float *dk, float *dv)
{
	attn_head_backward_blocks(a, b, h, dout, dq, dk, dv, &blocks_avx2);
}
