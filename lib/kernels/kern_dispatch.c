/*
 * kern_dispatch.c: the choice of instruction set, and the public
 * element-wise, row-wise, GRU and LSTM kernels of kernels.h, which split their
 * work over the thread pool and call the serial kernels of the table in
 * force.
 *
 * The table is chosen once from cpuid (ATTN_KERNELS=reference forces the
 * reference); kern_set_isa changes it, for tests and benchmarks.  A table
 * is filled in layers: the reference, then AVX2 over it, then AVX-512 over
 * that, so that an instruction set need only provide what it speeds up.
 */
#include <cpuid.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "base/errmsg.h"
#include "kern_impl.h"

static struct kern_ops tables[3];
static _Atomic(const struct kern_ops *) current;
static int current_isa;
/* ATTN_KERNELS=avx2-novnni or avx512-novnni: the int8 kernels as on a
 * CPU without VNNI of either width (kern_i8) */
static int no_vnni;
/* sgemm's bf16 kernels when its precision is bf16, else NULL */
static _Atomic(const struct gemm_bf16 *) matmul_bf16;
static pthread_once_t init_once = PTHREAD_ONCE_INIT;

#ifndef ATTN_NO_SIMD
/* F16C (the f16 keys and values of attn_step), from cpuid: the builtin
 * has no name for it in every compiler.  Every AVX2 processor made has
 * it; a hypervisor might hide it. */
static int has_f16c(void)
{
	unsigned a, b, c, d;

	return __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C);
}
#endif

int kern_cpu_isa(void)
{
#ifndef ATTN_NO_SIMD
	__builtin_cpu_init();
	if (!__builtin_cpu_supports("fma") || !has_f16c())
		return ISA_REFERENCE;
	if (__builtin_cpu_supports("avx512f") &&
	    __builtin_cpu_supports("avx512bw") &&
	    __builtin_cpu_supports("avx512dq") &&
	    __builtin_cpu_supports("avx512vl"))
		return ISA_AVX512;
	if (__builtin_cpu_supports("avx2"))
		return ISA_AVX2;
#endif
	return ISA_REFERENCE;
}

#ifndef ATTN_NO_SIMD
/* Copies the slots over provides onto t. */
static void overlay(struct kern_ops *t, const struct kern_ops *over)
{
#define OVER(f) if (over->f) t->f = over->f
	OVER(name); OVER(gemm); OVER(wpack_panel); OVER(wpack_rmax);
	OVER(vexp); OVER(vtanh); OVER(vsigmoid);
	OVER(bias_forward); OVER(relu_forward); OVER(relu_backward);
	OVER(softmax_rows); OVER(log_softmax_rows); OVER(softmax_backward);
	OVER(softmax_xent_row);
	OVER(layernorm_forward); OVER(layernorm_backward_dx);
	OVER(layernorm_marian); OVER(attn_marian_row);
	OVER(attn_marian_head);
	OVER(adam_update);
	OVER(gru_gates_forward); OVER(gru_state_forward);
	OVER(gru_state_backward); OVER(gru_gates_backward);
	OVER(lstm_cell_forward); OVER(lstm_cell_backward);
	OVER(attn_step_row); OVER(kv_to_f16);
	OVER(attn_head_forward); OVER(attn_head_backward);
	OVER(additive_forward); OVER(additive_backward);
#undef OVER
}
#endif

static void init(void)
{
	tables[ISA_REFERENCE] = kern_ops_ref;
#ifndef ATTN_NO_SIMD
	tables[ISA_AVX2] = tables[ISA_REFERENCE];
	overlay(&tables[ISA_AVX2], &kern_ops_avx2);
	tables[ISA_AVX512] = tables[ISA_AVX2];
	overlay(&tables[ISA_AVX512], &kern_ops_avx512);
#endif
	const char *env = getenv("ATTN_KERNELS");
	int isa = kern_cpu_isa();
	if (env && strcmp(env, "reference") == 0)
		isa = ISA_REFERENCE;
	else if (env && (strcmp(env, "avx2") == 0 ||
			 strcmp(env, "avx2-novnni") == 0) && isa > ISA_AVX2)
		isa = ISA_AVX2;
	no_vnni = env && (strcmp(env, "avx2-novnni") == 0 ||
			  strcmp(env, "avx512-novnni") == 0);
	current_isa = isa;
	atomic_store(&current, &tables[isa]);
}

