/*
 * attn_marian.c: attention as native Marian computes it, to the bit, for
 * the models in its arithmetic (attn_step.h's attn_marian_row; the
 * portable kernel and the drivers of attention_forward and attn_step).
 *
 * Where each step is in browsermt/marian-dev 2781d735:
 *
 * - The scores: src/models/transformer.h Attention (l. 228-260): bdot(q,
 *   k, false, true, 1 / sqrt(dk)) -> src/tensors/cpu/prod.cpp
 *   ProdBatchedOld: one cblas_sgemm a head (a hypothesis' step: a head
 *   and a hypothesis), alpha the scale, beta 0: for OpenBLAS the product
 *   K Q^T in column-major order, "TN", M' the keys, N' the queries, K dk.
 *   Which of OpenBLAS's kernels sums it (Debian's 0.3.21, as
 *   OPENBLAS_CORETYPE names them): SkylakeX's small-matrix TN kernel
 *   (kernel/x86_64/sgemm_small_kernel_tn_skylakex.c) where its permit
 *   says so (M' N' <= 1200, K >= 32, M' N' K <= 10^6): each entry in 16
 *   lanes, lane l of k = l, l + 16, ... by fma in order, then the lanes
 *   added either as REDUCE_4's tree (adjacent pairs, then pairs of
 *   those: for keys below M' & ~3, and for every key of the queries
 *   below N' & ~3) or as _mm512_reduce_add_ps (halves: the others);
 *   times alpha.  Otherwise (larger products, K < 32, and Haswell's
 *   kernels) one chain of fma over k in order, times alpha: measured
 *   exact for SkylakeX; for Haswell's kernels it is not their order
 *   (about 40% of an encoder layer's context values agree).
 * - The mask adds 0 to a sentence's own keys (a row's keys are its n).
 * - The softmax: src/tensors/cpu/tensor_operators.cpp Softmax (l. 392-
 *   446) by the row's length: a multiple of 8, Softmax<float32x8>; of 4,
 *   <float32x4>; else <float>.  <float>: the maximum, e_j = expf(s_j -
 *   max) summed in order, each e_j / sum.  The vector ones: e_j by
 *   exp256_ps / exp_ps (src/3rd_party/avx_mathfun.h, sse_mathfun.h:
 *   Cephes' exp, which g++ contracts as marian_exp below; the two are
 *   the same function), summed in 8 (4) lanes, lane l of e_l, e_(l+8),
 *   ..., then the lanes in order from 0 (sumReduce), each e_j / sum.
 * - The context: bdot(weights, v), one sgemm a head: out_c = sum_j fma
 *   w_j v_jc, one chain over j in order.
 *
 * Checked against native Marian traced product by product (doc/results.md,
 * "Marian's arithmetic"): the context of an encoder layer identical in
 * all its 11,520 values.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "attn_step.h"
#include "base/f16.h"
#include "kern_impl.h"

/*
 * Cephes' exp as Marian's native build computes it (exp256_ps, exp_ps;
 * g++ -O3 -march=native contracts x * LOG2EF + 0.5, x - fx C1, x - fx C2,
 * the polynomial's y x + p and y z + x into fmas: read from the
 * disassembly).  x clamped to [-88.376, 88.376]; fx = floor(fma(x,
 * LOG2EF, 0.5)); y (1 + x + x^2 P(x)) 2^fx.
 */
float marian_exp(float x)
{
	const float hi = 88.3762626647949f, lo = -88.3762626647949f;
	float fx, z, y;
	union { float f; int32_t i; } p;

	x = x < hi ? x : hi;	/* min_ps, max_ps: x when NaN */
	x = x > lo ? x : lo;
	fx = floorf(fmaf(x, 1.44269504088896341f, 0.5f));
	x = fmaf(-fx, 0.693359375f, x);
	x = fmaf(-fx, -2.12194440e-4f, x);
	z = x * x;
	y = fmaf(1.9875691500E-4f, x, 1.3981999507E-3f);
	y = fmaf(y, x, 8.3334519073E-3f);
	y = fmaf(y, x, 4.1665795894E-2f);
	y = fmaf(y, x, 1.6666665459E-1f);
	y = fmaf(y, x, 5.0000001201E-1f);
	y = fmaf(y, z, x);
	y = y + 1.0f;
	p.i = ((int32_t)fx + 0x7f) << 23;
	return y * p.f;
}

