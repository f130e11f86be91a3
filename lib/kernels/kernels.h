/*
 * kernels.h: the numerical kernels of libtensor, on plain row-major float
 * arrays.  Every kernel has a portable scalar reference (kern_ref.c and
 * friends) and, where it matters, AVX2+FMA (and AVX-512) versions, chosen
 * once at run time from cpuid, for every kernel at one place (the table
 * of kern_impl.h).  ATTN_KERNELS=reference or avx2 in the environment
 * caps the choice at that set; ATTN_THREADS=N sets the thread count
 * (default: the number of cores).  The kernels know nothing of tensors or
 * streams.
 *
 * Conventions: shapes in comments are [rows, cols], row-major; ld* are row
 * strides in floats.  Backward kernels ADD into their d-buffers (llm.c
 * style), so gradients accumulate; the caller zeroes them.
 */
#ifndef ATTN_KERNELS_H
#define ATTN_KERNELS_H

#include <stddef.h>
#include <stdint.h>

/* Public: libtensor.so exports what is declared from here to the pop (the
 * library is built with -fvisibility=hidden; see the Makefile). */
#pragma GCC visibility push(default)

/* ---- dispatch and threads ---------------------------------------------- */

enum kern_isa { ISA_REFERENCE = 0, ISA_AVX2 = 1, ISA_AVX512 = 2 };

/* Idempotent; every kernel calls it on first use. */
void kern_init(void);
int kern_isa(void);
const char *kern_isa_name(void);
/* For tests and benchmarks: force an ISA (not above what the CPU has).
 * Returns the ISA in force. */
int kern_set_isa(int isa);

/*
 * The one thread pool of the process, created on first use; idle workers
 * sleep on a condition variable.  kern_set_threads(n) with n >= 1 sets how
 * many threads (the caller included) parallel work uses.
 */
void kern_set_threads(int n);
int kern_threads(void);
/*
 * Runs fn(ctx, lo, hi) over [0, n) in chunks of at least grain, on the pool.
 * Not re-entrant: a fn that calls kern_parallel_for again runs it serially.
 */
void kern_parallel_for(int64_t n, int64_t grain,
		       void (*fn)(void *ctx, int64_t lo, int64_t hi), void *ctx);
/*
 * The same with each index a chunk of its own, taken in order as threads
 * come free: for a few coarse tasks of uneven cost (a batch of sentences
 * each), where chunks of several would leave one thread the last two.
 */
void kern_parallel_each(int64_t n,
			void (*fn)(void *ctx, int64_t lo, int64_t hi),
			void *ctx);
/*
 * The calling thread's block for a caller of the kernels (base/scratch.h:
 * grown with scratch_get, kept for the thread's next call, freed when the
 * thread exits), beside the kernels' own slots: a batch's workspace.
 * NULL with err_msg() set when out of memory.
 */
struct scratch;
struct scratch *kern_caller_scratch(void);

/* ---- matrix multiply ---------------------------------------------------- */

/*
 * C = alpha * op(A) op(B) + beta * C, with op(A) [M, K], op(B) [K, N],
 * C [M, N].  ta: A is stored [K, M] (lda >= M), else [M, K] (lda >= K);
 * tb: B is stored [N, K] (ldb >= K), else [K, N] (ldb >= N).
 * beta == 0 ignores C's old contents (NaN included).  Threaded.
 */
void sgemm(int ta, int tb, int M, int N, int K, float alpha,
	   const float *A, int lda, const float *B, int ldb,
	   float beta, float *C, int ldc);

/*
 * sgemm's precision, for the whole process (every thread): KERN_MATMUL_F32,
 * the default, exact float as above; KERN_MATMUL_BF16 (as PyTorch's
 * set_float32_matmul_precision("medium")), where calls with M >=
 * KERN_BF16_MIN_M round every entry of op(A) and op(B) to bf16 (to
 * nearest, ties to even, as f32_to_bf16 of tensor.h; NaN stays NaN) and
 * sum their products in float: each product of two bf16 is exact, and
 * the sums of K of them, alpha, beta and C are rounded in float as in
 * f32 (the bound: test_gemm_bf16.c).  So C differs from f32's by what
 * rounding the inputs to 8 significant bits does (up to 2^-8 relative
 * per product), and inputs and products below 2^-126 in magnitude count
 * as zero.  Calls with fewer rows (decoder steps, where packing would
 * cost more than bf16 saves) and gemm_packed.h's products stay exact f32:
 * the mode is meant for training, whose products are all large.  It
 * promises no batch independence across that line, hence no environment
 * variable for it.  (Translation has its own bf16: gemm_packed.h's bf16
 * packs, for every number of rows alike.)
 *
 * kern_set_matmul returns 0, or -1 with err_set when the kernels in force
 * cannot do it (bf16 needs the AVX-512 set and a CPU with AVX512_BF16),
 * leaving the precision as it was.  kern_set_isa to a set below AVX-512
 * returns it to f32.  kern_matmul: the precision in force.
 */
