/*
 * gemm_i8_u7_avx512.c: the int8 kernel of gemm_packed.h for AVX-512 CPUs
 * without AVX512_VNNI (Skylake-SP, Cascade Lake has it): the 7-bit form
 * of gemm_i8_u7_avx2.c on zmm with AVX512BW's vpmaddubsw, vpmaddwd by
 * ones and vpaddd (64 products in two multiply instructions), x's
 * pairs of u8 x s8 products at most 2 127 128 in size, never saturated;
 * at the end zp_i sum_k wq_jk (qsum / 128) off each row's sums, exact.
 *
 * Tiles of up to 12 rows by a panel's 32 columns, as the AVX512_VNNI
 * kernel's: per quad of k two loads of the panel, a 32-bit broadcast of
 * the row's quad of x, and per row two products into 24 accumulators
 * (32 registers: those, the panel's two, x's, a product's and the
 * ones).  The chain through an accumulator is one vpaddd, so tiles of
 * few rows need no second set.  x is quantised and packed by the AVX2
 * code (gemm_i8_quant_u7_avx2).
 */
#include <immintrin.h>
#include <string.h>

#include "kernels/gemm_packed.h"
#include "kernels/kern_impl.h"
#include "gemm_i8_end.h"

#define RMAX 12
/* The first tile of a panel asks for its bytes this far ahead
 * (gemm_i8_avx512vnni.c says why). */
#define PF_AHEAD 4096

/* *c += the sums of a's and w's quads of bytes (u8 by s8), in asm: with
 * intrinsics gcc 12 hoisted the broadcasts of x and spilled 10 of the
 * 12-row tile's accumulators to the stack. */
static inline __attribute__((always_inline)) void
ubs(__m512i *c, __m512i a, __m512i w, __m512i ones)
{
	__m512i t;

	__asm__("vpmaddubsw %[w], %[a], %[t]\n\t"
		"vpmaddwd %[ones], %[t], %[t]\n\t"
		"vpaddd %[t], %[c], %[c]"
		: [c] "+v"(*c), [t] "=&v"(t)
		: [a] "v"(a), [w] "v"(w), [ones] "v"(ones));
}

static inline __attribute__((always_inline)) void
tile(int R, const struct wpack_i8_job *j, const uint8_t *xs, int i,
     __mmask16 m0, __mmask16 m1, int first)
{
	const int8_t *P = j->P;
	const __m512i ones = _mm512_set1_epi16(1);
	__m512i c[RMAX][2];

#pragma GCC unroll 12
	for (int r = 0; r < R; r++)
		c[r][0] = c[r][1] = _mm512_setzero_si512();
	for (int p = 0; p < j->kq; p++) {
		__m512i w0 = _mm512_loadu_si512(P);
		__m512i w1 = _mm512_loadu_si512(P + 64);
		if (first) {
			_mm_prefetch((const char *)P + PF_AHEAD, _MM_HINT_T0);
			_mm_prefetch((const char *)P + PF_AHEAD + 64,
				     _MM_HINT_T0);
		}
#pragma GCC unroll 12
		for (int r = 0; r < R; r++) {
			int q;
			memcpy(&q, xs + r * 4, sizeof q);
			__m512i a = _mm512_set1_epi32(q);
			ubs(&c[r][0], a, w0, ones);
			ubs(&c[r][1], a, w1, ones);
		}
		xs += RMAX * 4;
		P += WPACK_NR * 4;
	}

	float *C = j->C + (long)i * j->ldc;
	/* the columns' sums of wq: qsum is 128 times them, exactly */
	__m512i s0 = _mm512_srai_epi32(_mm512_loadu_si512(j->qsum), 7);
	__m512i s1 = _mm512_srai_epi32(_mm512_loadu_si512(j->qsum + 16), 7);
	__m512 ws0 = _mm512_maskz_loadu_ps(m0, j->ws);
	__m512 ws1 = _mm512_maskz_loadu_ps(m1, j->ws + 16);
	__m512 z = _mm512_setzero_ps();
	__m512 b0 = j->b ? _mm512_maskz_loadu_ps(m0, j->b) : z;
	__m512 b1 = j->b ? _mm512_maskz_loadu_ps(m1, j->b + 16) : z;

#pragma GCC unroll 12
	for (int r = 0; r < R; r++) {
		float *cr = C + r * j->ldc, sx = j->sx[i + r];
		__m512i zp = _mm512_set1_epi32(j->zx[i + r]);
		_mm512_mask_storeu_ps(cr, m0, i8_end_512(_mm512_sub_epi32(
			c[r][0], _mm512_mullo_epi32(zp, s0)), sx, ws0, b0,
			WPACK_I8_BIAS(j), j->relu));
		_mm512_mask_storeu_ps(cr + 16, m1, i8_end_512(_mm512_sub_epi32(
			c[r][1], _mm512_mullo_epi32(zp, s1)), sx, ws1, b1,
			WPACK_I8_BIAS(j), j->relu));
	}
}

static void panel(const struct wpack_i8_job *j)
{
	int c0 = j->cols < 16 ? j->cols : 16, c1 = j->cols - c0;
	__mmask16 m0 = (__mmask16)((1u << c0) - 1);
	__mmask16 m1 = (__mmask16)((1u << c1) - 1);
	const uint8_t *x8 = j->xs;

	for (int i = 0; i < j->M; i += RMAX) {
		const uint8_t *xs = x8 + (size_t)i * j->kq * 4;
		switch (j->M - i < RMAX ? j->M - i : RMAX) {
#define T(R) case R: tile(R, j, xs, i, m0, m1, i == 0); break
		T(1); T(2); T(3); T(4); T(5); T(6);
		T(7); T(8); T(9); T(10); T(11); T(12);
#undef T
		}
	}
}

const struct gemm_i8 gemm_i8_u7_avx512 = {
	.rmax = RMAX,
	.xs_form = WPACK_XS_U7,
	.panel = panel,
	.quant_u7 = gemm_i8_quant_u7_avx2,
	.mquant = gemm_i8_mquant_avx512,
	.exact = &gemm_i8_avx2,
	.msat = &gemm_i8_u7_avx512,
};
