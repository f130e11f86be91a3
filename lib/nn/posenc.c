/* posenc.c: the sinusoidal position encodings; see layers.h. */
#include <math.h>
#include <stddef.h>
#include "layers.h"

float posenc(int p, int i, int d)
{
	/* PE(p, 2k) = sin(p / 10000^(2k/d)), PE(p, 2k+1) = cos(the same) */
	double angle = p / pow(10000.0, (double)(i - i % 2) / d);

	return (float)(i % 2 ? cos(angle) : sin(angle));
}

void posenc_table(float *pe, int rows, int d)
{
	/* posenc() for every (p, i), with each column's divisor computed
	 * once rather than rows times (the same doubles, so the same bits) */
	double div;
	int p, i;

	for (i = 0; i < d; i++) {
		div = pow(10000.0, (double)(i - i % 2) / d);
		for (p = 0; p < rows; p++)
			pe[(size_t)p * d + i] = (float)(i % 2 ? cos(p / div)
							      : sin(p / div));
	}
}

void posenc_add(float *x, int rows, int d, int p0, const float *pe,
		int pe_rows)
{
	int r, i;

	for (r = 0; r < rows; r++) {
		float *xr = x + (size_t)r * d;
		int p = p0 + r;

		if (p < pe_rows) {
			const float *pr = pe + (size_t)p * d;

			for (i = 0; i < d; i++)
				xr[i] += pr[i];
		} else {
			for (i = 0; i < d; i++)
				xr[i] += posenc(p, i, d);
		}
	}
}
