/*
 * attn_step.c: attention of single query rows (attn_step.h): rows split
 * over the threads, each by the kernel of the table in force (kern_impl.h),
 * in groups of at most ATTN_STEP_HEADS heads; the portable kernels.
 */
#include <math.h>
#include <string.h>

#include "attn_step.h"
#include "base/f16.h"
#include "kern_impl.h"

/* Below about this many multiply-adds a second thread costs more than it
 * saves. */
#define THREAD_WORK (1L << 16)

/* Element i of keys or values stored as f32, or as f16 where f16. */
static inline float kv_at(const void *p, long i, int f16)
{
	return f16 ? f16_to_f32(((const uint16_t *)p)[i])
		   : ((const float *)p)[i];
}

void attn_step_row_ref(float *out, float *w, long wn, const float *q,
		       const void *k, long ks, const void *v, long vs, int n,
		       int H, int dk, float scale, int f16)
{
	float s[ATTN_STEP_HEADS][ATTN_STEP_CHUNK];
	float mx[ATTN_STEP_HEADS], sum[ATTN_STEP_HEADS];
	int d = H * dk;

	memset(out, 0, sizeof(float) * d);
	for (int h = 0; h < H; h++) {
		mx[h] = -INFINITY;
		sum[h] = 0;
	}
	for (int j0 = 0; j0 < n; j0 += ATTN_STEP_CHUNK) {
		int m = n - j0 < ATTN_STEP_CHUNK ? n - j0 : ATTN_STEP_CHUNK;
		for (int j = 0; j < m; j++) {
			long kj = (j0 + j) * ks;
			for (int h = 0; h < H; h++) {
				float dot = 0;
				for (int c = h * dk; c < (h + 1) * dk; c++)
					dot += q[c] * kv_at(k, kj + c, f16);
				s[h][j] = dot * scale;
			}
		}
		for (int h = 0; h < H; h++) {
			float cmx = -INFINITY;
			if (w)
				memcpy(w + h * wn + j0, s[h], sizeof(float) * m);
			for (int j = 0; j < m; j++)
				cmx = s[h][j] > cmx ? s[h][j] : cmx;
			if (cmx > mx[h]) {
				float r = expf(mx[h] - cmx);
				sum[h] *= r;
				for (int c = h * dk; c < (h + 1) * dk; c++)
					out[c] *= r;
				mx[h] = cmx;
			}
			for (int j = 0; j < m; j++)
				sum[h] += s[h][j] = expf(s[h][j] - mx[h]);
		}
		for (int j = 0; j < m; j++) {
			long vj = (j0 + j) * vs;
			for (int c = 0; c < d; c++)
				out[c] += s[c / dk][j] * kv_at(v, vj + c, f16);
		}
	}
	for (int h = 0; h < H && n > 0; h++) {
		for (int c = h * dk; c < (h + 1) * dk; c++)
			out[c] /= sum[h];
		for (int j = 0; w && j < n; j++)
			w[h * wn + j] = expf(w[h * wn + j] - mx[h]) / sum[h];
	}
}

struct job {
	const struct attn_step *a;
	const struct kern_ops *ops;
};

/* Rows lo .. hi in Marian's arithmetic: 0, or -1 when the thread's
 * scratch failed (then attn's own kernel). */
static int marian_rows(const struct job *jb, int64_t lo, int64_t hi)
{
	const struct attn_step *a = jb->a;
	int nmax = 1;

	for (int64_t i = lo; i < hi; i++)
		nmax = a->n[i] > nmax ? a->n[i] : nmax;
	float *s = kern_scratch(2, sizeof(float) * ATTN_MARIAN_SCRATCH(nmax));
	if (!s)
		return -1;
	for (int64_t i = lo; i < hi; i++) {
		int n = a->n[i] > 0 ? a->n[i] : 0;
		float *w = a->weights ? a->weights + i * a->ws : NULL;

		jb->ops->attn_marian_row(a->out + i * a->os, w, a->wn,
					 a->q + i * a->qs, a->k[i], a->ks,
					 a->v[i], a->vs, n, a->H, a->dk,
					 a->scale, a->f16,
					 marian_score_form(1, n, a->dk, 0), s);
		for (int h = 0; w && h < a->H; h++)
			memset(w + (long)h * a->wn + n, 0,
			       sizeof(float) * (a->wn - n));
	}
	return 0;
}

static void rows_task(void *ctx, int64_t lo, int64_t hi)
{
	const struct job *jb = ctx;
	const struct attn_step *a = jb->a;
	long es = a->f16 ? 2 : 4;	/* bytes of a key's element */

	/* keys and values in f16 are not Marian's numbers: attn's own */
	if (a->marian && !a->f16 && marian_rows(jb, lo, hi) == 0)
		return;
	for (int64_t i = lo; i < hi; i++) {
		int n = a->n[i] > 0 ? a->n[i] : 0;
		for (int h0 = 0; h0 < a->H; h0 += ATTN_STEP_HEADS) {
			int H = a->H - h0 < ATTN_STEP_HEADS ? a->H - h0 :
				ATTN_STEP_HEADS;
			long c0 = (long)h0 * a->dk;
			float *w = a->weights ? a->weights + i * a->ws +
				   h0 * (long)a->wn : NULL;
			jb->ops->attn_step_row(a->out + i * a->os + c0, w,
					       a->wn, a->q + i * a->qs + c0,
					       (const char *)a->k[i] + c0 * es,
					       a->ks,
					       (const char *)a->v[i] + c0 * es,
					       a->vs, n, H, a->dk, a->scale,
					       a->f16);
			for (int h = 0; w && h < H; h++)
				memset(w + (long)h * a->wn + n, 0,
				       sizeof(float) * (a->wn - n));
		}
	}
}

void attn_step(const struct attn_step *a)
{
	struct job jb = { a, kern_ops() };
	long work = 0;

	for (int i = 0; i < a->rows; i++)
		work += (long)a->n[i] * a->H * a->dk * 2;
	kern_parallel_for(a->rows, work > THREAD_WORK ? 1 : a->rows, rows_task,
			  &jb);
}

void kv_to_f16_ref(uint16_t *dst, const float *src, size_t n)
{
	for (size_t i = 0; i < n; i++)
		dst[i] = f32_to_f16(src[i]);
}

void kv_to_f16(uint16_t *dst, const float *src, size_t n)
{
	kern_ops()->kv_to_f16(dst, src, n);
}
