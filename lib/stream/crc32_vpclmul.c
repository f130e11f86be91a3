/*
 * crc32_vpclmul.c: crc32_pclmul's folding (crc32_pclmul.c says how it
 * works) four times as wide: VPCLMULQDQ on 512-bit registers, four lanes
 * of 16 bytes each, four registers, so 256 bytes a step, each lane moved
 * 2048 bits down the message.  The four registers are then folded into
 * one (512 bits apart), further 64-byte blocks into it, and its four
 * lanes handed to crc32_pclmul's end.  Compiled with -mavx512f
 * -mvpclmulqdq -mpclmul -msse4.1; call only where the CPU has them.
 */
#include <immintrin.h>
#include "crc32.h"
#include "crc32_fold.h"

/* k(e) = x^e mod P, reflected and shifted left by one (crc32_pclmul.c):
 * folding across 2048 bits (256 bytes) and across 512 (64 bytes). */
#define K2080 0x11542778aull
#define K2016 0x1322d1430ull
#define K544  0x154442bd4ull
#define K480  0x1c6e41596ull

static __m512i fold(__m512i x, __m512i k)
{
	return _mm512_xor_si512(_mm512_clmulepi64_epi128(x, k, 0x00),
				_mm512_clmulepi64_epi128(x, k, 0x11));
}

static __m512i load(const unsigned char *p)
{
	return _mm512_loadu_si512(p);
}

uint32_t crc32_vpclmul(uint32_t crc, const void *data, size_t n)
{
	const unsigned char *p = data;
	const __m512i k2048 = _mm512_broadcast_i32x4(_mm_set_epi64x(K2016, K2080));
	const __m512i k512 = _mm512_broadcast_i32x4(_mm_set_epi64x(K480, K544));
	__m512i z0, z1, z2, z3;
	__m128i x[4];

	if (n < 256)
		return crc32_pclmul(crc, p, n);
	/* the register starts as the first 32 bits of the message */
	z0 = _mm512_xor_si512(load(p), _mm512_zextsi128_si512(
					       _mm_cvtsi32_si128((int)~crc)));
	z1 = load(p + 64);
	z2 = load(p + 128);
	z3 = load(p + 192);
	for (p += 256, n -= 256; n >= 256; p += 256, n -= 256) {
		z0 = _mm512_xor_si512(fold(z0, k2048), load(p));
		z1 = _mm512_xor_si512(fold(z1, k2048), load(p + 64));
		z2 = _mm512_xor_si512(fold(z2, k2048), load(p + 128));
		z3 = _mm512_xor_si512(fold(z3, k2048), load(p + 192));
	}
	z0 = _mm512_xor_si512(fold(z0, k512), z1);
	z0 = _mm512_xor_si512(fold(z0, k512), z2);
	z0 = _mm512_xor_si512(fold(z0, k512), z3);
	for (; n >= 64; p += 64, n -= 64)
		z0 = _mm512_xor_si512(fold(z0, k512), load(p));
	x[0] = _mm512_extracti32x4_epi32(z0, 0);
	x[1] = _mm512_extracti32x4_epi32(z0, 1);
	x[2] = _mm512_extracti32x4_epi32(z0, 2);
	x[3] = _mm512_extracti32x4_epi32(z0, 3);
	return crc32_pclmul_end(x, p, n);
}