enum { KERN_MATMUL_F32, KERN_MATMUL_BF16 };
#define KERN_BF16_MIN_M 24
int kern_set_matmul(int precision);
int kern_matmul(void);

/* ---- element-wise and row-wise ----------------------------------------- */

/* y = f(x), n elements; y may equal x.  Max errors: doc/kernels.md
 * (measured by bench/bench_vmath.c). */
void vexp(float *y, const float *x, size_t n);
void vtanh(float *y, const float *x, size_t n);
void vsigmoid(float *y, const float *x, size_t n);

/* x [rows, n] += b [n] */
void bias_forward(float *x, const float *b, int rows, int n);
/* db [n] += sum over rows of dy [rows, n] */
void bias_backward(float *db, const float *dy, int rows, int n);

/* y = max(x, 0); dx += dy where y > 0 */
void relu_forward(float *y, const float *x, size_t n);
void relu_backward(float *dx, const float *dy, const float *y, size_t n);

/* y [rows, n] = softmax of each row of x; y may equal x.  A row of -inf
 * only (every entry masked) gives zeros (log-softmax: -inf). */
void softmax_rows(float *y, const float *x, int rows, int n);
void log_softmax_rows(float *y, const float *x, int rows, int n);
/*
 * The pieces of a softmax cross-entropy over one row z [n] of finite
 * logits, with one exponential each: returns log sum_j exp(z_j) (NaN if z
 * holds one), sets *zsum to sum_j z_j, and y [n] (may equal z) to
 * a softmax(z) - c.
 */
float softmax_xent_row(float *y, const float *z, int n, float a, float c,
		       float *zsum);
/* dx += y * (dy - sum(dy * y)) row by row, y the softmax output */
void softmax_backward(float *dx, const float *dy, const float *y, int rows, int n);

/*
 * Layer norm of each row: y = g * (x - mean) / sqrt(var + eps) + b, biased
 * variance.  x, y [rows, n]; mean, rstd [rows] saved for the backward pass.
 */
void layernorm_forward(float *y, float *mean, float *rstd, const float *x,
		       const float *g, const float *b, int rows, int n, float eps);
/*
 * The same layer norm as native Marian computes it, to the bit: its
 * LayerNormalizationImpl (src/tensors/cpu/tensor_operators.cpp l. 1101-
 * 1143, under MARIAN_FFAST_MATH) as g++ 12 -O3 -march=native compiles it
 * on an AVX2 core (the Zen 3 build of ../shared/tools/marian-native,
 * read from its disassembly and checked against it traced), for the
 * models in Marian's arithmetic (pos=marian).  Each row's sums in 8
 * lanes, lane l of x_l, x_(l+8), ... over the n8 = n - n % 8 first, the
 * lanes folded to 4 (l + (l + 4)), the next 4 values added (n % 8 >= 4),
 * the 4 folded as (a0 + a2) + (a1 + a3), then the last values one by one:
 *   mean = sum(x) * (1 / n)         e = x - mean
 *   q    = the same sum of e e: in the 8 lanes q + e e (rounded apart:
 *          that build's tuning avoids chains of fma), fma(e, e, q) in
 *          the 4 and one by one
 *   r    = 1 / sqrtf(fma(q, 1 / n, eps))
 *   y    = fma(e, g r, b)
 * mean and r go to mean, rstd as layernorm_forward's (each may be NULL).
 * (A build for AVX-512 sums in 16 lanes, with fma: the last bit of some
 * values differs between Marian's own builds.)
 */
void layernorm_marian_forward(float *y, float *mean, float *rstd,
			      const float *x, const float *g, const float *b,
			      int rows, int n, float eps);
/* dx, dg, db may each be NULL (not wanted). */
void layernorm_backward(float *dx, float *dg, float *db, const float *dy,
			const float *x, const float *g, const float *mean,
			const float *rstd, int rows, int n);

