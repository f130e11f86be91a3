/*
 * search_deal.c: the search's batches and sentences dealt out to the
 * kernels' threads (search_impl.h's struct deal).  Given several batches
 * (a window's), the threads take them whole, one at a time, the last
 * (the longest, in a window sorted by length) first: each thread decodes
 * full batches, and the threads meet once per call, not once per batch,
 * a thread left idle at the end by the shortest batch at most.  Given
 * one, its sentences are dealt: sentence i to part i mod parts, so that
 * a batch sorted by length gives each part its share of the long ones.
 * Inside a part the kernels run serially (the pool is busy: kernels.h),
 * so each thread decodes its own rows rather than a slice of every
 * product, which on a few dozen rows costs more in waking and waiting
 * than it gains.  A sentence's result depends on its frame alone, so the
 * results are those of one search.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/errmsg.h"
#include "kernels/kernels.h"
#include "search_impl.h"

static void deal_task(void *ctx, int64_t lo, int64_t hi)
{
	struct deal *dl = ctx;

	for (int64_t x = lo; x < hi; x++) {
		int p = dl->parts - 1 - (int)x;
		int a = dl->start[p], n = dl->start[p + 1] - a;

		if (dl->run(dl->args, dl->f + a, n, dl->out + a * dl->size) < 0) {
			dl->failed[p] = 1;
			snprintf(dl->msg[p], sizeof dl->msg[p], "%s", err_msg());
		}
	}
}

/* Runs dl's parts on the threads; on a failure frees what the others
 * made and sets err_msg() to the first failure's. */
static int deal_parts(struct deal *dl)
{
	int n = dl->start[dl->parts];

	dl->failed = calloc(dl->parts, sizeof *dl->failed);
	dl->msg = malloc(dl->parts * sizeof *dl->msg);
	if (!dl->failed || !dl->msg) {
		err_set("search: out of memory");
		goto fail;
	}
	kern_parallel_each(dl->parts, deal_task, dl);
	for (int p = 0; p < dl->parts; p++)
		if (dl->failed[p]) {
			err_set("%s", dl->msg[p]);
			for (int q = 0; q < dl->parts; q++)
				for (int k = dl->start[q];
				     !dl->failed[q] && k < dl->start[q + 1]; k++)
					dl->drop(dl->out + k * dl->size);
			goto fail;
		}
	free(dl->failed);
	free(dl->msg);
	return 0;
fail:
	memset(dl->out, 0, n * dl->size);
	free(dl->failed);
	free(dl->msg);
	return -1;
}

/* Frames f [n] as one batch: its sentences dealt out to the threads. */
static int deal_sentences(struct deal *dl, struct frame **f, int n,
			  void *out)
{
	int parts = kern_threads() < n ? kern_threads() : n, rc = -1;
	int *start = malloc((parts + 1) * sizeof *start);

	dl->f = malloc(n * sizeof *dl->f);
	dl->out = calloc(n, dl->size);
	if (!dl->f || !dl->out || !start) {
		err_set("search: out of memory");
		goto out;
	}
	for (int p = 0, k = 0; p < parts; p++) {
		start[p] = k;
		for (int i = p; i < n; i += parts)
			dl->f[k++] = f[i];
	}
	start[parts] = n;
	dl->start = start;
	dl->parts = parts;
	if (deal_parts(dl) < 0)
		goto out;
	for (int p = 0, k = 0; p < parts; p++)
		for (int i = p; i < n; i += parts, k++)
			memcpy((char *)out + i * dl->size, dl->out + k * dl->size,
			       dl->size);
	rc = 0;
out:
	free(dl->f);
	free(dl->out);
	free(start);
	return rc;
}

int search_deal(struct deal *dl, struct frame **f, const int *start, int nb,
		void *out)
{
	if (nb == 1 && start[1] >= 2 && kern_threads() >= 2)
		return deal_sentences(dl, f, start[1], out);
	if (nb == 1)	/* one sentence, or one thread: kernels split */
		return dl->run(dl->args, f, start[1], out);
	dl->f = f;
	dl->out = out;
	dl->start = start;
	dl->parts = nb;
	return deal_parts(dl);
}
