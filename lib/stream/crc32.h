/*
 * crc32.h: CRC-32 with zlib's polynomial (reflected 0xEDB88320, initial
 * and final value inverted): crc32_sliced(crc32_sliced(0, a, n), b, m)
 * equals zlib's crc32(0, ab, n + m).  Three kernels give the same
 * results: a portable one, eight bytes a step through eight tables; one
 * that folds 64 bytes a step with carry-less multiplication (PCLMULQDQ),
 * and one that folds 256 bytes a step with its 512-bit form (AVX-512F and
 * VPCLMULQDQ), each to be called only where the CPU has it.  crc32_fast
 * is the one place that chooses among them.
 */
#ifndef ATTN_CRC32_H
#define ATTN_CRC32_H

#include <stddef.h>
#include <stdint.h>

uint32_t crc32_sliced(uint32_t crc, const void *p, size_t n);
uint32_t crc32_pclmul(uint32_t crc, const void *p, size_t n);
uint32_t crc32_vpclmul(uint32_t crc, const void *p, size_t n);
/*
 * The same by the fastest kernel that the CPU has, chosen on the first
 * call.  ATTN_KERNELS in the environment, which chooses the numerical
 * kernels (kernels.h), holds this one too: reference gives the portable
 * one, a name that starts with avx2 (an AVX2 core) the 128-bit folding.
 */
uint32_t crc32_fast(uint32_t crc, const void *p, size_t n);

/*
 * The kernels' common step: runs the CRC register (the inverted CRC) over
 * n bytes.  Starting from 0 it computes M(x) x^32 mod P for the message M.
 */
uint32_t crc32_register(uint32_t reg, const unsigned char *p, size_t n);

#endif
