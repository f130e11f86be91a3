/*
 * gemm_i8_tile256.h: the tiles and panel loop of the 256-bit int8
 * kernels of gemm_packed.h on the bytes forms, included once by each
 * (gemm_i8_avxvnni.c, gemm_i8_u7_avx2.c) after it defines
 *
 *   I8_PRODUCT(c, a, w)  *c += the products of x's broadcast quads a and
 *                        the panel's quads w, its instruction's sums
 *   I8_USETS(R)          the sets of accumulators of a tile of R rows
 *   I8_U7                1: x in the 7-bit form, each row's zero point
 *                        times the columns' sums (qsum / 128) taken off;
 *                        0: x as q + 128, qsum (128 sum_k wq) taken off
 *
 * AVX2 has 16 vector registers: a tile is R rows (at most 6) by half a
 * panel (16 columns, two vectors of 8 columns of 4 bytes): per quad of k
 * the two vectors, a 32-bit broadcast of each row's quad of x and two
 * products a row, into R x 2 accumulators; an instruction whose product
 * adds into its accumulator gives tiles of few rows U sets of them
 * taking turns over the quads, added at the end (int32: exact in any
 * order).  The first pass over a panel asks for its bytes PF_AHEAD
 * ahead, as gemm_i8_tile512.h says why.
 */
#include <immintrin.h>
#include <string.h>

#include "kernels/gemm_packed.h"
#include "kernels/kern_impl.h"
#include "gemm_i8_end.h"
#include "vmath_avx2.h"

#define RMAX 6
#define PF_AHEAD 4096

/* The products of one quad of k: P's two vectors by each row's quad. */
#define I8_QUAD(c)							\
	do {								\
		__m256i w0_ = _mm256_loadu_si256((const __m256i *)P);	\
		__m256i w1_ = _mm256_loadu_si256(			\
			(const __m256i *)(P + 32));			\
		if (first) {	/* both halves of the panel's row */	\
			_mm_prefetch((const char *)P + PF_AHEAD,	\
				     _MM_HINT_T0);			\
			_mm_prefetch((const char *)P + PF_AHEAD + 64,	\
				     _MM_HINT_T0);			\
		}							\
		_Pragma("GCC unroll 6")					\
		for (int r = 0; r < R; r++) {				\
			int q_;						\
			memcpy(&q_, xs + r * 4, sizeof q_);		\
			__m256i a_ = _mm256_set1_epi32(q_);		\
			I8_PRODUCT(&(c)[r][0], a_, w0_);		\
			I8_PRODUCT(&(c)[r][1], a_, w1_);		\
		}							\
		xs += RMAX * 4;						\
		P += WPACK_NR * 4;					\
	} while (0)

/* A tile of R rows by half g of the panel, in U sets of accumulators. */
static inline __attribute__((always_inline)) void
tile(int R, int U, const struct wpack_i8_job *j, const uint8_t *xs, int i,
     int g)
{
	const int8_t *P = j->P + g * 64;
	__m256i c[2][RMAX][2];
	int nc = j->cols - g * 16, p = 0;
	float *C = j->C + (long)i * j->ldc + g * 16;
	int first = i == 0 && g == 0;	/* the pass that reads P from memory */

#pragma GCC unroll 6
	for (int r = 0; r < R; r++)
#pragma GCC unroll 2
		for (int u = 0; u < U; u++)
			c[u][r][0] = c[u][r][1] = _mm256_setzero_si256();
	/* (as p < kq for one set: the loop's end by its pointer) */
	for (; U == 1 ? p < j->kq : p + U <= j->kq; p += U)
#pragma GCC unroll 2
		for (int u = 0; u < U; u++)
			I8_QUAD(c[u]);
	for (; U > 1 && p < j->kq; p++)
		I8_QUAD(c[0]);

	__m256i s0 = _mm256_loadu_si256((const __m256i *)(j->qsum + g * 16));
	__m256i s1 = _mm256_loadu_si256((const __m256i *)(j->qsum + g * 16 +
							 8));
	__m256 ws0 = ldr(j->ws + g * 16, nc);
	__m256 ws1 = nc > 8 ? ldr(j->ws + g * 16 + 8, nc - 8)
			    : _mm256_setzero_ps();
	__m256 z = _mm256_setzero_ps();
	__m256 b0 = j->b ? ldr(j->b + g * 16, nc) : z;
	__m256 b1 = j->b && nc > 8 ? ldr(j->b + g * 16 + 8, nc - 8) : z;

	if (I8_U7) {	/* the columns' sums of wq: qsum / 128, exactly */
		s0 = _mm256_srai_epi32(s0, 7);
		s1 = _mm256_srai_epi32(s1, 7);
	}
#pragma GCC unroll 6
	for (int r = 0; r < R; r++) {
		float *cr = C + r * j->ldc, sx = j->sx[i + r];
		__m256i k0 = s0, k1 = s1;

		if (U > 1) {
			c[0][r][0] = _mm256_add_epi32(c[0][r][0], c[1][r][0]);
			c[0][r][1] = _mm256_add_epi32(c[0][r][1], c[1][r][1]);
		}
		if (I8_U7) {
			__m256i zp = _mm256_set1_epi32(j->zx[i + r]);
			k0 = _mm256_mullo_epi32(zp, s0);
			k1 = _mm256_mullo_epi32(zp, s1);
		}
		str(cr, nc, i8_end_256(_mm256_sub_epi32(c[0][r][0], k0), sx,
				       ws0, b0, WPACK_I8_BIAS(j), j->relu));
		if (nc > 8)
			str(cr + 8, nc - 8, i8_end_256(_mm256_sub_epi32(
				c[0][r][1], k1), sx, ws1, b1, WPACK_I8_BIAS(j),
				j->relu));
	}
}

static void panel(const struct wpack_i8_job *j)
{
	const uint8_t *x8 = j->xs;

	for (int i = 0; i < j->M; i += RMAX) {
		const uint8_t *xs = x8 + (size_t)i * j->kq * 4;
		for (int g = 0; g * 16 < j->cols; g++)
			switch (j->M - i < RMAX ? j->M - i : RMAX) {
#define T(R) case R: tile(R, I8_USETS(R), j, xs, i, g); break
			T(1); T(2); T(3); T(4); T(5); T(6);
#undef T
			}
	}
}
