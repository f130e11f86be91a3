/*
 * vec4.h: the compiler's portable vectors of four floats (GCC and clang
 * vector extensions: SSE2 on any x86-64, NEON elsewhere), for the
 * memory-bound loops that have one version for every instruction set.
 * Unaligned loads and stores by memcpy, which compile to single moves.
 */
#ifndef ATTN_VEC4_H
#define ATTN_VEC4_H

#include <string.h>

typedef float f32x4 __attribute__((vector_size(16)));

static inline f32x4 ld4(const float *p)
{
	f32x4 v;

	memcpy(&v, p, sizeof v);
	return v;
}

static inline void st4(float *p, f32x4 v)
{
	memcpy(p, &v, sizeof v);
}

#endif
