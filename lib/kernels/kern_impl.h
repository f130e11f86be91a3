/*
 * kern_impl.h: the inside of the kernels (not installed for users of
 * kernels.h, though it lives beside it).  Each instruction set provides a
 * table of serial kernels (struct kern_ops); kern_dispatch.c picks one at
 * run time and the public functions of kernels.h split the work over the
 * thread pool and call into the table.  An instruction set that has no
 * version of a kernel leaves its slot NULL and the one below is used.
 */
#ifndef ATTN_KERN_IMPL_H
#define ATTN_KERN_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "kernels.h"

/*
 * sgemm gives every entry of C the same bits whatever the shape of the call
 * (a batch of one row or of many, the thread split, the path taken): per
 * table, C = beta C first, then for each block of kc values of k in
 * increasing order, acc = 0, acc = fma(a_ik, b_kj, acc) for k in the block
 * in increasing order, and C = fma(alpha, acc, C).  The kernels below all
 * follow that sequence: they vectorise across i or j, never along k.
 */

/* The register-blocked micro-kernel of the blocked sgemm (gemm.c):
 * C [MR, NR] (row stride ldc) = fma(alpha, Ap Bp, C) over kc, where Ap is a
 * packed panel of MR rows (kc columns of MR) and Bp of NR columns (kc rows
 * of NR). */
typedef void (*gemm_ukr_fn)(int kc, float alpha, const float *Ap,
			    const float *Bp, float *C, long ldc);

/* The 8 floats at rows[i] + p for i < 8, transposed into out:
 * out[q * os + i] = rows[i][p + q]. */
typedef void (*gemm_t8_fn)(const float *const rows[8], long p, float *out,
			   long os);

/*
 * The small-M path's kernels, on operands as stored (nothing packed).
 * tile, for B stored [N, K]: for r < nx and l < ny (ny <= GEMM_TL),
 * acc = sum over k < kc of x[r][k] y[k * ys + l] and C[l * ldc + r] =
 * fma(alpha, acc, C): x holds GEMM_TR rows of B (the caller repeats one
 * past nx), y is op(A) transposed.  rows, for B stored [K, N]: C [M, N] =
 * fma(alpha, acc, C), acc = A [M, kc] B [kc, N] (a_ik at A[i ars + k acs]),
 * in acc [M, GEMM_NB] (scratch).  cols, for B stored [N, K] and M up
 * to GEMM_CM: the same with b_kj at B[j ldb + k], in acc [GEMM_CM + 8, kc].
 */
#define GEMM_TR 8
#define GEMM_TL 16
#define GEMM_NB 256
#define GEMM_CM 4
typedef void (*gemm_tile_fn)(int kc, float alpha, const float *const x[],
			     int nx, const float *y, long ys, int ny,
			     float *C, long ldc);
typedef void (*gemm_rows_fn)(int M, int N, int kc, float alpha,
			     const float *A, long ars, long acs,
			     const float *B, long ldb, float *C, long ldc,
			     float *acc);

/* op(A) at row i, column k; op(B) at row k, column j (sgemm's ta, tb). */
static inline const float *gemm_at_a(int ta, const float *A, long lda, long i,
				     long k)
{
	return ta ? A + k * lda + i : A + i * lda + k;
}

static inline const float *gemm_at_b(int tb, const float *B, long ldb, long k,
				     long j)
{
	return tb ? B + j * ldb + k : B + k * ldb + j;
}

struct gemm_ukr {
	int mr, nr;             /* register block */
	int mc, kc, nc;         /* cache blocks: mc % mr == 0, nc % nr == 0 */
	gemm_ukr_fn kernel;
	gemm_t8_fn t8;          /* for packing transposed panels, or NULL */
	/* Blocks of C of at most small_m rows take the tile kernel, or cols
	 * up to GEMM_CM (decoder steps: B streamed as stored, never packed). */
	int small_m;
	gemm_tile_fn tile;
	gemm_rows_fn rows;
	gemm_rows_fn cols;
};

