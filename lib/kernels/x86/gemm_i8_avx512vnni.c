/*
 * gemm_i8_avx512vnni.c: the int8 kernel of gemm_packed.h with AVX512_VNNI:
 * vpdpbusd multiplies 4 unsigned bytes by 4 signed ones and adds the four
 * products to an int32 lane, with no intermediate rounding or saturation.
 * x comes as q + 128 (in [1, 255]), so a lane sums (q + 128) wq over k
 * and the kernel subtracts the column's 128 sum_k wq (qsum) at the end:
 * the exact sum of q wq (every partial sum within K 255 127 < 2^31).
 *
 * Tiles of up to 12 rows by a panel's 32 columns: per quad of k two loads
 * of the panel (16 columns of 4 bytes each), a 32-bit broadcast of the
 * row's quad of x, and per row two vpdpbusd into 24 accumulators (tiles
 * of few rows: more sets of them, below); the first tile prefetches.  x
 * is quantised and packed by the AVX2 code (gemm_i8_avx2.c).
 */
#include <immintrin.h>
#include <string.h>

#include "kernels/gemm_packed.h"
#include "kernels/kern_impl.h"
#include "gemm_i8_end.h"

#define RMAX 12
/*
 * The first tile of a panel reads it from memory (a decoder step's
 * weights, 38 MB int8 for the base model, have all passed since the last
 * step), the others from cache: it asks for the panel's bytes this far
 * ahead of its loads.  perf put the products
 * of the base model's int8 step at about 0.3 of the int8 peak, against
 * 0.47-0.63 for the same products alone; 4 KB ahead made its greedy
 * translation 8-9% faster (medians of five alternated runs).
 */
#define PF_AHEAD 4096

/* *c += the dot products of a's and w's quads of bytes (vpdpbusd), in
 * asm: with the intrinsic, gcc 12 copied each accumulator of a wide tile
 * to another register and back around the instruction, which writes its
 * first operand, and spilled some (18 stack accesses and 110
 * instructions a quad of k for 12 rows' 24 vpdpbusd), and 64 rows
 * reached 0.32 of the int8 peak. */
static inline __attribute__((always_inline)) void
dpbusd(__m512i *c, __m512i a, __m512i w)
{
	__asm__("vpdpbusd %[w], %[a], %[c]" : [c] "+v"(*c)
		: [a] "v"(a), [w] "v"(w));
}

/* Writes a tile's R rows of C from their int32 sums c[r][0..1]. */
static inline __attribute__((always_inline)) void
tile_out(int R, const struct wpack_i8_job *j, __m512i c[][2], int i,
	 __mmask16 m0, __mmask16 m1)
{
	float *C = j->C + (long)i * j->ldc;
	__m512i q0 = _mm512_maskz_loadu_epi32(m0, j->qsum);
	__m512i q1 = _mm512_maskz_loadu_epi32(m1, j->qsum + 16);
	__m512 ws0 = _mm512_maskz_loadu_ps(m0, j->ws);
	__m512 ws1 = _mm512_maskz_loadu_ps(m1, j->ws + 16);
	__m512 z = _mm512_setzero_ps();
	__m512 b0 = j->b ? _mm512_maskz_loadu_ps(m0, j->b) : z;
	__m512 b1 = j->b ? _mm512_maskz_loadu_ps(m1, j->b + 16) : z;

#pragma GCC unroll 12
	for (int r = 0; r < R; r++) {
		float *cr = C + r * j->ldc, sx = j->sx[i + r];
		_mm512_mask_storeu_ps(cr, m0, i8_end_512(
			_mm512_sub_epi32(c[r][0], q0), sx, ws0, b0,
			WPACK_I8_BIAS(j), j->relu));
		_mm512_mask_storeu_ps(cr + 16, m1, i8_end_512(
			_mm512_sub_epi32(c[r][1], q1), sx, ws1, b1,
			WPACK_I8_BIAS(j), j->relu));
	}
}