void kern_init(void)
{
	pthread_once(&init_once, init);
}

const struct kern_ops *kern_ops(void)
{
	const struct kern_ops *t = atomic_load_explicit(&current,
							memory_order_acquire);
	if (t)
		return t;
	kern_init();
	return atomic_load(&current);
}

int kern_isa(void)
{
	kern_init();
	return current_isa;
}

const char *kern_isa_name(void)
{
	return kern_ops()->name;
}

int kern_set_isa(int isa)
{
	kern_init();
	int max = kern_cpu_isa();
	if (isa > max)
		isa = max;
	if (isa < ISA_REFERENCE)
		isa = ISA_REFERENCE;
	current_isa = isa;
	atomic_store(&current, &tables[isa]);
	if (isa < ISA_AVX512)
		atomic_store(&matmul_bf16, NULL);
	return isa;
}

/* ---- sgemm's precision ------------------------------------------------- */

const struct gemm_bf16 *kern_bf16(void)
{
	kern_init();
#ifndef ATTN_NO_SIMD
	if (current_isa == ISA_AVX512 && __builtin_cpu_supports("avx512bf16"))
		return &gemm_bf16_avx512bf16;
#endif
	err_set("bf16 matrix products need the AVX-512 kernels and a CPU "
		"with AVX512_BF16 (kernels in use: %s)", kern_isa_name());
	return NULL;
}

/* ---- int8 products ------------------------------------------------------ */

#ifndef ATTN_NO_SIMD
/* AVX-VNNI (cpuid leaf 7, subleaf 1, eax bit 4), read from cpuid itself:
 * clang 14's __builtin_cpu_supports does not know "avxvnni".  Its ymm
 * state is the OS's already when AVX2 is in use. */
static int cpu_avxvnni(void)
{
	unsigned a, b, c, d;

	return __get_cpuid_count(7, 1, &a, &b, &c, &d) && (a >> 4 & 1);
}
#endif

/*
 * Without VNNI, the 7-bit form on vpmaddubsw (AVX-512BW's, else AVX2's):
 * on Zen 5, 1.3-2.0x the rate of the exact vpmaddwd kernel at every
 * shape of bench_gemm_i8, 1 to 64 rows (doc/kernels.md), so it is taken
 * for every call; gemm_i8_avx2 stays for Marian's products.
 */
const struct gemm_i8 *kern_i8(void)
{
	kern_init();
#ifndef ATTN_NO_SIMD
	if (current_isa == ISA_AVX512 && !no_vnni &&
	    __builtin_cpu_supports("avx512vnni"))
		return &gemm_i8_avx512vnni;
	if (current_isa >= ISA_AVX2 && !no_vnni && cpu_avxvnni())
		return &gemm_i8_avxvnni;
	if (current_isa == ISA_AVX512)
		return &gemm_i8_u7_avx512;
	if (current_isa >= ISA_AVX2)
		return &gemm_i8_u7_avx2;
#endif
	return NULL;
}

int kern_i8_all(const struct gemm_i8 *k[KERN_I8_MAX],
		const char *name[KERN_I8_MAX])
{
	int n = 0;

#ifndef ATTN_NO_SIMD
	int isa = kern_cpu_isa();
	if (isa >= ISA_AVX2) {
		k[n] = &gemm_i8_avx2;
		name[n++] = "avx2 vpmaddwd";
		k[n] = &gemm_i8_u7_avx2;
		name[n++] = "avx2 vpmaddubsw u7";
	}
	if (isa >= ISA_AVX2 && cpu_avxvnni()) {
		k[n] = &gemm_i8_avxvnni;
		name[n++] = "avx-vnni vpdpbusd";
	}
	if (isa == ISA_AVX512 && __builtin_cpu_supports("avx512vnni")) {
		k[n] = &gemm_i8_avx512vnni;
		name[n++] = "avx512-vnni vpdpbusd";
	}
	if (isa == ISA_AVX512) {
		k[n] = &gemm_i8_u7_avx512;
		name[n++] = "avx512bw vpmaddubsw u7";
	}
#endif
	return n;
}

int kern_set_matmul(int precision)
{
	const struct gemm_bf16 *u = NULL;

	if (precision != KERN_MATMUL_F32 && precision != KERN_MATMUL_BF16) {
		err_set("no matrix product precision %d", precision);
		return -1;
	}
	if (precision == KERN_MATMUL_BF16 && !(u = kern_bf16()))
		return -1;
	atomic_store(&matmul_bf16, u);
	return 0;
}

