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
struct gemm_i8;

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
	/* int8 (WPACK_I8, below): W's rows as int8 and their scales */
	const int8_t *wq;	/* [N, K], w_jk = wq_jk ws_j */
	const float *ws;	/* [N] */
	int8_t *own;		/* wq and ws when the pack quantised W */
	int8_t *pq;		/* panels of WPACK_NR columns, (K + 3) / 4
				   quads along k each (k % 4 the byte), zero
				   past N and K; NULL: the reference loops */
	int32_t *qsum;		/* [panels * WPACK_NR]: 128 sum_k wq_jk */
	const struct gemm_i8 *i8;	/* with pq: the kernels that made it */
	/* With marian (WPACK_MARIAN_*, wpack_marian): the int8 products
	 * are Marian's (marian_i8.h) on wq, A's multiplier mqa (0: per
	 * call), B's mqb, the column sums mcol; ws is not used. */
	int marian;
	float mqa, mqb;
	int32_t *mcol;		/* [N] (zero to the last panel's end), then
				   mone [N], ones */
	float *mone;
	int N, K;
};

/*
 * Packs W [N, K] (kept: w->W points to it) with pack WPACK_F32 or
 * WPACK_BF16, or with WPACK_KEEP only keeps it, for products too few to
 * pay for the packing (sgemm's path on W as stored, the same bits as
 * WPACK_F32).  0, or -1 (err_msg()): out of memory, or bf16 where
 * wpack_bf16_check refuses.
 */
enum { WPACK_KEEP, WPACK_F32, WPACK_BF16, WPACK_I8 };
int wpack_init(struct wpack *w, const float *W, int N, int K, int pack);
void wpack_free(struct wpack *w);
/* 0 when bf16 packs can be made: the AVX-512 kernels in force and a CPU
 * with AVX512_BF16 (as kern_set_matmul's bf16); else -1 with err_set. */
int wpack_bf16_check(void);

/* y [M, N] = x [M, K] W^T + b (b may be NULL), then max(y, 0) if relu.
 * 0, or -1 (err_msg()) when out of memory for x's bf16 pairs or int8
 * rows: a bf16 or int8 pack has no other path (f32 packs never fail). */
int linear_packed(float *y, const float *x, int M, const struct wpack *w,
		  const float *b, int relu);

/*
 * int8 (gemm_i8.c).  Rows are quantised symmetrically, one scale per row:
 * s = max_k |x_k| / 127, q_k = nearbyint(x_k 127 / max) (ties to even),
 * in [-127, 127] (never -128), so that x_k = s q_k within s / 2; a row of
 * zeros has s = 0 and q = 0, a row holding a NaN or an infinity s = NaN
 * and q = 0 (its products are NaN).  quant_rows_i8 does it for x [rows, K]
 * (row stride ld) into q [rows, K] and s [rows].
 *
 * An int8 pack holds W [N, K] so quantised (wpack_init with WPACK_I8
 * quantises W, wpack_init_i8 borrows wq and ws as given, an exported
 * model's).  linear_packed on it quantises each row of x as above and
 * computes, for every entry, the exact int32 sum acc = sum_k qx_ik wq_jk,
 * then y_ij = fma((float)acc, sx_i ws_j, b_j) (without b: the product),
 * max(., 0) with relu.  Every kernel of this 8-bit form (the reference
 * loops, AVX2's vpmaddwd, VNNI; CPUs without VNNI take the 7-bit form
 * below) gives these bits: the sums are exact and the rest is one
 * sequence, so a row's output is the same whatever the batch, the
 * threads and the instruction set.  Against the f32 product of x and the dequantised W,
 * |y_ij - sum_k x_ik w_jk| <= sx_i / 2 sum_k |w_jk| (x's rounding) plus
 * float's few roundings.  K is at most WPACK_I8_KMAX, so that no int32 sum
 * can overflow (VNNI's sums of (q + 128) wq reach K 255 127).
 */
#define WPACK_I8_KMAX 65536
/* The sum of the n signed bytes r (an int8 matrix's row: the kernels'
 * column sums, Marian's bias corrections). */
int32_t i8_row_sum(const int8_t *r, int n);
void quant_rows_i8(int8_t *q, float *s, const float *x, int rows, int K,
		   long ld);
/*
 * The 7-bit form, for CPUs without VNNI (kern_i8 says which), whose
 * vpmaddubsw adds pairs of unsigned by signed byte products into int16
 * with saturation: x's row as u in [0, 127] with a zero point zp, so
 * that a pair, |u w + u' w'| <= 2 127 128 = 32512, cannot saturate
 * whatever the int8 weights.  mn = min(0, min_k x_k), mx = max(0, max_k
 * x_k), s = (mx - mn) / 127, inv = 127 / (mx - mn) (kern_impl.h's u7_row:
 * each rounded once), zp = nearbyint(-mn inv) in [0, 127], u_k =
 * min(max(nearbyint(x_k inv) + zp, 0), 127), so that x_k = s (u_k - zp)
 * within s (1/2 + 2^-14); a row of zeros (or of range below 2^-100) has
 * s = 0, u = 0, zp = 0; one holding a NaN or an infinity s = NaN, u = 0,
 * zp = 0.  A row of one sign keeps 127 steps over its range (8-bit's
 * step), a row of both about 63.5 over its larger side.  An entry is
 * acc = sum_k (u_ik - zp_i) wq_jk, exact in int32 (the kernel's sum of
 * u wq less zp_i times the column's sum of wq), then as above:
 * fma((float)acc, sx_i ws_j, b_j), relu.  quant_rows_u7 does it for x
 * [rows, K] (row stride ld) into u [rows, K], s and zp [rows].
 */
void quant_rows_u7(uint8_t *u, float *s, int32_t *zp, const float *x,
		   int rows, int K, long ld);
int wpack_init_i8(struct wpack *w, const int8_t *wq, const float *ws, int N,
		  int K);
/*
 * An int8 pack's products made Marian's (marian_i8.h): A's multiplier qa
 * (its alpha; 0: 127 / max |x| per call), B's qb (the whole matrix:
 * w = wq / qb), and which of them are unsigned: WPACK_MARIAN_SHIFT
 * those with a bias (Marian's int8shift), with WPACK_MARIAN_SHIFT_ALL
 * every one (int8shiftAll); neither: int8.  0, or -1 (err_msg()).
 */
enum { WPACK_MARIAN = 1, WPACK_MARIAN_SHIFT = 2, WPACK_MARIAN_SHIFT_ALL = 4 };
int wpack_marian(struct wpack *w, float qa, float qb, int mode);

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

/*
 * The int8 kernels (kern_impl.h's struct gemm_i8): C [M, cols] of one int8
 * panel P (kq quads) with its column sums qsum (128 sum_k, for the u8
 * form), scales ws and bias b (NULL: none) of its columns, as
 * gemm_packed.h's int8 product says.  x's quantised rows, xq [M, kq * 4]
 * with scales sx [M], come packed in the kernel's form (kern_impl.h's
 * WPACK_XS_*) in strips of rmax rows, quad by quad: strip s, quad p,
 * row r at element (s kq + p) rmax + r, zero past M.
 */
struct wpack_i8_job {
	int M, kq, cols, relu;
	const void *xs;
	const float *sx;
	const int32_t *zx;	/* WPACK_XS_U7: x's zero points [M] */
	const int8_t *P;
	const int32_t *qsum;
	const float *ws, *b;
	float *C;
	long ldc;
};
/* The kernels' bias mode of job j: 0 none, 1 fma. */
#define WPACK_I8_BIAS(j) ((j)->b != NULL)

#endif
