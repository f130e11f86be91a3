/*
 * gemm_packed.c: the products of gemm_packed.h.  A call packs its few
 * rows of x (small) and splits the panels of W over the threads; each
 * panel's kernel keeps a strip of x and the panel's rows of the block in
 * cache while it runs down the strips.  The panel kernel is the table's
 * in force (kern_impl.h); the reference has none, no packed form: it
 * takes sgemm's own path on W as stored.  bf16 packs are made and used
 * with the bf16 kernels kern_bf16 gives at packing (kept in the pack):
 * sgemm's bf16 packers (kern_impl.h: x [n, k] to strips of w columns of
 * pairs along k), whose layout is the panels', and their panel kernel.
 * int8 packs: gemm_i8.c.
 */
#include <stdlib.h>
#include <string.h>

#include "base/errmsg.h"
#include "gemm_packed.h"
#include "kern_impl.h"
#include "vec4.h"

/* Below about this many multiply-adds a second thread costs more than it
 * saves (as sgemm's). */
#define THREAD_WORK (1L << 17)
/* Packing: floats copied per chunk, at least. */
#define PACK_WORK (1L << 16)

int wpack_bf16_check(void)
{
	return kern_bf16() ? 0 : -1;
}

static int pack_bf16(struct wpack *w, const float *W, int N, int K)
{
	const struct gemm_bf16 *u = kern_bf16();
	int np = (N + WPACK_NR - 1) / WPACK_NR;
	size_t bytes = sizeof(uint32_t) * WPACK_NR * ((size_t)np *
						      ((K + 1) / 2) + 1);

	if (!u)
		return -1;
	w->pb = aligned_alloc(64, (bytes + 63) / 64 * 64);
	if (!w->pb) {
		err_set("out of memory for a packed [%d, %d] matrix", N, K);
		return -1;
	}
	w->bf = u;
	u->pack_cols(WPACK_NR, K, N, W, K, w->pb);
	return 0;
}

/* Panels lo .. hi-1 of w->W into w->p: W's rows read sequentially, 16 of
 * their entries at a time written down the panel. */
static void pack_panels(void *ctx, int64_t lo, int64_t hi)
{
	const struct wpack *w = ctx;
	int N = w->N, K = w->K;

	for (int64_t q = lo; q < hi; q++) {
		float *P = w->p + (size_t)q * K * WPACK_NR;
		int c0 = (int)q * WPACK_NR;
		for (int k0 = 0; k0 < K; k0 += 16) {
			int kn = K - k0 < 16 ? K - k0 : 16;
			for (int c = 0; c < WPACK_NR; c++) {
				const float *r = w->W + (size_t)(c0 + c) * K +
						 k0;
				for (int k = 0; k < kn; k++)
					P[(size_t)(k0 + k) * WPACK_NR + c] =
						c0 + c < N ? r[k] : 0;
			}
		}
	}
}

int wpack_init(struct wpack *w, const float *W, int N, int K, int pack)
{
	int np = (N + WPACK_NR - 1) / WPACK_NR;
	size_t bytes = sizeof(float) * WPACK_NR * ((size_t)np * K + 1);

	if (pack == WPACK_I8)
		return wpack_quant_i8(w, W, N, K);
	memset(w, 0, sizeof *w);
	w->W = W;
	w->N = N;
	w->K = K;
	if (pack == WPACK_BF16)
		return pack_bf16(w, W, N, K);
	if (pack != WPACK_F32)
		return 0;
	w->p = aligned_alloc(64, (bytes + 63) / 64 * 64);
	if (!w->p) {
		err_set("out of memory for a packed [%d, %d] matrix", N, K);
		return -1;
	}
	kern_parallel_for(np, (PACK_WORK + (long)K * WPACK_NR - 1) /
			  ((long)K * WPACK_NR), pack_panels, w);
	return 0;
}

void wpack_free(struct wpack *w)
{
	free(w->p);
	free(w->pb);
	free(w->pq);
	free(w->qsum);
	free(w->own);
	free(w->mcol);
	w->mcol = NULL;
	w->marian = 0;
	w->p = NULL;
	w->pb = NULL;
	w->pq = NULL;
	w->qsum = NULL;
	w->own = NULL;
}

struct call {
	void (*panel)(const struct wpack_job *j);
	struct wpack_job j;
	struct wpack_bf16_job jb;	/* with w->pb */
	const struct wpack *w;
	float *y;
};

static void panels(void *ctx, int64_t lo, int64_t hi)
{
	const struct call *c = ctx;
	struct wpack_job j = c->j;
	struct wpack_bf16_job jb = c->jb;

	for (int64_t q = lo; q < hi; q++) {
		int c0 = (int)q * WPACK_NR;
		int cols = c->w->N - c0 < WPACK_NR ? c->w->N - c0 : WPACK_NR;
		const float *b = c->j.b ? c->j.b + c0 : NULL;
		if (c->w->pb) {
			jb.cols = cols;
			jb.P = c->w->pb + (size_t)q * jb.kp * WPACK_NR;
			jb.b = b;
			jb.C = c->y + c0;
			c->w->bf->wpack_panel(&jb);
			continue;
		}
		j.cols = cols;
		j.P = c->w->p + (size_t)q * c->w->K * WPACK_NR;
		j.b = b;
		j.C = c->y + c0;
		c->panel(&j);
	}
}

