/*
 * test_gemm_bf16.c: sgemm in bf16 precision (kern_set_matmul, kernels.h)
 * against a double-precision product of the inputs rounded to bf16 by
 * tensor.h's f32_to_bf16, for the four transpositions, strides,
 * alpha/beta, and shapes from one column and one k up past the register
 * and cache blocks (MR 12, NR 32, KC 512, NC 512, MC 2040), on one thread
 * and two.  Then the rounding itself (ties, NaN, inf, overflow, either
 * half of a pair), that it happens, that f32 comes back bit for bit, that
 * few-row calls stay f32, and the refusal where there is no bf16.
 *
 * Bound: a product of two bf16 (8 significant bits each) is exact in
 * float, so an entry of C is a float sum of K exact terms, the blocks of
 * KC terms each added into C by one fma with alpha, C having been scaled
 * by beta: every term and beta c go through at most K + (K / KC + 1) + 1
 * <= 2K + 2 roundings, each of relative error u = 2^-24 (vdpbf16ps adds
 * each product of a pair in turn, rounding each time; its order does not
 * matter to the bound).  So |err| <= gamma(2K + 2) (|alpha| sum_k
 * |a_ik b_kj| + |beta c_ij|), gamma(n) = n u / (1 - n u) (Higham,
 * Accuracy and Stability, 3.1), a and b the rounded inputs.  The inputs
 * here are in [-1, 1], far from the bf16 denormals (below 2^-126) which
 * the instruction counts as zero.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/errmsg.h"
#include "kernels/kernels.h"
#include "kerntest.h"
#include "run_suite.h"
#include "stream/tensor.h"

static float bf(float x)
{
	return bf16_to_f32(f32_to_bf16(x));
}


static void set_bf16(void)
{
	ck_assert_int_eq(kern_set_matmul(KERN_MATMUL_BF16), 0);
	ck_assert_int_eq(kern_matmul(), KERN_MATMUL_BF16);
}

START_TEST(test_small_random)
{
	kt_seed(1);
	set_bf16();
	for (int r = 0; r < 20; r++)
		kt_sgemm_variants(kt_int(KERN_BF16_MIN_M, 60), kt_int(1, 70),
				  kt_int(1, 70), 1);
	kt_sgemm_variants(KERN_BF16_MIN_M, 1, 1, 1);
	kt_sgemm_variants(KERN_BF16_MIN_M + 1, 33, 2, 1);
	kt_sgemm_variants(29, 32, 3, 1);
	kt_sgemm_variants(28, 64, 64, 1);
}
END_TEST

/* Past KC (odd K too), NC and MC, with one thread and two. */
START_TEST(test_large)
{
	static const int shapes[][3] = {
		{ 43, 67, 1101 }, { 300, 33, 17 }, { 47, 601, 260 },
		{ KERN_BF16_MIN_M + 1, 1030, 129 }, { 2100, 37, 9 },
		{ 130, 70, 1024 },
	};
	kt_seed(2);
	set_bf16();
	for (int t = 1; t <= 2; t++) {
		kern_set_threads(t);
		for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++)
			kt_sgemm_variants(shapes[s][0], shapes[s][1],
					  shapes[s][2], 1);
	}
}
END_TEST

/*
 * Each value goes through one half of a pair (k = 0 or 1, the other k
 * zero) of op(A), then of op(B), against ones, in every transposition:
 * C is the value rounded, bit for bit as f32_to_bf16 (NaN: a NaN).
 */
static const float tricky[] = {
	1, -1, 0,
	1 + 0x1p-8f,                    /* a tie: down to the even 1 */
	1 + 3 * 0x1p-8f,                /* a tie: up to the even 1 + 2^-6 */
	-(1 + 3 * 0x1p-8f),
	1 + 0x1p-8f + 0x1p-20f,         /* above the tie: up */
	1 + 0x1p-7f + 0x1p-8f - 0x1p-20f, /* below the tie: down */
	0x1.fep-100f + 0x1p-108f,       /* a tie at a small exponent */
	3.14159265f, -2.71828183f, 1e30f, -1e-30f, 65504,
	0x1.fffffep127f,                /* beyond the largest bf16: inf */
	0x1.fep127f,                    /* the largest bf16 itself */
	INFINITY, -INFINITY, NAN, -NAN,
};
#define NTRICKY ((int)(sizeof(tricky) / sizeof(tricky[0])))

