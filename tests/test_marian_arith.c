/*
 * test_marian_arith.c: the layer norm and attention of Marian's models
 * (kernels.h layernorm_marian_forward, attn_step.h attn_marian_row) give
 * native Marian's own numbers bit for bit: fixtures/marian/arith/arith.bin,
 * cut from a traced native Marian (tools/marian-ref/arith_fixture.py):
 * the encoder's self-attention of a 45-piece line (one fma chain) and of
 * a 33-piece one (SkylakeX's small kernel, its last row's last key by
 * halves), a step's cross-attention over 45 keys, self-attention over 4,
 * 6 and 8 keys (Marian's softmax in 4 lanes, in order, in 8), and the
 * layer norm after the first self-attention.  Then, on random data, every
 * instruction set against the portable kernel bit for bit (sizes off the
 * vectors' widths, every form), and both against double precision:
 * marian_exp against exp, the softmax, the scores' forms, the layer norm.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/attn_step.h"
#include "kernels/kern_impl.h"
#include "kernels/kernels.h"
#include "kerntest.h"
#include "run_suite.h"

/* The instruction sets' rows: the portable one and, where the CPU has
 * AVX2, its kernel (the AVX-512 table keeps AVX2's). */
typedef void (*row_fn)(float *, float *, long, const float *, const void *,
		       long, const void *, long, int, int, int, float, int,
		       int, float *);
typedef void (*ln_fn)(float *, float *, float *, const float *,
		      const float *, const float *, int, int, float);

static int sets(row_fn rows[2], ln_fn lns[2])
{
	int isa[3], n = kt_isas(isa), k = 0;

	rows[k] = kern_ops_ref.attn_marian_row;
	lns[k++] = kern_ops_ref.layernorm_marian;
#ifndef ATTN_NO_SIMD
	if (isa[n - 1] >= ISA_AVX2) {
		rows[k] = kern_ops_avx2.attn_marian_row;
		lns[k++] = kern_ops_avx2.layernorm_marian;
	}
#endif
	kern_set_isa(isa[n - 1]);
	return k;
}

/* ---- native Marian's numbers ------------------------------------------ */

static FILE *fixture(void)
{
	char path[512];
	const char *src = __FILE__, *slash = strrchr(src, '/');
	int n = slash ? (int)(slash - src) : 1;

	snprintf(path, sizeof path, "%.*s/fixtures/marian/arith/arith.bin", n,
		 slash ? src : ".");
	FILE *f = fopen(path, "rb");
	ck_assert_msg(f != NULL, "cannot open %s", path);
	char magic[16];
	ck_assert(fread(magic, 1, 16, f) == 16);
	ck_assert(memcmp(magic, "ATTNMARIANARITH1", 16) == 0);
	return f;
}

static float *floats(FILE *f, size_t n)
{
	float *p = malloc(sizeof(float) * (n ? n : 1));

	ck_assert_ptr_nonnull(p);
	ck_assert(fread(p, sizeof(float), n, f) == n);
	return p;
}

static int32_t int32(FILE *f)
{
	int32_t v;

	ck_assert(fread(&v, sizeof v, 1, f) == 1);
	return v;
}

START_TEST(marians_own_numbers)
{
	row_fn rows[2];
	ln_fn lns[2];
	int nsets = sets(rows, lns), nattn = 0, nln = 0;
	FILE *f = fixture();
	int32_t kind;

	while (fread(&kind, sizeof kind, 1, f) == 1) {
		if (kind == 1) {
			int nq = int32(f), n = int32(f), dk = int32(f);
			int *form = malloc(sizeof(int) * nq);
			float scale;

			for (int t = 0; t < nq; t++)
				form[t] = int32(f);
			ck_assert(fread(&scale, sizeof scale, 1, f) == 1);
			float *q = floats(f, (size_t)nq * dk);
			float *k = floats(f, (size_t)n * dk);
			float *v = floats(f, (size_t)n * dk);
			float *want = floats(f, (size_t)nq * dk);
			float *got = kt_zeros(dk);
			float *s = kt_zeros(ATTN_MARIAN_SCRATCH(n));

			for (int i = 0; i < nsets; i++)
				for (int t = 0; t < nq; t++) {
					rows[i](got, NULL, 0, q + t * dk, k, dk, v, dk,
						n, 1, dk, scale, 0, form[t], s);
					ck_assert_msg(memcmp(got, want + t * dk,
							     sizeof(float) * dk) == 0,
						      "attention %d (%d keys), row %d, set %d: "
						      "%.9g, Marian %.9g", nattn, n, t, i,
						      got[0], want[t * dk]);
				}
			free(form), free(q), free(k), free(v), free(want);
			free(got), free(s);
			nattn++;
		} else {
			ck_assert_int_eq(kind, 2);
			int r = int32(f), d = int32(f);
			float eps;

			ck_assert(fread(&eps, sizeof eps, 1, f) == 1);
			float *x = floats(f, (size_t)r * d), *g = floats(f, d);
			float *b = floats(f, d), *want = floats(f, (size_t)r * d);
			float *got = kt_zeros((size_t)r * d);

			for (int i = 0; i < nsets; i++) {
				lns[i](got, NULL, NULL, x, g, b, r, d, eps);
				ck_assert_msg(memcmp(got, want, sizeof(float) * r * d)
					      == 0, "layer norm, set %d", i);
			}
			free(x), free(g), free(b), free(want), free(got);
			nln++;
		}
	}
	fclose(f);
	ck_assert_int_eq(nattn, 6);
	ck_assert_int_eq(nln, 1);
}
END_TEST