/*
 * sgemm in bf16 (kernels.h, gemm_bf16.c): the same blocking on panels of
 * bf16 pairs along k, one uint32_t each (k even in the low half, k odd in
 * the high half, zero past k), kc even.  Ap: strips of mr rows of op(A),
 * Ap[p * mr + i] the pair p of row i; Bp: strips of nr columns of op(B),
 * Bp[p * nr + j] the pair p of column j.  The kernel: C [mr, nr] (row
 * stride ldc) = fma(alpha, Ap Bp, C) over kp pairs.  The packers convert
 * x [k, n] stored row by row (pack_rows) or transposed (pack_cols: x
 * [n, k]), row stride ld, into strips of w columns, zero-padded.
 */
typedef void (*gemm_bf16_ukr_fn)(int kp, float alpha, const uint32_t *Ap,
				 const uint32_t *Bp, float *C, long ldc);
typedef void (*gemm_bf16_pack_fn)(int w, int k, int n, const float *x,
				  long ld, uint32_t *d);
struct wpack_job;
struct wpack_bf16_job;
struct gemm_bf16 {
	int mr, nr;
	int mc, kc, nc;         /* mc % mr == 0, nc % nr == 0, kc even */
	gemm_bf16_ukr_fn kernel;
	gemm_bf16_pack_fn pack_rows, pack_cols;
	/* gemm_packed.h's kernel of one bf16 panel */
	void (*wpack_panel)(const struct wpack_bf16_job *j);
};

/* The bf16 kernels while sgemm's precision is bf16, else NULL. */
const struct gemm_bf16 *kern_gemm_bf16(void);
/* C [M, N] = fma(alpha, op(A) op(B), C) in bf16 (C already scaled by
 * beta), on one thread; -1 when out of memory for its panels. */
int gemm_bf16_blocked(const struct gemm_bf16 *u, int ta, int tb, int M,
		       int N, int K, float alpha, const float *A, long lda,
		       const float *B, long ldb, float *C, long ldc);

/*
 * int8 products (gemm_packed.h): an instruction set's form of a quad (4
 * values of k) of x's quantised rows and its panel kernel.  WPACK_XS_I16:
 * four int16, sign-extended (AVX2's vpmaddwd); WPACK_XS_U8: four bytes
 * q + 128 (VNNI's vpdpbusd multiplies unsigned by signed bytes; the
 * kernel subtracts 128 sum_k wq_jk, qsum, to undo the shift);
 * WPACK_XS_U7: four bytes u in [0, 127], x quantised by quant_rows_u7
 * (gemm_packed.h) with a zero point per row (vpmaddubsw without VNNI;
 * the kernel subtracts zx_i sum_k wq_jk, qsum / 128); WPACK_XS_U8S: four
 * bytes q + 127 of Marian's quantisation, its unsigned form (mquant only,
 * for a set's msat).
 */
struct wpack;
struct wpack_i8_job;
enum { WPACK_XS_I16, WPACK_XS_U8, WPACK_XS_U7, WPACK_XS_U8S };
struct gemm_i8 {
	int rmax;		/* rows of x per strip */
	int xs_form;		/* WPACK_XS_* */
	void (*panel)(const struct wpack_i8_job *j);
	/* x [M, K] quantised as quant_rows_i8 (the same bits), scales into
	 * sx, values straight into xs in the form, kq quads a row, zero
	 * past M and K (the strips of struct wpack_i8_job). */
	void (*quant)(void *xs, float *sx, const float *x, int M, int K,
		      int kq, int rmax, int form);
	/* WPACK_XS_U7 (quant NULL): x quantised as quant_rows_u7 (the same
	 * bits), scales into sx, zero points into zx, u into xs, zero past
	 * M (past K any u: the panels' weights there are zero). */
	void (*quant_u7)(void *xs, float *sx, int32_t *zx, const float *x,
			 int M, int K, int kq, int rmax);
	/* An imported Marian model's x (linear_marian): strips s0 .. s1-1
	 * of x [M, K] quantised as marian_quant by qa (the same bits),
	 * into xs in the form (the set's own, or WPACK_XS_U8S), zero past
	 * M and K (q = 0). */
	void (*mquant)(void *xs, const float *x, float qa, int M, int K,
		       int kq, int rmax, int form, int s0, int s1);
	/* Its bias b' [n] (linear_marian): marian_i8_bias of each column
	 * (NULL: that function's loop). */
	void (*mbias)(float *mb, const int32_t *c, float ub, const float *b,
		      int n);
	/* WPACK_XS_U7: a set of the exact 8-bit sums on the same panels,
	 * which Marian's signed products (x quantised their own way) run
	 * on. */
	const struct gemm_i8 *exact;
	/* Marian's unsigned products on this set's CPU (marian_i8.h,
	 * MARIAN_SHIFT_SAT): intgemm picks its kernels by AVX512_VNNI
	 * alone, and without it sums pairs of (q + 127) wq with
	 * vpmaddubsw, saturating at int16.  The set that sums them so
	 * (a U7 set, whose kernel is that instruction, on x in the
	 * WPACK_XS_U8S form, zero points 0), NULL where they are exact
	 * (AVX512_VNNI).  The AVX-VNNI set has one: intgemm does not use
	 * AVX-VNNI. */
	const struct gemm_i8 *msat;
};