/* Rows x0 .. x0 + 3 ld of k .. k+3 into xs [4, rmax]'s first four
 * columns: a 4 x 4 transpose in registers. */
static inline void pack_4x4(float *xs, const float *x0, size_t ld, int rmax)
{
	f32x4 a = ld4(x0), b = ld4(x0 + ld), c = ld4(x0 + 2 * ld);
	f32x4 d = ld4(x0 + 3 * ld);
	f32x4 ab0 = __builtin_shufflevector(a, b, 0, 4, 1, 5);
	f32x4 ab1 = __builtin_shufflevector(a, b, 2, 6, 3, 7);
	f32x4 cd0 = __builtin_shufflevector(c, d, 0, 4, 1, 5);
	f32x4 cd1 = __builtin_shufflevector(c, d, 2, 6, 3, 7);

	st4(xs, __builtin_shufflevector(ab0, cd0, 0, 1, 4, 5));
	st4(xs + rmax, __builtin_shufflevector(ab0, cd0, 2, 3, 6, 7));
	st4(xs + 2 * rmax, __builtin_shufflevector(ab1, cd1, 0, 1, 4, 5));
	st4(xs + 3 * rmax, __builtin_shufflevector(ab1, cd1, 2, 3, 6, 7));
}

/*
 * xs: x [M, K] in strips of rmax rows, k by k, zero past M.  Serial (each
 * product's threads need all of it), so in blocks of four rows by four k
 * transposed in registers: element by element, the strided stores took
 * about a twentieth of a decoder step.
 */
static void pack_x(float *xs, const float *x, int M, int K, int rmax)
{
	for (int s = 0; s < M; s += rmax, xs += (size_t)rmax * K) {
		int rows = M - s < rmax ? M - s : rmax, r = 0;
		for (; r + 4 <= rows; r += 4) {
			const float *x0 = x + (size_t)(s + r) * K;
			int k = 0;
			for (; k + 4 <= K; k += 4)
				pack_4x4(xs + (size_t)k * rmax + r, x0 + k,
					 (size_t)K, rmax);
			for (; k < K; k++)
				for (int i = 0; i < 4; i++)
					xs[(size_t)k * rmax + r + i] =
						x0[(size_t)i * K + k];
		}
		for (; r < rmax; r++) {
			const float *xr = x + (size_t)(s + r) * K;
			for (int k = 0; k < K; k++)
				xs[(size_t)k * rmax + r] = r < rows ? xr[k] : 0;
		}
	}
}

int linear_packed(float *y, const float *x, int M, const struct wpack *w,
		  const float *b, int relu)
{
	const struct kern_ops *ops = kern_ops();
	struct call c = { .w = w, .y = y };
	int rmax = 0, np = (w->N + WPACK_NR - 1) / WPACK_NR;
	float *xs = NULL;

	if (w->wq)
		return linear_i8(y, x, M, w, b, relu);
	if (M <= 0 || w->N <= 0)
		return 0;
	if (w->pb) {
		int kp = (w->K + 1) / 2;
		uint32_t *xp = kern_scratch(3, sizeof(uint32_t) * kp *
				((M + WPACK_RMAX_BF16 - 1) / WPACK_RMAX_BF16 *
				 WPACK_RMAX_BF16));
		if (!xp) {	/* sgemm on W would give other bits */
			err_set("out of memory for %d rows of bf16 pairs", M);
			return -1;
		}
		w->bf->pack_cols(WPACK_RMAX_BF16, w->K, M, x, w->K, xp);
		c.j.b = b;
		c.jb = (struct wpack_bf16_job){ .M = M, .kp = kp,
						.relu = relu, .xs = xp,
						.ldc = w->N };
		long per = (long)M * w->K * WPACK_NR / 2;
		kern_parallel_for(np, (THREAD_WORK + per - 1) / per, panels,
				  &c);
		return 0;
	}
	if (ops->wpack_panel && w->p && w->K > 0) {
		c.panel = ops->wpack_panel;
		rmax = ops->wpack_rmax;
		xs = kern_scratch(3, sizeof(float) * w->K *
				  ((M + rmax - 1) / rmax * rmax));
	}
	if (!xs) {
		sgemm(0, 1, M, w->N, w->K, 1.0f, x, w->K, w->W, w->K, 0.0f, y,
		      w->N);
		if (b)
			bias_forward(y, b, M, w->N);
		if (relu)
			relu_forward(y, y, (size_t)M * w->N);
		return 0;
	}
	pack_x(xs, x, M, w->K, rmax);
	c.j = (struct wpack_job){ .M = M, .K = w->K, .kc = ops->gemm->kc,
				  .relu = relu, .xs = xs, .b = b,
				  .ldc = w->N };
	long per = (long)M * w->K * WPACK_NR;
	kern_parallel_for(np, (THREAD_WORK + per - 1) / per, panels, &c);
	return 0;
}