int kern_matmul(void)
{
	return kern_gemm_bf16() ? KERN_MATMUL_BF16 : KERN_MATMUL_F32;
}

const struct gemm_bf16 *kern_gemm_bf16(void)
{
	return atomic_load_explicit(&matmul_bf16, memory_order_acquire);
}

/* ---- threading of the element-wise and row-wise kernels ------------------ */

/* Work per chunk, in elements, below which threads cost more than they
 * save. */
#define GRAIN 16384

static int64_t row_grain(int n)
{
	return n >= GRAIN ? 1 : GRAIN / (n > 0 ? n : 1);
}

struct vec_job {
	void (*fn)(float *y, const float *x, size_t n);
	float *y;
	const float *x;
};

static void vec_task(void *ctx, int64_t lo, int64_t hi)
{
	struct vec_job *j = ctx;
	j->fn(j->y + lo, j->x + lo, (size_t)(hi - lo));
}

static void vec_run(void (*fn)(float *, const float *, size_t), float *y,
		    const float *x, size_t n)
{
	struct vec_job j = { fn, y, x };
	kern_parallel_for((int64_t)n, GRAIN, vec_task, &j);
}

void vexp(float *y, const float *x, size_t n)
{
	vec_run(kern_ops()->vexp, y, x, n);
}

void vtanh(float *y, const float *x, size_t n)
{
	vec_run(kern_ops()->vtanh, y, x, n);
}

void vsigmoid(float *y, const float *x, size_t n)
{
	vec_run(kern_ops()->vsigmoid, y, x, n);
}

void relu_forward(float *y, const float *x, size_t n)
{
	vec_run(kern_ops()->relu_forward, y, x, n);
}

struct relu_job {
	float *dx;
	const float *dy, *y;
};

static void relu_backward_task(void *ctx, int64_t lo, int64_t hi)
{
	struct relu_job *j = ctx;
	kern_ops()->relu_backward(j->dx + lo, j->dy + lo, j->y + lo,
				  (size_t)(hi - lo));
}

void relu_backward(float *dx, const float *dy, const float *y, size_t n)
{
	struct relu_job j = { dx, dy, y };
	kern_parallel_for((int64_t)n, GRAIN, relu_backward_task, &j);
}

struct adam_job {
	float *w, *m, *v;
	const float *g;
	const struct adam_args *a;
};

static void adam_task(void *ctx, int64_t lo, int64_t hi)
{
	struct adam_job *j = ctx;
	kern_ops()->adam_update(j->w + lo, j->m + lo, j->v + lo, j->g + lo,
				(size_t)(hi - lo), j->a);
}

void adam_update(float *w, float *m, float *v, const float *g, size_t n,
		 const struct adam_args *a)
{
	struct adam_job j = { w, m, v, g, a };
	kern_parallel_for((int64_t)n, GRAIN, adam_task, &j);
}

/* One context for every row-wise kernel: rows [lo, hi) of row length n. */
struct row_job {
	float *y, *dx, *mean, *rstd;
	const float *x, *dy, *g, *b;
	int n;
	float eps;
	int marian;		/* layernorm_task: Marian's */
};

static void bias_task(void *ctx, int64_t lo, int64_t hi)
{
	struct row_job *j = ctx;
	kern_ops()->bias_forward(j->y + lo * j->n, j->b, (int)(hi - lo), j->n);
}

void bias_forward(float *x, const float *b, int rows, int n)
{
	struct row_job j = { .y = x, .b = b, .n = n };
	kern_parallel_for(rows, row_grain(n), bias_task, &j);
}

static void softmax_task(void *ctx, int64_t lo, int64_t hi)
{
	struct row_job *j = ctx;
	kern_ops()->softmax_rows(j->y + lo * j->n, j->x + lo * j->n,
				 (int)(hi - lo), j->n);
}

void softmax_rows(float *y, const float *x, int rows, int n)
{
	struct row_job j = { .y = y, .x = x, .n = n };
	kern_parallel_for(rows, row_grain(n), softmax_task, &j);
}

/* One row: the callers split their rows over the threads. */
float softmax_xent_row(float *y, const float *z, int n, float a, float c,
		       float *zsum)
{
	return kern_ops()->softmax_xent_row(y, z, n, a, c, zsum);
}