/* y [rows, l][k] = max(x[rows, 2l][2k], x[2k+1]) (ties: the first) */
void maxout_forward(float *y, const float *x, int rows, int l);
void maxout_backward(float *dx, const float *dy, const float *x, int rows, int l);

/* out [n, dim] = table[ids[i]]; dtable[ids[i]] += dout[i].  The ids must be
 * rows of the table (the caller checks them). */
void embedding_forward(float *out, const int32_t *ids, int n,
		       const float *table, int dim);
void embedding_backward(float *dtable, const int32_t *ids, int n,
			const float *dout, int dim);

/* ---- GRU of doc/MODELS.md (reset gate before U), one step, B rows ------ */

/*
 * pre [B, 3n] holds W x + b in all three gates plus U_zr h in the z and r
 * parts (rows z, r, h).  Computes zr [B, 2n] = sigma(pre[:, 0:2n]) and
 * rh [B, n] = r * h, for the caller's U_h (r * h) product.
 */
void gru_gates_forward(float *zr, float *rh, const float *pre,
		       const float *h, int B, int n);
/*
 * pre [B, 3n] now also holds U_h (r * h) in its h part: hh [B, n] =
 * tanh(pre[:, 2n:3n]); hnew [B, n] = (1 - z) * h + z * hh.
 */
void gru_state_forward(float *hnew, float *hh, const float *pre,
		       const float *zr, const float *h, int B, int n);
/*
 * Backward, mirroring the forward in reverse:
 *   gru_state_backward: from dhnew [B, n], adds into dpre's z and h parts
 *     (gradients of the pre-activations) and into dh (the (1 - z) path);
 *   the caller: drh [B, n] = dpre[:, 2n:3n] U_h (sgemm);
 *   gru_gates_backward: from drh, adds into dpre's r part and into dh
 *     (the r * h path).
 * The caller's U^T products of dpre's z and r parts give the rest of dh.
 */
void gru_state_backward(float *dpre, float *dh, const float *dhnew,
			const float *hh, const float *zr, const float *h,
			int B, int n);
void gru_gates_backward(float *dpre, float *dh, const float *drh,
			const float *zr, const float *h, int B, int n);

/* ---- LSTM (doc/MODELS.md, seq2seq), one step, B rows ----------------- */

/*
 * pre [B, 4n] holds W x + U h + b, rows in the gate order i, f, g, o.
 * Writes act [B, 4n] = [sigma(i); sigma(f); tanh(g); sigma(o)] of the
 * pre-activations, the new cell cnew [B, n] = f * c + i * g from the old
 * c [B, n], and the new state hnew [B, n] = o * tanh(cnew).
 */
void lstm_cell_forward(float *act, float *cnew, float *hnew, const float *pre,
		       const float *c, int B, int n);
/*
 * Backward of lstm_cell_forward from the gradients dhnew and dcnew [B, n]
 * of its outputs (dcnew may be NULL: none): writes dpre [B, 4n], the
 * pre-activations' gradient, and adds the old cell's into dc [B, n].  The
 * caller's dpre U gives the old state's.
 */
void lstm_cell_backward(float *dpre, float *dc, const float *dhnew,
			const float *dcnew, const float *act, const float *c,
			const float *cnew, int B, int n);

/* ---- optimiser ---------------------------------------------------------- */

/*
 * One Adam update of the n parameters w from their gradient g times
 * gscale: m = b1 m + (1 - b1) g, v = b2 v + (1 - b2) g g, then
 * w -= lr (m c1) / (sqrt(v c2) + eps), c1 and c2 the inverse bias
 * corrections.  The same bits for every instruction set and thread count.
 */
struct adam_args {
	float lr, b1, b2, eps, c1, c2, gscale;
};
void adam_update(float *w, float *m, float *v, const float *g, size_t n,
		 const struct adam_args *a);

/* ---- attention ---------------------------------------------------------- */

