/*
 * gemm_i8.c: the int8 products of gemm_packed.h: quantisation of rows,
 * int8 packs, and linear_packed on them.  A call has the pack's kernels
 * (kern_impl.h) quantise its few rows of x into their packed form, then
 * splits the panels over the threads, as the f32 and bf16 packs do; with
 * the reference (no packed panels) it runs plain loops on wq.  Every path
 * computes each entry's exact int32 sum and then the same float
 * operations, so all of them give the same bits; the 7-bit form of CPUs
 * without VNNI (quant_rows_u7) gives its own, by the same rule.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/errmsg.h"
#include "gemm_packed.h"
#include "kern_impl.h"
#include "marian_i8.h"

/* As gemm_packed.c's: work below which a second thread does not pay. */
#define THREAD_WORK (1L << 17)

/* Round to nearest, ties to even, for |v| <= 2^22, in the default
 * rounding mode: adding 1.5 2^23 leaves no fraction bits.  (nearbyintf
 * without SSE4.1 is a library call that saves and restores the floating
 * point environment, which cost more than the products of a step.) */
#define ROUND_MAGIC 0x1.8p23f

/* max |x_k| over the row, or NaN when it holds a NaN or an infinity; in
 * 8 lanes, which the compiler vectorises (max is exact in any order). */
static float row_max(const float *x, int K)
{
	float m[8] = { 0 }, z[8] = { 0 }, amax = 0, nan = 0;
	int k = 0;

	for (; k + 8 <= K; k += 8)
		for (int l = 0; l < 8; l++) {
			float a = fabsf(x[k + l]);
			m[l] = a > m[l] ? a : m[l];
			z[l] += x[k + l] * 0.0f;	/* NaN: NaN or inf */
		}
	for (; k < K; k++) {
		float a = fabsf(x[k]);
		amax = a > amax ? a : amax;
		nan += x[k] * 0.0f;
	}
	for (int l = 0; l < 8; l++) {
		amax = m[l] > amax ? m[l] : amax;
		nan += z[l];
	}
	return nan == 0 ? amax : NAN;
}

void quant_rows_i8(int8_t *q, float *s, const float *x, int rows, int K,
		   long ld)
{
	for (int i = 0; i < rows; i++, x += ld, q += K) {
		float amax = row_max(x, K);
		if (!(amax > 0)) {	/* zeros, or NaN */
			memset(q, 0, K > 0 ? (size_t)K : 0);
			s[i] = amax == 0 ? 0 : NAN;
			continue;
		}
		float inv = 127.0f / amax;
		for (int k = 0; k < K; k++) {
			float v = (x[k] * inv + ROUND_MAGIC) - ROUND_MAGIC;
			v = v > 127 ? 127 : v;
			q[k] = (int8_t)(v < -127 ? -127 : v);
		}
		s[i] = amax / 127.0f;
	}
}

/* min(0, min_k x_k) and max(0, max_k x_k) of a row into *mn, *mx; -1
 * when it holds a NaN or an infinity.  In 8 lanes, as row_max. */
static int row_range(const float *x, int K, float *mn, float *mx)
{
	float lo[8] = { 0 }, hi[8] = { 0 }, z[8] = { 0 }, a = 0, b = 0, n = 0;
	int k = 0;

	for (; k + 8 <= K; k += 8)
		for (int l = 0; l < 8; l++) {
			float v = x[k + l];
			lo[l] = v < lo[l] ? v : lo[l];
			hi[l] = v > hi[l] ? v : hi[l];
			z[l] += v * 0.0f;
		}
	for (; k < K; k++) {
		a = x[k] < a ? x[k] : a;
		b = x[k] > b ? x[k] : b;
		n += x[k] * 0.0f;
	}
	for (int l = 0; l < 8; l++) {
		a = lo[l] < a ? lo[l] : a;
		b = hi[l] > b ? hi[l] : b;
		n += z[l];
	}
	*mn = a;
	*mx = b;
	return n == 0 ? 0 : -1;
}

