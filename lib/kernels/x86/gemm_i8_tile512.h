/*
 * gemm_i8_tile512.h: the tiles and panel loop of the AVX-512 int8
 * kernels of gemm_packed.h, included once by each (gemm_i8_avx512vnni.c,
 * gemm_i8_u7_avx512.c) after it defines
 *
 *   I8_PRODUCT(c, a, w)  *c += the products of x's broadcast quads a and
 *                        the panel's quads w, its instruction's sums
 *   I8_CONSTS            the registers the product needs (or nothing)
 *   I8_USETS(R)          the sets of accumulators of a tile of R rows
 *   I8_U7                1: x in the 7-bit form, each row's zero point
 *                        times the columns' sums (qsum / 128) taken off;
 *                        0: x as q + 128, qsum (128 sum_k wq) taken off
 *
 * A tile is R rows (at most 12) by a panel's 32 columns: per quad of k
 * two loads of the panel (16 columns of 4 bytes each), a 32-bit
 * broadcast of each row's quad of x and two products a row, into R x 2
 * accumulators.  An instruction whose product adds into its accumulator
 * (vpdpbusd: a chain of 5 cycles a step) gives tiles of few rows U sets
 * of them taking turns over the quads, added at the end (int32: exact in
 * any order).  The first tile of a panel reads it from memory (a decoder
 * step's weights, 38 MB int8 for the base model, have all passed since
 * the last step), the others from cache: it asks for the panel's bytes
 * PF_AHEAD ahead of its loads.  perf put the products of the base
 * model's int8 step at about 0.3 of the int8 peak, against 0.47-0.63 for
 * the same products alone; 4 KB ahead made its greedy translation 8-9%
 * faster (medians of five alternated runs).
 */
#include <immintrin.h>
#include <string.h>

#include "kernels/gemm_packed.h"
#include "kernels/kern_impl.h"
#include "gemm_i8_end.h"

#define RMAX 12
#define PF_AHEAD 4096

/* Writes a tile's R rows of C from their int32 sums c[r][0..1]. */
static inline __attribute__((always_inline)) void
tile_out(int R, const struct wpack_i8_job *j, __m512i c[][2], int i,
	 __mmask16 m0, __mmask16 m1)
{
	float *C = j->C + (long)i * j->ldc;
	__m512i s0 = _mm512_maskz_loadu_epi32(m0, j->qsum);
	__m512i s1 = _mm512_maskz_loadu_epi32(m1, j->qsum + 16);
	__m512 ws0 = _mm512_maskz_loadu_ps(m0, j->ws);
	__m512 ws1 = _mm512_maskz_loadu_ps(m1, j->ws + 16);
	__m512 z = _mm512_setzero_ps();
	__m512 b0 = j->b ? _mm512_maskz_loadu_ps(m0, j->b) : z;
	__m512 b1 = j->b ? _mm512_maskz_loadu_ps(m1, j->b + 16) : z;

	if (I8_U7) {	/* the columns' sums of wq: qsum / 128, exactly */
		s0 = _mm512_srai_epi32(s0, 7);
		s1 = _mm512_srai_epi32(s1, 7);
	}
#pragma GCC unroll 12
	for (int r = 0; r < R; r++) {
		float *cr = C + r * j->ldc, sx = j->sx[i + r];
		__m512i k0 = s0, k1 = s1;

		if (I8_U7) {
			__m512i zp = _mm512_set1_epi32(j->zx[i + r]);
			k0 = _mm512_mullo_epi32(zp, s0);
			k1 = _mm512_mullo_epi32(zp, s1);
		}
		_mm512_mask_storeu_ps(cr, m0, i8_end_512(
			_mm512_sub_epi32(c[r][0], k0), sx, ws0, b0,
			WPACK_I8_BIAS(j), j->relu));
		_mm512_mask_storeu_ps(cr + 16, m1, i8_end_512(
			_mm512_sub_epi32(c[r][1], k1), sx, ws1, b1,
			WPACK_I8_BIAS(j), j->relu));
	}
}

/* The products of one quad of k: P's two vectors by each row's quad. */
#define I8_QUAD(c)							\
	do {								\
		__m512i w0_ = _mm512_loadu_si512(P);			\
		__m512i w1_ = _mm512_loadu_si512(P + 64);		\
		if (first) {						\
			_mm_prefetch((const char *)P + PF_AHEAD,	\
				     _MM_HINT_T0);			\
			_mm_prefetch((const char *)P + PF_AHEAD + 64,	\
				     _MM_HINT_T0);			\
		}							\
		_Pragma("GCC unroll 12")				\
		for (int r = 0; r < R; r++) {				\
			int q_;						\
			memcpy(&q_, xs + r * 4, sizeof q_);		\
			__m512i a_ = _mm512_set1_epi32(q_);		\
			I8_PRODUCT(&(c)[r][0], a_, w0_);		\
			I8_PRODUCT(&(c)[r][1], a_, w1_);		\
		}							\
		xs += RMAX * 4;						\
		P += WPACK_NR * 4;					\
	} while (0)

/* A tile of R rows in U sets of accumulators. */
static inline __attribute__((always_inline)) void
tile(int R, int U, const struct wpack_i8_job *j, const uint8_t *xs, int i,
     __mmask16 m0, __mmask16 m1, int first)
{
	const int8_t *P = j->P;
	__m512i c[4][RMAX][2];
	int p = 0;
	I8_CONSTS

#pragma GCC unroll 12
	for (int r = 0; r < R; r++)
#pragma GCC unroll 4
		for (int u = 0; u < U; u++)
			c[u][r][0] = c[u][r][1] = _mm512_setzero_si512();
	/* (as p < kq for one set: the loop's end by its pointer) */
	for (; U == 1 ? p < j->kq : p + U <= j->kq; p += U)
#pragma GCC unroll 4
		for (int u = 0; u < U; u++)
			I8_QUAD(c[u]);
	for (; U > 1 && p < j->kq; p++)
		I8_QUAD(c[0]);
#pragma GCC unroll 12
	for (int r = 0; r < R; r++)
#pragma GCC unroll 4
		for (int u = 1; u < U; u++) {
			c[0][r][0] = _mm512_add_epi32(c[0][r][0], c[u][r][0]);
			c[0][r][1] = _mm512_add_epi32(c[0][r][1], c[u][r][1]);
		}
	tile_out(R, j, c[0], i, m0, m1);
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
#define T(R) case R: tile(R, I8_USETS(R), j, xs, i, m0, m1, i == 0); break
		T(1); T(2); T(3); T(4); T(5); T(6);
		T(7); T(8); T(9); T(10); T(11); T(12);
#undef T
		}
	}
}
