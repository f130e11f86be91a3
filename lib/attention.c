/*
 * attention.c: the public scaled dot-product attention, its (batch item,
 * head) pairs spread over the thread pool; the table's kernels do one pair.
 */
#include "kern_impl.h"

struct attn_job {
	const struct kern_ops *ops;
	const struct attn_args *a;
	const float *dout;
	float *dq, *dk, *dv;
	int per_head;           /* items are heads, each looping over b */
};

/* Items of at least this many multiply-adds go to separate threads. */
static int64_t attn_grain(const struct attn_args *a)
{
	double work = (double)a->T * a->S * a->dk + 1;
	return work >= 65536 ? 1 : (int64_t)(65536 / work);
}

static void forward_task(void *ctx, int64_t lo, int64_t hi)
{
	const struct attn_job *j = ctx;

	for (int64_t i = lo; i < hi; i++)
		j->ops->attn_head_forward(j->a, (int)(i / j->a->H),
					  (int)(i % j->a->H));
}

void attention_forward(const struct attn_args *a)
{
	struct attn_job j = { .ops = kern_ops(), .a = a };

	if (a->B <= 0 || a->H <= 0 || a->T <= 0)
		return;
	kern_parallel_for((int64_t)a->B * a->H, attn_grain(a), forward_task,
			  &j);
}

static void backward_task(void *ctx, int64_t lo, int64_t hi)
{
	const struct attn_job *j = ctx;
	const struct attn_args *a = j->a;

	for (int64_t i = lo; i < hi; i++) {
		int b0 = j->per_head ? 0 : (int)(i / a->H);
		int b1 = j->per_head ? a->B : b0 + 1;
		for (int b = b0; b < b1; b++)
			j->ops->attn_head_backward(a, b, (int)(i % a->H),
						   j->dout, j->dq, j->dk,
						   j->dv);
	}
}

/* Heads write disjoint columns of dq, dk, dv; batch items disjoint rows,
 * unless a stride of 0 shares rows between them (keys broadcast over the
 * batch): then a thread takes a head over the whole batch. */
void attention_backward(const struct attn_args *a, const float *dout,
			float *dq, float *dk, float *dv)
{
	struct attn_job j = { kern_ops(), a, dout, dq, dk, dv,
			      a->B > 1 && (a->kv_bs == 0 || a->q_bs == 0) };

	if (a->B <= 0 || a->H <= 0 || a->T <= 0)
		return;
	int64_t items = j.per_head ? a->H : (int64_t)a->B * a->H;
	kern_parallel_for(items, attn_grain(a), backward_task, &j);
}

int attn_dropout_keep(const struct attn_args *a, int b, int h, int t, int j)
{
	if (!(a->dropout > 0))
		return 1;
	return (int32_t)(attn_drop_hash(attn_drop_row(a, b, h, t), j) >> 8) >=
	       attn_drop_cut(a);
}
