/*
 * additive.c: the public additive attention, its sentences spread over the
 * thread pool; the table's kernels do one sentence.  The backward pass sums
 * dva, shared by all sentences, in one buffer per strip of sentences.
 */
#include <stdlib.h>
#include <string.h>

#include "kern_impl.h"

struct add_job {
	const struct kern_ops *ops;
	float *ctx, *a, *dwq, *dkeys, *dva, *dann;
	const float *aw, *dctx, *wq, *keys, *va, *ann;   /* aw: a, read */
	const int *len;
	int B, S, na, dv, step;
};

static int sentence_len(const int *len, int b, int S)
{
	if (!len || len[b] > S)
		return S;
	return len[b] > 0 ? len[b] : 0;
}

static void forward_task(void *ctx, int64_t lo, int64_t hi)
{
	const struct add_job *j = ctx;
	size_t S = j->S, na = j->na, dv = j->dv;

	for (int64_t b = lo; b < hi; b++)
		j->ops->additive_forward(j->ctx + b * dv, j->a + b * S,
					 j->wq + b * na, j->keys + b * S * na,
					 j->va, j->ann + b * S * dv,
					 sentence_len(j->len, (int)b, j->S),
					 j->S, j->na, j->dv);
}

void additive_attention_forward(float *ctx, float *a, const float *wq,
				const float *keys, const float *va,
				const float *ann, const int *len,
				int B, int S, int na, int dv)
{
	struct add_job j = { .ops = kern_ops(), .ctx = ctx, .a = a, .wq = wq,
			     .keys = keys, .va = va, .ann = ann, .len = len,
			     .B = B, .S = S, .na = na, .dv = dv };
	kern_parallel_for(B, 1, forward_task, &j);
}

/* Strip p of sentences, adding into its own dva (j->dva + p * na). */
static void backward_task(void *ctx, int64_t lo, int64_t hi)
{
	const struct add_job *j = ctx;
	size_t S = j->S, na = j->na, dv = j->dv;

	for (int64_t p = lo; p < hi; p++) {
		float *dva = j->dva ? j->dva + p * na : NULL;
		int64_t b1 = (p + 1) * j->step < j->B ? (p + 1) * j->step : j->B;
		for (int64_t b = p * j->step; b < b1; b++)
			j->ops->additive_backward(
				j->dwq ? j->dwq + b * na : NULL,
				j->dkeys ? j->dkeys + b * S * na : NULL, dva,
				j->dann ? j->dann + b * S * dv : NULL,
				j->dctx + b * dv, j->aw + b * S, j->wq + b * na,
				j->keys + b * S * na, j->va, j->ann + b * S * dv,
				sentence_len(j->len, (int)b, j->S), j->S, j->na,
				j->dv);
	}
}

void additive_attention_backward(float *dwq, float *dkeys, float *dva,
				 float *dann, const float *dctx,
				 const float *a, const float *wq,
				 const float *keys, const float *va,
				 const float *ann, const int *len,
				 int B, int S, int na, int dv)
{
	struct add_job j = { .ops = kern_ops(), .dwq = dwq, .dkeys = dkeys,
			     .dann = dann, .dctx = dctx, .aw = a, .wq = wq,
			     .keys = keys, .va = va, .ann = ann, .len = len,
			     .B = B, .S = S, .na = na, .dv = dv };
	if (B <= 0)
		return;
	int parts = kern_threads() < B ? kern_threads() : B;
	float *partial = NULL;
	if (dva && parts > 1)
		partial = calloc((size_t)parts * na, sizeof(float));
	if (!partial)
		parts = 1;
	j.dva = partial ? partial : dva;
	j.step = (B + parts - 1) / parts;
	parts = (B + j.step - 1) / j.step;
	kern_parallel_for(parts, 1, backward_task, &j);
	if (partial) {
		for (int p = 0; p < parts; p++)
			for (int i = 0; i < na; i++)
				dva[i] += partial[(size_t)p * na + i];
		free(partial);
	}
}
