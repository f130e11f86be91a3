/*
 * gemm_i8.c: the int8 products of gemm_packed.h: quantisation of rows,
 * int8 packs, and linear_packed on them.  A call has the pack's kernels
 * (kern_impl.h) quantise its few rows of x into their packed form, then
 * splits the panels over the threads, as the f32 and bf16 packs do; with
 * the reference (no packed panels) it runs plain loops on wq.  Every path
 * computes each entry's exact int32 sum and then the same float
 * operations, so all of them give the same bits.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/errmsg.h"
#include "gemm_packed.h"
#include "kern_impl.h"

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
	for (int q = 0; q < np; q++) {
		int8_t *P = w->pq + (size_t)q * kq * WPACK_NR * 4;
		for (int c = 0; c < WPACK_NR; c++) {
			int j = q * WPACK_NR + c;
			const int8_t *r = w->wq + (size_t)j * K;
			int32_t sum = 0;
			for (int k = 0; k < kq * 4; k++) {
				int8_t v = j < N && k < K ? r[k] : 0;
				P[((size_t)(k / 4) * WPACK_NR + c) * 4 +
				  k % 4] = v;
				sum += v;
			}
			w->qsum[j] = 128 * sum;
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
	const int8_t *xq;	/* the reference's x quantised, [M, K] */
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
		j.qsum = c->w->qsum + c0;
		j.ws = c->w->ws + c0;
		j.b = c->j.b ? c->j.b + c0 : NULL;
		j.C = c->y + c0;
		c->w->i8->panel(&j);
	}
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
	char *mem;
	struct call c = { .w = w, .y = y };

	if (M <= 0 || w->N <= 0)
		return 0;
	mem = kern_scratch(3, sxb + xb);
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
	u->quant(mem + sxb, (float *)c.j.sx, x, M, K, kq, rmax, u->xs_form);
	c.j.xs = mem + sxb;
	c.j.M = M;
	c.j.kq = kq;
	c.j.ldc = w->N;
	long per = (long)M * K * WPACK_NR;
	kern_parallel_for(np, (THREAD_WORK + per - 1) / per, panels, &c);
	return 0;
}