/* Marian's softmax of s [n] in place (above), n > 0. */
void marian_softmax(float *s, int n)
{
	int lanes = n % 8 == 0 ? 8 : n % 4 == 0 ? 4 : 1;
	float mx = s[0], acc[8] = { 0 }, sum = 0;

	for (int j = 1; j < n; j++)
		mx = mx < s[j] ? s[j] : mx;
	for (int j = 0; j < n; j++) {
		s[j] = lanes == 1 ? expf(s[j] - mx) : marian_exp(s[j] - mx);
		acc[j % lanes] += s[j];
	}
	for (int l = 0; l < lanes; l++)
		sum += acc[l];
	for (int j = 0; j < n; j++)
		s[j] /= sum;
}

static inline float kv_at(const void *p, long i, int f16)
{
	return f16 ? f16_to_f32(((const uint16_t *)p)[i])
		   : ((const float *)p)[i];
}

/* The 16 lanes of a score (above) added: pair 1, REDUCE_4's tree; 0,
 * _mm512_reduce_add_ps's halves. */
float marian_lanes16(const float l[16], int pair)
{
	float a[16];
	int n = 16;

	memcpy(a, l, sizeof(a));
	for (; n > 1; n /= 2)
		for (int i = 0; i < n / 2; i++)
			a[i] = pair ? a[2 * i] + a[2 * i + 1] : a[i] + a[i + n / 2];
	return a[0];
}

/* Score of query q and key k (dk each) in form (attn_step.h). */
static float score(const float *q, const void *k, long k0, int dk, int f16,
		   int form, int j, int n)
{
	float acc = 0, l[16] = { 0 };

	if (form == MARIAN_SCORE_CHAIN) {
		for (int c = 0; c < dk; c++)
			acc = fmaf(q[c], kv_at(k, k0 + c, f16), acc);
		return acc;
	}
	/* past dk, OpenBLAS's masked loads add 0 0 */
	for (int c = 0; c < (dk + 15) / 16 * 16; c++)
		l[c % 16] = fmaf(c < dk ? q[c] : 0,
				 c < dk ? kv_at(k, k0 + c, f16) : 0, l[c % 16]);
	return marian_lanes16(l, form == MARIAN_SCORE_PAIRS ||
				 j < (n & ~3));
}

void attn_marian_row_ref(float *out, float *w, long wn, const float *q,
			 const void *k, long ks, const void *v, long vs,
			 int n, int H, int dk, float scale, int f16, int form,
			 float *s)
{
	for (int h = 0; h < H; h++) {
		const float *qh = q + h * dk;
		float *oh = out + h * dk;

		for (int j = 0; j < n; j++)
			s[j] = score(qh, k, j * ks + h * dk, dk, f16, form, j,
				     n) * scale;
		if (n > 0)
			marian_softmax(s, n);
		for (int c = 0; c < dk; c++) {
			float acc = 0;
			for (int j = 0; j < n; j++)
				acc = fmaf(s[j], kv_at(v, j * vs + h * dk + c,
						       f16), acc);
			oh[c] = acc;
		}
		if (w)
			memcpy(w + h * wn, s, sizeof(float) * n);
	}
}

/*
 * The form of the scores of a product of nq queries by n keys of dk
 * (above), query t: OpenBLAS's kernels as attn's in force choose them
 * (marian_blas in tools/marian-ref/native.sh gives Marian SkylakeX's
 * where attn runs AVX-512, Haswell's where AVX2).
 */
int marian_small_tn(int nq, int n, int dk)
{
	return kern_isa() >= ISA_AVX512 && (long)nq * n <= 1200 && dk >= 32 &&
	       (double)nq * n * dk <= 1e6;
}

int marian_score_form(int nq, int n, int dk, int t)
{
	if (!marian_small_tn(nq, n, dk))
		return MARIAN_SCORE_CHAIN;
	return t < (nq & ~3) ? MARIAN_SCORE_PAIRS : MARIAN_SCORE_LANES;
}

/*
 * One head of a sentence, rows queries by n keys (attn_step.h's
 * attn_marian_head): row t's scores in form small ? (t < nq & ~3 ? PAIRS :
 * LANES) : CHAIN, then as attn_marian_row.
 */
