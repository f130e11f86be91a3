/*
 * test_xent.c: the label-smoothed cross-entropy of layers.h against a
 * plain double-precision reference, its gradient against finite
 * differences, <pad> rows, in-place use, and thread-independence.
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "kernels/kernels.h"
#include "nn/layers.h"
#include "run_suite.h"

/* The definition, in double: sum over non-pad rows of -sum_v q_v log p_v. */
static double ref_loss(const float *z, const int32_t *tgt, int N, int V,
		       double eps, double *nll)
{
	double loss = 0;
	int i, v;

	*nll = 0;
	for (i = 0; i < N; i++) {
		double max = -INFINITY, s = 0, lse;

		if (tgt[i] == XENT_PAD)
			continue;
		for (v = 0; v < V; v++)
			max = fmax(max, z[i * V + v]);
		for (v = 0; v < V; v++)
			s += exp(z[i * V + v] - max);
		lse = max + log(s);
		for (v = 0; v < V; v++) {
			double q = eps / V + (v == tgt[i] ? 1 - eps : 0);

			loss -= q * (z[i * V + v] - lse);
		}
		*nll += lse - z[i * V + tgt[i]];
	}
	return loss;
}

enum { N = 6, V = 11 };

static void fill(float *z, int32_t *tgt)
{
	int i;

	for (i = 0; i < N * V; i++)
		z[i] = sin(i * 1.7) * 3;
	for (i = 0; i < N; i++)
		tgt[i] = (i * 5 + 1) % V;
	tgt[2] = XENT_PAD;	/* a padding row */
	tgt[4] = 0;		/* id 0 (</s> in Marian's vocabularies) counts */
}

START_TEST(loss_and_gradient)
{
	float z[N * V], dz[N * V], z2[N * V];
	int32_t tgt[N];
	double nll, rnll, loss, rloss;
	int count, i;
	const double eps = 0.1, scale = 0.5, h = 1e-2;

	fill(z, tgt);
	loss = xent_forward_backward(dz, z, tgt, N, V, eps, scale, &nll,
				     &count);
	rloss = ref_loss(z, tgt, N, V, eps, &rnll);
	ck_assert_int_eq(count, N - 1);
	ck_assert_msg(fabs(loss - rloss) < 1e-4, "%g vs %g", loss, rloss);
	ck_assert(fabs(nll - rnll) < 1e-4);
	for (i = 0; i < V; i++)
		ck_assert(dz[2 * V + i] == 0);
	/* the row of id 0 has its gradient: -scale (1 - eps - p_0) at 0 */
	ck_assert(dz[4 * V] < 0);
	/* d(scale * loss) / dz by central differences */
	for (i = 0; i < N * V; i++) {
		double up, down, tmp;

		memcpy(z2, z, sizeof z);
		z2[i] += h;
		up = ref_loss(z2, tgt, N, V, eps, &tmp);
		z2[i] -= 2 * h;
		down = ref_loss(z2, tgt, N, V, eps, &tmp);
		ck_assert_msg(fabs(scale * (up - down) / (2 * h) - dz[i]) <
			      1e-3, "element %d", i);
	}
	/* in place, and without a gradient: the same loss */
	memcpy(z2, z, sizeof z);
	ck_assert(xent_forward_backward(z2, z2, tgt, N, V, eps, scale, NULL,
					NULL) == loss);
	ck_assert_int_eq(memcmp(z2, dz, sizeof dz), 0);
	ck_assert(xent_forward_backward(NULL, z, tgt, N, V, eps, scale, &nll,
					NULL) == loss);
}
END_TEST

START_TEST(threads_do_not_matter)
{
	int n = 300, v = 257, i;
	float *z = malloc(n * v * sizeof *z), *d1 = malloc(n * v * sizeof *z);
	float *d2 = malloc(n * v * sizeof *z);
	int32_t *tgt = malloc(n * sizeof *tgt);
	double a, b;

	for (i = 0; i < n * v; i++)
		z[i] = cos(i * 0.31) * 4;
	for (i = 0; i < n; i++)
		tgt[i] = i % 7 ? (i * 13) % v : XENT_PAD;
	kern_set_threads(1);
	a = xent_forward_backward(d1, z, tgt, n, v, 0.1f, 1.0f, NULL, NULL);
	kern_set_threads(2);
	b = xent_forward_backward(d2, z, tgt, n, v, 0.1f, 1.0f, NULL, NULL);
	ck_assert(a == b);
	ck_assert_int_eq(memcmp(d1, d2, n * v * sizeof *z), 0);
	free(z);
	free(d1);
	free(d2);
	free(tgt);
}
END_TEST

/*
 * With a bias: the same loss, nll, count and gradient bits as adding the
 * bias to every row first (as bias_forward does), and the bias's gradient
 * those of bias_backward over the rows' gradients; in place and not,
 * without a gradient, with <pad> rows, on 1 and 2 threads.
 */
START_TEST(bias_as_if_added_first)
{
	int n = 37, v = 259, i, k, t, c1, c2;
	float *z = malloc(n * v * sizeof *z), *zb = malloc(n * v * sizeof *z);
	float *d1 = malloc(n * v * sizeof *z), *d2 = malloc(n * v * sizeof *z);
	float *b = malloc(v * sizeof *b), *db1 = malloc(v * sizeof *b);
	float *db2 = malloc(v * sizeof *b);
	int32_t *tgt = malloc(n * sizeof *tgt);
	double l1, l2, n1, n2;

	for (i = 0; i < n * v; i++)
		z[i] = cos(i * 0.37) * 4;
	for (k = 0; k < v; k++)
		b[k] = sin(k * 0.7) * 2;
	for (i = 0; i < n; i++)
		tgt[i] = i % 5 ? (i * 13) % v : XENT_PAD;
	for (t = 1; t <= 2; t++) {
		kern_set_threads(t);
		memcpy(zb, z, n * v * sizeof *z);
		bias_forward(zb, b, n, v);
		l1 = xent_forward_backward(d1, zb, tgt, n, v, 0.1f, 0.5f, &n1,
					   &c1);
		for (k = 0; k < v; k++)
			db1[k] = db2[k] = cos(k * 0.3);
		bias_backward(db1, d1, n, v);
		l2 = xent_biased_forward_backward(d2, z, b, db2, tgt, n, v,
						  0.1f, 0.5f, &n2, &c2);
		ck_assert(l1 == l2 && n1 == n2 && c1 == c2);
		ck_assert_int_eq(memcmp(d1, d2, n * v * sizeof *z), 0);
		ck_assert_int_eq(memcmp(db1, db2, v * sizeof *db1), 0);
		memcpy(d2, z, n * v * sizeof *z);
		ck_assert(xent_biased_forward_backward(d2, d2, b, NULL, tgt, n,
						       v, 0.1f, 0.5f, NULL,
						       NULL) == l1);
		ck_assert_int_eq(memcmp(d1, d2, n * v * sizeof *z), 0);
		ck_assert(xent_biased_forward_backward(NULL, z, b, NULL, tgt, n,
						       v, 0.1f, 0.5f, NULL,
						       NULL) == l1);
	}
	kern_set_threads(1);
	free(z);
	free(zb);
	free(d1);
	free(d2);
	free(b);
	free(db1);
	free(db2);
	free(tgt);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("xent");
	TCase *tc = tcase_create("xent");

	tcase_add_test(tc, loss_and_gradient);
	tcase_add_test(tc, threads_do_not_matter);
	tcase_add_test(tc, bias_as_if_added_first);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
