/*
 * gemm_ref.c: the reference matrix multiply, plain loops in the order that
 * reads memory along rows: a dot product per entry when B is stored
 * transposed, else rows of B scaled and added into rows of C.
 */
#include "kern_impl.h"

/* C [M, N] += alpha op(A) op(B); the caller has applied beta. */
void sgemm_ref_block(int ta, int tb, int M, int N, int K, float alpha,
		     const float *A, long lda, const float *B, long ldb,
		     float *C, long ldc)
{
	long as = ta ? lda : 1;         /* stride of op(A) along k */

	for (int i = 0; i < M; i++) {
		const float *a = ta ? A + i : A + i * lda;
		float *c = C + i * ldc;
		if (tb) {
			for (int j = 0; j < N; j++) {
				const float *b = B + j * ldb;
				float s = 0;
				for (int k = 0; k < K; k++)
					s += a[k * as] * b[k];
				c[j] += alpha * s;
			}
		} else {
			for (int k = 0; k < K; k++) {
				float ak = alpha * a[k * as];
				const float *b = B + k * ldb;
				for (int j = 0; j < N; j++)
					c[j] += ak * b[j];
			}
		}
	}
}
