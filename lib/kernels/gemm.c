/*
 * gemm.c: sgemm, the one entry point, for every instruction set.
 *
 * C is cut into strips, one per thread, along N or M.  Each strip has beta
 * applied and then takes one of three paths:
 *   - the reference loops (gemm_ref.c), when the table has no micro-kernel;
 *   - small M (a decoder step: a few rows times a weight matrix): B is
 *     streamed as stored, never packed, since each of its entries is used
 *     only M times;
 *   - otherwise the blocked algorithm of Goto and van de Geijn: blocks of
 *     op(A) [MC, KC] and panels of op(B) [KC, NC] are packed so that the
 *     register-blocked micro-kernel of the table reads both sequentially,
 *     from L1 (an MR x KC strip of A) and L2 (B's panel).
 * The two vector paths take the same steps for every entry of C (the
 * sequence of kern_impl.h, same KC), so a row of C has the same bits
 * whatever the number of rows, its place among them and the threads.
 * In bf16 precision (kernels.h), calls of KERN_BF16_MIN_M rows or more
 * take gemm_bf16.c's blocked path instead.
 */
#include <string.h>

#include "kern_impl.h"

/* Below about this many multiply-adds a second thread costs more than it
 * saves. */
#define THREAD_WORK (1L << 17)

/* The largest register block (mr or nr) of any table, and tile. */
#define MAX_REG 32
#define MAX_TILE (MAX_REG * MAX_REG)

/*
 * Packs x [k, n], stored row by row (row stride ld) into strips of w
 * columns, each k rows of w, zero-padded to whole strips.  Row by row: each
 * row is read once, sequentially (a strip at a time would walk k rows that
 * may be pages apart for every strip).
 */
static void pack_rows(int w, int k, int n, const float *x, long ld, float *d)
{
	int full = n / w * w;

	for (int p = 0; p < k; p++) {
		const float *r = x + (long)p * ld;
		float *o = d + (size_t)p * w;
		for (int j = 0; j < full; j += w, o += (size_t)w * k)
			memcpy(o, r + j, sizeof(float) * w);
		if (full < n) {
			int c = 0;
			for (; c < n - full; c++)
				o[c] = r[full + c];
			for (; c < w; c++)
				o[c] = 0;
		}
	}
}

/*
 * Packs x [k, n], stored transposed (x [n, k], row stride ld), the same
 * way: for each strip, w rows of x read side by side, 8 x 8 blocks through
 * the table's transpose where it has one.
 */
static void pack_cols(gemm_t8_fn t8, int w, int k, int n, const float *x,
		      long ld, float *d)
{
	float tmp[64] __attribute__((aligned(32)));

	for (int j0 = 0; j0 < n; j0 += w, d += (size_t)w * k) {
		int cols = n - j0 < w ? n - j0 : w, p = 0;
		const float *r[MAX_REG + 8];
		for (int c = 0; c < w + 8; c++)
			r[c] = x + (long)(j0 + (c < cols ? c : 0)) * ld;
		for (; t8 && p + 8 <= k; p += 8) {
			for (int c0 = 0; c0 < w; c0 += 8) {
				int cnt = w - c0 < 8 ? w - c0 : 8;
				float *o = d + (size_t)p * w + c0;
				/* more rows than the hardware prefetcher
				 * follows: fetch each a few lines ahead */
				for (int i = 0; i < 8; i++)
					__builtin_prefetch(r[c0 + i] + p + 64);
				if (cnt == 8 && cols == w) {
					t8(r + c0, p, o, w);
					continue;
				}
				t8(r + c0, p, tmp, 8);
				if (cols == w) {
					for (int q = 0; q < 8; q++)
						memcpy(o + q * w, tmp + q * 8,
						       sizeof(float) * cnt);
					continue;
				}
				for (int q = 0; q < 8; q++)
					for (int c = 0; c < cnt; c++)
						o[q * w + c] = c0 + c < cols ?
							       tmp[q * 8 + c] : 0;
			}
		}
		for (; p < k; p++) {
			float *o = d + (size_t)p * w;
			int c = 0;
			for (; c < cols; c++)
				o[c] = r[c][p];
			for (; c < w; c++)
				o[c] = 0;
		}
	}
}

