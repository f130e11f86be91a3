/* dropout.c: inverted dropout from the run's generator; see transformer.h. */
#include "transformer.h"

void dropout_forward(float *y, uint8_t *mask, const float *x, size_t n,
		     float p, struct rng *r)
{
	/* 16 bits per element: rates are quantised to 1/65536 */
	uint32_t thresh = (uint32_t)(p * 65536.0f + 0.5f);
	float keep_scale = 1.0f / (1.0f - p);
	uint64_t bits = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		if (i % 4 == 0)
			bits = rng_next(r);
		mask[i] = (bits & 0xffff) >= thresh;
		bits >>= 16;
		y[i] = mask[i] ? x[i] * keep_scale : 0.0f;
	}
}

void dropout_backward(float *dx, const float *dy, const uint8_t *mask,
		      size_t n, float p)
{
	float keep_scale = 1.0f / (1.0f - p);
	size_t i;

	for (i = 0; i < n; i++)
		if (mask[i])
			dx[i] += dy[i] * keep_scale;
}