/* ---- random data: the sets alike, and against double precision --------- */

/* Marian's attention of one row in double: softmax(scale q k) v. */
static void row_double(double *out, const float *q, const float *k,
		       const float *v, int n, int dk, float scale)
{
	double *s = malloc(sizeof(double) * n), mx = -INFINITY, sum = 0;

	for (int j = 0; j < n; j++) {
		s[j] = 0;
		for (int c = 0; c < dk; c++)
			s[j] += (double)q[c] * k[j * dk + c];
		s[j] *= scale;
		mx = s[j] > mx ? s[j] : mx;
	}
	for (int j = 0; j < n; j++)
		sum += s[j] = exp(s[j] - mx);
	for (int c = 0; c < dk; c++) {
		out[c] = 0;
		for (int j = 0; j < n; j++)
			out[c] += s[j] / sum * v[j * dk + c];
	}
	free(s);
}

START_TEST(sets_alike_and_near_double)
{
	static const int dks[] = { 8, 20, 32, 64, 72 };
	row_fn rows[2];
	ln_fn lns[2];
	int nsets = sets(rows, lns);

	kt_seed(17);
	for (int di = 0; di < 5; di++)
		for (int n = 1; n <= 70; n += n < 12 ? 1 : 7)
			for (int form = 0; form < 3; form++) {
				int dk = dks[di], H = form ? 3 : 11, d = H * dk;
				float *q = kt_rand(d, -2, 2);
				float *k = kt_rand((size_t)n * d, -2, 2);
				float *v = kt_rand((size_t)n * d, -2, 2);
				float *o[2] = { kt_zeros(d), kt_zeros(d) };
				float *w[2] = { kt_zeros((size_t)H * n),
						kt_zeros((size_t)H * n) };
				float *s = kt_zeros(ATTN_MARIAN_SCRATCH(n));
				float scale = 1 / sqrtf(dk);
				double *want = kt_dzeros(dk);

				for (int i = 0; i < nsets; i++)
					rows[i](o[i], w[i], n, q, k, d, v, d, n, H,
						dk, scale, 0, form, s);
				ck_assert_msg(nsets < 2 || (memcmp(o[0], o[1],
					sizeof(float) * d) == 0 && memcmp(w[0],
					w[1], sizeof(float) * H * n) == 0),
					"dk %d, %d keys, form %d: AVX2 not the "
					"portable kernel's bits", dk, n, form);
				/* head 1 against double precision: the
				 * values within 1e-5 of their range 2 */
				float *k1 = kt_zeros((size_t)n * dk);
				float *v1 = kt_zeros((size_t)n * dk);
				for (int j = 0; j < n; j++) {
					memcpy(k1 + j * dk, k + j * d + dk,
					       sizeof(float) * dk);
					memcpy(v1 + j * dk, v + j * d + dk,
					       sizeof(float) * dk);
				}
				row_double(want, q + dk, k1, v1, n, dk, scale);
				kt_check("attn_marian_row", o[0] + dk, want, NULL,
					 1e-5, dk);
				free(q), free(k), free(v), free(o[0]), free(o[1]);
				free(w[0]), free(w[1]), free(s), free(want);
				free(k1), free(v1);
			}
	for (int d = 1; d <= 260; d += d < 20 ? 1 : 37) {
		float *x = kt_rand((size_t)3 * d, -3, 5), *g = kt_rand(d, 0.5, 2);
		float *b = kt_rand(d, -1, 1);
		float *y[2] = { kt_zeros((size_t)3 * d), kt_zeros((size_t)3 * d) };
		double *want = kt_dzeros((size_t)3 * d);

		for (int i = 0; i < nsets; i++)
			lns[i](y[i], NULL, NULL, x, g, b, 3, d, 1e-6f);
		ck_assert_msg(nsets < 2 || memcmp(y[0], y[1],
			      sizeof(float) * 3 * d) == 0,
			      "layer norm of %d: AVX2 not the portable bits", d);
		for (int r = 0; r < 3; r++) {
			double m = 0, var = 0;
			for (int i = 0; i < d; i++)
				m += x[r * d + i];
			m /= d;
			for (int i = 0; i < d; i++)
				var += (x[r * d + i] - m) * (x[r * d + i] - m);
			var /= d;
			for (int i = 0; i < d; i++)
				want[r * d + i] = g[i] * (x[r * d + i] - m) /
						  sqrt(var + 1e-6) + b[i];
		}
		kt_check("layernorm_marian", y[0], want, NULL, 2e-5, 3 * (size_t)d);
		free(x), free(g), free(b), free(y[0]), free(y[1]), free(want);
	}
}
END_TEST