static void check_rounded(const float *C, int ldc, int rows, int cols,
			  const char *what)
{
	for (int i = 0; i < rows; i++)
		for (int j = 0; j < cols; j++) {
			float v = tricky[rows > 1 ? i : j], got = C[i * ldc + j];
			float want = bf(v);
			if (isnan(want)) {
				ck_assert_msg(isnan(got), "%s: %a gave %a",
					      what, v, got);
				continue;
			}
			ck_assert_msg(memcmp(&got, &want, sizeof got) == 0,
				      "%s: %a gave %a, not %a", what, v, got,
				      want);
		}
}

START_TEST(test_rounding)
{
	enum { M = NTRICKY + KERN_BF16_MIN_M, N = NTRICKY, K = 2 };
	float x[M * K], ones[M * K], C[M * N];
	char what[64];

	set_bf16();
	for (int i = 0; i < M * K; i++)
		ones[i] = 1;
	for (int half = 0; half < 2; half++) {
		/* x [r, 2] (or its transpose) holds value r in k = half */
		for (int ta = 0; ta < 2; ta++)
			for (int tb = 0; tb < 2; tb++) {
				memset(x, 0, sizeof(x));
				for (int r = 0; r < M; r++)
					x[ta ? half * M + r : r * K + half] =
						tricky[r % NTRICKY];
				sgemm(ta, tb, M, 1, K, 1, x, ta ? M : K,
				      ones, tb ? K : 1, 0, C, 1);
				snprintf(what, sizeof(what), "A, k=%d ta=%d "
					 "tb=%d", half, ta, tb);
				check_rounded(C, 1, NTRICKY, 1, what);
				memset(x, 0, sizeof(x));
				for (int r = 0; r < N; r++)
					x[tb ? r * K + half : half * N + r] =
						tricky[r];
				sgemm(ta, tb, M, N, K, 1, ones, ta ? M : K,
				      x, tb ? K : N, 0, C, N);
				snprintf(what, sizeof(what), "B, k=%d ta=%d "
					 "tb=%d", half, ta, tb);
				check_rounded(C, N, 1, N, what);
			}
	}
}
END_TEST

/* 1 + 2^-9 is 1 in bf16: a product of it that f32 gets right is off by
 * 2^-9 (per term: K of them, 2^-9 K). */
START_TEST(test_really_rounds)
{
	enum { M = KERN_BF16_MIN_M, K = 64 };
	float A[M * K], B[K], C[M];

	ck_assert_int_eq(kern_set_matmul(KERN_MATMUL_F32), 0);
	for (int i = 0; i < M * K; i++)
		A[i] = 1 + 0x1p-9f;
	for (int k = 0; k < K; k++)
		B[k] = 1;
	sgemm(0, 0, M, 1, K, 1, A, K, B, 1, 0, C, 1);
	for (int i = 0; i < M; i++)
		ck_assert_float_eq(C[i], K * (1 + 0x1p-9f));
	set_bf16();
	sgemm(0, 0, M, 1, K, 1, A, K, B, 1, 0, C, 1);
	for (int i = 0; i < M; i++)
		ck_assert_float_eq(C[i], K);
}
END_TEST

/* f32, bf16, f32 again: the first and the last the same bits; fewer
 * than KERN_BF16_MIN_M rows in bf16: the bits of f32. */