/*
 * quant_rows_u7's scale s, 1 / s as inv and zero point of a row whose
 * least and greatest values, 0 included, are mn <= 0 <= mx (mx > mn),
 * in one place for every version: the range in double (no overflow),
 * s = range / 127 and inv = 127 / range each rounded once to float,
 * zp = -mn inv rounded to nearest even (adding 1.5 2^23), in [0, 127].
 * A range below 2^-100 counts as zeros (0 of the return; its inv would
 * overflow): s = 0.
 */
static inline int u7_row(float mn, float mx, float *s, float *inv,
			 int32_t *zp)
{
	double d = (double)mx - (double)mn;
	float z;

	if (!(d >= 0x1p-100)) {
		*s = 0;
		*inv = 0;
		*zp = 0;
		return 0;
	}
	*s = (float)(d / 127);
	*inv = (float)(127 / d);
	z = (-mn * *inv + 0x1.8p23f) - 0x1.8p23f;
	*zp = z < 0 ? 0 : z > 127 ? 127 : (int32_t)z;
	return 1;
}
/* The int8 kernels of the table in force and the CPU (AVX-512 with
 * AVX512_VNNI; else AVX2 with AVX-VNNI; without VNNI the 7-bit form on
 * AVX-512BW or AVX2: ATTN_KERNELS=avx2-novnni and avx512-novnni choose
 * as if there were none), NULL with
 * the reference (its loops on wq).  Every set reads the one panel layout
 * (gemm_packed.h), so a pack serves any of them; kern_i8_all gives each
 * set this CPU can run, with its name, for tests and benchmarks (at
 * most KERN_I8_MAX; returns how many). */
const struct gemm_i8 *kern_i8(void);
#define KERN_I8_MAX 5
int kern_i8_all(const struct gemm_i8 *k[KERN_I8_MAX],
		const char *name[KERN_I8_MAX]);
/* wpack_init's WPACK_I8: W quantised into w->own, then wpack_init_i8. */
int wpack_quant_i8(struct wpack *w, const float *W, int N, int K);
/* linear_packed on an int8 pack. */
int linear_i8(float *y, const float *x, int M, const struct wpack *w,
	      const float *b, int relu);

struct kern_ops {
	const char *name;

	/* sgemm's kernels and blocking; NULL: the reference loops. */
	const struct gemm_ukr *gemm;
	/* gemm_packed.h's kernel of one f32 panel, on strips of wpack_rmax
	 * rows of x; NULL (the reference): no packed form, sgemm's path on
	 * W as stored. */
	void (*wpack_panel)(const struct wpack_job *j);
	int wpack_rmax;

	void (*vexp)(float *y, const float *x, size_t n);
	void (*vtanh)(float *y, const float *x, size_t n);
	void (*vsigmoid)(float *y, const float *x, size_t n);

	void (*bias_forward)(float *x, const float *b, int rows, int n);
	void (*relu_forward)(float *y, const float *x, size_t n);
	void (*relu_backward)(float *dx, const float *dy, const float *y,
			      size_t n);

