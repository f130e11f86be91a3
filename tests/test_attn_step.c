/*
 * test_attn_step.c: single-query attention against a double-precision
 * softmax(q k^T scale) V, for every instruction set, head sizes off the
 * vector width, key counts past a chunk (the online softmax's rescaling), heads past a group
 * and none (zeros); the weights sum to one and are zero past the keys;
 * and a row computed alone has the bits it has among others.  Keys and
 * values in f16: the same, against the double-precision result on the
 * f16 values; kv_to_f16 gives f32_to_f16's bits on every instruction set.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/f16.h"
#include "kernels/attn_step.h"
#include "kernels/kernels.h"
#include "kerntest.h"
#include "run_suite.h"

enum { ROWS = 5, H = 18 };

static void one_case(int dk, int smax, int f16)
{
	int d = H * dk, n[ROWS];
	size_t nkv = (size_t)2 * ROWS * smax * d + 1;
	float *q = kt_rand((size_t)ROWS * d, -2, 2);
	float *kv = kt_rand(nkv, -2, 2);
	uint16_t *kvh = malloc(sizeof(uint16_t) * nkv);
	float *out = kt_zeros((size_t)ROWS * d), *w = kt_rand((size_t)ROWS * H * smax + 1, 5, 6);
	float *one = kt_zeros(d), *w1 = kt_zeros((size_t)H * smax + 1);
	double *want = kt_dzeros((size_t)ROWS * d), *ws = kt_dzeros((size_t)ROWS * H * smax + 1);
	const float *k[ROWS], *v[ROWS];
	const void *kk[ROWS], *vv[ROWS];	/* as the kernel sees them */
	float scale = 1 / sqrtf((float)dk);
	char what[64];

	ck_assert_ptr_nonnull(kvh);
	for (size_t i = 0; f16 && i < nkv; i++) {
		kvh[i] = f32_to_f16(kv[i]);
		kv[i] = f16_to_f32(kvh[i]);	/* the reference's values */
	}
	for (int i = 0; i < ROWS; i++) {
		k[i] = kv + (size_t)i * smax * d;
		v[i] = kv + (size_t)(ROWS + i) * smax * d;
		n[i] = i == 1 ? 0 : kt_int(1, smax);
		kk[i] = f16 ? (const void *)(kvh + (k[i] - kv)) : k[i];
		vv[i] = f16 ? (const void *)(kvh + (v[i] - kv)) : v[i];
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
		.k = kk, .v = vv, .ks = d, .vs = d, .f16 = f16, .n = n,
		.out = out, .os = d, .weights = w, .ws = (long)H * smax,
		.wn = smax,
	};
	attn_step(&a);
	snprintf(what, sizeof(what), "attn_step dk=%d S=%d%s", dk, smax,
		 f16 ? " f16" : "");
	kt_check(what, out, want, NULL, 1e-5, (size_t)ROWS * d);
	kt_check(what, w, ws, NULL, 1e-6, (size_t)ROWS * H * smax);
	/* row 3 alone, without weights */
	a.rows = 1;
	a.q = q + 3 * d;
	a.k = kk + 3;
	a.v = vv + 3;
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
	free(kvh);
	free(out);
	free(w);
	free(one);
	free(w1);
	free(want);
	free(ws);
}

START_TEST(test_against_double)
{
	static const int dks[] = { 1, 7, 8, 20, 32, 60, 64, 72, 127 };
	static const int ss[] = { 1, 3, 25, 64, 65, 700 };
	int isa[3], n = kt_isas(isa);

	kt_seed(11);
	for (int t = 1; t <= 2; t++) {
		kern_set_threads(t);
		for (int i = 0; i < n; i++) {
			kern_set_isa(isa[i]);
			for (size_t a = 0; a < sizeof(dks) / sizeof(*dks); a++)
				for (size_t b = 0; b < sizeof(ss) / sizeof(*ss); b++)
					for (int f16 = 0; f16 < 2; f16++)
						one_case(dks[a], ss[b], f16);
		}
	}
}
END_TEST

START_TEST(test_kv_to_f16)
{
	/* ties to even either way (1 + 2^-11 down, 1 + 3 2^-11 up), the
	 * largest half and what rounds past it, subnormal halves and below
	 * them, infinities, NaNs with payloads; then random values of every
	 * magnitude, 1003 of them (not a multiple of 8) */
	static const float special[] = {
		0.0f, -0.0f, 1.0f, 0x1.002p0f, 0x1.006p0f, 65504.0f,
		65519.0f, 65520.0f, 1e9f, 0x1p-14f, 0x1p-24f, 0x1p-25f,
		0x1.8p-25f, 0x1p-26f, 0x1.ffcp-15f, -0x1.234p-20f, INFINITY,
		-INFINITY, NAN, -NAN,
	};
	enum { NS = sizeof(special) / sizeof(*special), N = NS + 1003 };
	float x[N];
	uint16_t want[N], got[N];
	int isa[3], n = kt_isas(isa);
	uint32_t payload = 0x7fc12345;

	kt_seed(5);
	memcpy(x, special, sizeof(special));
	memcpy(&x[NS - 1], &payload, 4);
	for (int i = NS; i < N; i++)
		x[i] = (float)(kt_uniform(-1, 1) * exp2(kt_int(-30, 17)));
	for (int i = 0; i < N; i++)
		want[i] = f32_to_f16(x[i]);
	ck_assert_uint_eq(want[3], 0x3c00);	/* 1 + 2^-11: even, down */
	ck_assert_uint_eq(want[4], 0x3c02);	/* 1 + 3 2^-11: even, up */
	ck_assert_uint_eq(want[7], 0x7c00);	/* 65520: infinity */
	ck_assert_uint_eq(want[11], 0x0000);	/* 2^-25: a tie, to 0 */
	ck_assert_uint_eq(want[12], 0x0001);	/* 1.5 2^-25: up */
	for (int i = 0; i < n; i++)
		for (int len = N; len >= N - 7; len--) {
			kern_set_isa(isa[i]);
			memset(got, 0xa5, sizeof(got));
			kv_to_f16(got, x, len);
			for (int j = 0; j < N; j++)
				ck_assert_msg(got[j] == (j < len ? want[j] :
							 0xa5a5),
					      "isa %d, %d values: %d is "
					      "%#x, not %#x", isa[i], len, j,
					      got[j], j < len ? want[j] :
					      0xa5a5);
		}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("attn_step");
	TCase *tc = tcase_create("attn_step");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_against_double);
	tcase_add_test(tc, test_kv_to_f16);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
