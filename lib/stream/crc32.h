/*
 * crc32.h: CRC-32 with zlib's polynomial (reflected 0xEDB88320, initial
 * and final value inverted): crc32_sliced(crc32_sliced(0, a, n), b, m)
 * equals zlib's crc32(0, ab, n + m).  Two kernels give the same results:
 * a portable one, eight bytes a step through eight tables, and one that
 * folds 64 bytes a step with carry-less multiplication (PCLMULQDQ), to be
 * called only where the CPU has it.  crc32_fast is the one place that
 * chooses between them.
 */
#ifndef ATTN_CRC32_H
#define ATTN_CRC32_H

#include <stddef.h>
#include <stdint.h>

uint32_t crc32_sliced(uint32_t crc, const void *p, size_t n);
uint32_t crc32_pclmul(uint32_t crc, const void *p, size_t n);
/*
 * The same by the fastest kernel of the two that the CPU has, chosen on
 * the first call; ATTN_KERNELS=reference in the environment, which makes
 * the numerical kernels (kernels.h) run their reference, gives the
 * portable one here too.
 */
uint32_t crc32_fast(uint32_t crc, const void *p, size_t n);

/*
 * The kernels' common step: runs the CRC register (the inverted CRC) over
 * n bytes.  Starting from 0 it computes M(x) x^32 mod P for the message M.
 */
uint32_t crc32_register(uint32_t reg, const unsigned char *p, size_t n);

#endif