	void (*softmax_rows)(float *y, const float *x, int rows, int n);
	void (*log_softmax_rows)(float *y, const float *x, int rows, int n);
	void (*softmax_backward)(float *dx, const float *dy, const float *y,
				 int rows, int n);
	float (*softmax_xent_row)(float *y, const float *z, int n, float a,
				  float c, float *zsum);

	void (*layernorm_forward)(float *y, float *mean, float *rstd,
				  const float *x, const float *g,
				  const float *b, int rows, int n, float eps);
	/* attn_step.h's attn_marian_row */
	void (*attn_marian_row)(float *out, float *w, long wn, const float *q,
				const void *k, long ks, const void *v, long vs,
				int n, int H, int dk, float scale, int f16,
				int form, float *s);
	/* attn_step.h's attn_marian_head */
	void (*attn_marian_head)(float *out, long os, float *w, long ws,
				 const float *q, long qs, const float *k,
				 long ks, const float *v, long vs, int rows,
				 int n, int dk, float scale, int small,
				 int nq, float *s);
	/* Marian's layer norm (kernels.h layernorm_marian_forward) */
	void (*layernorm_marian)(float *y, float *mean, float *rstd,
				 const float *x, const float *g,
				 const float *b, int rows, int n, float eps);
	/* dx only (rows split over threads); dg, db: layernorm_param_grads */
	void (*layernorm_backward_dx)(float *dx, const float *dy,
				      const float *x, const float *g,
				      const float *mean, const float *rstd,
				      int rows, int n);

	void (*adam_update)(float *w, float *m, float *v, const float *g,
			    size_t n, const struct adam_args *a);

	void (*gru_gates_forward)(float *zr, float *rh, const float *pre,
				  const float *h, int B, int n);
	void (*gru_state_forward)(float *hnew, float *hh, const float *pre,
				  const float *zr, const float *h, int B,
				  int n);
	void (*gru_state_backward)(float *dpre, float *dh, const float *dhnew,
				   const float *hh, const float *zr,
				   const float *h, int B, int n);
	void (*gru_gates_backward)(float *dpre, float *dh, const float *drh,
				   const float *zr, const float *h, int B,
				   int n);
	void (*lstm_cell_forward)(float *act, float *cnew, float *hnew,
				  const float *pre, const float *c, int B,
				  int n);
	void (*lstm_cell_backward)(float *dpre, float *dc, const float *dhnew,
				   const float *dcnew, const float *act,
				   const float *c, const float *cnew, int B,
				   int n);

	/* attn_step.h: one query row, all its heads. */
	void (*attn_step_row)(float *out, float *w, long wn, const float *q,
			      const void *k, long ks, const void *v,
			      long vs, int n, int H, int dk, float scale,
			      int f16);
	void (*kv_to_f16)(uint16_t *dst, const float *src, size_t n);

	/* Scaled dot-product attention of one (batch item, head). */
	void (*attn_head_forward)(const struct attn_args *a, int b, int h);
	void (*attn_head_backward)(const struct attn_args *a, int b, int h,
				   const float *dout, float *dq, float *dk,
				   float *dv);

	/* Additive attention of one sentence b. */
	void (*additive_forward)(float *ctx, float *a, const float *wq,
				 const float *keys, const float *va,
				 const float *ann, int len, int S, int na,
				 int dv);
	void (*additive_backward)(float *dwq, float *dkeys, float *dva,
				  float *dann, const float *dctx,
				  const float *a, const float *wq,
				  const float *keys, const float *va,
				  const float *ann, int len, int S, int na,
				  int dv);
};

extern const struct kern_ops kern_ops_ref;
#ifndef ATTN_NO_SIMD
extern const struct kern_ops kern_ops_avx2;
extern const struct kern_ops kern_ops_avx512;
#endif

/* The table in force (every slot filled, but gemm and wpack_panel where
 * NULL means the reference's path). */
const struct kern_ops *kern_ops(void);

/* The highest instruction set this CPU (and this build) has. */
int kern_cpu_isa(void);

