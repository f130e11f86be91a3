/*
 * test_model_shared.c: what the models share instead of each having its
 * own: model_size_key (the config's sizes).
 */
#include <check.h>
#include <string.h>
#include "base/config.h"
#include "base/errmsg.h"
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

int main(void)
{
	Suite *s = suite_create("model_shared");
	TCase *tc = tcase_create("model_shared");

	tcase_add_test(tc, size_key_range);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
