/*
 * test_filter.c: how the model programs cut their input into windows and
 * batches (cmd/common/filter.c): every frame goes to exactly one batch and
 * comes back once, in input order, after its window's batches; a batch
 * holds frames of neighbouring lengths within the token budget; and a
 * window's batches come sorted by length, so that a stage can run the
 * longest first and allocate its workspace once at its largest.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "common/filter.h"
#include "run_suite.h"
#include "tsrtest.h"

enum { MAXF = 200 };

/* What the callbacks saw. */
static struct seen {
	int nbatch, nemit, nflush;
	int batch_max[MAXF];		/* longest source of each batch */
	int batch_window[MAXF];		/* the window it belonged to */
	int batch_size[MAXF];		/* its frames */
	int processed[MAXF];		/* times each frame was in a batch */
	int emitted[MAXF];		/* emit order: frame numbers */
	int batch;			/* the filter's batch size */
	int pad_cut;			/* its pad_cut */
} seen;

static int length(const struct frame *f)
{
	const struct tensor *t = frame_find(f, "src.ids");

	ck_assert_ptr_nonnull(t);
	return (int)t->dim[0];
}

/* One batch, as the window's callee sees it. */
static void batch_seen(struct frame **f, const int *slot, int n, int least)
{
	int most = 0, prev = least, sum = 0;

	ck_assert_int_ge(n, 1);
	ck_assert_int_le(n, seen.batch);
	for (int i = 0; i < n; i++) {
		int len = length(f[i]);
		ck_assert_int_lt(f[i]->number, MAXF);
		seen.processed[f[i]->number]++;
		/* within a batch, and from batch to batch, shortest first
		 * (the window's sort) */
		ck_assert_int_ge(len, prev);
		prev = len;
		most = len > most ? len : most;
		sum += len;
		ck_assert_int_ge(slot[i], 0);
		ck_assert_int_eq(slot[i], f[i]->number %
					 filter_window(seen.batch));
	}
	/* the budget: a batch of more than one pads to FILTER_TOKENS x
	 * batch tokens at most */
	if (n > 1)
		ck_assert_int_le(n * most, FILTER_TOKENS * seen.batch);
	/* and with pad_cut, padded tokens FILTER_PAD times its tokens, and
	 * FILTER_STAGE_TOKENS at most */
	if (n > 1 && seen.pad_cut) {
		ck_assert((double)n * most <= FILTER_PAD * sum);
		ck_assert_int_le(n * most, FILTER_STAGE_TOKENS);
	}
	seen.batch_max[seen.nbatch] = most;
	seen.batch_size[seen.nbatch] = n;
	seen.batch_window[seen.nbatch] = seen.nflush;
	seen.nbatch++;
}

static int process(void *ctx, struct frame **f, const int *slot,
		   const int *start, int nb)
{
	ck_assert_int_ge(nb, 1);
	ck_assert_int_eq(start[0], 0);
	for (int b = 0; b < nb; b++) {
		int n = start[b + 1] - start[b];

		batch_seen(f + start[b], slot + start[b], n,
			   b ? length(f[start[b] - 1]) : 0);
	}
	return 0;
}

static int emit(void *ctx, struct frame *f, int slot)
{
	seen.emitted[seen.nemit++] = (int)f->number;
	return 0;
}

static int flush(void *ctx)
{
	seen.nflush++;
	return 0;
}

/* n frames, frame i with a source of len(i) units, through filter_run
 * (with pad_cut). */
static void run_cut(int n, int batch, int (*len)(int), int pad_cut)
{
	struct tt_stream s;
	struct tsr_reader *r;
	struct filter fl = { batch, process, emit, flush, NULL, pad_cut };

	memset(&seen, 0, sizeof seen);
	seen.batch = batch;
	seen.pad_cut = pad_cut;
	tt_stream_open(&s, 0);
	for (int i = 0; i < n; i++) {
		struct frame f = { 0 };
		struct tensor t;
		uint64_t dim = (uint64_t)len(i);
		int32_t *ids = calloc(dim, sizeof *ids);

		ids[dim - 1] = 2;	/* </s> */
		f.number = (uint64_t)i;
		ck_assert_int_eq(tensor_init_copy(&t, "src.ids", DT_I32, 1,
						  &dim, ids), 0);
		ck_assert_ptr_nonnull(frame_put(&f, &t));
		ck_assert_int_eq(tsr_write_frame(s.w, &f), 0);
		frame_free(&f);
		free(ids);
	}
	r = tt_stream_reader(&s, "frames");
	ck_assert_int_eq(filter_run(&fl, r), 0);
	tsr_reader_free(r);
}