/*
 * Scratch memory of the calling thread, 64-byte aligned, at least bytes
 * long, kept for the thread's next call; slot 0..KERN_SCRATCH_SLOTS-1 lets a
 * kernel hold several at once (base/scratch.h's blocks, freed when the
 * thread exits).  Returns NULL when out of memory.
 */
#define KERN_SCRATCH_SLOTS 4
void *kern_scratch(int slot, size_t bytes);

/* attention_forward of an attn_args with marian (attn_marian.c): 0, or -1
 * when a thread's scratch failed (attn's own kernel then). */
int attention_marian_forward(const struct attn_args *a);

/* Kernels with one portable version that the public wrappers call. */
void sgemm_ref_block(int ta, int tb, int M, int N, int K, float alpha,
		     const float *A, long lda, const float *B, long ldb,
		     float *C, long ldc);
/* dg += sum over rows of dy * xhat, db += sum of dy (either may be NULL);
 * threaded over columns. */
void layernorm_param_grads(float *dg, float *db, const float *dy,
			   const float *x, const float *mean, const float *rstd,
			   int rows, int n);

/* The reference kernels of the table, for the vector versions' tails. */
void attn_head_forward_ref(const struct attn_args *a, int b, int h);
void attn_head_backward_ref(const struct attn_args *a, int b, int h,
			    const float *dout, float *dq, float *dk, float *dv);
void additive_forward_ref(float *ctx, float *a, const float *wq,
			  const float *keys, const float *va, const float *ann,
			  int len, int S, int na, int dv);
void additive_backward_ref(float *dwq, float *dkeys, float *dva, float *dann,
			   const float *dctx, const float *a, const float *wq,
			   const float *keys, const float *va,
			   const float *ann, int len, int S, int na, int dv);

/* The bf16 kernels, where the CPU has them and the AVX-512 set is in
 * force; else NULL with err_set (kern_dispatch.c: for sgemm's precision
 * and gemm_packed's bf16 packs alike). */
const struct gemm_bf16 *kern_bf16(void);

#ifndef ATTN_NO_SIMD
/* The vector kernels, gathered into their tables by kern_avx2.c and
 * kern_avx512.c. */
extern const struct gemm_ukr gemm_ukr_avx2, gemm_ukr_avx512;
/* int8 (gemm_i8_avx2.c, gemm_i8_avx512vnni.c). */
extern const struct gemm_i8 gemm_i8_avx2, gemm_i8_avx512vnni,
			    gemm_i8_avxvnni;
/* 7-bit x on vpmaddubsw, for CPUs without VNNI (gemm_i8_u7_avx2.c,
 * gemm_i8_u7_avx512.c: AVX-512BW). */
extern const struct gemm_i8 gemm_i8_u7_avx2, gemm_i8_u7_avx512;
void gemm_i8_quant_u7_avx2(void *xs, float *sx, int32_t *zx, const float *x,
			   int M, int K, int kq, int rmax);
void gemm_i8_quant_avx2(void *xs, float *sx, const float *x, int M, int K,
			int kq, int rmax, int form);
void gemm_i8_mquant_avx2(void *xs, const float *x, float qa, int M, int K,
			 int kq, int rmax, int form, int s0, int s1);
void gemm_i8_mbias_avx2(float *mb, const int32_t *c, float ub, const float *b,
			int n);
/* The same for the AVX-512 sets (gemm_i8_mquant_avx512.c). */
void gemm_i8_mquant_avx512(void *xs, const float *x, float qa, int M, int K,
			   int kq, int rmax, int form, int s0, int s1);
/* With AVX512_BF16 (gemm_bf16_avx512bf16.c). */
extern const struct gemm_bf16 gemm_bf16_avx512bf16;
void gemm_t8_avx2(const float *const rows[8], long p, float *out, long os);
void gemm_tile_avx2(int kc, float alpha, const float *const x[],
		    int nx, const float *y, long ys, int ny, float *C, long ldc);
void gemm_rows_avx2(int M, int N, int kc, float alpha, const float *A,
		    long ars, long acs, const float *B, long ldb, float *C,
		    long ldc, float *acc);
void gemm_cols_avx2(int M, int N, int kc, float alpha, const float *A,
		    long ars, long acs, const float *B, long ldb, float *C,
		    long ldc, float *acc);