void quant_rows_u7(uint8_t *u, float *s, int32_t *zp, const float *x,
		   int rows, int K, long ld)
{
	for (int i = 0; i < rows; i++, x += ld, u += K) {
		float mn, mx, inv;
		int nan = row_range(x, K, &mn, &mx) < 0;

		memset(u, 0, K > 0 ? (size_t)K : 0);
		if (nan || !u7_row(mn, mx, &s[i], &inv, &zp[i])) {
			s[i] = nan ? NAN : 0;
			zp[i] = 0;
			continue;
		}
		float z = (float)zp[i];
		for (int k = 0; k < K; k++) {
			float v = (x[k] * inv + ROUND_MAGIC) - ROUND_MAGIC;
			v += z;
			v = v > 127 ? 127 : v;
			u[k] = (uint8_t)(v < 0 ? 0 : v);
		}
	}
}

/*
 * Eight bytes at a time as unsigned ones (b + 128, the top bit flipped),
 * the even and the odd added into four 16-bit lanes (at most 2 255 a
 * word, 128 words a round: below 2^16), the lanes into the total each
 * round, less 128 a byte; the tail byte by byte.  A loop of bytes was
 * 80% of packing a shortlist's rows for every batch.
 */
int32_t i8_row_sum(const int8_t *r, int n)
{
	const uint64_t lo = 0x00ff00ff00ff00ffULL;
	const uint64_t flip = 0x8080808080808080ULL;
	int64_t s = 0;
	int i = 0;

	while (n - i >= 8) {
		int words = (n - i) / 8 < 128 ? (n - i) / 8 : 128;
		uint64_t acc = 0;

		for (int w = 0; w < words; w++, i += 8) {
			uint64_t v;

			memcpy(&v, r + i, 8);
			v ^= flip;
			acc += (v & lo) + (v >> 8 & lo);
		}
		s += (int64_t)((acc & 0xffff) + (acc >> 16 & 0xffff) +
			       (acc >> 32 & 0xffff) + (acc >> 48)) -
		     1024 * (int64_t)words;
	}
	for (; i < n; i++)
		s += r[i];
	return (int32_t)s;
}

/* The panels of wq for the kernels kern_i8 gives, or none (reference). */
static int pack_panels(struct wpack *w)
{
	const struct gemm_i8 *u = kern_i8();
	int N = w->N, K = w->K, kq = (K + 3) / 4;
	int np = (N + WPACK_NR - 1) / WPACK_NR;
	size_t bytes = (size_t)np * kq * WPACK_NR * 4;

	if (!u)
		return 0;
	w->pq = aligned_alloc(64, (bytes + 63) / 64 * 64);
	w->qsum = malloc(sizeof(int32_t) * np * WPACK_NR);
	if (!w->pq || !w->qsum) {
		err_set("out of memory for a packed [%d, %d] int8 matrix", N,
			K);
		return -1;
	}
	w->i8 = u;
	/* quad by quad (a shortlist's rows are packed for every batch:
	 * byte by byte was 6% of the Firefox student's decode) */
	for (int q = 0; q < np; q++) {
		int8_t *P = w->pq + (size_t)q * kq * WPACK_NR * 4;
		for (int c = 0; c < WPACK_NR; c++) {
			int j = q * WPACK_NR + c, p;
			const int8_t *r = w->wq + (size_t)j * K;
			int8_t last[4] = { 0 };

			for (p = 0; j < N && p < K / 4; p++)
				memcpy(P + ((size_t)p * WPACK_NR + c) * 4,
				       r + 4 * p, 4);
			/* a last quad cut short by K, the rest zero; a
			 * column past N all zero */
			if (j < N && p < kq)
				memcpy(last, r + 4 * p, (size_t)(K - 4 * p));
			for (; p < kq; p++) {
				memcpy(P + ((size_t)p * WPACK_NR + c) * 4, last,
				       4);
				memset(last, 0, sizeof last);
			}
			w->qsum[j] = j < N ? 128 * i8_row_sum(r, K) : 0;
		}
	}
	return 0;
}

