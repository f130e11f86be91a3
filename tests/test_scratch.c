/*
 * test_scratch.c: the library's one grow-only block (base/scratch.h), as
 * a model's training scratch, the layout of a batch in it (arena_in) and
 * each thread's block for the kernels' callers (kern_caller_scratch).
 */
#include <check.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "base/errmsg.h"
#include "base/scratch.h"
#include "kernels/kernels.h"
#include "models/arena.h"
#include "run_suite.h"

/* Aligned, kept while big enough, replaced when not, emptied when out of
 * memory, and freed (ASan's leak check sees it otherwise). */
START_TEST(kept_and_grown)
{
	struct scratch s = { 0 };
	char *a = scratch_get(&s, 1000), *b, *c;

	ck_assert_ptr_nonnull(a);
	ck_assert_uint_eq((uintptr_t)a % 64, 0);
	ck_assert_uint_eq(s.size, 1024);
	memset(a, 1, 1000);
	b = scratch_get(&s, 10);
	ck_assert_ptr_eq(a, b);
	ck_assert_uint_eq(s.size, 1024);
	c = scratch_get(&s, 5000);
	ck_assert_ptr_nonnull(c);
	ck_assert_uint_eq((uintptr_t)c % 64, 0);
	ck_assert_uint_eq(s.size, 5056);
	memset(c, 2, 5000);
	ck_assert_ptr_null(scratch_get(&s, SIZE_MAX - 10));
	ck_assert_ptr_nonnull(strstr(err_msg(), "out of memory"));
	ck_assert_ptr_null(s.p);
	ck_assert_uint_eq(s.size, 0);
	ck_assert_ptr_nonnull(scratch_get(&s, 0));
	ck_assert_uint_eq(s.size, 64);
	scratch_free(&s);
	ck_assert_ptr_null(s.p);
}
END_TEST

/* A measuring pass, then the same layout in the block: each take where
 * the first pass said, the bytes from zero_from on zeroed, those before
 * kept. */
START_TEST(arena_in_block)
{
	struct scratch s = { 0 };
	struct arena a = { NULL, 0 };
	char *x, *y;

	ck_assert_ptr_null(arena_take(&a, 100));
	ck_assert_ptr_null(arena_floats(&a, 10));
	ck_assert_uint_eq(a.used, 128 + 64);
	ck_assert_ptr_nonnull(scratch_get(&s, 192));
	memset(s.p, 7, 192);
	ck_assert_int_eq(arena_in(&a, &s, 128), 0);
	x = arena_take(&a, 100);
	y = (char *)arena_floats(&a, 10);
	ck_assert_ptr_eq(x, s.p);
	ck_assert_ptr_eq(y, (char *)s.p + 128);
	ck_assert_int_eq(x[127], 7);
	for (int i = 0; i < 64; i++)
		ck_assert_int_eq(y[i], 0);
	/* more than the block holds: grown */
	a = (struct arena){ NULL, 4096 };
	ck_assert_int_eq(arena_in(&a, &s, SIZE_MAX), 0);
	ck_assert_uint_ge(s.size, 4096);
	scratch_free(&s);
}
END_TEST

static void *other_thread(void *arg)
{
	(void)arg;
	return kern_caller_scratch();
}

/* One block per thread, the same at every call of a thread. */
START_TEST(caller_per_thread)
{
	struct scratch *a = kern_caller_scratch(), *b;
	pthread_t t;

	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_eq(a, kern_caller_scratch());
	ck_assert_ptr_nonnull(scratch_get(a, 100));
	ck_assert_int_eq(pthread_create(&t, NULL, other_thread, NULL), 0);
	ck_assert_int_eq(pthread_join(t, (void **)&b), 0);
	ck_assert_ptr_nonnull(b);
	ck_assert_ptr_ne(a, b);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("scratch");
	TCase *tc = tcase_create("scratch");

	tcase_add_test(tc, kept_and_grown);
	tcase_add_test(tc, arena_in_block);
	tcase_add_test(tc, caller_per_thread);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(suite());
}