/*
 * Scaled dot-product attention, multi-head, batched, fused (online softmax,
 * no [T, S] score matrix unless weights are asked for).  For batch item b
 * and head h, query row t is q + b*q_bs + t*q_rs + h*dk (dk floats), key
 * row j is k + b*kv_bs + j*kv_rs + h*dk, value row likewise in v, and the
 * output row o + b*o_bs + t*o_rs + h*dk.  All strides in floats.
 *
 *   out = softmax(q k^T * scale + mask) v
 *
 * Masks: keys j >= klen[b] (padding; klen NULL: all S), and with causal,
 * keys j > q_pos0 + t (q_pos0: the position of the first query, for a
 * decoder with a cache of earlier positions).  mask (optional) [T, S] is
 * added to the scaled scores of every batch item and head: mask[t S + j]
 * to row t's score of key j, -inf masking the key.  A row with every key
 * masked gives zeros (and lse -inf).  weights (optional) [B, H, T, S];
 * lse (optional, needed by the backward pass) [B, H, T], the log-sum-exp
 * of each row's scores (mask added).
 *
 * Dropout of the weights (training; dropout 0: off): out = (softmax(...)
 * * keep / (1 - dropout)) v, with keep[t, j] of batch item b and head h
 * attn_dropout_keep(a, b, h, t, j), a hash of (seed, b, h, t, j): the same
 * mask whatever the blocking, instruction set and threads, and the
 * backward pass makes it again rather than storing it.  weights and lse
 * are those before dropout.
 *
 * Other weights (act, no_norm; zero: the softmax above): a row's weights
 * are w_j = act(s_j) of its scores s_j (scaled, mask added; a masked key
 * weighs 0 whatever act), divided by their sum unless no_norm:
 *   ATTN_SOFTMAX  exp(s)               (no_norm: out = sum_j exp(s_j) v_j)
 *   ATTN_RELU     max(0, s)
 *   ATTN_GELU     s Phi(s) = s (1 + erf(s / sqrt 2)) / 2
 * With normalisation, a row whose weights sum to 0 gives zeros.  Dropout
 * applies as above.  lse is written for ATTN_SOFTMAX only, and the
 * backward pass is the normalised softmax's only (the others serve
 * attend(1)'s general mode).
 */
enum { ATTN_SOFTMAX, ATTN_RELU, ATTN_GELU };
struct attn_args {
	int B, H, T, S, dk;
	float scale;
	const float *q; long q_bs, q_rs;
	const float *k; const float *v; long kv_bs, kv_rs;
	float *out; long o_bs, o_rs;
	const int *klen;
	const float *mask;
	int causal, q_pos0;
	float *weights;
	float *lse;
	float dropout;		/* in [0, 1) */
	uint64_t seed;
	int act;		/* ATTN_SOFTMAX, ATTN_RELU or ATTN_GELU */
	int no_norm;		/* 1: the weights are not divided by their sum */
	/* native Marian's arithmetic, to the bit (attn_step.h's
	 * attn_marian_row), for a softmax without mask or dropout
	 * (otherwise ignored); it writes no lse: no backward pass may
	 * follow */
	int marian;
};
void attention_forward(const struct attn_args *a);
/* 1 when weight [t, j] of batch item b, head h is kept by a's dropout
 * (the chance 1 - dropout, to 2^-24), else 0. */
int attn_dropout_keep(const struct attn_args *a, int b, int h, int t, int j);
/* Adds into dq, dk, dv (laid out as q, k, v; any may be NULL) from dout
 * (laid out as out); needs a->out and a->lse from the forward pass (with
 * a->lse NULL, the reference recomputes it, slowly). */
void attention_backward(const struct attn_args *a, const float *dout,
			float *dq, float *dk, float *dv);

/*
 * Bahdanau's additive attention, one decoder step for B sentences padded to
 * S source positions:
 *   e[b, j] = va . tanh(wq[b] + keys[b, j])   for j < len[b]
 *   a[b, :] = softmax(e[b, :]), zero beyond len[b]
 *   ctx[b]  = sum_j a[b, j] ann[b, j]
 * wq [B, na] (= Wa s, by the caller's sgemm), keys [B, S, na] (= Ua h + ba,
 * from attend), va [na], ann [B, S, dv], len [B] (NULL: all S); outputs
 * ctx [B, dv], a [B, S].  A sentence of length 0 gives zeros.
 */
void additive_attention_forward(float *ctx, float *a, const float *wq,
				const float *keys, const float *va,
				const float *ann, const int *len,
				int B, int S, int na, int dv);
/* Adds into dwq [B, na], dkeys [B, S, na], dva [na], dann [B, S, dv]
 * (any may be NULL) from dctx [B, dv]; a from the forward pass. */
void additive_attention_backward(float *dwq, float *dkeys, float *dva,
				 float *dann, const float *dctx,
				 const float *a, const float *wq,
				 const float *keys, const float *va,
				 const float *ann, const int *len,
				 int B, int S, int na, int dv);

#pragma GCC visibility pop

#endif