static int check_size(int N, int K)
{
	if (K > WPACK_I8_KMAX || N < 0 || K < 0) {
		err_set("an int8 matrix [%d, %d]: rows of at most %d "
			"values (int32 sums)", N, K, WPACK_I8_KMAX);
		return -1;
	}
	return 0;
}

int wpack_init_i8(struct wpack *w, const int8_t *wq, const float *ws, int N,
		  int K)
{
	memset(w, 0, sizeof *w);
	w->N = N;
	w->K = K;
	w->wq = wq;
	w->ws = ws;
	if (check_size(N, K) < 0 || pack_panels(w) < 0) {
		wpack_free(w);
		return -1;
	}
	return 0;
}

int wpack_quant_i8(struct wpack *w, const float *W, int N, int K)
{
	int8_t *own;

	memset(w, 0, sizeof *w);
	if (check_size(N, K) < 0)
		return -1;
	/* the scales after the values, 4-byte aligned */
	size_t qb = ((size_t)N * K + 3) / 4 * 4;
	own = malloc(qb + sizeof(float) * N + 1);
	if (!own) {
		err_set("out of memory for an int8 [%d, %d] matrix", N, K);
		return -1;
	}
	quant_rows_i8(own, (float *)(own + qb), W, N, K, K);
	if (wpack_init_i8(w, own, (float *)(own + qb), N, K) < 0) {
		free(own);
		return -1;
	}
	w->own = own;
	return 0;
}

/* The end of an entry, the one sequence of every kernel. */
static inline float out(int32_t acc, float sx, float ws, const float *b,
			int relu)
{
	float s = sx * ws;
	float y = b ? fmaf((float)acc, s, *b) : (float)acc * s;

	return relu ? (y > 0 ? y : 0) : y;
}

struct call {
	struct wpack_i8_job j;
	const struct wpack *w;
	const float *ws;	/* the columns' scales: w->ws, or ones */
	const struct gemm_i8 *k;	/* the kernels (w->i8, or its exact
					   set for Marian's products) */
	const int8_t *xq;	/* the reference's x quantised, [M, K] */
	const int32_t *qsum;	/* the columns' corrections: the pack's
				   qsum, or linear_marian's */
	float *y;
};

static void ref_rows(void *ctx, int64_t lo, int64_t hi)
{
	const struct call *c = ctx;
	const struct wpack *w = c->w;
	int K = w->K, N = w->N;

	for (int64_t i = lo; i < hi; i++) {
		const int8_t *xr = c->xq + (size_t)i * K;
		for (int jn = 0; jn < N; jn++) {
			const int8_t *wr = w->wq + (size_t)jn * K;
			int32_t acc = 0;
			for (int k = 0; k < K; k++)
				acc += (int32_t)xr[k] * wr[k];
			c->y[(size_t)i * N + jn] =
				out(acc, c->j.sx[i], w->ws[jn],
				    c->j.b ? c->j.b + jn : NULL, c->j.relu);
		}
	}
}

static void panels(void *ctx, int64_t lo, int64_t hi)
{
	const struct call *c = ctx;
	struct wpack_i8_job j = c->j;

	for (int64_t q = lo; q < hi; q++) {
		int c0 = (int)q * WPACK_NR;
		j.cols = c->w->N - c0 < WPACK_NR ? c->w->N - c0 : WPACK_NR;
		j.P = c->w->pq + (size_t)q * j.kq * WPACK_NR * 4;
		j.qsum = (c->qsum ? c->qsum : c->w->qsum) + c0;
		j.ws = (c->ws ? c->ws : c->w->ws) + c0;
		j.b = c->j.b ? c->j.b + c0 : NULL;
		j.C = c->y + c0;
		c->k->panel(&j);
	}
}

/* struct gemm_i8's mbias where a set has none: marian_i8_bias of each
 * column. */
