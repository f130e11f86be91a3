/*
 * dropout.c: inverted dropout from the run's generator; see layers.h.
 *
 * Eight elements at a time in the compiler's portable vectors (SSE2 on
 * any x86-64): the eight 16-bit fields of two draws compared with the
 * threshold at once (as signed numbers, both offset by 2^15), the kept
 * products selected by the comparison's lanes.  The same draws, fields,
 * products and sums as one element at a time, so the same bits.
 */
#include <string.h>
#include "kernels/vec4.h"
#include "layers.h"

typedef uint64_t u64x2 __attribute__((vector_size(16)));
typedef int16_t i16x8 __attribute__((vector_size(16)));
typedef int32_t i32x4 __attribute__((vector_size(16)));
typedef int8_t i8x8 __attribute__((vector_size(8)));
typedef int8_t i8x16 __attribute__((vector_size(16)));

/* v [8] = x [8] s where keep's lane is -1, else 0 */
static void kept8(f32x4 v[2], const float *x, i16x8 keep, float s)
{
	i32x4 k0 = (i32x4)__builtin_shufflevector(keep, keep, 0, 0, 1, 1, 2,
						  2, 3, 3);
	i32x4 k1 = (i32x4)__builtin_shufflevector(keep, keep, 4, 4, 5, 5, 6,
						  6, 7, 7);

	v[0] = (f32x4)((i32x4)(ld4(x) * s) & k0);
	v[1] = (f32x4)((i32x4)(ld4(x + 4) * s) & k1);
}

/* y = a + x (a NULL: x), for p 0 */
static void add_or_copy(float *y, const float *a, const float *x, size_t n)
{
	size_t i;

	if (!a) {
		if (y != x)
			memmove(y, x, sizeof(float) * n);
		return;
	}
	for (i = 0; i + 4 <= n; i += 4)
		st4(y + i, ld4(a + i) + ld4(x + i));
	for (; i < n; i++)
		y[i] = a[i] + x[i];
}

void dropout_forward(float *y, uint8_t *mask, const float *a, const float *x,
		     size_t n, float p, struct rng *r)
{
	/* 16 bits per element: rates are quantised to 1/65536 */
	uint32_t thresh = (uint32_t)(p * 65536.0f + 0.5f);
	float keep_scale = 1.0f / (1.0f - p);
	uint64_t bits = 0;
	size_t i = 0;

	if (p == 0) {
		add_or_copy(y, a, x, n);
		return;
	}
	/* a threshold of 2^16 (nothing kept) does not fit 16 bits */
	for (; thresh <= 0xffff && i + 8 <= n; i += 8) {
		uint64_t w0 = rng_next(r), w1 = rng_next(r);
		/* built in registers: a 16-byte load of the two just stored
		 * would wait for them (no store forwarding across two) */
		i16x8 f = (i16x8)(u64x2){ w0, w1 };	/* little-endian */
		i16x8 keep = (f ^ (int16_t)0x8000) >=
			     (int16_t)(thresh - 0x8000);
		i8x8 m = __builtin_convertvector(-keep, i8x8);
		f32x4 v[2];

		kept8(v, x + i, keep, keep_scale);
		if (a) {
			v[0] = ld4(a + i) + v[0];
			v[1] = ld4(a + i + 4) + v[1];
		}
		st4(y + i, v[0]);
		st4(y + i + 4, v[1]);
		memcpy(mask + i, &m, sizeof m);
	}
	for (; i < n; i++) {
		float v;

		if (i % 4 == 0)
			bits = rng_next(r);
		mask[i] = (bits & 0xffff) >= thresh;
		bits >>= 16;
		v = mask[i] ? x[i] * keep_scale : 0.0f;
		y[i] = a ? a[i] + v : v;
	}
}

void dropout_backward(float *dx, const float *dy, const uint8_t *mask,
		      size_t n, float p)
{
	float keep_scale = 1.0f / (1.0f - p);
	size_t i;

	for (i = 0; i + 8 <= n; i += 8) {
		i8x16 z = { 0 };
		uint64_t m8;
		f32x4 g[2];

		memcpy(&m8, mask + i, sizeof m8);
		i8x16 m = (i8x16)(u64x2){ m8, 0 };
		i16x8 keep = -(i16x8)__builtin_shufflevector(m, z, 0, 16, 1,
							     17, 2, 18, 3, 19,
							     4, 20, 5, 21, 6,
							     22, 7, 23);
		/* dx + 0 where dropped: the same value (but -0 becomes +0) */
		kept8(g, dy + i, keep, keep_scale);
		st4(dx + i, ld4(dx + i) + g[0]);
		st4(dx + i + 4, ld4(dx + i + 4) + g[1]);
	}
	for (; i < n; i++)
		if (mask[i])
			dx[i] += dy[i] * keep_scale;
}