static void run(int n, int batch, int (*len)(int))
{
	run_cut(n, batch, len, 0);
}

/* Lengths in no order: 1 to 40, a frame's a hash of its number. */
static int scattered(int i)
{
	return 1 + (int)((i * 2654435761u >> 7) % 40);
}

static int rising(int i)
{
	return 1 + i % 60;
}

static void check_common(int n)
{
	for (int i = 0; i < n; i++) {
		ck_assert_int_eq(seen.processed[i], 1);
		ck_assert_int_eq(seen.emitted[i], i);
	}
	ck_assert_int_eq(seen.nemit, n);
	/* each window's batches shortest first, as sorted */
	for (int b = 1; b < seen.nbatch; b++)
		if (seen.batch_window[b] == seen.batch_window[b - 1])
			ck_assert_int_ge(seen.batch_max[b],
					 seen.batch_max[b - 1]);
}

/* n batches, each's field (batch_max or batch_size) as want. */
static void expect_batches(const int *field, const int *want, int n)
{
	ck_assert_int_eq(seen.nbatch, n);
	for (int b = 0; b < n; b++)
		ck_assert_int_eq(field[b], want[b]);
}

START_TEST(one_window)
{
	/* 40 frames, batches of 4: one window of 64 */
	run(40, 4, scattered);
	check_common(40);
	ck_assert_int_eq(seen.nflush, 1);
	ck_assert_int_ge(seen.nbatch, 10);
	ck_assert_int_eq(seen.batch_max[seen.nbatch - 1], 40);
}
END_TEST

START_TEST(windows_in_turn)
{
	/* 150 frames, batches of 4: windows of 64, 64 and 22, each run
	 * and given back whole before the next is read; lengths rising
	 * within the input, so shortest-first batches would be seen */
	run(150, 4, rising);
	check_common(150);
	ck_assert_int_eq(seen.nflush, 3);
	ck_assert_int_eq(seen.batch_window[0], 0);
	ck_assert_int_eq(seen.batch_window[seen.nbatch - 1], 2);
	/* window 0 holds lengths 1-60 and 1-4: its last batch has 60 */
	int last = 0;
	while (seen.batch_window[last + 1] == 0)
		last++;
	ck_assert_int_eq(seen.batch_max[last], 60);
}
END_TEST

START_TEST(batch_of_one)
{
	run(10, 1, scattered);
	check_common(10);
	ck_assert_int_eq(seen.nbatch, 10);
	/* a window of one frame: each flushed on its own */
	ck_assert_int_eq(seen.nflush, 10);
}
END_TEST

/* Four of 1, four of 2, two of 10 (in no order), batches of 8. */
static int steps(int i)
{
	static const int len[10] = { 10, 2, 1, 2, 1, 10, 2, 1, 2, 1 };

	return len[i];
}

START_TEST(padding_cut)
{
	/* without the cut: [1 1 1 1 2 2 2 2] (12 tokens padded to 16)
	 * and [10 10] */
	run(10, 8, steps);
	check_common(10);
	ck_assert_int_eq(seen.nbatch, 2);
	ck_assert_int_eq(seen.batch_max[0], 2);
	/* with it: a 2 after four 1s pads 5 2 = 10 > 1.1 6; a 10 after
	 * four 2s 50 > 1.1 18: [1 1 1 1], [2 2 2 2], [10 10] */
	run_cut(10, 8, steps, 1);
	check_common(10);
	expect_batches(seen.batch_max, (const int[]){ 1, 2, 10 }, 3);
	/* and the budget, with scattered lengths over windows */
	run_cut(150, 16, scattered, 1);
	check_common(150);
}
END_TEST

static int twenty(int i)
{
	return 20;
}

START_TEST(stage_token_budget)
{
	/* 64 frames of 20 units, batches of 64: one batch (1,280 padded
	 * tokens, under 100 x 64); with pad_cut at most 512 a batch, so
	 * 25, 25 and 14 */
	run(64, 64, twenty);
	check_common(64);
	ck_assert_int_eq(seen.nbatch, 1);
	run_cut(64, 64, twenty, 1);
	check_common(64);
	expect_batches(seen.batch_size, (const int[]){ 25, 25, 14 }, 3);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("filter");
	TCase *tc = tcase_create("windows");

	tcase_add_test(tc, one_window);
	tcase_add_test(tc, windows_in_turn);
	tcase_add_test(tc, batch_of_one);
	tcase_add_test(tc, padding_cut);
	tcase_add_test(tc, stage_token_budget);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