static void log_softmax_task(void *ctx, int64_t lo, int64_t hi)
{
	struct row_job *j = ctx;
	kern_ops()->log_softmax_rows(j->y + lo * j->n, j->x + lo * j->n,
				     (int)(hi - lo), j->n);
}

void log_softmax_rows(float *y, const float *x, int rows, int n)
{
	struct row_job j = { .y = y, .x = x, .n = n };
	kern_parallel_for(rows, row_grain(n), log_softmax_task, &j);
}

static void softmax_backward_task(void *ctx, int64_t lo, int64_t hi)
{
	struct row_job *j = ctx;
	size_t o = (size_t)lo * j->n;
	kern_ops()->softmax_backward(j->dx + o, j->dy + o, j->x + o,
				     (int)(hi - lo), j->n);
}

void softmax_backward(float *dx, const float *dy, const float *y, int rows,
		      int n)
{
	struct row_job j = { .dx = dx, .dy = dy, .x = y, .n = n };
	kern_parallel_for(rows, row_grain(n), softmax_backward_task, &j);
}

/* The layer norm's rows, attn's or (marian) Marian's. */
static void layernorm_task(void *ctx, int64_t lo, int64_t hi)
{
	struct row_job *j = ctx;
	size_t o = (size_t)lo * j->n;
	const struct kern_ops *k = kern_ops();

	(j->marian ? k->layernorm_marian : k->layernorm_forward)(
		j->y + o, j->mean ? j->mean + lo : NULL,
		j->rstd ? j->rstd + lo : NULL, j->x + o, j->g, j->b,
		(int)(hi - lo), j->n, j->eps);
}

void layernorm_forward(float *y, float *mean, float *rstd, const float *x,
		       const float *g, const float *b, int rows, int n,
		       float eps)
{
	struct row_job j = { .y = y, .mean = mean, .rstd = rstd, .x = x,
			     .g = g, .b = b, .n = n, .eps = eps };
	kern_parallel_for(rows, row_grain(n), layernorm_task, &j);
}

void layernorm_marian_forward(float *y, float *mean, float *rstd,
			      const float *x, const float *g, const float *b,
			      int rows, int n, float eps)
{
	struct row_job j = { .y = y, .mean = mean, .rstd = rstd, .x = x,
			     .g = g, .b = b, .n = n, .eps = eps, .marian = 1 };
	kern_parallel_for(rows, row_grain(n), layernorm_task, &j);
}

static void layernorm_dx_task(void *ctx, int64_t lo, int64_t hi)
{
	struct row_job *j = ctx;
	size_t o = (size_t)lo * j->n;
	kern_ops()->layernorm_backward_dx(j->dx + o, j->dy + o, j->x + o, j->g,
					  j->mean + lo, j->rstd + lo,
					  (int)(hi - lo), j->n);
}

void layernorm_backward(float *dx, float *dg, float *db, const float *dy,
			const float *x, const float *g, const float *mean,
			const float *rstd, int rows, int n)
{
	if (dx) {
		struct row_job j = { .dx = dx, .dy = dy, .x = x, .g = g,
				     .mean = (float *)mean,
				     .rstd = (float *)rstd, .n = n };
		kern_parallel_for(rows, row_grain(n), layernorm_dx_task, &j);
	}
	layernorm_param_grads(dg, db, dy, x, mean, rstd, rows, n);
}

/* ---- GRU gates: rows of the batch over threads --------------------------- */

struct gru_job {
	float *o1, *o2;
	const float *i1, *i2, *i3, *i4;
	int n;
};

static void gru_gates_task(void *ctx, int64_t lo, int64_t hi)
{
	struct gru_job *j = ctx;
	size_t n = j->n;
	kern_ops()->gru_gates_forward(j->o1 + lo * 2 * n, j->o2 + lo * n,
				      j->i1 + lo * 3 * n, j->i2 + lo * n,
				      (int)(hi - lo), j->n);
}

void gru_gates_forward(float *zr, float *rh, const float *pre, const float *h,
		       int B, int n)
{
	struct gru_job j = { .o1 = zr, .o2 = rh, .i1 = pre, .i2 = h, .n = n };
	kern_parallel_for(B, row_grain(3 * n), gru_gates_task, &j);
}

