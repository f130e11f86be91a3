/*
 * f16.h: one value between f32 and the 16-bit floats, f16 (IEEE binary16)
 * and bf16, in portable C: round to nearest, ties to even; a NaN stays a
 * NaN (quiet, its top payload bits kept), as F16C's and AVX512_BF16's
 * instructions do.  Below the stream and the kernels, which both store
 * 16-bit floats; libtensor's public tensor.h declares the same four.
 */
#ifndef ATTN_F16_H
#define ATTN_F16_H

#include <stdint.h>

/* exported from libtensor.so: tensor.h's public functions */
#pragma GCC visibility push(default)
uint16_t f32_to_f16(float f);
float f16_to_f32(uint16_t h);
uint16_t f32_to_bf16(float f);
float bf16_to_f32(uint16_t h);
#pragma GCC visibility pop

#endif
