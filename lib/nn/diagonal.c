/*
 * diagonal.c: Bahdanau's two cursors moving in sync (window.h): the
 * weights are one-hot, so the context is a gather of one annotation and
 * its gradient a scatter into it.
 */
#include <math.h>
#include <string.h>

#include "window.h"

int diagonal_position(int i, double r, int len)
{
	double x = floor(i * r + 0.5);

	return x < len - 1 ? (int)x : len - 1;
}

void diagonal_forward(float *a, int i, double r, const int *len, int B,
		      int S)
{
	memset(a, 0, (size_t)B * S * sizeof(float));
	for (int b = 0; b < B; b++)
		if (len[b] >= 1)
			a[(size_t)b * S + diagonal_position(i, r, len[b])] = 1;
}
