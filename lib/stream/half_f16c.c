/*
 * half_f16c.c: f16 to f32 eight values a step with the F16C conversion,
 * for a model stored in f16 (loading converts every parameter).  To be
 * called only where the CPU has F16C and AVX (half.h).
 *
 * The instruction converts every finite value exactly, subnormals
 * included, as f16_to_f32 does; it quiets a signalling NaN, which
 * f16_to_f32 keeps as it is, so a block of eight holding an infinity or a
 * NaN (exponent bits all ones) goes to f16_to_f32: the two give the same
 * bits for every input.
 */
#include <immintrin.h>
#include <string.h>

#include "half.h"
#include "tensor.h"

void f16_to_f32_f16c(float *dst, const void *src, size_t n)
{
	const unsigned char *p = src;
	const __m128i exp = _mm_set1_epi16(0x7c00);
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		__m128i h = _mm_loadu_si128((const __m128i *)(p + 2 * i));

		if (_mm_movemask_epi8(_mm_cmpeq_epi16(_mm_and_si128(h, exp),
						      exp))) {
			for (size_t k = i; k < i + 8; k++) {
				uint16_t v;
				memcpy(&v, p + 2 * k, 2);
				dst[k] = f16_to_f32(v);
			}
			continue;
		}
		_mm256_storeu_ps(dst + i, _mm256_cvtph_ps(h));
	}
	for (; i < n; i++) {
		uint16_t v;
		memcpy(&v, p + 2 * i, 2);
		dst[i] = f16_to_f32(v);
	}
}