/* Ap: strips of mr rows of op(A) [m, k], each k columns of mr. */
static void pack_a(const struct gemm_ukr *u, int ta, int m, int k,
		   const float *A, long lda, float *Ap)
{
	if (ta)
		pack_rows(u->mr, k, m, A, lda, Ap);
	else
		pack_cols(u->t8, u->mr, k, m, A, lda, Ap);
}

/* Bp: strips of nr columns of op(B) [k, n], each k rows of nr. */
static void pack_b(const struct gemm_ukr *u, int tb, int k, int n,
		   const float *B, long ldb, float *Bp)
{
	if (tb)
		pack_cols(u->t8, u->nr, k, n, B, ldb, Bp);
	else
		pack_rows(u->nr, k, n, B, ldb, Bp);
}

/* Fetches into L2 the floats [p, p + n) below end, a line at a time;
 * returns where it stopped. */
static const float *fetch_l2(const float *p, size_t n, const float *end)
{
	size_t len = (size_t)(end - p) < n ? (size_t)(end - p) : n;

	for (size_t q = 0; q < len; q += 16)
		__builtin_prefetch(p + q, 0, 2);
	return p + len;
}

/*
 * C [m, n] = fma(alpha, Ap Bp, C) over packed panels of k: a strip of mr
 * rows of A stays in L1 while the strips of B (in L2) stream past it.
 * A's block is in L3: each tile fetches a part of the next strip into L2,
 * which its first tile would otherwise wait for.
 */
static void macro_kernel(const struct gemm_ukr *u, int m, int n, int k,
			 float alpha, const float *Ap, const float *Bp,
			 float *C, long ldc)
{
	int mr = u->mr, nr = u->nr;
	float tile[MAX_TILE] __attribute__((aligned(64)));
	int tiles = (n + nr - 1) / nr;
	size_t part = ((size_t)mr * k / tiles + 16) / 16 * 16;

	for (int i = 0; i < m; i += mr) {
		const float *a = Ap + (size_t)i * k;
		const float *next = a + (size_t)mr * k;
		const float *end = i + mr < m ? next + (size_t)mr * k : next;
		int rows = m - i < mr ? m - i : mr;
		for (int j = 0; j < n; j += nr) {
			const float *b = Bp + (size_t)j * k;
			int cols = n - j < nr ? n - j : nr;
			float *c = C + (long)i * ldc + j;
			next = fetch_l2(next, part, end);
			if (rows == mr && cols == nr) {
				u->kernel(k, alpha, a, b, c, ldc);
				continue;
			}
			/* An edge tile: the part of C that exists copied
			 * into a whole one and back, so that its entries
			 * take the same steps as any other. */
			for (int r = 0; r < rows; r++)
				memcpy(tile + r * nr, c + (long)r * ldc,
				       sizeof(float) * cols);
			u->kernel(k, alpha, a, b, tile, nr);
			for (int r = 0; r < rows; r++)
				memcpy(c + (long)r * ldc, tile + r * nr,
				       sizeof(float) * cols);
		}
	}
}

/*
 * Blocks of mc rows of op(A) by kc are packed once (into L3) and kept
 * while panels of op(B), kc by nc, are packed in turn (into L2) and
 * multiplied.  With a long kc (fewer passes over C, the only data that
 * comes from memory), A's strip of mr x kc fits L1 where B's of kc x nr
 * would not, hence this order (B's panels are packed M / mc times).
 */
