/*
 * marian_i8.c: Marian's int8 product (marian_i8.h), in plain loops.
 *
 * Where each step is in browsermt/marian-dev 2781d735 (and its intgemm,
 * kpu/intgemm f7401513, in src/3rd_party/intgemm):
 *
 * - Which products: src/graph/expression_operators.cpp dot() (l. 487)
 *   and affine() (l. 577) send every product of a float A by a float or
 *   intgemm8 B to cpu::integer::dot / affine<Type::int8> once the
 *   backend is int8 (any --gemm-precision int8*, or an intgemm8 B):
 *   the shifted (unsigned) form for affine() when isShifted (int8shift*),
 *   for dot() (no bias: the SSRU's W) only when isShiftedAll (*All);
 *   src/tensors/cpu/backend.h setGemmPrecision (l. 22-57) maps the names.
 * - A's multiplier: src/tensors/cpu/intgemm_interface.h affine() (l.
 *   568-600): with precomputed alphas (the *Alpha* names)
 *   fetchAlphaFromModelNodeOp reads the model's B-name + "_QuantMultA"
 *   (integer_common.h l. 31-55), else QuantMultNodeOp (l. 246-284)
 *   computes 127.0f / intgemm::MaxAbsolute(A) over the whole A tensor,
 *   every row of the batch (so without alphas a row's result depends on
 *   the rows beside it).
 * - A's values: PrepareANodeOp (l. 10-59): Int8::PrepareA or
 *   Int8Shift::PrepareA -> intgemm avx2_gemm.h / avx512_gemm.h
 *   QuantizeTile8 (Tile, TileU): cvtps_epi32(x * qa) (round to nearest
 *   even; out of range or NaN -> INT32_MIN), packs_epi32 and packs_epi16
 *   (saturation), max with -127; TileU then adds 127 (0 .. 254).
 * - B: stored quantised (marian_items.c); its multiplier is the float
 *   after its values (QuantMultNodeOp l. 265-267).  A B given as floats
 *   (the tied output layer: Wemb, dequantised when loaded) is quantised
 *   by PrepareBNodeOp (l. 74-141) with 127.0f / MaxAbsolute(B), the same
 *   rounding as A's.
 * - The products: Int8::Multiply / Int8Shift::Multiply (intgemm.h l. 167-
 *   292); with AVX512_VNNI (avx512vnni_gemm.h, vpdpbusds) the int32 sums
 *   are exact.  Without it (intgemm.cc RealCPUID, GetCPUID l. 23-120:
 *   AVX512BW, AVX2, SSSE3; INTGEMM_CPUID lowers it) the unsigned form
 *   is multiply.h's
 *   INTGEMM_MULTIPLY8SHIFT (l. 293-368): maddubs_epi16 of 32 or 64
 *   consecutive k of A's bytes by B's (PrepareB keeps k's order within
 *   a register), which sums each even-odd pair in int16 with
 *   saturation, then madd_epi16 by ones and add_epi32: MARIAN_SHIFT_SAT.
 *   The signed form (Int8::Multiply: sign_epi8, abs) cannot saturate.
 * - The output: AffineNodeOp (l. 465-545) and DotNodeOp (l. 404-462):
 *   unquant_mult = 1.0f / (qa * qb) (times the scale, 1);
 *   callbacks UnquantizeAndAddBiasAndWrite / UnquantizeAndWrite
 *   (callbacks/implementations.inl l. 199-222, kernels/implementations.inl
 *   l. 59-84): cvtepi32_ps(acc) * unquant_mult, then + bias, as
 *   mul_ps and add_ps, which g++ contracts into one fma wherever the
 *   target has FMA (C++ is compiled with -ffp-contract=fast; Marian's
 *   native builds take -march=native): fma(acc, unquant_mult, bias).
 *   Measured, not assumed: a native build traced product by product
 *   on a Bible model (doc/results.md, "Marian's int8 ends in an fma")
 *   agrees to the bit with fma and in a third of the entries not
 *   without.
 * - The shifted form's bias: PrepareBiasForBNodeOp / PrepareFakeBias
 *   (l. 313-401): unquant_mult = (-1) * ((127.0f / qa) * (127.0f / qb)) /
 *   127.0f, Int8Shift::PrepareBias (multiply.h INTGEMM_PREPAREBIASFOR8:
 *   the sums of B's columns, 1 times each value) with the same callbacks:
 *   fma(cvtepi32_ps(c_j), unquant_mult, bias_j) (or without a bias,
 *   the product).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/errmsg.h"
#include "gemm_packed.h"
#include "kern_impl.h"
#include "marian_i8.h"

float marian_max_abs(const float *x, size_t n)
{
	float m = 0;

	for (size_t k = 0; k < n; k++)
		m = fabsf(x[k]) > m ? fabsf(x[k]) : m;
	return m;
}

void marian_col_sums(int32_t *c, const int8_t *wq, int N, int K)
{
	for (int j = 0; j < N; j++)
		c[j] = i8_row_sum(wq + (size_t)j * K, K);
}

struct job {
	float *y;
	const float *x, *b;
	const int8_t *wq;
	const int32_t *c;
	int N, K, form, relu;
	float qa, u, ub;
	int oom;
};

static void rows(void *ctx, int64_t lo, int64_t hi)
{
	struct job *j = ctx;
	int K = j->K;
	int8_t *xq = kern_scratch(2, (size_t)K + 1);

	if (!xq) {
		j->oom = 1;
		return;
	}
	for (int64_t i = lo; i < hi; i++) {
		const float *xr = j->x + (size_t)i * K;
		float *yr = j->y + (size_t)i * j->N;

		for (int k = 0; k < K; k++)
			xq[k] = marian_quant(xr[k] * j->qa);
		for (int n = 0; n < j->N; n++) {
			const int8_t *wr = j->wq + (size_t)n * K;
			int32_t acc = 0;
			float v;

			if (j->form == MARIAN_SHIFT_SAT)
				acc = marian_sum_sat(xq, wr, K);
			else
				for (int k = 0; k < K; k++)
					acc += (int32_t)xq[k] * wr[k];
			/* unsigned: (xq + 127) wq summed, acc + 127 c */
			v = marian_i8_y(acc, j->form ? j->c[n] : 0, j->u,
					j->ub, j->b ? j->b + n : NULL,
					j->form);
			yr[n] = j->relu && !(v > 0) ? 0 : v;
		}
	}
}

