/* posenc.c: the positions of the Transformer, sinusoidal and rotary;
 * see layers.h. */
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

/* ---- rotary position embedding ----------------------------------------- */

/* cos and sin of position p's angle p * theta_i of pair i in dh. */
static void rope_cs(int p, int i, int dh, float *c, float *s)
{
	double angle = p * pow(10000.0, -2.0 * i / dh);

	*c = (float)cos(angle);
	*s = (float)sin(angle);
}

void rope_table(float *cs, int rows, int dh)
{
	int p, i;

	for (p = 0; p < rows; p++)
		for (i = 0; i < dh / 2; i++)
			rope_cs(p, i, dh, cs + (size_t)p * dh + 2 * i,
				cs + (size_t)p * dh + 2 * i + 1);
}

/*
 * The rotation of rope_forward, by +angle (dir 1) or -angle (dir -1):
 * the pair (a, b) becomes (a c - b s, a s + b c) with s = dir * sin.
 */
static void rope_rotate(float *x, const int *pos, int rows, int heads,
			int dh, const float *cs, int cs_rows, int dir)
{
	int r, h, i, d = heads * dh;
	float c, s, a, b;

	for (r = 0; r < rows; r++) {
		int p = pos[r];
		const float *cr = p < cs_rows ? cs + (size_t)p * dh : NULL;

		for (h = 0; h < heads; h++) {
			float *v = x + (size_t)r * d + (size_t)h * dh;

			for (i = 0; i < dh / 2; i++) {
				if (cr) {
					c = cr[2 * i];
					s = cr[2 * i + 1];
				} else {
					rope_cs(p, i, dh, &c, &s);
				}
				s = dir * s;
				a = v[2 * i];
				b = v[2 * i + 1];
				v[2 * i] = a * c - b * s;
				v[2 * i + 1] = a * s + b * c;
			}
		}
	}
}

void rope_forward(float *x, const int *pos, int rows, int heads, int dh,
		  const float *cs, int cs_rows)
{
	rope_rotate(x, pos, rows, heads, dh, cs, cs_rows, 1);
}

void rope_backward(float *dx, const int *pos, int rows, int heads, int dh,
		   const float *cs, int cs_rows)
{
	/* a rotation's transpose is the rotation by the opposite angle */
	rope_rotate(dx, pos, rows, heads, dh, cs, cs_rows, -1);
}
