/*
 * kerntest.c: helpers of the kernel tests (kerntest.h).
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "kernels/kernels.h"
#include "kerntest.h"
#include "stream/tensor.h"

static uint64_t state = 0x9e3779b97f4a7c15u;

void kt_seed(uint64_t seed)
{
	state = seed * 0x9e3779b97f4a7c15u + 1;
}

/* splitmix64 */
static uint64_t next(void)
{
	uint64_t z = (state += 0x9e3779b97f4a7c15u);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return z ^ (z >> 31);
}

double kt_uniform(double lo, double hi)
{
	return lo + (hi - lo) * (double)(next() >> 11) * 0x1p-53;
}

int kt_int(int lo, int hi)
{
	return lo + (int)(next() % (uint64_t)(hi - lo + 1));
}

float *kt_zeros(size_t n)
{
	float *p = calloc(n ? n : 1, sizeof(float));
	if (!p)
		abort();
	return p;
}

double *kt_dzeros(size_t n)
{
	double *p = calloc(n ? n : 1, sizeof(double));
	if (!p)
		abort();
	return p;
}

float *kt_rand(size_t n, double lo, double hi)
{
	float *p = kt_zeros(n);
	for (size_t i = 0; i < n; i++)
		p[i] = (float)kt_uniform(lo, hi);
	return p;
}

int kt_isas(int isa[3])
{
	int n = 0;
	for (int i = ISA_REFERENCE; i <= ISA_AVX512; i++)
		if (kern_set_isa(i) == i)
			isa[n++] = i;
	return n;
}

void kt_check(const char *what, const float *got, const double *want,
	      const double *tol, double tol1, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		double g = got[i], w = want[i], t = tol ? tol[i] : tol1;
		int ok;
		if (isnan(w))
			ok = isnan(g);
		else if (isinf(w))
			ok = g == w;
		else
			ok = fabs(g - w) <= t;
		if (!ok)
			ck_abort_msg("%s [%s]: at %zu got %.9g want %.9g "
				     "(tol %.3g)", what, kern_isa_name(), i, g,
				     w, t);
	}
}

/* x as sgemm's bf16 precision sees it. */
static double bf16_of(float x)
{
	return bf16_to_f32(f32_to_bf16(x));
}

void kt_sgemm_case(int ta, int tb, int M, int N, int K, float alpha,
		   float beta, int bf16)
{
	int lda = (ta ? M : K) + kt_int(0, 3);
	int ldb = (tb ? K : N) + kt_int(0, 3);
	int ldc = N + kt_int(0, 3);
	float *A = kt_rand((size_t)(ta ? K : M) * lda, -1, 1);
	float *B = kt_rand((size_t)(tb ? N : K) * ldb, -1, 1);
	float *C = kt_rand((size_t)M * ldc, -1, 1);
	double *want = kt_dzeros((size_t)M * ldc), *tol = kt_dzeros((size_t)M * ldc);
	double n = bf16 ? 2.0 * K + 2 : K + 2.0, g = n * KT_U / (1 - n * KT_U);
	char what[96];

	if (beta == 0)
		for (int i = 0; i < M * ldc; i++)
			C[i] = NAN;
	for (int i = 0; i < M; i++) {
		for (int j = 0; j < ldc; j++) {
			double s = 0, m = 0, c = C[i * ldc + j];
			if (j >= N) {   /* past N: untouched */
				want[i * ldc + j] = c;
				continue;
			}
			for (int k = 0; k < K; k++) {
				float fa = ta ? A[k * lda + i] : A[i * lda + k];
				float fb = tb ? B[j * ldb + k] : B[k * ldb + j];
				double a = bf16 ? bf16_of(fa) : fa;
				double b = bf16 ? bf16_of(fb) : fb;
				s += a * b;
				m += fabs(a * b);
			}
			want[i * ldc + j] = alpha * s + (beta == 0 ? 0 : beta * c);
			tol[i * ldc + j] = g * (fabs(alpha) * m +
						(beta == 0 ? 0 : fabs(beta * c)));
		}
	}
	sgemm(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
	snprintf(what, sizeof(what), "%ssgemm ta=%d tb=%d M=%d N=%d K=%d "
		 "alpha=%g beta=%g", bf16 ? "bf16 " : "", ta, tb, M, N, K,
		 alpha, beta);
	kt_check(what, C, want, tol, 0, (size_t)M * ldc);
	free(A);
	free(B);
	free(C);
	free(want);
	free(tol);
}

void kt_sgemm_variants(int M, int N, int K, int bf16)
{
	static const float alphas[] = { 1, -0.5f, 2.25f };
	static const float betas[] = { 0, 1, 0.75f };

	for (int ta = 0; ta < 2; ta++)
		for (int tb = 0; tb < 2; tb++)
			kt_sgemm_case(ta, tb, M, N, K, alphas[kt_int(0, 2)],
				      betas[kt_int(0, 2)], bf16);
}
