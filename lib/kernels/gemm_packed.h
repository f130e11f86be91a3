/*
 * gemm_packed.h: products of a few rows by a constant weight matrix, the
 * decoder's steps: y [M, N] = x [M, K] W^T + b, W [N, K] (a layer's
 * [out, in]), with W packed once into panels so that no call repacks it,
 * as sgemm must on every call.
 *
 * Packed in f32, every entry of y has the bits that sgemm(0, 1, ...) with
 * beta 0, then bias_forward (and relu_forward) give it: the sequence of
 * kern_impl.h (blocks of the table's kc, one FMA chain along k per entry),
 * whatever M, the entry's row among them and the threads.
 *
 * Packed in bf16 (AVX512_BF16 only), W's entries are rounded once, at
 * packing, and x's at each call, to bf16 (to nearest, ties to even, as
 * f32_to_bf16 of tensor.h; NaN stays NaN); an entry of y is the float sum
 * of its K exact products in the order of k (vdpbf16ps: a pair of k at a
 * time, each product added in turn, inputs and sums below 2^-126 counted
 * as zero), then + b and max(., 0).  So it differs from f32's by what
 * rounding the inputs to 8 significant bits does, and row i of y still
 * depends only on row i of x: the same bits whatever M, the row's place
 * among them and the threads (the kernel vectorises across columns only).
 */
#ifndef ATTN_GEMM_PACKED_H
#define ATTN_GEMM_PACKED_H

#include <stdint.h>

struct gemm_bf16;

/* Columns of W^T per panel. */
#define WPACK_NR 32

struct wpack {
	const float *W;		/* [N, K] as given: the reference kernels' */
	float *p;		/* panels of WPACK_NR columns of W^T, K rows
				   each, zero past N; or NULL */
	uint32_t *pb;		/* bf16: panels of WPACK_NR columns, (K + 1)
				   / 2 rows of pairs along k each (k even in
				   the low half), zero past N and K; or NULL */
	const struct gemm_bf16 *bf;	/* with pb: the kernels that made it
					   (kern_impl.h), which use it */
	int N, K;
};

/*
 * Packs W [N, K] (kept: w->W points to it) with pack WPACK_F32 or
 * WPACK_BF16, or with WPACK_KEEP only keeps it, for products too few to
 * pay for the packing (sgemm's path on W as stored, the same bits as
 * WPACK_F32).  0, or -1 (err_msg()): out of memory, or bf16 where
 * wpack_bf16_check refuses.
 */
enum { WPACK_KEEP, WPACK_F32, WPACK_BF16 };
int wpack_init(struct wpack *w, const float *W, int N, int K, int pack);
void wpack_free(struct wpack *w);
/* 0 when bf16 packs can be made: the AVX-512 kernels in force and a CPU
 * with AVX512_BF16 (as kern_set_matmul's bf16); else -1 with err_set. */
int wpack_bf16_check(void);

/* y [M, N] = x [M, K] W^T + b (b may be NULL), then max(y, 0) if relu.
 * 0, or -1 (err_msg()) when out of memory for x's bf16 pairs: a bf16
 * pack has no other path (f32 packs never fail). */
int linear_packed(float *y, const float *x, int M, const struct wpack *w,
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

/*
 * The bf16 kernel (gemm_packed_bf16_avx512bf16.c): C [M, cols] of one
 * bf16 panel P over its kp pairs: acc = 0, acc = dpbf16(acc, x_ip, P_pj)
 * pair by pair, C = acc + b[j] (b NULL: none), max(., 0) with relu.  x's
 * pairs in strips of WPACK_RMAX_BF16 rows: xs[s kp rmax + p rmax + r].
 */
#define WPACK_RMAX_BF16 12
struct wpack_bf16_job {
	int M, kp, cols, relu;
	const uint32_t *xs, *P;
	const float *b;
	float *C;
	long ldc;
};
void wpack_panel_bf16_avx512bf16(const struct wpack_bf16_job *j);

#endif