static void marian_bias_ref(float *mb, const int32_t *c, float ub,
			    const float *b, int n)
{
	for (int j = 0; j < n; j++)
		mb[j] = marian_i8_bias(c[j], ub, b ? b + j : NULL);
}

/* A Marian product's x quantised (linear_marian), for the threads. */
struct mcall {
	const float *x;
	const struct wpack *w;
	const struct gemm_i8 *u;
	void *xs;
	int M, kq, rmax, form;
	float qa;
};

/* Strips lo .. hi-1 of x's rows quantised as Marian does (qa,
 * marian_quant) into the kernels' form (struct gemm_i8's mquant). */
static void marian_pack_x(void *ctx, int64_t lo, int64_t hi)
{
	const struct mcall *c = ctx;

	c->u->mquant(c->xs, c->x, c->qa, c->M, c->w->K, c->kq, c->rmax,
		     c->form, (int)lo, (int)hi);
}

/*
 * Marian's product (marian_i8.h) on this CPU's int8 kernels: x quantised
 * Marian's way into their form; their exact int32 sums, as intgemm sums
 * on this CPU (the unsigned form on the set's msat, with saturating
 * pairs, where intgemm has no AVX512_VNNI: struct gemm_i8), end as
 * Marian's: fma((float)acc', u, b'), with every row's scale u =
 * 1 / (qa qb) (the columns' are ones, so the kernels' u 1 is u), the
 * bias b' = fma((float)c, ub, b) made once a call, and for the unsigned form
 * on the 8-bit sets acc' = acc + 127 c: the kernels take off c (the
 * column sums) where their own products take off 128 c.  The same bits
 * as marian_i8_ref, which serves where there are no kernels.
 */
static int linear_marian(float *y, const float *x, int M,
			 const struct wpack *w, const float *b, int relu)
{
	const struct gemm_i8 *u = w->pq ? w->i8 : NULL;
	int K = w->K, N = w->N, kq = (K + 3) / 4;
	int np = (N + WPACK_NR - 1) / WPACK_NR;
	int mf = (w->marian & WPACK_MARIAN_SHIFT_ALL) ||
		 ((w->marian & WPACK_MARIAN_SHIFT) && b) ? MARIAN_SHIFT
							 : MARIAN_SIGNED;
	int form = u ? u->xs_form : 0;

	if (u && mf == MARIAN_SHIFT && u->msat) {
		u = u->msat;
		mf = MARIAN_SHIFT_SAT;
		form = WPACK_XS_U8S;
	} else if (u && u->xs_form == WPACK_XS_U7) {	/* 8-bit x */
		u = u->exact;
		form = u->xs_form;
	}
	if (!u)
		return marian_i8_ref(y, x, M, w->wq, w->mcol, N, K, w->mqa,
				     w->mqb, b, mf, relu);
	float qa = w->mqa > 0 ? w->mqa :
		   127.0f / marian_max_abs(x, (size_t)M * K);
	float uq = 1.0f / (qa * w->mqb);
	float ub = (-1) * ((127.0f / qa) * (127.0f / w->mqb)) / 127.0f;
	int rmax = u->rmax, shift = mf != MARIAN_SIGNED;
	size_t mr = (size_t)(M + rmax - 1) / rmax * rmax;
	size_t xb = mr * kq * 4 * (form == WPACK_XS_I16 ? 2 : 1);
	size_t sxb = (sizeof(float) * mr + 63) / 64 * 64;
	/* the U7 kernel's zero points, 0; the bias b' */
	size_t zxb = u->xs_form == WPACK_XS_U7 ? sxb : 0;
	size_t bb = shift || b ? (sizeof(float) * N + 63) / 64 * 64 : 0;
	char *mem = kern_scratch(3, sxb + zxb + bb + xb);
	struct call c = { .w = w, .y = y, .ws = w->mone, .k = u };
	struct mcall mc = {
		.x = x, .w = w, .u = u, .M = M, .kq = kq, .rmax = rmax,
		.form = form, .qa = qa,
	};

	if (!mem) {
		err_set("out of memory for %d rows of int8", M);
		return -1;
	}
	for (size_t i = 0; i < mr; i++)
		((float *)mem)[i] = uq;
	memset(mem + sxb, 0, zxb);
	float *mb = bb ? (float *)(mem + sxb + zxb) : NULL;
	if (mb && !shift)
		memcpy(mb, b, sizeof(float) * N);
	else if (mb)
		(u->mbias ? u->mbias : marian_bias_ref)(mb, w->mcol, ub, b, N);
	mc.xs = mem + sxb + zxb + bb;
	long per = (long)K * rmax;
	kern_parallel_for((int64_t)(mr / rmax), (THREAD_WORK / 8 + per - 1) /
			  per, marian_pack_x, &mc);
	c.j.sx = (float *)mem;
	c.j.zx = zxb ? (int32_t *)(mem + sxb) : NULL;
	c.j.xs = mc.xs;
	c.j.b = mb;
	c.j.relu = relu;
	c.j.M = M;
	c.j.kq = kq;
	c.j.ldc = N;
	/* the unsigned form on an 8-bit set: acc + 128 c less c */
	c.qsum = mf == MARIAN_SHIFT && form == WPACK_XS_U8 ? w->mcol : NULL;
	per = (long)M * K * WPACK_NR;
	kern_parallel_for(np, (THREAD_WORK + per - 1) / per, panels, &c);
	return 0;
}

