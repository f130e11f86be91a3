/*
 * crc32_pclmul.c: CRC-32 by folding (Gopal et al., "Fast CRC computation
 * for generic polynomials using PCLMULQDQ", Intel 2009).  Compiled with
 * -mpclmul -msse4.1; call only where the CPU has both.
 *
 * Four 16-byte lanes hold the message read so far, reduced modulo P to
 * 64 bytes.  A lane X stands for a polynomial of degree < 128; in the
 * reflected bit order its low 64 bits H are the high-degree half and its
 * high 64 bits L the low half: X = H x^64 + L.  Moving X D bits further
 * down the message multiplies it by x^D, and
 *     X x^D = H x^(D+64) + L x^D  ==  H k(D+32) + L k(D-32)   (mod P)
 * where k(e) = x^e mod P is stored reflected and shifted left by one (the
 * carry-less product of two reflected numbers lacks one factor x; the
 * shift and the 32 in the exponents account for that and for the 32-bit
 * constant).  Each product has degree < 128, so the sum is again a lane.
 * The lanes are folded into one, and the last 16 bytes and any tail go
 * through the table kernel, which finishes the reduction exactly.
 */
#include <immintrin.h>
#include "crc32.h"
#include "crc32_fold.h"

/* Folding across 512 bits (the four lanes) and across 128 (one lane). */
#define K544 0x154442bd4ull
#define K480 0x1c6e41596ull
#define K160 0x1751997d0ull
#define K96  0x0ccaa009eull

static __m128i fold(__m128i x, __m128i k)
{
	return _mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00),
			     _mm_clmulepi64_si128(x, k, 0x11));
}

static __m128i load(const unsigned char *p)
{
	return _mm_loadu_si128((const __m128i *)p);
}

/* The end of the folding, from its four lanes x (the last 64 bytes
 * folded) and the n < 64 bytes at p that remain. */
uint32_t crc32_pclmul_end(const __m128i x[4], const unsigned char *p,
			  size_t n)
{
	const __m128i k128 = _mm_set_epi64x(K96, K160);
	__m128i x0 = x[0];
	unsigned char last[16];
	uint32_t reg;

	x0 = _mm_xor_si128(fold(x0, k128), x[1]);
	x0 = _mm_xor_si128(fold(x0, k128), x[2]);
	x0 = _mm_xor_si128(fold(x0, k128), x[3]);
	for (; n >= 16; p += 16, n -= 16)
		x0 = _mm_xor_si128(fold(x0, k128), load(p));
	/* x0 is congruent to everything read: its 16 bytes, as a message,
	 * leave the register where the whole would have. */
	_mm_storeu_si128((__m128i *)last, x0);
	reg = crc32_register(0, last, sizeof last);
	return ~crc32_register(reg, p, n);
}

uint32_t crc32_pclmul(uint32_t crc, const void *data, size_t n)
{
	const unsigned char *p = data;
	const __m128i k512 = _mm_set_epi64x(K480, K544);
	__m128i x0, x1, x2, x3;

	if (n < 64)
		return crc32_sliced(crc, p, n);
	/* The register starts as the first 32 bits of the message. */
	x0 = _mm_xor_si128(load(p), _mm_cvtsi32_si128(~crc));
	x1 = load(p + 16);
	x2 = load(p + 32);
	x3 = load(p + 48);
	for (p += 64, n -= 64; n >= 64; p += 64, n -= 64) {
		x0 = _mm_xor_si128(fold(x0, k512), load(p));
		x1 = _mm_xor_si128(fold(x1, k512), load(p + 16));
		x2 = _mm_xor_si128(fold(x2, k512), load(p + 32));
		x3 = _mm_xor_si128(fold(x3, k512), load(p + 48));
	}
	return crc32_pclmul_end((const __m128i[4]){ x0, x1, x2, x3 }, p, n);
}
