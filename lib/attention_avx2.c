/*
 * attention_avx2.c: fused scaled dot-product attention of one (batch item,
 * head) with AVX2, FlashAttention-style: for a block of up to QR query
 * rows, the keys go by blocks of KB; each block's scores [QR, KB] come
 * from a register-blocked product with the keys transposed (packed once
 * per head), an online softmax folds them into the running maximum and sum
 * of each row, rescaling the row's output accumulator when the maximum
 * grows, and the accumulator [QR, dk] gains P V by a second register-
 * blocked product.  No [T, S] matrix.  When weights are asked for, the
 * reference does the head.
 *
 * The backward pass recomputes each probability from the saved lse, a
 * query row and a key at a time, on vectors along dk.
 */
#include <math.h>
#include <string.h>

#include "kern_impl.h"
#include "vmath_avx2.h"

#define QR 6                    /* query rows per block */
#define KB 64                   /* keys per block */

/* s [QR][KB] = q rows . keys j0 .. j0 + KB (kt: [dk][sp] transposed keys) */
static void block_scores(float s[QR][KB], const float *const q[QR],
			 const float *kt, long sp, int j0, int dk)
{
	for (int j = 0; j < KB; j += 16) {
		__m256 c[QR][2];
#pragma GCC unroll 6
		for (int r = 0; r < QR; r++)
			c[r][0] = c[r][1] = _mm256_setzero_ps();
		const float *k = kt + j0 + j;
		for (int d = 0; d < dk; d++, k += sp) {
			__m256 b0 = _mm256_loadu_ps(k), b1 = _mm256_loadu_ps(k + 8);
#pragma GCC unroll 6
			for (int r = 0; r < QR; r++) {
				__m256 a = _mm256_broadcast_ss(q[r] + d);
				c[r][0] = _mm256_fmadd_ps(a, b0, c[r][0]);
				c[r][1] = _mm256_fmadd_ps(a, b1, c[r][1]);
			}
		}
#pragma GCC unroll 6
		for (int r = 0; r < QR; r++) {
			_mm256_storeu_ps(&s[r][j], c[r][0]);
			_mm256_storeu_ps(&s[r][j + 8], c[r][1]);
		}
	}
}

/* o [QR][dp] += p [QR][KB] (first nk columns) v (rows j0.., stride vs) */
static void block_pv(float *o, long dp, float p[QR][KB], const float *v,
		     long vs, int nk, int dk)
{
	for (int d = 0; d < dk; d += 16) {
		long m0 = dk - d, m1 = dk - d - 8;
		__m256 c[QR][2];
#pragma GCC unroll 6
		for (int r = 0; r < QR; r++) {
			c[r][0] = _mm256_load_ps(o + r * dp + d);
			c[r][1] = _mm256_load_ps(o + r * dp + d + 8);
		}
		const float *vj = v + d;
		for (int j = 0; j < nk; j++, vj += vs) {
			__m256 b0 = ldr(vj, m0);
			__m256 b1 = m1 > 0 ? ldr(vj + 8, m1) : _mm256_setzero_ps();
#pragma GCC unroll 6
			for (int r = 0; r < QR; r++) {
				__m256 a = _mm256_set1_ps(p[r][j]);
				c[r][0] = _mm256_fmadd_ps(a, b0, c[r][0]);
				c[r][1] = _mm256_fmadd_ps(a, b1, c[r][1]);
			}
		}
#pragma GCC unroll 6
		for (int r = 0; r < QR; r++) {
			_mm256_store_ps(o + r * dp + d, c[r][0]);
			_mm256_store_ps(o + r * dp + d + 8, c[r][1]);
		}
	}
}

