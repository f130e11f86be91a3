/*
 * test_attn_step.c: single-query attention against a double-precision
 * softmax(q k^T scale) V, for every instruction set, head sizes off the
 * vector width, key counts past a chunk (the online softmax's rescaling), heads past a group
 * and none (zeros); the weights sum to one and are zero past the keys;
 * and a row computed alone has the bits it has among others.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/attn_step.h"
#include "kernels/kernels.h"
#include "kerntest.h"
#include "run_suite.h"

enum { ROWS = 5, H = 18 };

static void one_case(int dk, int smax)
{
	int d = H * dk, n[ROWS];
	float *q = kt_rand((size_t)ROWS * d, -2, 2);
	float *kv = kt_rand((size_t)2 * ROWS * smax * d + 1, -2, 2);
	float *out = kt_zeros((size_t)ROWS * d), *w = kt_rand((size_t)ROWS * H * smax + 1, 5, 6);
	float *one = kt_zeros(d), *w1 = kt_zeros((size_t)H * smax + 1);
	double *want = kt_dzeros((size_t)ROWS * d), *ws = kt_dzeros((size_t)ROWS * H * smax + 1);
	const float *k[ROWS], *v[ROWS];
	float scale = 1 / sqrtf((float)dk);
	char what[64];

	for (int i = 0; i < ROWS; i++) {
		k[i] = kv + (size_t)i * smax * d;
		v[i] = kv + (size_t)(ROWS + i) * smax * d;
		n[i] = i == 1 ? 0 : kt_int(1, smax);
	}
	n[ROWS - 1] = smax;
	for (int i = 0; i < ROWS; i++)
		for (int h = 0; h < H; h++) {
			double s[1024], mx = -INFINITY, sum = 0;
			for (int j = 0; j < n[i]; j++) {
				s[j] = 0;
				for (int c = 0; c < dk; c++)
					s[j] += (double)q[i * d + h * dk + c] *
						k[i][j * d + h * dk + c];
				s[j] *= scale;
				mx = s[j] > mx ? s[j] : mx;
			}
			for (int j = 0; j < n[i]; j++)
				sum += s[j] = exp(s[j] - mx);
			for (int j = 0; j < n[i]; j++) {
				ws[(i * H + h) * smax + j] = s[j] / sum;
				for (int c = 0; c < dk; c++)
					want[i * d + h * dk + c] += s[j] / sum *
						v[i][j * d + h * dk + c];
			}
		}
	struct attn_step a = {
		.rows = ROWS, .H = H, .dk = dk, .scale = scale, .q = q, .qs = d,
		.k = k, .v = v, .ks = d, .vs = d, .n = n, .out = out, .os = d,
		.weights = w, .ws = (long)H * smax, .wn = smax,
	};
	attn_step(&a);
	snprintf(what, sizeof(what), "attn_step dk=%d S=%d", dk, smax);
	kt_check(what, out, want, NULL, 1e-5, (size_t)ROWS * d);
	kt_check(what, w, ws, NULL, 1e-6, (size_t)ROWS * H * smax);
	/* row 3 alone, without weights */
	a.rows = 1;
	a.q = q + 3 * d;
	a.k = k + 3;
	a.v = v + 3;
	a.n = n + 3;
	a.out = one;
	a.weights = NULL;
	attn_step(&a);
	ck_assert_msg(memcmp(one, out + 3 * d, sizeof(float) * d) == 0,
		      "%s: row 3 alone has other bits", what);
	a.weights = w1;
	attn_step(&a);
	ck_assert_msg(memcmp(w1, w + 3 * H * smax, sizeof(float) * H * smax) == 0,
		      "%s: row 3's weights alone differ", what);
	free(q);
	free(kv);
	free(out);
	free(w);
	free(one);
	free(w1);
	free(want);
	free(ws);
}

START_TEST(test_against_double)
{
	static const int dks[] = { 1, 7, 8, 64, 72 };
	static const int ss[] = { 1, 3, 25, 64, 65, 700 };
	int isa[3], n = kt_isas(isa);

	kt_seed(11);
	for (int t = 1; t <= 2; t++) {
		kern_set_threads(t);
		for (int i = 0; i < n; i++) {
			kern_set_isa(isa[i]);
			for (size_t a = 0; a < sizeof(dks) / sizeof(*dks); a++)
				for (size_t b = 0; b < sizeof(ss) / sizeof(*ss); b++)
					one_case(dks[a], ss[b]);
		}
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("attn_step");
	TCase *tc = tcase_create("attn_step");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_against_double);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