/* A head at a time (the encoder's path) gives each row's bits as the
 * row kernel in the row's form: chains, and SkylakeX's small kernel
 * (pairs below nq & ~3, then lanes), rows past nq too. */
START_TEST(heads_as_rows)
{
	typedef void (*head_fn)(float *, long, float *, long, const float *,
				long, const float *, long, const float *, long,
				int, int, int, float, int, int, float *);
	head_fn heads[2] = { kern_ops_ref.attn_marian_head, NULL };
	row_fn rows[2];
	ln_fn lns[2];
	int nsets = sets(rows, lns);

#ifndef ATTN_NO_SIMD
	if (nsets > 1)
		heads[1] = kern_ops_avx2.attn_marian_head;
#endif
	kt_seed(23);
	for (int n = 1; n <= 40; n += 3)
		for (int small = 0; small < 2; small++) {
			int dk = 32, T = n + 2, nq = n;
			float *q = kt_rand((size_t)T * dk, -2, 2);
			float *k = kt_rand((size_t)n * dk, -2, 2);
			float *v = kt_rand((size_t)n * dk, -2, 2);
			float *want = kt_zeros((size_t)T * dk);
			float *got = kt_zeros((size_t)T * dk);
			float *s = kt_zeros(ATTN_MARIAN_SCRATCH(n) +
					   (size_t)dk * ((n + 31) / 32 * 32));

			for (int t = 0; t < T; t++)
				rows[0](want + t * dk, NULL, 0, q + t * dk, k, dk,
					v, dk, n, 1, dk, 0.125f, 0, !small ?
					MARIAN_SCORE_CHAIN : t < (nq & ~3) ?
					MARIAN_SCORE_PAIRS : MARIAN_SCORE_LANES, s);
			for (int i = 0; i < nsets; i++) {
				memset(got, 0, sizeof(float) * T * dk);
				heads[i](got, dk, NULL, 0, q, dk, k, dk, v, dk, T,
					 n, dk, 0.125f, small, nq, s);
				ck_assert_msg(memcmp(got, want, sizeof(float) * T *
						     dk) == 0, "%d keys, small %d, "
					      "set %d", n, small, i);
			}
			free(q), free(k), free(v), free(want), free(got), free(s);
		}
}
END_TEST

START_TEST(exp_and_softmax)
{
	/* Cephes' exp: within 2 ulp of exp over softmax's range */
	for (float x = -87.0f; x <= 0; x += 0.0137f) {
		double e = exp((double)x), got = marian_exp(x);
		ck_assert_msg(fabs(got - e) <= 2.5 * FLT_EPSILON * e,
			      "marian_exp(%.9g) = %.9g, exp %.9g", x, got, e);
	}
	ck_assert(marian_exp(0) == 1.0f);
	ck_assert(marian_exp(-200) == 0.0f);	/* clamped, 2^-127 y: 0 */
	/* the softmax: every length's path sums to 1 and is exp's */
	kt_seed(5);
	for (int n = 1; n <= 40; n++) {
		float *s = kt_rand(n, -6, 6);
		double *want = kt_dzeros(n), mx = -INFINITY, sum = 0, tot = 0;

		for (int j = 0; j < n; j++)
			mx = s[j] > mx ? s[j] : mx;
		for (int j = 0; j < n; j++)
			sum += want[j] = exp(s[j] - mx);
		for (int j = 0; j < n; j++)
			want[j] /= sum;
		marian_softmax(s, n);
		for (int j = 0; j < n; j++)
			tot += s[j];
		ck_assert_msg(fabs(tot - 1) < 1e-5, "%d: sum %.9g", n, tot);
		kt_check("marian_softmax", s, want, NULL, 1e-6, n);
		free(s), free(want);
	}
	/* the lanes' trees, by hand: 2^24 in lane 0, 1 in lanes 2 and 3.
	 * Pairs add 1 + 1 first: 2^24 + 2, exact.  Halves add each 1 to
	 * 2^24 apart (l0 + l8, then + l4, then (l0..) + (l2 + l6) = 2^24 +
	 * 1, a tie, to even: 2^24; then + (l1 + ...) = 1: 2^24 again). */
	float l[16] = { 0x1p24f, 0, 1, 1 };
	ck_assert(marian_lanes16(l, 1) == 0x1p24f + 2);
	ck_assert(marian_lanes16(l, 0) == 0x1p24f);
}
END_TEST

