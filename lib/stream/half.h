/*
 * half.h: converting arrays of f16 to f32.  Two kernels give the same
 * bits for every input: the portable f16_to_f32 (tensor.h) a value at a
 * time, and F16C's conversion eight at a time, to be called only where
 * the CPU has it.  f16_to_f32_array is the one place that chooses
 * between them; as for crc32_fast (crc32.h), ATTN_KERNELS=reference
 * gives the portable one.
 */
#ifndef ATTN_HALF_H
#define ATTN_HALF_H

#include <stddef.h>

/* dst[i] = the f16 at bytes 2i, 2i+1 of src (little-endian, unaligned) */
void f16_to_f32_array(float *dst, const void *src, size_t n);
void f16_to_f32_portable(float *dst, const void *src, size_t n);
void f16_to_f32_f16c(float *dst, const void *src, size_t n);
/* 1 where the CPU (and the system) can run f16_to_f32_f16c */
int f16c_supported(void);

#endif