static void gru_state_task(void *ctx, int64_t lo, int64_t hi)
{
	struct gru_job *j = ctx;
	size_t n = j->n;
	kern_ops()->gru_state_forward(j->o1 + lo * n, j->o2 + lo * n,
				      j->i1 + lo * 3 * n, j->i2 + lo * 2 * n,
				      j->i3 + lo * n, (int)(hi - lo), j->n);
}

void gru_state_forward(float *hnew, float *hh, const float *pre,
		       const float *zr, const float *h, int B, int n)
{
	struct gru_job j = { .o1 = hnew, .o2 = hh, .i1 = pre, .i2 = zr,
			     .i3 = h, .n = n };
	kern_parallel_for(B, row_grain(3 * n), gru_state_task, &j);
}

static void gru_state_backward_task(void *ctx, int64_t lo, int64_t hi)
{
	struct gru_job *j = ctx;
	size_t n = j->n;
	kern_ops()->gru_state_backward(j->o1 + lo * 3 * n, j->o2 + lo * n,
				       j->i1 + lo * n, j->i2 + lo * n,
				       j->i3 + lo * 2 * n, j->i4 + lo * n,
				       (int)(hi - lo), j->n);
}

void gru_state_backward(float *dpre, float *dh, const float *dhnew,
			const float *hh, const float *zr, const float *h,
			int B, int n)
{
	struct gru_job j = { .o1 = dpre, .o2 = dh, .i1 = dhnew, .i2 = hh,
			     .i3 = zr, .i4 = h, .n = n };
	kern_parallel_for(B, row_grain(3 * n), gru_state_backward_task, &j);
}

static void gru_gates_backward_task(void *ctx, int64_t lo, int64_t hi)
{
	struct gru_job *j = ctx;
	size_t n = j->n;
	kern_ops()->gru_gates_backward(j->o1 + lo * 3 * n, j->o2 + lo * n,
				       j->i1 + lo * n, j->i2 + lo * 2 * n,
				       j->i3 + lo * n, (int)(hi - lo), j->n);
}

void gru_gates_backward(float *dpre, float *dh, const float *drh,
			const float *zr, const float *h, int B, int n)
{
	struct gru_job j = { .o1 = dpre, .o2 = dh, .i1 = drh, .i2 = zr,
			     .i3 = h, .n = n };
	kern_parallel_for(B, row_grain(3 * n), gru_gates_backward_task, &j);
}

/* ---- LSTM cell: rows of the batch over threads --------------------------- */

struct lstm_job {
	float *act, *cnew, *hnew, *dpre, *dc;
	const float *pre, *c, *dhnew, *dcnew, *act_in, *cnew_in;
	int n;
};

static void lstm_forward_task(void *ctx, int64_t lo, int64_t hi)
{
	struct lstm_job *j = ctx;
	size_t n = j->n;
	kern_ops()->lstm_cell_forward(j->act + lo * 4 * n, j->cnew + lo * n,
				      j->hnew + lo * n, j->pre + lo * 4 * n,
				      j->c + lo * n, (int)(hi - lo), j->n);
}

void lstm_cell_forward(float *act, float *cnew, float *hnew, const float *pre,
		       const float *c, int B, int n)
{
	struct lstm_job j = { .act = act, .cnew = cnew, .hnew = hnew,
			      .pre = pre, .c = c, .n = n };
	kern_parallel_for(B, row_grain(4 * n), lstm_forward_task, &j);
}

static void lstm_backward_task(void *ctx, int64_t lo, int64_t hi)
{
	struct lstm_job *j = ctx;
	size_t n = j->n;
	kern_ops()->lstm_cell_backward(j->dpre + lo * 4 * n, j->dc + lo * n,
				       j->dhnew + lo * n,
				       j->dcnew ? j->dcnew + lo * n : NULL,
				       j->act_in + lo * 4 * n, j->c + lo * n,
				       j->cnew_in + lo * n, (int)(hi - lo),
				       j->n);
}

void lstm_cell_backward(float *dpre, float *dc, const float *dhnew,
			const float *dcnew, const float *act, const float *c,
			const float *cnew, int B, int n)
{
	struct lstm_job j = { .dpre = dpre, .dc = dc, .dhnew = dhnew,
			      .dcnew = dcnew, .act_in = act, .c = c,
			      .cnew_in = cnew, .n = n };
	kern_parallel_for(B, row_grain(4 * n), lstm_backward_task, &j);
}
