/*
 * gemm_packed.c: the products of gemm_packed.h.  A call packs its few
 * rows of x (small) and splits the panels of W over the threads; each
 * panel's kernel keeps a strip of x and the panel's rows of the block in
 * cache while it runs down the strips.  The reference kernels have no
 * packed form: they take sgemm's own path on W as stored.
 */
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "gemm_packed.h"
#include "kern_impl.h"

/* Below about this many multiply-adds a second thread costs more than it
 * saves (as sgemm's). */
#define THREAD_WORK (1L << 17)

int wpack_init(struct wpack *w, const float *W, int N, int K, int pack)
{
	int np = (N + WPACK_NR - 1) / WPACK_NR;
	size_t bytes = sizeof(float) * WPACK_NR * ((size_t)np * K + 1);

	w->W = W;
	w->N = N;
	w->K = K;
	w->p = NULL;
	if (!pack)
		return 0;
	w->p = aligned_alloc(64, (bytes + 63) / 64 * 64);
	if (!w->p) {
		err_set("out of memory for a packed [%d, %d] matrix", N, K);
		return -1;
	}
	/* W's rows read sequentially, 16 of their entries at a time
	 * written down the panel */
	for (int q = 0; q < np; q++) {
		float *P = w->p + (size_t)q * K * WPACK_NR;
		int c0 = q * WPACK_NR;
		for (int k0 = 0; k0 < K; k0 += 16) {
			int kn = K - k0 < 16 ? K - k0 : 16;
			for (int c = 0; c < WPACK_NR; c++) {
				const float *r = W + (size_t)(c0 + c) * K + k0;
				for (int k = 0; k < kn; k++)
					P[(size_t)(k0 + k) * WPACK_NR + c] =
						c0 + c < N ? r[k] : 0;
			}
		}
	}
	return 0;
}

void wpack_free(struct wpack *w)
{
	free(w->p);
	w->p = NULL;
}

struct call {
	void (*panel)(const struct wpack_job *j);
	struct wpack_job j;
	const struct wpack *w;
	float *y;
};

static void panels(void *ctx, int64_t lo, int64_t hi)
{
	const struct call *c = ctx;
	struct wpack_job j = c->j;

	for (int64_t q = lo; q < hi; q++) {
		int c0 = (int)q * WPACK_NR;
		j.cols = c->w->N - c0 < WPACK_NR ? c->w->N - c0 : WPACK_NR;
		j.P = c->w->p + (size_t)q * c->w->K * WPACK_NR;
		j.b = c->j.b ? c->j.b + c0 : NULL;
		j.C = c->y + c0;
		c->panel(&j);
	}
}

/* xs: x [M, K] in strips of rmax rows, k by k, zero past M. */
static void pack_x(float *xs, const float *x, int M, int K, int rmax)
{
	for (int s = 0; s < M; s += rmax, xs += (size_t)rmax * K) {
		int rows = M - s < rmax ? M - s : rmax;
		for (int r = 0; r < rmax; r++) {
			const float *xr = x + (size_t)(s + r) * K;
			for (int k = 0; k < K; k++)
				xs[(size_t)k * rmax + r] = r < rows ? xr[k] : 0;
		}
	}
}

void linear_packed(float *y, const float *x, int M, const struct wpack *w,
		   const float *b, int relu)
{
	const struct kern_ops *ops = kern_ops();
	struct call c = { .w = w, .y = y };
	int rmax = 0, np = (w->N + WPACK_NR - 1) / WPACK_NR;
	float *xs = NULL;

	if (M <= 0 || w->N <= 0)
		return;
#ifndef ATTN_NO_SIMD
	if (ops->gemm && w->p && w->K > 0) {
		int isa = kern_isa();
		c.panel = isa == ISA_AVX512 ? wpack_panel_avx512 :
			  wpack_panel_avx2;
		rmax = isa == ISA_AVX512 ? WPACK_RMAX_AVX512 : WPACK_RMAX_AVX2;
		xs = kern_scratch(3, sizeof(float) * w->K *
				  ((M + rmax - 1) / rmax * rmax));
	}
#endif
	if (!xs) {
		sgemm(0, 1, M, w->N, w->K, 1.0f, x, w->K, w->W, w->K, 0.0f, y,
		      w->N);
		if (b)
			bias_forward(y, b, M, w->N);
		if (relu)
			relu_forward(y, y, (size_t)M * w->N);
		return;
	}
	pack_x(xs, x, M, w->K, rmax);
	c.j = (struct wpack_job){ .M = M, .K = w->K, .kc = ops->gemm->kc,
				  .relu = relu, .xs = xs, .b = b,
				  .ldc = w->N };
	long per = (long)M * w->K * WPACK_NR;
	kern_parallel_for(np, (THREAD_WORK + per - 1) / per, panels, &c);
}