void attn_head_forward_avx2(const struct attn_args *a, int b, int h)
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
	long sp = (smax + KB - 1) / KB * KB;
	long dp = (dk + 15) / 16 * 16;
	float *kt = kern_scratch(3, sizeof(float) * (sp * dk + QR * dp));
	if (a->weights || !kt) {
		attn_head_forward_ref(a, b, h);
		return;
	}
	float *acc = kt + sp * dk;
	for (int j = 0; j < sp; j++)
		for (int d = 0; d < dk; d++)
			kt[d * sp + j] = j < smax ? k[j * a->kv_rs + d] : 0;

	for (int t0 = 0; t0 < a->T; t0 += QR) {
		int rows = a->T - t0 < QR ? a->T - t0 : QR, nk[QR], kmax = 0;
		const float *q[QR];
		float m[QR], l[QR], s[QR][KB] __attribute__((aligned(32)));
		for (int r = 0; r < QR; r++) {
			int t = t0 + (r < rows ? r : 0);
			q[r] = a->q + b * a->q_bs + t * a->q_rs + h * dk;
			nk[r] = r < rows ? attn_nkeys(a, b, t) : 0;
			kmax = nk[r] > kmax ? nk[r] : kmax;
			m[r] = -INFINITY;
			l[r] = 0;
		}
		memset(acc, 0, sizeof(float) * QR * dp);
		for (int j0 = 0; j0 < kmax; j0 += KB) {
			int nb = kmax - j0 < KB ? kmax - j0 : KB;
			block_scores(s, q, kt, sp, j0, dk);
			for (int r = 0; r < QR; r++) {
				/* scale, mask, and fold into the row's max */
				int valid = nk[r] - j0;
				valid = valid < 0 ? 0 : valid > nb ? nb : valid;
				float mx = m[r];
				for (int j = 0; j < valid; j++) {
					s[r][j] *= a->scale;
					mx = s[r][j] > mx ? s[r][j] : mx;
				}
				if (valid == 0) {
					memset(s[r], 0, sizeof(s[r]));
					continue;
				}
				float c = expf(m[r] - mx);
				__m256 vmx = _mm256_set1_ps(mx), sum = _mm256_setzero_ps();
				for (int j = 0; j < KB; j += 8) {
					__m256 e = exp256(_mm256_sub_ps(_mm256_load_ps(&s[r][j]), vmx));
					if (valid - j < 8)
						e = _mm256_and_ps(e, lanes(valid - j));
					_mm256_store_ps(&s[r][j], e);
					sum = _mm256_add_ps(sum, e);
				}
				l[r] = l[r] * c + hsum256(sum);
				if (c != 1) {
					__m256 vc = _mm256_set1_ps(c);
					for (int d = 0; d < dp; d += 8)
						_mm256_store_ps(acc + r * dp + d,
							_mm256_mul_ps(vc, _mm256_load_ps(acc + r * dp + d)));
				}
				m[r] = mx;
			}
			block_pv(acc, dp, s, v + j0 * a->kv_rs, a->kv_rs, nb, dk);
		}
		for (int r = 0; r < rows; r++) {
			float *o = a->out + b * a->o_bs + (t0 + r) * a->o_rs + h * dk;
			size_t row = ((size_t)b * a->H + h) * a->T + t0 + r;
			float inv = nk[r] ? 1 / l[r] : 0;
			for (int d = 0; d < dk; d++)
				o[d] = acc[r * dp + d] * inv;
			if (a->lse)
				a->lse[row] = nk[r] ? m[r] + logf(l[r]) : -INFINITY;
		}
	}
}

static float dot(const float *x, const float *y, int n)
{
	__m256 s = _mm256_setzero_ps();
	FOR_LANES(i, n, m)
		s = _mm256_fmadd_ps(ldr(x + i, m), ldr(y + i, m), s);
	return hsum256(s);
}

static void axpy(float *y, float a, const float *x, int n)
{
	__m256 va = _mm256_set1_ps(a);
	FOR_LANES(i, n, m)
		str(y + i, m, _mm256_fmadd_ps(va, ldr(x + i, m), ldr(y + i, m)));
}

void attn_head_backward_avx2(const struct attn_args *a, int b, int h,
			     const float *dout, float *dq, float *dk, float *dv)
{
	long ko = b * a->kv_bs + h * a->dk;
	const float *k = a->k + ko, *v = a->v + ko;

	if (!a->lse) {
		attn_head_backward_ref(a, b, h, dout, dq, dk, dv);
		return;
	}
	for (int t = 0; t < a->T; t++) {
		long qo = b * a->q_bs + t * a->q_rs + h * a->dk;
		long oo = b * a->o_bs + t * a->o_rs + h * a->dk;
		const float *q = a->q + qo, *go = dout + oo;
		int nk = attn_nkeys(a, b, t);
		if (nk == 0)
			continue;
		float lse = a->lse[((size_t)b * a->H + h) * a->T + t];
		float D = dot(go, a->out + oo, a->dk);
		for (int j = 0; j < nk; j++) {
			long r = j * a->kv_rs;
			float p = expf(dot(q, k + r, a->dk) * a->scale - lse);
			if (dv)
				axpy(dv + ko + r, p, go, a->dk);
			float ds = p * (dot(go, v + r, a->dk) - D) * a->scale;
			if (dq)
				axpy(dq + qo, ds, k + r, a->dk);
			if (dk)
				axpy(dk + ko + r, ds, q, a->dk);
		}
	}
}