static void f32_again(int ta, int tb, int M, int N, int K)
{
	int lda = ta ? M : K, ldb = tb ? K : N;
	float *A = kt_rand((size_t)M * K, -1, 1);
	float *B = kt_rand((size_t)N * K, -1, 1);
	float *C0 = kt_rand((size_t)M * N, -1, 1);
	float *C1 = malloc(sizeof(float) * M * N);
	float *C2 = malloc(sizeof(float) * M * N);
	float *C3 = malloc(sizeof(float) * M * N);
	size_t bytes = sizeof(float) * M * N;

	ck_assert(C1 && C2 && C3);
	memcpy(C1, C0, bytes);
	memcpy(C2, C0, bytes);
	memcpy(C3, C0, bytes);
	ck_assert_int_eq(kern_set_matmul(KERN_MATMUL_F32), 0);
	ck_assert_int_eq(kern_matmul(), KERN_MATMUL_F32);
	sgemm(ta, tb, M, N, K, 0.5f, A, lda, B, ldb, 0.75f, C1, N);
	set_bf16();
	sgemm(ta, tb, M, N, K, 0.5f, A, lda, B, ldb, 0.75f, C2, N);
	ck_assert_int_eq(memcmp(C1, C2, bytes) == 0, M < KERN_BF16_MIN_M);
	ck_assert_int_eq(kern_set_matmul(KERN_MATMUL_F32), 0);
	sgemm(ta, tb, M, N, K, 0.5f, A, lda, B, ldb, 0.75f, C3, N);
	ck_assert_msg(memcmp(C1, C3, bytes) == 0,
		      "ta=%d tb=%d M=%d N=%d K=%d: f32 after bf16 changed",
		      ta, tb, M, N, K);
	free(A);
	free(B);
	free(C0);
	free(C1);
	free(C2);
	free(C3);
}

START_TEST(test_f32_again)
{
	kt_seed(4);
	for (int t = 1; t <= 2; t++) {
		kern_set_threads(t);
		for (int ta = 0; ta < 2; ta++)
			for (int tb = 0; tb < 2; tb++) {
				f32_again(ta, tb, 1, 300, 70);
				f32_again(ta, tb, KERN_BF16_MIN_M - 1, 40, 600);
				f32_again(ta, tb, KERN_BF16_MIN_M, 50, 33);
				f32_again(ta, tb, 200, 150, 530);
			}
	}
}
END_TEST

/* Below the AVX-512 set (as ATTN_KERNELS=avx2 would have it), or on a
 * CPU without AVX512_BF16: -1, a message, and f32 stays. */
START_TEST(test_refused)
{
	int isa[3], n = kt_isas(isa);

	ck_assert_int_eq(kern_set_matmul(KERN_MATMUL_BF16) + 1,
			 __builtin_cpu_supports("avx512bf16") &&
			 isa[n - 1] == ISA_AVX512);
	for (int i = 0; i < n; i++) {
		kern_set_isa(isa[i]);
		err_clear();
		int ok = isa[i] == ISA_AVX512 &&
			 __builtin_cpu_supports("avx512bf16");
		ck_assert_int_eq(kern_set_matmul(KERN_MATMUL_BF16), ok ? 0 : -1);
		ck_assert_int_eq(kern_matmul(), ok ? KERN_MATMUL_BF16 :
				 KERN_MATMUL_F32);
		if (!ok)
			ck_assert_ptr_nonnull(strstr(err_msg(), "AVX512_BF16"));
	}
	/* a lower set of kernels ends the bf16 precision */
	kern_set_isa(ISA_AVX2);
	ck_assert_int_eq(kern_matmul(), KERN_MATMUL_F32);
	kern_set_isa(isa[n - 1]);
	ck_assert_int_eq(kern_matmul(), KERN_MATMUL_F32);
	ck_assert_int_eq(kern_set_matmul(2), -1);
	ck_assert_int_eq(kern_set_matmul(-1), -1);
	ck_assert_int_eq(kern_set_matmul(KERN_MATMUL_F32), 0);
	ck_assert_int_eq(kern_matmul(), KERN_MATMUL_F32);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("gemm_bf16");
	TCase *tc = tcase_create("bf16");
	int have = kern_set_matmul(KERN_MATMUL_BF16) == 0;

	kern_set_matmul(KERN_MATMUL_F32);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_refused);
	if (have) {     /* else only the refusal can be tested */
		tcase_add_test(tc, test_small_random);
		tcase_add_test(tc, test_large);
		tcase_add_test(tc, test_rounding);
		tcase_add_test(tc, test_really_rounds);
		tcase_add_test(tc, test_f32_again);
	}
	suite_add_tcase(s, tc);
	return run_suite(s);
}