/* A tile of 6 to 12 rows: 12 to 24 accumulators, chains enough. */
static inline __attribute__((always_inline)) void
tile_wide(int R, const struct wpack_i8_job *j, const uint8_t *xs, int i,
	  __mmask16 m0, __mmask16 m1, int first)
{
	const int8_t *P = j->P;
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
			dpbusd(&c[r][0], a, w0);
			dpbusd(&c[r][1], a, w1);
		}
		xs += RMAX * 4;
		P += WPACK_NR * 4;
	}
	tile_out(R, j, c, i, m0, m1);
}

/* Accumulator sets of a tile of R rows: vpdpbusd adds into its
 * accumulator, a chain of 5 cycles a step, so few rows take turns of
 * quads in U sets of accumulators, added at the end (int32: exact in any
 * order). */
#define USETS(R) ((R) <= 2 ? 4 : 2)
#define RNARROW 5

/* A tile of 1 to 5 rows, in U sets. */
static inline __attribute__((always_inline)) void
tile_narrow(int R, const struct wpack_i8_job *j, const uint8_t *xs, int i,
	    __mmask16 m0, __mmask16 m1, int first)
{
	const int U = USETS(R);
	const int8_t *P = j->P;
	__m512i c[4][RNARROW][2];
	int p = 0;

#pragma GCC unroll 5
	for (int r = 0; r < R; r++)
#pragma GCC unroll 4
		for (int u = 0; u < U; u++)
			c[u][r][0] = c[u][r][1] = _mm512_setzero_si512();
	for (; p + U <= j->kq; p += U)
#pragma GCC unroll 4
		for (int u = 0; u < U; u++) {
			__m512i w0 = _mm512_loadu_si512(P);
			__m512i w1 = _mm512_loadu_si512(P + 64);
			if (first) {
				_mm_prefetch((const char *)P + PF_AHEAD,
					     _MM_HINT_T0);
				_mm_prefetch((const char *)P + PF_AHEAD + 64,
					     _MM_HINT_T0);
			}
#pragma GCC unroll 5
			for (int r = 0; r < R; r++) {
				int q;
				memcpy(&q, xs + r * 4, sizeof q);
				__m512i a = _mm512_set1_epi32(q);
				c[u][r][0] = _mm512_dpbusd_epi32(c[u][r][0], a,
								 w0);
				c[u][r][1] = _mm512_dpbusd_epi32(c[u][r][1], a,
								 w1);
			}
			xs += RMAX * 4;
			P += WPACK_NR * 4;
		}
	for (; p < j->kq; p++) {
		__m512i w0 = _mm512_loadu_si512(P);
		__m512i w1 = _mm512_loadu_si512(P + 64);
#pragma GCC unroll 5
		for (int r = 0; r < R; r++) {
			int q;
			memcpy(&q, xs + r * 4, sizeof q);
			__m512i a = _mm512_set1_epi32(q);
			c[0][r][0] = _mm512_dpbusd_epi32(c[0][r][0], a, w0);
			c[0][r][1] = _mm512_dpbusd_epi32(c[0][r][1], a, w1);
		}
		xs += RMAX * 4;
		P += WPACK_NR * 4;
	}
#pragma GCC unroll 5
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
#define N(R) case R: tile_narrow(R, j, xs, i, m0, m1, i == 0); break
#define W(R) case R: tile_wide(R, j, xs, i, m0, m1, i == 0); break
		N(1); N(2); N(3); N(4); N(5); W(6);
		W(7); W(8); W(9); W(10); W(11); W(12);
#undef N
#undef W
		}
	}
}

const struct gemm_i8 gemm_i8_avx512vnni = {
	.rmax = RMAX,
	.xs_form = WPACK_XS_U8,
	.panel = panel,
	.quant = gemm_i8_quant_avx2,
	.mquant = gemm_i8_mquant_avx512,
};