int linear_i8(float *y, const float *x, int M, const struct wpack *w,
	      const float *b, int relu)
{
	const struct gemm_i8 *u = w->pq ? w->i8 : NULL;
	int K = w->K, kq = (K + 3) / 4, np = (w->N + WPACK_NR - 1) / WPACK_NR;
	int rmax = u ? u->rmax : 1;
	size_t mr = (size_t)(M + rmax - 1) / rmax * rmax;
	/* the reference's xq [M, K], or the kernels' xs in their form */
	size_t xb = u ? mr * kq * 4 * (u->xs_form == WPACK_XS_I16 ? 2 : 1)
		      : (size_t)M * K;
	size_t sxb = (sizeof(float) * M + 63) / 64 * 64;
	/* the 7-bit form's zero points after the scales */
	int u7 = u && u->xs_form == WPACK_XS_U7;
	size_t zxb = u7 ? (sizeof(int32_t) * M + 63) / 64 * 64 : 0;
	char *mem;
	struct call c = { .w = w, .y = y, .k = u };

	if (M <= 0 || w->N <= 0)
		return 0;
	if (w->marian)	/* an imported Marian model's (marian_i8.h) */
		return linear_marian(y, x, M, w, b, relu);
	mem = kern_scratch(3, sxb + zxb + xb);
	if (!mem) {	/* no other path gives these bits */
		err_set("out of memory for %d rows of int8", M);
		return -1;
	}
	c.j.sx = (float *)mem;
	c.j.b = b;
	c.j.relu = relu;
	if (!u) {
		c.xq = (int8_t *)(mem + sxb);
		quant_rows_i8((int8_t *)c.xq, (float *)c.j.sx, x, M, K, K);
		long per = (long)w->N * K;
		kern_parallel_for(M, (THREAD_WORK + per - 1) / per, ref_rows,
				  &c);
		return 0;
	}
	if (u7) {
		c.j.zx = (int32_t *)(mem + sxb);
		u->quant_u7(mem + sxb + zxb, (float *)c.j.sx,
			    (int32_t *)c.j.zx, x, M, K, kq, rmax);
	} else
		u->quant(mem + sxb, (float *)c.j.sx, x, M, K, kq, rmax,
			 u->xs_form);
	c.j.xs = mem + sxb + zxb;
	c.j.M = M;
	c.j.kq = kq;
	c.j.ldc = w->N;
	long per = (long)M * K * WPACK_NR;
	kern_parallel_for(np, (THREAD_WORK + per - 1) / per, panels, &c);
	return 0;
}