void vexp_avx2(float *y, const float *x, size_t n);
void vtanh_avx2(float *y, const float *x, size_t n);
void vsigmoid_avx2(float *y, const float *x, size_t n);
void bias_forward_avx2(float *x, const float *b, int rows, int n);
void relu_forward_avx2(float *y, const float *x, size_t n);
void relu_backward_avx2(float *dx, const float *dy, const float *y, size_t n);
float softmax_xent_row_avx2(float *y, const float *z, int n, float a,
			    float c, float *zsum);
void adam_update_avx2(float *w, float *m, float *v, const float *g, size_t n,
		      const struct adam_args *a);
void softmax_rows_avx2(float *y, const float *x, int rows, int n);
void log_softmax_rows_avx2(float *y, const float *x, int rows, int n);
void softmax_backward_avx2(float *dx, const float *dy, const float *y,
			   int rows, int n);
void layernorm_forward_avx2(float *y, float *mean, float *rstd,
			    const float *x, const float *g, const float *b,
			    int rows, int n, float eps);
void layernorm_marian_avx2(float *y, float *mean, float *rstd,
			   const float *x, const float *g, const float *b,
			   int rows, int n, float eps);
void layernorm_backward_dx_avx2(float *dx, const float *dy, const float *x,
				const float *g, const float *mean,
				const float *rstd, int rows, int n);
void gru_gates_forward_avx2(float *zr, float *rh, const float *pre,
			    const float *h, int B, int n);
void gru_state_forward_avx2(float *hnew, float *hh, const float *pre,
			    const float *zr, const float *h, int B, int n);
void gru_state_backward_avx2(float *dpre, float *dh, const float *dhnew,
			     const float *hh, const float *zr, const float *h,
			     int B, int n);
void gru_gates_backward_avx2(float *dpre, float *dh, const float *drh,
			     const float *zr, const float *h, int B, int n);
void lstm_cell_forward_avx2(float *act, float *cnew, float *hnew,
			    const float *pre, const float *c, int B, int n);
void lstm_cell_backward_avx2(float *dpre, float *dc, const float *dhnew,
			     const float *dcnew, const float *act,
			     const float *c, const float *cnew, int B, int n);
void additive_forward_avx2(float *ctx, float *a, const float *wq,
			   const float *keys, const float *va,
			   const float *ann, int len, int S, int na, int dv);
void additive_backward_avx2(float *dwq, float *dkeys, float *dva, float *dann,
			    const float *dctx, const float *a, const float *wq,
			    const float *keys, const float *va,
			    const float *ann, int len, int S, int na, int dv);
/* The register-blocked pieces of the fused attention of attention_avx2.c,
 * which the AVX-512 table replaces: scores s = scale q kt for ATTN_QR query
 * rows and keys j0 .. j0 + nb (kt [dk][sp], zero-padded to sp, a multiple
 * of 16), and o [ATTN_QR][dp] += p v over nk keys (dp a multiple of 32;
 * first: o = p v). */
#define ATTN_QR 6
#define ATTN_KB 64
struct attn_drop {              /* a query row's dropout */
	int on;
	uint32_t rk;            /* attn_drop_row */
	int32_t cut;            /* attn_drop_cut */
};
struct attn_blocks {
	void (*scores)(float s[ATTN_QR][ATTN_KB],
		       const float *const q[ATTN_QR], const float *kt, long sp,
		       int j0, int nb, int dk, float scale);
	void (*pv)(float *o, long dp, float p[ATTN_QR][ATTN_KB],
		   const float *v, long vs, int nk, int dk, int first);
	/* s = exp(s - m) for keys j0 .. j0 + nb (nb rounded up to 16),
	 * zero past the first valid and where dropped; returns the sum of
	 * the first valid before dropout.  s - m <= 88. */
	float (*exp_row)(float *s, float m, int valid, int nb,
			 const struct attn_drop *d, int j0);
	/* dst [dk][ds], transposed: dst[d][j] += sum over r < nr of
	 * c[r][j] src[r][d], for j < nb rounded up to a vector and d < dk:
	 * the backward pass's dk and dv, accumulated transposed per head */
	void (*rank)(float *dst, long ds, float c[][ATTN_KB],
		     const float *const src[], int nr, int nb, int dk);
	/* The backward pass's row of a block: with e = exp(p - lse), zero
	 * past valid, and z the dropout's factors (0 or zs; 1 without),
	 * p = e z and ds = e (z ds - D) scale (nb rounded up to 16). */
	void (*grad_row)(float *p, float *ds, int valid, int nb,
			 const struct attn_drop *d, int j0, float lse, float D,
			 float scale, float zs);
};
/* kernels.h's act of one score, relu or gelu, 0 for a masked one (-inf);
 * and the blocks' exp_row for those acts, one version for every
 * instruction set (the products around it are the work): s = act(s) for
 * keys j0 .. j0 + nb, zero past the first valid and where dropped;
 * returns the sum of the first valid before dropout. */
