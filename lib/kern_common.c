/*
 * kern_common.c: kernels with one portable version (memory-bound or
 * reductions whose threading matters more than their instruction set):
 * bias and layer-norm parameter gradients, maxout, embedding.
 */
#include <string.h>

#include "kern_impl.h"

/* Column sums run over threads by columns, so that no two threads add into
 * the same gradient entry. */
struct colsum_job {
	float *dg, *db;
	const float *dy, *x, *mean, *rstd;
	int rows, n;
};

/* Columns [lo, hi) of one row, in eights that the compiler vectorises
 * (the gradients never overlap the rows). */
static void colsum_row(float *restrict db, float *restrict dg,
		       const float *restrict dy, const float *restrict x,
		       float m, float s, int64_t lo, int64_t hi)
{
	int64_t i;

	if (db) {
		for (i = lo; i + 8 <= hi; i += 8)
			for (int k = 0; k < 8; k++)
				db[i + k] += dy[i + k];
		for (; i < hi; i++)
			db[i] += dy[i];
	}
	if (dg) {
		for (i = lo; i + 8 <= hi; i += 8)
			for (int k = 0; k < 8; k++)
				dg[i + k] += dy[i + k] * (x[i + k] - m) * s;
		for (; i < hi; i++)
			dg[i] += dy[i] * (x[i] - m) * s;
	}
}

static void colsum_task(void *ctx, int64_t lo, int64_t hi)
{
	struct colsum_job *j = ctx;

	for (int r = 0; r < j->rows; r++) {
		size_t o = (size_t)r * j->n;
		colsum_row(j->db, j->dg, j->dy + o, j->dg ? j->x + o : NULL,
			   j->dg ? j->mean[r] : 0, j->dg ? j->rstd[r] : 0,
			   lo, hi);
	}
}

/* Enough columns per chunk to amortise a pass over every row. */
static int64_t col_grain(int rows)
{
	int64_t g = 16384 / (rows > 0 ? rows : 1);
	return g < 64 ? 64 : g;
}

void bias_backward(float *db, const float *dy, int rows, int n)
{
	struct colsum_job j = { .db = db, .dy = dy, .rows = rows, .n = n };
	kern_parallel_for(n, col_grain(rows), colsum_task, &j);
}

void layernorm_param_grads(float *dg, float *db, const float *dy,
			   const float *x, const float *mean, const float *rstd,
			   int rows, int n)
{
	if (!dg && !db)
		return;
	struct colsum_job j = { dg, db, dy, x, mean, rstd, rows, n };
	kern_parallel_for(n, col_grain(rows), colsum_task, &j);
}

void maxout_forward(float *y, const float *x, int rows, int l)
{
	for (size_t i = 0; i < (size_t)rows * l; i++)
		y[i] = x[2 * i] >= x[2 * i + 1] ? x[2 * i] : x[2 * i + 1];
}

void maxout_backward(float *dx, const float *dy, const float *x, int rows,
		     int l)
{
	for (size_t i = 0; i < (size_t)rows * l; i++) {
		size_t k = x[2 * i] >= x[2 * i + 1] ? 2 * i : 2 * i + 1;
		dx[k] += dy[i];
	}
}

void embedding_forward(float *out, const int32_t *ids, int n,
		       const float *table, int dim)
{
	for (int i = 0; i < n; i++)
		memcpy(out + (size_t)i * dim, table + (size_t)ids[i] * dim,
		       (size_t)dim * sizeof(float));
}

/* Serial: repeated ids add into the same row. */
void embedding_backward(float *dtable, const int32_t *ids, int n,
			const float *dout, int dim)
{
	for (int i = 0; i < n; i++) {
		float *d = dtable + (size_t)ids[i] * dim;
		const float *g = dout + (size_t)i * dim;
		for (int k = 0; k < dim; k++)
			d[k] += g[k];
	}
}