int marian_i8_ref(float *y, const float *x, int M, const int8_t *wq,
		  const int32_t *c, int N, int K, float qa, float qb,
		  const float *b, int form, int relu)
{
	struct job j = { y, x, b, wq, c, N, K, form, relu, qa, 0, 0, 0 };

	if (M <= 0 || N <= 0)
		return 0;
	if (!(qa > 0))
		j.qa = 127.0f / marian_max_abs(x, (size_t)M * K);
	j.u = 1.0f / (j.qa * qb);
	j.ub = (-1) * ((127.0f / j.qa) * (127.0f / qb)) / 127.0f;
	long per = (long)N * K;
	kern_parallel_for(M, ((1L << 17) + per - 1) / per, rows, &j);
	if (j.oom) {
		err_set("out of memory for %d rows of int8", M);
		return -1;
	}
	return 0;
}

int wpack_marian(struct wpack *w, float qa, float qb, int mode)
{
	if (!(qa >= 0 && qa < INFINITY && qb > 0 && qb < INFINITY)) {
		err_set("Marian's int8 multipliers %g and %g: not positive "
			"and finite", qa, qb);
		return -1;
	}
	free(w->mcol);
	/* the column sums to the last panel's end (the kernels read whole
	 * panels of them: gemm_i8.c), zero past N; then N ones (the
	 * kernels' scales) */
	size_t nc = ((size_t)w->N + WPACK_NR - 1) / WPACK_NR * WPACK_NR;
	if (!(w->mcol = calloc(1, sizeof(int32_t) * nc +
			       sizeof(float) * (w->N ? w->N : 1)))) {
		err_set("out of memory");
		return -1;
	}
	if (w->qsum)	/* the pack's, 128 times them, exactly */
		for (int j = 0; j < w->N; j++)
			w->mcol[j] = w->qsum[j] / 128;
	else
		marian_col_sums(w->mcol, w->wq, w->N, w->K);
	w->mone = (float *)(w->mcol + nc);
	for (int j = 0; j < w->N; j++)
		w->mone[j] = 1;
	w->mqa = qa;
	w->mqb = qb;
	w->marian = mode | WPACK_MARIAN;
	return 0;
}
