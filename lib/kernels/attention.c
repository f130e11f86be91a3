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

/* n rows of dk floats at x, row stride rs, for reading (w 0) or writing
 * (w 1).  noipa: a function of prefetches only looks pure to gcc, which
 * then drops its calls (clang has no noipa, and keeps them). */
#if __has_attribute(noipa)
__attribute__((noipa))
#endif
static void prefetch_rows(const float *x, long rs, int n, int dk, int w)
{
	for (int i = 0; i < n; i++, x += rs)
		for (int c = 0; c < dk; c += 16) {
			if (w)
				__builtin_prefetch(x + c, 1, 2);
			else
				__builtin_prefetch(x + c, 0, 2);
		}
}

/*
 * The rows of item i (batch item, head) into L2 while the item before it
 * is computed: a head's rows are dk floats every H dk, which the
 * hardware's prefetchers do not foresee, and the first touch of each line
 * otherwise stalls the kernel (a tenth of its time at T = S = 32).  For
 * the backward pass (j->dout set), its inputs and d-buffers too.
 */
static void prefetch_item(const struct attn_job *j, int64_t i)
{
	const struct attn_args *a = j->a;
	int b = (int)(i / a->H), h = (int)(i % a->H), S = a->S, n = a->dk;
	long qo = b * a->q_bs + h * n, ko = b * a->kv_bs + h * n;
	long oo = b * a->o_bs + h * n;

	if (a->klen && a->klen[b] < S)
		S = a->klen[b] > 0 ? a->klen[b] : 0;
	prefetch_rows(a->q + qo, a->q_rs, a->T, n, 0);
	prefetch_rows(a->k + ko, a->kv_rs, S, n, 0);
	prefetch_rows(a->v + ko, a->kv_rs, S, n, 0);
	prefetch_rows(a->out + oo, a->o_rs, a->T, n, !j->dout);
	if (!j->dout)
		return;
	prefetch_rows(j->dout + oo, a->o_rs, a->T, n, 0);
	if (j->dq)
		prefetch_rows(j->dq + qo, a->q_rs, a->T, n, 1);
	if (j->dk)
		prefetch_rows(j->dk + ko, a->kv_rs, S, n, 1);
	if (j->dv)
		prefetch_rows(j->dv + ko, a->kv_rs, S, n, 1);
}

static void forward_task(void *ctx, int64_t lo, int64_t hi)
{
	const struct attn_job *j = ctx;

	for (int64_t i = lo; i < hi; i++) {
		if (i + 1 < hi)
			prefetch_item(j, i + 1);
		j->ops->attn_head_forward(j->a, (int)(i / j->a->H),
					  (int)(i % j->a->H));
	}
}

void attention_forward(const struct attn_args *a)
{
	struct attn_job j = { .ops = kern_ops(), .a = a };

	if (a->B <= 0 || a->H <= 0 || a->T <= 0)
		return;
	if (a->marian && a->act == ATTN_SOFTMAX && !a->no_norm && !a->mask &&
	    a->dropout == 0 && attention_marian_forward(a) == 0)
		return;
	kern_parallel_for((int64_t)a->B * a->H, attn_grain(a), forward_task,
			  &j);
}

static void backward_task(void *ctx, int64_t lo, int64_t hi)
{
	const struct attn_job *j = ctx;
	const struct attn_args *a = j->a;

	for (int64_t i = lo; i < hi; i++) {
		if (!j->per_head && i + 1 < hi)
			prefetch_item(j, i + 1);
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