static void gemm_blocked(const struct gemm_ukr *u, int ta, int tb, int M,
			 int N, int K, float alpha, const float *A, long lda,
			 const float *B, long ldb, float *C, long ldc)
{
	int mcb = M < u->mc ? M : u->mc;
	int mcr = (mcb + u->mr - 1) / u->mr * u->mr;    /* packed, padded */
	float *Ap = kern_scratch(0, sizeof(float) * mcr * u->kc);
	float *Bp = kern_scratch(1, sizeof(float) * u->kc * u->nc);

	if (!Ap || !Bp) {
		sgemm_ref_block(ta, tb, M, N, K, alpha, A, lda, B, ldb, C, ldc);
		return;
	}
	for (int ic = 0; ic < M; ic += mcb) {
		int mc = M - ic < mcb ? M - ic : mcb;
		for (int pc = 0; pc < K; pc += u->kc) {
			int kc = K - pc < u->kc ? K - pc : u->kc;
			pack_a(u, ta, mc, kc, gemm_at_a(ta, A, lda, ic, pc),
			       lda, Ap);
			for (int jc = 0; jc < N; jc += u->nc) {
				int nc = N - jc < u->nc ? N - jc : u->nc;
				pack_b(u, tb, kc, nc,
				       gemm_at_b(tb, B, ldb, pc, jc), ldb, Bp);
				macro_kernel(u, mc, nc, kc, alpha, Ap, Bp,
					     C + (long)ic * ldc + jc, ldc);
			}
		}
	}
}

/*
 * The small-M path, by blocks of kc as the blocked one, through kernels
 * that vectorise along the wide side, never along k: with B stored [K, N],
 * across j (rows of B scaled and added); with B stored [N, K] and up to
 * COLS_M rows, across j too (blocks of B's rows transposed in registers);
 * beyond, across i, from op(A) transposed (copied when A is stored [M, K]:
 * it is small), with entries of B's rows broadcast, each row of B read
 * once per GEMM_TL rows of C.
 */
#define COLS_M GEMM_CM

static int gemm_small(const struct gemm_ukr *u, int ta, int tb, int M,
		      int N, int K, float alpha, const float *A, long lda,
		      const float *B, long ldb, float *C, long ldc)
{
	int across_j = !tb || M <= COLS_M;
	float *t = kern_scratch(2, sizeof(float) * (!tb ? M * GEMM_NB :
				across_j ? (GEMM_CM + 8) * u->kc : M * u->kc));
	const float *x[GEMM_TR];

	if (!t)
		return -1;
	for (int pc = 0; pc < K; pc += u->kc) {
		int kc = K - pc < u->kc ? K - pc : u->kc;
		if (across_j) {
			(tb ? u->cols : u->rows)(M, N, kc, alpha,
				gemm_at_a(ta, A, lda, 0, pc), ta ? 1 : lda,
				ta ? lda : 1, gemm_at_b(tb, B, ldb, pc, 0),
				ldb, C, ldc, t);
			continue;
		}
		const float *y = A + (long)pc * lda;
		long ys = lda;
		if (!ta) {
			for (int i = 0; i < M; i++)
				for (int k = 0; k < kc; k++)
					t[(size_t)k * M + i] = A[(long)i * lda + pc + k];
			y = t;
			ys = M;
		}
		for (int j0 = 0; j0 < N; j0 += GEMM_TR) {
			int nx = N - j0 < GEMM_TR ? N - j0 : GEMM_TR;
			for (int r = 0; r < GEMM_TR; r++)
				x[r] = B + (long)(j0 + (r < nx ? r : 0)) * ldb + pc;
			for (int i0 = 0; i0 < M; i0 += GEMM_TL) {
				int ny = M - i0 < GEMM_TL ? M - i0 : GEMM_TL;
				u->tile(kc, alpha, x, nx, y + i0, ys, ny,
					C + (long)i0 * ldc + j0, ldc);
			}
		}
	}
	return 0;
}

/*
 * Whether a block of m rows of C takes the small-M path: up to the
 * table's small_m rows with B stored [N, K] (a model's weights, streamed
 * as stored by the tile kernel); with B stored [K, N], whose kernel
 * passes over a row of acc per row of A and four of B, up to 8.  Beyond,
 * packing B costs less than it saves (B's entries are used m times).
 */
#define SMALL_M_ROWS 8

static int small_path(const struct gemm_ukr *u, int tb, int m)
{
	return m <= (tb ? u->small_m : SMALL_M_ROWS);
}

