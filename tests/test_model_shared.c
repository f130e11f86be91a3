/*
 * test_model_shared.c: what the models share instead of each having its
 * own: model_size_key (the config's sizes), the arena (models/arena.h).
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "base/config.h"
#include "base/errmsg.h"
#include "models/arena.h"
#include "models/model.h"
#include "run_suite.h"

START_TEST(size_key_range)
{
	const char *text = "one=1\nmax=1048576\nover=1048577\nzero=0\n"
			   "neg=-3\nword=big\n";
	struct model m;
	int v = -7;

	memset(&m, 0, sizeof(m));
	ck_assert_int_eq(config_parse(&m.cfg, text, strlen(text), "t"), 0);
	ck_assert_int_eq(model_size_key(&m, "one", &v), 0);
	ck_assert_int_eq(v, 1);
	ck_assert_int_eq(model_size_key(&m, "max", &v), 0);
	ck_assert_int_eq(v, 1 << 20);
	v = -7;
	ck_assert_int_eq(model_size_key(&m, "over", &v), -1);
	ck_assert_str_eq(err_msg(),
			 "config: over=1048577 is out of range (1 .. 1048576)");
	ck_assert_int_eq(model_size_key(&m, "zero", &v), -1);
	ck_assert_str_eq(err_msg(),
			 "config: zero=0 is out of range (1 .. 1048576)");
	ck_assert_int_eq(model_size_key(&m, "neg", &v), -1);
	ck_assert_int_eq(model_size_key(&m, "word", &v), -1);
	ck_assert_ptr_nonnull(strstr(err_msg(), "word"));
	ck_assert_int_eq(model_size_key(&m, "absent", &v), -1);
	ck_assert_ptr_nonnull(strstr(err_msg(), "absent"));
	ck_assert_int_eq(v, -7);	/* untouched on refusal */
	config_free(&m.cfg);
}
END_TEST

/* A layout of three arrays, taken from a. */
static void layout(struct arena *a, void *p[3])
{
	p[0] = arena_take(a, 1);
	p[1] = arena_floats(a, 17);	/* 68 bytes */
	p[2] = arena_take(a, 128);
}

START_TEST(arena_measures_then_lays_out)
{
	struct arena a = { NULL, 0 }, e = { NULL, 0 };
	void *p[3];
	size_t i;

	layout(&a, p);
	ck_assert_ptr_null(p[0]);
	ck_assert_ptr_null(p[1]);
	ck_assert_ptr_null(p[2]);
	ck_assert_uint_eq(a.used, 64 + 128 + 128);
	ck_assert_int_eq(arena_alloc(&a), 0);
	ck_assert_uint_eq(a.used, 0);
	ck_assert_uint_eq((uintptr_t)a.base % 64, 0);
	for (i = 0; i < 320; i++)
		ck_assert_int_eq(a.base[i], 0);
	layout(&a, p);
	ck_assert_ptr_eq(p[0], a.base);
	ck_assert_ptr_eq(p[1], a.base + 64);
	ck_assert_ptr_eq(p[2], a.base + 192);
	ck_assert_uint_eq(a.used, 320);
	free(a.base);
	/* nothing taken: still a block to free */
	ck_assert_int_eq(arena_alloc(&e), 0);
	ck_assert_ptr_nonnull(e.base);
	free(e.base);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("model_shared");
	TCase *tc = tcase_create("model_shared");

	tcase_add_test(tc, size_key_range);
	tcase_add_test(tc, arena_measures_then_lays_out);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
