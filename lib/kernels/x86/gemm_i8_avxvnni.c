/*
 * gemm_i8_avxvnni.c: the int8 kernel of gemm_packed.h with AVX-VNNI, the
 * VEX form of vpdpbusd on 256-bit vectors that CPUs without AVX-512 may
 * have: as gemm_i8_avx512vnni.c (x as q + 128, 128 sum_k wq subtracted
 * at the end, exact), for the AVX2 table.  AVX2 has 16 vector registers:
 * tiles of up to 6 rows by half a panel (16 columns, two vectors of 8
 * columns of 4 bytes), 12 accumulators, in 2 sets for up to 3 rows
 * (vpdpbusd's chain through its accumulator).
 */
#include <immintrin.h>
#include <string.h>

#include "kernels/gemm_packed.h"
#include "kernels/kern_impl.h"
#include "gemm_i8_end.h"
#include "vmath_avx2.h"

#define RMAX 6
/* The first pass over a panel asks for its bytes this far ahead, as the
 * AVX512_VNNI kernel does (gemm_i8_avx512vnni.c says why). */
#define PF_AHEAD 4096
#define USETS(R) ((R) <= 3 ? 2 : 1)

static inline __attribute__((always_inline)) void
step(int R, __m256i c[][2], const uint8_t *xs, const int8_t *P, int first)
{
	__m256i w0 = _mm256_loadu_si256((const __m256i *)P);
	__m256i w1 = _mm256_loadu_si256((const __m256i *)(P + 32));

	if (first) {	/* both halves of the panel's row of quads */
		_mm_prefetch((const char *)P + PF_AHEAD, _MM_HINT_T0);
		_mm_prefetch((const char *)P + PF_AHEAD + 64, _MM_HINT_T0);
	}

#pragma GCC unroll 6
	for (int r = 0; r < R; r++) {
		int q;
		memcpy(&q, xs + r * 4, sizeof q);
		__m256i a = _mm256_set1_epi32(q);
		c[r][0] = _mm256_dpbusd_avx_epi32(c[r][0], a, w0);
		c[r][1] = _mm256_dpbusd_avx_epi32(c[r][1], a, w1);
	}
}

static inline __attribute__((always_inline)) void
tile(int R, const struct wpack_i8_job *j, const uint8_t *xs, int i, int g)
{
	const int U = USETS(R);
	const int8_t *P = j->P + g * 64;
	__m256i c[2][RMAX][2];
	int nc = j->cols - g * 16, p = 0;
	float *C = j->C + (long)i * j->ldc + g * 16;
	int first = i == 0 && g == 0;	/* the pass that reads P from memory */

#pragma GCC unroll 6
	for (int r = 0; r < R; r++)
		c[0][r][0] = c[0][r][1] = c[1][r][0] = c[1][r][1] =
			_mm256_setzero_si256();
	for (; p + U <= j->kq; p += U)
#pragma GCC unroll 2
		for (int u = 0; u < U; u++) {
			step(R, c[u], xs, P, first);
			xs += RMAX * 4;
			P += WPACK_NR * 4;
		}
	for (; p < j->kq; p++) {
		step(R, c[0], xs, P, first);
		xs += RMAX * 4;
		P += WPACK_NR * 4;
	}
	__m256i q0 = _mm256_loadu_si256((const __m256i *)(j->qsum + g * 16));
	__m256i q1 = _mm256_loadu_si256((const __m256i *)(j->qsum + g * 16 +
							 8));
	__m256 ws0 = ldr(j->ws + g * 16, nc);
	__m256 ws1 = nc > 8 ? ldr(j->ws + g * 16 + 8, nc - 8)
			    : _mm256_setzero_ps();
	__m256 z = _mm256_setzero_ps();
	__m256 b0 = j->b ? ldr(j->b + g * 16, nc) : z;
	__m256 b1 = j->b && nc > 8 ? ldr(j->b + g * 16 + 8, nc - 8) : z;
#pragma GCC unroll 6
	for (int r = 0; r < R; r++) {
		float *cr = C + r * j->ldc, sx = j->sx[i + r];
		if (U > 1) {
			c[0][r][0] = _mm256_add_epi32(c[0][r][0], c[1][r][0]);
			c[0][r][1] = _mm256_add_epi32(c[0][r][1], c[1][r][1]);
		}
		str(cr, nc, i8_end_256(_mm256_sub_epi32(c[0][r][0], q0), sx,
				       ws0, b0, WPACK_I8_BIAS(j), j->relu));
		if (nc > 8)
			str(cr + 8, nc - 8, i8_end_256(_mm256_sub_epi32(
				c[0][r][1], q1), sx, ws1, b1, WPACK_I8_BIAS(j),
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
#define T(R) case R: tile(R, j, xs, i, g); break
			T(1); T(2); T(3); T(4); T(5); T(6);
#undef T
			}
	}
}

const struct gemm_i8 gemm_i8_avxvnni = {
	.rmax = RMAX,
	.xs_form = WPACK_XS_U8,
	.panel = panel,
	.quant = gemm_i8_quant_avx2,
	.mquant = gemm_i8_mquant_avx2,
	.msat = &gemm_i8_u7_avx2,
};
