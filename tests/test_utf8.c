/* test_utf8.c: strict decoding and the repair of printed text. */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include "run_suite.h"
#include "base/utf8.h"

static void repaired(const char *in, size_t n, const char *want)
{
	unsigned char out[64];
	size_t got;

	ck_assert_uint_le(3 * n, sizeof out);
	got = utf8_repair(out, (const unsigned char *)in, n);
	ck_assert_uint_eq(got, strlen(want));
	ck_assert(memcmp(out, want, got) == 0);
}

START_TEST(repair_keeps_valid_text)
{
	repaired("", 0, "");
	repaired("abc", 3, "abc");
	repaired("a\xc3\xb1o \xe2\x96\x81 \xf0\x9f\x98\x80", 13,
		 "a\xc3\xb1o \xe2\x96\x81 \xf0\x9f\x98\x80");
}
END_TEST

START_TEST(repair_replaces_each_bad_byte)
{
	/* a lone continuation byte, a cut sequence, an overlong form, a
	 * surrogate: every byte that starts no valid sequence is one U+FFFD */
	repaired("\x80", 1, "\xef\xbf\xbd");
	repaired("a\xc3", 2, "a\xef\xbf\xbd");
	repaired("\xe2\x96z", 3, "\xef\xbf\xbd\xef\xbf\xbdz");
	repaired("\xc0\xaf", 2, "\xef\xbf\xbd\xef\xbf\xbd");
	repaired("\xed\xa0\x80", 3, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
	repaired("\xff\xc3\xb1", 3, "\xef\xbf\xbd\xc3\xb1");
}
END_TEST

START_TEST(decode_lengths)
{
	uint32_t cp;

	ck_assert_int_eq(utf8_decode((const unsigned char *)"\xc3\xb1", 2, &cp), 2);
	ck_assert_uint_eq(cp, 0xf1);
	ck_assert_int_eq(utf8_decode((const unsigned char *)"\xf4\x90\x80\x80", 4, &cp), 0);
	ck_assert_int_eq(utf8_decode((const unsigned char *)"\xe2\x96", 2, &cp), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("utf8");
	TCase *tc = tcase_create("utf8");

	tcase_add_test(tc, repair_keeps_valid_text);
	tcase_add_test(tc, repair_replaces_each_bad_byte);
	tcase_add_test(tc, decode_lengths);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
