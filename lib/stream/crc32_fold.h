/*
 * crc32_fold.h: the end that the folding kernels share (crc32_pclmul.c),
 * for the files compiled with PCLMULQDQ.
 */
#ifndef ATTN_CRC32_FOLD_H
#define ATTN_CRC32_FOLD_H

#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>

/* The CRC (inverted) of a message whose bytes up to p folded into the
 * four lanes x, and n < 64 bytes at p more. */
uint32_t crc32_pclmul_end(const __m128i x[4], const unsigned char *p,
			  size_t n);

#endif
