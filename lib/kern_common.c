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

static void colsum_task(void *ctx, int64_t lo, int64_t hi)
{
	struct colsum_job *j = ctx;

	for (int r = 0; r < j->rows; r++) {
		const float *dy = j->dy + (size_t)r * j->n;
		if (j->db)
			for (int64_t i = lo; i < hi; i++)
				j->db[i] += dy[i];
		if (j->dg) {
			const float *x = j->x + (size_t)r * j->n;
			float m = j->mean[r], s = j->rstd[r];
			for (int64_t i = lo; i < hi; i++)
				j->dg[i] += dy[i] * (x[i] - m) * s;
		}
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
