/*
 * gemm_packed.h: products of a few rows by a constant weight matrix, the
 * decoder's steps: y [M, N] = x [M, K] W^T + b, W [N, K] (a layer's
 * [out, in]), with W packed once into panels so that no call repacks it,
 * as sgemm must on every call.
 *
 * Every entry of y has the bits that sgemm(0, 1, ...) with beta 0, then
 * bias_forward (and relu_forward) give it: the sequence of kern_impl.h
 * (blocks of the table's kc, one FMA chain along k per entry), whatever
 * M, the entry's row among them and the threads.
 */
#ifndef ATTN_GEMM_PACKED_H
#define ATTN_GEMM_PACKED_H

/* Columns of W^T per panel. */
#define WPACK_NR 32

struct wpack {
	const float *W;		/* [N, K] as given: the reference kernels' */
	float *p;		/* panels of WPACK_NR columns of W^T, K rows
				   each, zero past N; or NULL */
	int N, K;
};

/*
 * Packs W [N, K] (kept: w->W points to it), or with pack 0 only keeps it,
 * for products too few to pay for the packing (sgemm's path on W as
 * stored, the same bits).  0, or -1 (err_msg()).
 */
int wpack_init(struct wpack *w, const float *W, int N, int K, int pack);
void wpack_free(struct wpack *w);

/* y [M, N] = x [M, K] W^T + b (b may be NULL), then max(y, 0) if relu. */
void linear_packed(float *y, const float *x, int M, const struct wpack *w,
		   const float *b, int relu);

/*
 * The kernels of one instruction set (gemm_packed_avx2.c, _avx512.c): C
 * [M, cols] (row stride ldc; cols <= WPACK_NR) of one panel P, over k in
 * [0, K) by blocks of kc: acc = 0, acc = fma(x_ik, P_kj, acc) along the
 * block, C = acc + C (C = acc + 0 for the first); after the last, + b[j]
 * (b NULL: none) and max(., 0) with relu.  x is packed in strips of rmax
 * rows (WPACK_RMAX_*), k by k: strip s holds rows s rmax .. + rmax-1 as
 * xs[s K rmax + k rmax + r], zero past M.
 */
#define WPACK_RMAX_AVX2 6
#define WPACK_RMAX_AVX512 12
struct wpack_job {
	int M, K, kc, cols, relu;
	const float *xs, *P, *b;
	float *C;
	long ldc;
};
void wpack_panel_avx2(const struct wpack_job *j);
void wpack_panel_avx512(const struct wpack_job *j);

#endif