/*
 * The softmax of a row whose length is not a multiple of 4 (Marian's
 * <float> path) in every set: e_j = expf(s_j - max) summed in order, each
 * divided by the sum, as libm gives them, to the bit.  The scores are
 * set exactly (q = e_0, scale 1, dk 8: a chain that adds zeros), spread
 * past expf's underflow (-88 to -104 and beyond), where the AVX2 kernel's
 * lanes leave its own exp for libm's.
 */
START_TEST(softmax_as_libm_expf)
{
	static const float edge[] = { -87.9f, -88.1f, -100, -103.5f, -103.9f,
				      -104.5f, -150, -1e30f };
	row_fn rows[2];
	ln_fn lns[2];
	int nsets = sets(rows, lns), dk = 8;

	kt_seed(23);
	/* lengths not a multiple of 4: expf's path */
	for (int n = 1; n <= 203; n += n % 4 == 3 ? 2 : n < 16 ? 1 : 17) {
		float *k = kt_zeros((size_t)n * dk), *v = kt_zeros((size_t)n * dk);
		float *w = kt_zeros(n), *o = kt_zeros(dk),
		      *s = kt_zeros(ATTN_MARIAN_SCRATCH(n));
		float q[8] = { 1 }, *want = kt_zeros(n), mx, sum = 0;

		ck_assert(n % 4 != 0);
		for (int j = 0; j < n; j++)
			k[j * dk] = j % 5 == 4 ? edge[(int)kt_uniform(0, 7.999)] + 5 :
				    (float)kt_uniform(-30, 5);
		mx = k[0];
		for (int j = 1; j < n; j++)
			mx = mx < k[j * dk] ? k[j * dk] : mx;
		for (int j = 0; j < n; j++)
			sum += want[j] = expf(k[j * dk] - mx);
		for (int j = 0; j < n; j++)
			want[j] /= sum;
		for (int i = 0; i < nsets; i++) {
			rows[i](o, w, n, q, k, dk, v, dk, n, 1, dk, 1.0f, 0,
				MARIAN_SCORE_CHAIN, s);
			ck_assert_msg(memcmp(w, want, sizeof(float) * n) == 0,
				      "%d keys, set %d: not libm's expf", n, i);
		}
		free(k), free(v), free(w), free(o), free(s), free(want);
	}
}
END_TEST

START_TEST(forms_follow_the_kernels)
{
	int isa[3], n = kt_isas(isa), top = isa[n - 1];

	kern_set_isa(ISA_AVX2 <= top ? ISA_AVX2 : ISA_REFERENCE);
	ck_assert_int_eq(marian_score_form(1, 45, 64, 0), MARIAN_SCORE_CHAIN);
	if (top == ISA_AVX512) {
		kern_set_isa(ISA_AVX512);
		/* OpenBLAS SkylakeX's permit: M' N' <= 1200, K >= 32 */
		ck_assert_int_eq(marian_score_form(1, 45, 64, 0),
				 MARIAN_SCORE_LANES);
		ck_assert_int_eq(marian_score_form(45, 45, 64, 0),
				 MARIAN_SCORE_CHAIN);
		ck_assert_int_eq(marian_score_form(33, 33, 64, 31),
				 MARIAN_SCORE_PAIRS);
		ck_assert_int_eq(marian_score_form(33, 33, 64, 32),
				 MARIAN_SCORE_LANES);
		ck_assert_int_eq(marian_score_form(1, 45, 16, 0),
				 MARIAN_SCORE_CHAIN);
		ck_assert_int_eq(marian_score_form(1, 1201, 32, 0),
				 MARIAN_SCORE_CHAIN);
	}
	kern_set_isa(top);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("marian_arith");
	TCase *tc = tcase_create("marian_arith");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, marians_own_numbers);
	tcase_add_test(tc, sets_alike_and_near_double);
	tcase_add_test(tc, heads_as_rows);
	tcase_add_test(tc, exp_and_softmax);
	tcase_add_test(tc, softmax_as_libm_expf);
	tcase_add_test(tc, forms_follow_the_kernels);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
