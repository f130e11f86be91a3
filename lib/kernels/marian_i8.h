/*
 * marian_i8.h: Marian's int8 product (intgemm, as browsermt/marian-dev
 * 2781d735 computes it on a CPU with AVX512_VNNI), a plain scalar
 * reference, for models imported from Marian's intgemm8 files
 * (doc/MODELS.md, "Marian's int8").  The file's numbers and the
 * references are in marian_i8.c.
 *
 * y [M, N] = x [M, K] W^T + b, W [N, K] held as int8 wq with one
 * multiplier qb for the whole matrix (w = wq / qb):
 *
 *   qa     = alpha (the model's NAME_QuantMultA), or when there is none
 *            127 / max |x| over the whole call (all M rows)
 *   xq_ik  = marian_quant(x_ik qa)                     in [-127, 127]
 *   acc_ij = sum_k xq_ik wq_jk                         (exact, int32)
 *   unsigned (shifted): acc'_ij = acc_ij + 127 c_j, c_j = sum_k wq_jk,
 *            u  = 1 / (qa qb),  ub = -((127 / qa) (127 / qb)) / 127,
 *            y_ij = fma((float)acc'_ij, u, fma((float)c_j, ub, b_j))
 *            (without a bias: fma((float)acc'_ij, u, (float)c_j ub))
 *   signed:  y_ij = fma((float)acc_ij, u, b_j) (without a bias: the
 *            product)
 *
 * every operation in float32, in that order: intgemm's mul_ps and add_ps,
 * which g++ fuses into an fma on a CPU with FMA (marian_i8.c).
 * That is intgemm on a CPU with AVX512_VNNI, whose sums are exact.  On
 * any other (AVX2, AVX512BW, SSSE3) it sums the unsigned form's pairs
 * of products with vpmaddubsw, in int16 with saturation: there
 * acc'_ij = sum over even k of sat16((xq_ik + 127) wq_jk +
 * (xq_i,k+1 + 127) wq_j,k+1), which is acc_ij + 127 c_j unless a pair
 * passed 32767 (MARIAN_SHIFT_SAT; the signed form's pairs, |xq| wq
 * with wq's sign turned by xq's, stay within 2 127 127: exact).
 */
/* The forms of a product: signed, unsigned (exact), unsigned with
 * intgemm's saturating pairs. */
enum { MARIAN_SIGNED, MARIAN_SHIFT, MARIAN_SHIFT_SAT };
#ifndef ATTN_MARIAN_I8_H
#define ATTN_MARIAN_I8_H

#include <stddef.h>
#include <math.h>
#include <stdint.h>

/* Marian's quantisation of one value v = x * multiplier (intgemm's
 * QuantizeTile8: cvtps_epi32, round to nearest even; a value out of
 * int32's range or NaN gives INT32_MIN; then saturated to int8 and
 * -128 raised to -127). */
static inline __attribute__((always_inline)) int8_t marian_quant(float v)
{
	/* cvtps_epi32: NaN and |v| >= 2^31 give INT32_MIN, which the
	 * saturating packs make -128 and the max -127 (v <= -2^31 is
	 * clamped to -200 below, which gives -127 as well).  Selects, no
	 * branches: the loops that call this vectorise. */
	int bad = !(v < 2147483648.0f);
	float r;

	v = v > 200 ? 200 : v;
	v = v < -200 ? -200 : v;
	/* to nearest, ties to even: adding 1.5 2^23 leaves no fraction
	 * bits (the default rounding mode, float arithmetic) */
	r = (v + 0x1.8p23f) - 0x1.8p23f;
	r = r > 127 ? 127 : r;
	r = r < -127 ? -127 : r;
	return (int8_t)(bad ? -127.0f : r);
}
/*
 * The end of an entry: the sum acc (MARIAN_SIGNED and MARIAN_SHIFT: the
 * exact sum_k xq_ik wq_jk; MARIAN_SHIFT_SAT: acc'_ij), column sum c,
 * u = 1 / (qa qb), ub = -((127 / qa) (127 / qb)) / 127, bias b (NULL:
 * none), the form; as above.
 */
/* The unsigned forms' bias of a column: fma((float)c, ub, b), or
 * (float)c ub without b (NULL). */
static inline float marian_i8_bias(int32_t c, float ub, const float *b)
{
	return b ? fmaf((float)c, ub, *b) : (float)c * ub;
}

static inline float marian_i8_y(int32_t acc, int32_t c, float u, float ub,
				const float *b, int form)
{
	if (form == MARIAN_SIGNED)
		return b ? fmaf((float)acc, u, *b) : (float)acc * u;
	return fmaf((float)(form == MARIAN_SHIFT ? acc + 127 * c : acc), u,
		    marian_i8_bias(c, ub, b));
}

/* acc' of MARIAN_SHIFT_SAT: x's quantised row xq by w's row wq, K of
 * each (a last k alone: its pair's other product is 0). */
static inline int32_t marian_sum_sat(const int8_t *xq, const int8_t *wq,
				     int K)
{
	int32_t acc = 0;

	for (int k = 0; k < K; k += 2) {
		int32_t p = (xq[k] + 127) * wq[k];
		if (k + 1 < K)
			p += (xq[k + 1] + 127) * wq[k + 1];
		acc += p > 32767 ? 32767 : p < -32768 ? -32768 : p;
	}
	return acc;
}

/* max |x_k| over n values (intgemm::MaxAbsolute). */
float marian_max_abs(const float *x, size_t n);
/* c_j = sum_k wq_jk for the N rows of wq [N, K]. */
void marian_col_sums(int32_t *c, const int8_t *wq, int N, int K);

/*
 * The product above.  qa > 0: the fixed multiplier (alpha); qa == 0:
 * 127 / max |x|.  form: MARIAN_SHIFT or MARIAN_SHIFT_SAT, the unsigned
 * form (Marian's int8shift*: every product with a bias, and with
 * int8shiftAll those without too), with c the column sums
 * (marian_col_sums); MARIAN_SIGNED the signed one (c unused, may be
 * NULL).  b may be NULL.  relu: max(y, 0) after.  0, or -1 (err_msg())
 * when out of memory for a row.
 */
int marian_i8_ref(float *y, const float *x, int M, const int8_t *wq,
		   const int32_t *c, int N, int K, float qa, float qb,
		   const float *b, int form, int relu);

#endif
