/*
 * kern_common.c: kernels with one portable version (memory-bound or
 * reductions whose threading matters more than their instruction set):
 * bias and layer-norm parameter gradients, maxout, embedding.
 */
#include <string.h>

#include "kern_impl.h"
#include "vec4.h"

/* Column sums run over threads by columns, so that no two threads add into
 * the same gradient entry. */
struct colsum_job {
	float *dg, *db;
	const float *dy, *x, *mean, *rstd;
	int rows, n;
};

/* Columns [lo, hi) of one row added into db (dy) and dg (dy (x - m) s),
 * in vectors of four. */
static void colsum_row(float *db, float *dg, const float *dy, const float *x,
		       float m, float s, int64_t lo, int64_t hi)
{
	int64_t i, vhi = lo + (hi - lo) / 4 * 4;

	if (db) {
		for (i = lo; i < vhi; i += 4)
			st4(db + i, ld4(db + i) + ld4(dy + i));
		for (; i < hi; i++)
			db[i] += dy[i];
	}
	if (dg) {
		for (i = lo; i < vhi; i += 4)
			st4(dg + i, ld4(dg + i) +
				    ld4(dy + i) * (ld4(x + i) - m) * s);
		for (; i < hi; i++)
			dg[i] += dy[i] * (x[i] - m) * s;
	}
}

/*
 * The same for rows r .. r + 3, in the compiler's portable vectors of
 * four: each sum loaded and stored once for the four rows, which it adds
 * in order, so that every column is still summed row by row.
 */
static void colsum_4rows(const struct colsum_job *j, int r, int64_t lo,
			 int64_t hi)
{
	size_t n = j->n;
	const float *y0 = j->dy + r * n, *y1 = y0 + n, *y2 = y1 + n;
	const float *y3 = y2 + n;
	int64_t i, vhi = lo + (hi - lo) / 4 * 4;

	/* short rows: the next four asked for now (four streams of a few
	 * lines each are more than the hardware's prefetch follows) */
	for (int k = 4; k < 8 && r + k < j->rows && n < 1024; k++)
		for (i = lo; i < hi; i += 16) {
			__builtin_prefetch(j->dy + (r + k) * n + i);
			if (j->dg)
				__builtin_prefetch(j->x + (r + k) * n + i);
		}
	if (j->db)
		for (i = lo; i < vhi; i += 4)
			st4(j->db + i, ld4(j->db + i) + ld4(y0 + i) +
				       ld4(y1 + i) + ld4(y2 + i) + ld4(y3 + i));
	if (j->dg) {
		const float *x0 = j->x + r * n, *x1 = x0 + n, *x2 = x1 + n;
		const float *x3 = x2 + n;
		float m0 = j->mean[r], m1 = j->mean[r + 1];
		float m2 = j->mean[r + 2], m3 = j->mean[r + 3];
		float s0 = j->rstd[r], s1 = j->rstd[r + 1];
		float s2 = j->rstd[r + 2], s3 = j->rstd[r + 3];

		for (i = lo; i < vhi; i += 4) {
			f32x4 g = ld4(j->dg + i);

			g += ld4(y0 + i) * (ld4(x0 + i) - m0) * s0;
			g += ld4(y1 + i) * (ld4(x1 + i) - m1) * s1;
			g += ld4(y2 + i) * (ld4(x2 + i) - m2) * s2;
			g += ld4(y3 + i) * (ld4(x3 + i) - m3) * s3;
			st4(j->dg + i, g);
		}
	}
	for (int k = 0; k < 4; k++)
		colsum_row(j->db, j->dg, j->dy + (r + k) * n,
			   j->dg ? j->x + (r + k) * n : NULL,
			   j->dg ? j->mean[r + k] : 0,
			   j->dg ? j->rstd[r + k] : 0, vhi, hi);
}

static void colsum_task(void *ctx, int64_t lo, int64_t hi)
{
	struct colsum_job *j = ctx;
	int r;

	for (r = 0; r + 4 <= j->rows; r += 4)
		colsum_4rows(j, r, lo, hi);
	for (; r < j->rows; r++) {
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

/* Serial: repeated ids add into the same row.  In vectors of four (the
 * rows never overlap the table). */
void embedding_backward(float *dtable, const int32_t *ids, int n,
			const float *dout, int dim)
{
	for (int i = 0; i < n; i++) {
		float *d = dtable + (size_t)ids[i] * dim;
		const float *g = dout + (size_t)i * dim;
		int k;

		for (k = 0; k + 4 <= dim; k += 4)
			st4(d + k, ld4(d + k) + ld4(g + k));
		for (; k < dim; k++)
			d[k] += g[k];
	}
}