struct gemm_job {
	const struct kern_ops *ops;
	const struct gemm_bf16 *bf16;   /* bf16 precision, else NULL */
	int ta, tb, M, N, K;
	float alpha, beta;
	const float *A, *B;
	float *C;
	long lda, ldb, ldc;
	int split_n;            /* strips along N, else along M */
	int step;               /* rows or columns of a strip */
};

static void scale_c(float *C, long ldc, int m, int n, float beta)
{
	if (beta == 1)
		return;
	for (int i = 0; i < m; i++) {
		float *c = C + (long)i * ldc;
		if (beta == 0)
			memset(c, 0, sizeof(float) * n);
		else
			for (int j = 0; j < n; j++)
				c[j] *= beta;
	}
}

static void gemm_strip(const struct gemm_job *g, int i0, int m, int j0, int n)
{
	const struct gemm_ukr *u = g->ops->gemm;
	const float *A = gemm_at_a(g->ta, g->A, g->lda, i0, 0);
	const float *B = gemm_at_b(g->tb, g->B, g->ldb, 0, j0);
	float *C = g->C + (long)i0 * g->ldc + j0;

	scale_c(C, g->ldc, m, n, g->beta);
	if (g->K == 0 || g->alpha == 0)
		return;
	if (g->bf16 && gemm_bf16_blocked(g->bf16, g->ta, g->tb, m, n, g->K,
					 g->alpha, A, g->lda, B, g->ldb, C,
					 g->ldc) == 0)
		return;
	if (u && small_path(u, g->tb, m) &&
	    gemm_small(u, g->ta, g->tb, m, n, g->K, g->alpha, A, g->lda, B,
		       g->ldb, C, g->ldc) == 0)
		return;
	if (u)
		gemm_blocked(u, g->ta, g->tb, m, n, g->K, g->alpha, A,
			     g->lda, B, g->ldb, C, g->ldc);
	else
		sgemm_ref_block(g->ta, g->tb, m, n, g->K, g->alpha, A, g->lda,
				B, g->ldb, C, g->ldc);
}

static void gemm_task(void *ctx, int64_t lo, int64_t hi)
{
	const struct gemm_job *g = ctx;

	for (int64_t p = lo; p < hi; p++) {
		int s0 = (int)p * g->step;
		int dim = g->split_n ? g->N : g->M;
		int len = dim - s0 < g->step ? dim - s0 : g->step;
		if (g->split_n)
			gemm_strip(g, 0, g->M, s0, len);
		else
			gemm_strip(g, s0, len, 0, g->N);
	}
}

void sgemm(int ta, int tb, int M, int N, int K, float alpha,
	   const float *A, int lda, const float *B, int ldb,
	   float beta, float *C, int ldc)
{
	if (M <= 0 || N <= 0)
		return;
	if (K < 0)
		K = 0;
	const struct kern_ops *ops = kern_ops();
	const struct gemm_bf16 *bf = M >= KERN_BF16_MIN_M ? kern_gemm_bf16() :
				     NULL;
	struct gemm_job g = { ops, bf, ta, tb, M, N, K, alpha, beta, A, B, C,
			      lda, ldb, ldc, 0, 0 };

	/* Strips of whole register blocks, one per thread, along the longer
	 * side (small M: always along N). */
	double work = (double)M * N * (K > 0 ? K : 1);
	int parts = kern_threads();
	if (work / THREAD_WORK < parts)
		parts = work < THREAD_WORK ? 1 : (int)(work / THREAD_WORK);
	int mr = bf ? bf->mr : ops->gemm ? ops->gemm->mr : 1;
	int nr = bf ? bf->nr : ops->gemm ? ops->gemm->nr : 16;
	g.split_n = (!bf && ops->gemm && small_path(ops->gemm, tb, M)) ||
		    N >= M;
	int dim = g.split_n ? N : M, unit = g.split_n ? nr : mr;
	int units = (dim + unit - 1) / unit;
	if (parts > units)
		parts = units;
	g.step = (units + parts - 1) / parts * unit;
	parts = (dim + g.step - 1) / g.step;
	kern_parallel_for(parts, 1, gemm_task, &g);
}