float attn_act(int act, float s);
float attn_act_row(float *s, int act, int valid, int nb,
		   const struct attn_drop *d, int j0);
float attn_exp_row_avx2(float *s, float m, int valid, int nb,
			const struct attn_drop *d, int j0);
void attn_head_forward_blocks(const struct attn_args *a, int b, int h,
			      const struct attn_blocks *k);
void attn_head_backward_blocks(const struct attn_args *a, int b, int h,
			       const float *dout, float *dq, float *dk,
			       float *dv, const struct attn_blocks *k);
void attn_head_forward_avx512(const struct attn_args *a, int b, int h);
void attn_head_backward_avx512(const struct attn_args *a, int b, int h,
			       const float *dout, float *dq, float *dk,
			       float *dv);
void attn_head_forward_avx2(const struct attn_args *a, int b, int h);
void attn_head_backward_avx2(const struct attn_args *a, int b, int h,
			     const float *dout, float *dq, float *dk, float *dv);
#endif

/* The number of keys row t of batch item b attends to (keys 0 .. n-1). */
static inline int attn_nkeys(const struct attn_args *a, int b, int t)
{
	int n = a->S;

	if (a->klen && a->klen[b] < n)
		n = a->klen[b] > 0 ? a->klen[b] : 0;
	if (a->causal) {
		long last = (long)a->q_pos0 + t + 1;
		if (last < n)
			n = last > 0 ? (int)last : 0;
	}
	return n;
}


/*
 * Attention dropout's mask (kernels.h): weight [t, j] of (b, h) is kept
 * when the top 24 bits of attn_drop_hash(attn_drop_row(a, b, h, t), j)
 * reach attn_drop_cut(a).  The row's key mixes the seed with the row's
 * number (splitmix64); each key j, the key xor j times the golden ratio,
 * goes through a 32-bit mixer (lowbias32, by C. Wellons), which the
 * vector kernels compute eight or sixteen lanes at a time.
 */
static inline uint32_t attn_drop_row(const struct attn_args *a, int b, int h,
				     int t)
{
	uint64_t z = a->seed + 0x9e3779b97f4a7c15ULL *
		     (((uint64_t)b * a->H + h) * a->T + t);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return (uint32_t)((z ^ (z >> 31)) >> 32);
}

#define ATTN_DROP_GOLD 0x9e3779b9u
#define ATTN_DROP_M1 0x7feb352du
#define ATTN_DROP_M2 0x846ca68bu

static inline uint32_t attn_drop_hash(uint32_t row, uint32_t j)
{
	uint32_t x = row ^ (j * ATTN_DROP_GOLD);

	x ^= x >> 16;
	x *= ATTN_DROP_M1;
	x ^= x >> 15;
	x *= ATTN_DROP_M2;
	return x ^ (x >> 16);
}

/* The cut of the 24-bit draws: a weight is dropped below it. */
static inline int32_t attn_drop_cut(const struct attn_args *a)
{
	return a->dropout >= 1 ? 1 << 24 :
	       (int32_t)(a->dropout * 16777216.0f + 0.5f);
}

/* The factor of the kept weights. */
static inline float attn_drop_scale(const struct attn_args *a)
{
	return a->dropout >= 1 ? 0 : 1 / (1 - a->dropout);
}

#endif
