/*
 * test_posenc.c: the rotary position embedding of nn/posenc.c against a
 * naive reference written from the paper's definition, its backward pass
 * against finite differences, and the property it exists for: a rotated
 * query's dot product with a rotated key depends only on the difference
 * of their positions.
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "base/rng.h"
#include "nn/layers.h"
#include "run_suite.h"

enum { HEADS = 3, DH = 6, D = HEADS * DH, ROWS = 5 };

/* Su et al. 2021, eq. (34): each head's vector times the block-diagonal
 * matrix of 2x2 rotations by m * theta_i, theta_i = 10000^(-2(i-1)/d),
 * i = 1 .. d/2, computed in double, element by element. */
static void naive_rope(double *y, const float *x, int m)
{
	int h, i;

	for (h = 0; h < HEADS; h++)
		for (i = 1; i <= DH / 2; i++) {
			double th = pow(10000.0, -2.0 * (i - 1) / DH);
			double x1 = x[h * DH + 2 * i - 2];
			double x2 = x[h * DH + 2 * i - 1];

			y[h * DH + 2 * i - 2] = x1 * cos(m * th)
				- x2 * sin(m * th);
			y[h * DH + 2 * i - 1] = x2 * cos(m * th)
				+ x1 * sin(m * th);
		}
}

static void random_rows(float *x, int n, struct rng *r)
{
	int i;

	for (i = 0; i < n; i++)
		x[i] = (float)(2 * rng_uniform(r) - 1);
}

START_TEST(forward_is_the_papers_rotation)
{
	/* positions inside the table, beyond it (computed), and 0 */
	int pos[ROWS] = { 0, 1, 7, 3, 700 }, r, k;
	float x[ROWS * D], y[ROWS * D], y2[ROWS * D], cs[8 * DH];
	double want[D];
	struct rng g;

	rng_seed(&g, 3);
	random_rows(x, ROWS * D, &g);
	memcpy(y, x, sizeof(x));
	memcpy(y2, x, sizeof(x));
	rope_table(cs, 8, DH);
	rope_forward(y, pos, ROWS, HEADS, DH, cs, 8);
	/* without a table: every position computed, the same bits */
	rope_forward(y2, pos, ROWS, HEADS, DH, NULL, 0);
	ck_assert(memcmp(y, y2, sizeof(y)) == 0);
	for (r = 0; r < ROWS; r++) {
		naive_rope(want, x + r * D, pos[r]);
		for (k = 0; k < D; k++)
			ck_assert_msg(fabs(y[r * D + k] - want[k]) < 1e-6,
				      "row %d (position %d) [%d]: %g, want %g",
				      r, pos[r], k, y[r * D + k], want[k]);
	}
	/* position 0 leaves x as it is */
	ck_assert(memcmp(y, x, sizeof(float) * D) == 0);
}
END_TEST

/* sum of w * rope(x), the loss whose gradient rope_backward gives */
static double loss(const float *x, const float *w, const int *pos)
{
	float y[ROWS * D];
	double s = 0;
	int k;

	memcpy(y, x, sizeof(y));
	rope_forward(y, pos, ROWS, HEADS, DH, NULL, 0);
	for (k = 0; k < ROWS * D; k++)
		s += (double)w[k] * y[k];
	return s;
}

START_TEST(backward_is_the_finite_differences)
{
	int pos[ROWS] = { 2, 0, 9, 4, 600 }, k;
	float x[ROWS * D], w[ROWS * D], dx[ROWS * D], cs[16 * DH];
	struct rng g;
	double h = 1e-2;

	rng_seed(&g, 4);
	random_rows(x, ROWS * D, &g);
	random_rows(w, ROWS * D, &g);
	rope_table(cs, 16, DH);
	memcpy(dx, w, sizeof(dx));
	rope_backward(dx, pos, ROWS, HEADS, DH, cs, 16);
	for (k = 0; k < ROWS * D; k++) {
		float x0 = x[k];
		double lp, lm;

		x[k] = x0 + (float)h;
		lp = loss(x, w, pos);
		x[k] = x0 - (float)h;
		lm = loss(x, w, pos);
		x[k] = x0;
		/* the loss is linear in x: only rounding, about 1e-7 / h */
		ck_assert_msg(fabs((lp - lm) / (2 * h) - dx[k]) < 1e-4,
			      "dx[%d]: %g, differences %g", k, dx[k],
			      (lp - lm) / (2 * h));
	}
}
END_TEST

/* Head h's dot product of q at position a with k at position b. */
static double rotated_dot(const float *q, const float *k, int a, int b, int h)
{
	float qa[D], kb[D];
	double s = 0;
	int i;

	memcpy(qa, q, sizeof(qa));
	memcpy(kb, k, sizeof(kb));
	rope_forward(qa, &a, 1, HEADS, DH, NULL, 0);
	rope_forward(kb, &b, 1, HEADS, DH, NULL, 0);
	for (i = h * DH; i < (h + 1) * DH; i++)
		s += (double)qa[i] * kb[i];
	return s;
}

START_TEST(dot_products_depend_on_the_offset_only)
{
	float q[D], k[D];
	struct rng g;
	int off, p, h;

	rng_seed(&g, 6);
	random_rows(q, D, &g);
	random_rows(k, D, &g);
	for (h = 0; h < HEADS; h++)
		for (off = -5; off <= 5; off++) {
			double d0 = rotated_dot(q, k, 20 + off, 20, h);

			for (p = 0; p < 60; p += 7) {
				double dp = rotated_dot(q, k, p + 30 + off,
							p + 30, h);

				ck_assert_msg(fabs(dp - d0) < 1e-5,
					      "head %d offset %d at %d: %g, "
					      "at 20: %g", h, off, p + 30, dp,
					      d0);
			}
			/* and the offset does matter */
			if (off)
				ck_assert(fabs(d0 - rotated_dot(q, k, 20, 20,
								h)) > 1e-4);
		}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("posenc");
	TCase *tc = tcase_create("rope");

	tcase_add_test(tc, forward_is_the_papers_rotation);
	tcase_add_test(tc, backward_is_the_finite_differences);
	tcase_add_test(tc, dot_products_depend_on_the_offset_only);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
