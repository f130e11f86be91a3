/*
 * gemm_bf16.c: sgemm's blocked path in bf16 precision (kernels.h).  The
 * blocking of gemm.c's (Goto and van de Geijn): blocks of op(A) [mc, kc]
 * packed once, panels of op(B) [kc, nc] packed in turn, the micro-kernel
 * on a strip of A in L1 against the strips of B's panel in L2.  Packing
 * converts to bf16 pairs along k (kern_impl.h), so each entry of A and B
 * is rounded once per use, as the f32 path copies it once, and the
 * panels take half the bytes of float ones.
 */
#include "kern_impl.h"

/* The largest register tile of a bf16 table. */
#define MAX_TILE (16 * 32)

/* C [m, n] = fma(alpha, Ap Bp, C) over kp pairs of packed panels. */
static void macro_kernel(const struct gemm_bf16 *u, int m, int n, int kp,
			 float alpha, const uint32_t *Ap, const uint32_t *Bp,
			 float *C, long ldc)
{
	int mr = u->mr, nr = u->nr;
	float tile[MAX_TILE] __attribute__((aligned(64)));

	for (int i = 0; i < m; i += mr) {
		const uint32_t *a = Ap + (size_t)i * kp;
		int rows = m - i < mr ? m - i : mr;
		for (int j = 0; j < n; j += nr) {
			const uint32_t *b = Bp + (size_t)j * kp;
			int cols = n - j < nr ? n - j : nr;
			float *c = C + (long)i * ldc + j;
			if (rows == mr && cols == nr) {
				u->kernel(kp, alpha, a, b, c, ldc);
				continue;
			}
			/* an edge tile: through a whole one and back */
			for (int r = 0; r < rows; r++)
				for (int q = 0; q < cols; q++)
					tile[r * nr + q] = c[(long)r * ldc + q];
			u->kernel(kp, alpha, a, b, tile, nr);
			for (int r = 0; r < rows; r++)
				for (int q = 0; q < cols; q++)
					c[(long)r * ldc + q] = tile[r * nr + q];
		}
	}
}

int gemm_bf16_blocked(const struct gemm_bf16 *u, int ta, int tb, int M,
		      int N, int K, float alpha, const float *A, long lda,
		      const float *B, long ldb, float *C, long ldc)
{
	/* blocks of A of about equal rows: a last block of a few rows would
	 * pack all of B for them */
	int blocks = (M + u->mc - 1) / u->mc;
	int mcb = ((M + blocks - 1) / blocks + u->mr - 1) / u->mr * u->mr;
	uint32_t *Ap = kern_scratch(0, sizeof(uint32_t) * mcb * (u->kc / 2));
	uint32_t *Bp = kern_scratch(1, sizeof(uint32_t) * (u->kc / 2) * u->nc);

	if (!Ap || !Bp)
		return -1;
	for (int ic = 0; ic < M; ic += mcb) {
		int mc = M - ic < mcb ? M - ic : mcb;
		for (int pc = 0; pc < K; pc += u->kc) {
			int kc = K - pc < u->kc ? K - pc : u->kc;
			/* A with ta, and B without tb, are stored [k, n]:
			 * pack_rows; the others pack_cols */
			(ta ? u->pack_rows : u->pack_cols)(u->mr, kc, mc,
				gemm_at_a(ta, A, lda, ic, pc), lda, Ap);
			for (int jc = 0; jc < N; jc += u->nc) {
				int nc = N - jc < u->nc ? N - jc : u->nc;
				(tb ? u->pack_cols : u->pack_rows)(u->nr, kc,
					nc, gemm_at_b(tb, B, ldb, pc, jc), ldb,
					Bp);
				macro_kernel(u, mc, nc, (kc + 1) / 2, alpha, Ap,
					     Bp, C + (long)ic * ldc + jc, ldc);
			}
		}
	}
	return 0;
}
