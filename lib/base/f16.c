/* f16.c: f32 to and from f16 and bf16, a value at a time; see f16.h. */
#include <string.h>
#include "f16.h"

static uint32_t f32_bits(float f)
{
	uint32_t x;

	memcpy(&x, &f, 4);
	return x;
}

static float bits_f32(uint32_t x)
{
	float f;

	memcpy(&f, &x, 4);
	return f;
}

uint16_t f32_to_f16(float f)
{
	uint32_t x = f32_bits(f);
	uint32_t sign = (x >> 16) & 0x8000;
	uint32_t ax = x & 0x7fffffff;

	if (ax > 0x7f800000)            /* NaN: quiet, top payload bits kept */
		return sign | 0x7e00 | ((ax >> 13) & 0x3ff);
	if (ax >= 0x477ff000)           /* 65520 and up round to infinity */
		return sign | 0x7c00;
	if (ax < 0x38800000) {
		/* Below 2^-14: a subnormal half.  Adding 0.5 leaves the
		 * value's multiples of 2^-24 in the low mantissa bits,
		 * rounded to nearest even by the FPU. */
		return sign | (f32_bits(bits_f32(ax) + 0.5f) - 0x3f000000);
	}
	/* Normal: rebias the exponent (127 - 15 = 112) and round the 13
	 * dropped bits to nearest even; a carry bumps the exponent. */
	ax += 0xfff + ((ax >> 13) & 1) - (112u << 23);
	return sign | (ax >> 13);
}

float f16_to_f32(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000) << 16;
	uint32_t e = (h >> 10) & 0x1f, m = h & 0x3ff;

	if (e == 0x1f)
		return bits_f32(sign | 0x7f800000 | (m << 13));
	if (e == 0) {
		float v = (float)m * 0x1p-24f;
		return sign ? -v : v;
	}
	return bits_f32(sign | ((e + 112) << 23) | (m << 13));
}

uint16_t f32_to_bf16(float f)
{
	uint32_t x = f32_bits(f);

	if ((x & 0x7fffffff) > 0x7f800000)
		return (x >> 16) | 0x40;
	x += 0x7fff + ((x >> 16) & 1);
	return x >> 16;
}

float bf16_to_f32(uint16_t h)
{
	return bits_f32((uint32_t)h << 16);
}