void attn_marian_head_ref(float *out, long os, float *w, long ws,
			  const float *q, long qs, const float *k, long ks,
			  const float *v, long vs, int rows, int n, int dk,
			  float scale, int small, int nq, float *s)
{
	for (int t = 0; t < rows; t++) {
		int form = !small ? MARIAN_SCORE_CHAIN :
			   t < (nq & ~3) ? MARIAN_SCORE_PAIRS :
			   MARIAN_SCORE_LANES;

		attn_marian_row_ref(out + t * os, w ? w + t * ws : NULL, 0,
				    q + t * qs, k, ks, v, vs, n, 1, dk, scale,
				    0, form, s);
	}
}

/* ---- attention_forward (attn_args.marian) ------------------------------- */

struct rows_job {
	const struct attn_args *a;
	const struct kern_ops *ops;
	int fallback;		/* a thread's scratch failed */
};

/* With a causal mask (the teacher-forced decoder, not a path of Marian's
 * search): row by row, each over its own keys, the product's queries
 * all T. */
static void rows_task(void *ctx, int64_t lo, int64_t hi)
{
	struct rows_job *j = ctx;
	const struct attn_args *a = j->a;
	float *s = kern_scratch(2, sizeof(float) * ATTN_MARIAN_SCRATCH(a->S));

	if (!s) {
		j->fallback = 1;
		return;
	}
	for (int64_t i = lo; i < hi; i++) {
		int b = (int)(i / a->T), t = (int)(i % a->T);
		int n = attn_nkeys(a, b, t);
		float *w = a->weights ? a->weights +
			   ((size_t)b * a->H * a->T + t) * a->S : NULL;
		j->ops->attn_marian_row(a->out + b * a->o_bs + t * a->o_rs, w,
					(long)a->T * a->S,
					a->q + b * a->q_bs + t * a->q_rs,
					a->k + b * a->kv_bs, a->kv_rs,
					a->v + b * a->kv_bs, a->kv_rs, n, a->H,
					a->dk, a->scale, 0,
					marian_score_form(a->T, n, a->dk, t), s);
		for (int h = 0; w && h < a->H; h++)
			memset(w + (size_t)h * a->T * a->S + n, 0,
			       sizeof(float) * (a->S - n));
	}
}

/* Without a causal mask: a sentence's head at a time, every one of its T
 * query rows over its n keys.  The form's queries, Marian's product's:
 * in the encoder's self-attention (T = S) the sentence's own n (Marian's
 * batch of one sentence); a teacher-forced cross-attention's (not a path
 * of Marian's search), T. */
static void heads_task(void *ctx, int64_t lo, int64_t hi)
{
	struct rows_job *j = ctx;
	const struct attn_args *a = j->a;
	int dk = a->dk, np = (a->S + 31) / 32 * 32;
	float *s = kern_scratch(2, sizeof(float) * (ATTN_MARIAN_SCRATCH(a->S) +
						   (size_t)dk * np));

	if (!s) {
		j->fallback = 1;
		return;
	}
	for (int64_t i = lo; i < hi; i++) {
		int b = (int)(i / a->H), h = (int)(i % a->H);
		int n = attn_nkeys(a, b, 0);
		int nq = a->klen && a->T == a->S ? n : a->T;
		float *w = a->weights ? a->weights + ((size_t)b * a->H + h) *
			   a->T * a->S : NULL;

		j->ops->attn_marian_head(a->out + b * a->o_bs + h * dk, a->o_rs,
					 w, a->S, a->q + b * a->q_bs + h * dk,
					 a->q_rs, a->k + b * a->kv_bs + h * dk,
					 a->kv_rs, a->v + b * a->kv_bs + h * dk,
					 a->kv_rs, a->T, n, dk, a->scale,
					 marian_small_tn(nq, n, dk), nq, s);
		for (int t = 0; w && t < a->T; t++)
			memset(w + (size_t)t * a->S + n, 0,
			       sizeof(float) * (a->S - n));
	}
}

/* attention_forward for a->marian: 0, or -1 when a thread's scratch
 * failed (the caller then computes it its own way). */
int attention_marian_forward(const struct attn_args *a)
{
	struct rows_job j = { a, kern_ops(), 0 };
	long per = (long)a->S * a->H * a->dk * 2;

	if (!a->causal) {
		per *= a->T / a->H + 1;
		kern_parallel_for((int64_t)a->B * a->H,
				  per >= (1L << 16) ? 1 : (int)((1L << 16) / per),
				  heads_task, &j);
	} else {
		kern_parallel_for((int64_t)a->B * a->T,
				  per >= (1L << 16) ? 1 : (int)((1L << 16) / per),
				  rows_task, &j);
	}
	return j.fallback ? -1 : 0;
}
