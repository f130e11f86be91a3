/*
 * test_text.c: the text form of records (tsr_text.h): every f16 and bf16
 * value and many f32 and f64 bit patterns (NaNs with payloads, -0,
 * subnormals) print and read back to the same bits; the printed form of
 * chosen values; strings; and the errors, with their line numbers.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include "base/errmsg.h"
#include "run_suite.h"
#include "stream/tsr_text.h"

/* Parses text; returns the record (the test fails if there is none). */
static int parse(const char *text, struct tensor *t, struct tsr_text_attr *a)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	struct tsr_text_reader *r = tsr_text_open(f, "t.txt");
	int rc = tsr_text_read(r, t, a);

	tsr_text_close(r);
	fclose(f);
	return rc;
}

static char *print(const struct tensor *t, const struct tsr_text_attr *a)
{
	char *text;
	size_t n;
	FILE *f = open_memstream(&text, &n);

	ck_assert_int_eq(tsr_text_print(f, t, a), 0);
	fclose(f);
	return text;
}

/* t printed and read back has the same payload bits. */
static void roundtrip(const struct tensor *t)
{
	struct tsr_text_attr a = { .frame = 9, .flags = TSR_FLAG_END_FRAME,
				   .pad = -1 }, b;
	struct tensor u;
	char *text = print(t, &a);

	ck_assert_msg(parse(text, &u, &b) == 1, "%s", err_msg());
	ck_assert_uint_eq(b.frame, 9);
	ck_assert_int_eq(b.flags, TSR_FLAG_END_FRAME);
	ck_assert_uint_eq(u.nbytes, t->nbytes);
	for (size_t i = 0; i < t->nbytes; i++)
		ck_assert_msg(((unsigned char *)u.data)[i] ==
			      ((unsigned char *)t->data)[i],
			      "byte %zu differs after %s", i, text);
	tensor_free(&u);
	free(text);
}

START_TEST(every_half)
{
	uint64_t dim[1] = { 65536 };
	struct tensor t;

	for (int dt = DT_F16; dt <= DT_BF16; dt++) {
		ck_assert_int_eq(tensor_init(&t, "h", dt, 1, dim), 0);
		for (uint32_t i = 0; i < 65536; i++)
			((uint16_t *)t.data)[i] = i;
		roundtrip(&t);
		tensor_free(&t);
	}
}
END_TEST

START_TEST(many_floats)
{
	uint64_t dim[1] = { 20000 };
	struct tensor t;
	uint64_t x = 88172645463325252ull;

	for (int dt = DT_F32; dt <= DT_F64; dt += DT_F64 - DT_F32) {
		size_t n = dim[0] * dtype_size(dt) / 8;
		ck_assert_int_eq(tensor_init(&t, "f", dt, 1, dim), 0);
		for (size_t i = 0; i < n; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			/* Every 4th word with an exponent of all ones
			 * (NaNs with payloads, infinities) or none. */
			((uint64_t *)t.data)[i] = i % 4 == 1 ? x | 0x7ff0000000000000ull
						: i % 4 == 2 ? x & 0x800fffff807fffffull
						: x;
		}
		roundtrip(&t);
		tensor_free(&t);
	}
}
END_TEST

START_TEST(printed_form)
{
	const float f[6] = { 0.1f, -0.0f, 1e-45f, 3.4028235e38f, 1.0f / 3, 100 };
	uint64_t dim[2] = { 2, 3 };
	struct tensor t;
	struct tsr_text_attr a = { .frame = 4, .flags = TSR_FLAG_ZLIB,
				   .level = 6, .pad = 12 };
	char *text;

	ck_assert_int_eq(tensor_init_copy(&t, "x", DT_F32, 2, dim, f), 0);
	text = print(&t, &a);
	ck_assert_str_eq(text, "record x f32 [2,3] frame 4 zlib 6 pad 12\n"
			 "0.1 -0 1.4013e-45\n3.4028235e+38 0.33333334 100\n");
	free(text);
	tensor_free(&t);

	ck_assert_int_eq(tensor_init_copy(&t, "s", DT_U8, 1, dim + 1, "a\"\n"), 0);
	a = (struct tsr_text_attr){ .pad = -1 };
	text = print(&t, &a);
	ck_assert_str_eq(text, "record s u8 [3] frame 0\n\"a\\\"\\n\"\n");
	free(text);
	tensor_free(&t);
}
END_TEST

START_TEST(parsed_form)
{
	struct tensor t;
	struct tsr_text_attr a;
	const char *text =
		"tsr-text 1\n"
		"# a comment\n"
		"\n"
		"record model.config u8 [9] frame 3 end zlib pad 0 # note\n"
		"\"a=1\\n\" \"\\x41\\t\"  # two strings\n"
		"66 67 0x\n";

	ck_assert_int_eq(parse(text, &t, &a), -1);
	ck_assert_str_eq(err_msg(), "t.txt:6: record \"model.config\": value "
			 "8: \"0x\" is not a u8");
	text = "record model.config u8 [9] frame 3 end zlib pad 0 # note\n"
	       "\"a=1\\n\" \"\\x41\\t\"  # two strings\n"
	       "66 67 255\n";
	ck_assert_int_eq(parse(text, &t, &a), 1);
	ck_assert_uint_eq(a.frame, 3);
	ck_assert_int_eq(a.flags, TSR_FLAG_ZLIB | TSR_FLAG_END_FRAME);
	ck_assert_int_eq(a.level, 0);
	ck_assert_int_eq(a.pad, 0);
	ck_assert(memcmp(t.data, "a=1\nA\tBC\xff", 9) == 0);
	tensor_free(&t);

	ck_assert_int_eq(parse("record s i64 []\n-9223372036854775808\n", &t, &a), 1);
	ck_assert(*(int64_t *)t.data == INT64_MIN);
	tensor_free(&t);
	ck_assert_int_eq(parse("record h f16 [4]\n-inf nan:0x7c01 -nan 1e9\n",
			       &t, &a), 1);
	ck_assert_int_eq(((uint16_t *)t.data)[0], 0xfc00);
	ck_assert_int_eq(((uint16_t *)t.data)[1], 0x7c01);
	ck_assert_int_eq(((uint16_t *)t.data)[2], 0xfe00);
	ck_assert_int_eq(((uint16_t *)t.data)[3], 0x7c00);
	tensor_free(&t);
}
END_TEST

START_TEST(errors)
{
	static const struct { const char *text, *msg; } cases[] = {
		{ "1 2\n", "t.txt:1: values before the first record line" },
		{ "tsr-text 2\n", "t.txt:1: want \"tsr-text 1\"" },
		{ "record x f32\n", "t.txt:1: want: record NAME DTYPE [DIMS] ..." },
		{ "record x y f32 []\n", "t.txt:1: record \"x\": unknown dtype \"y\"" },
		{ "record a+b f32 []\n", "t.txt:1: bad record name \"a+b\": want "
		  "1 to 255 of A-Z a-z 0-9 . _ : - /" },
		{ "record x f32 [2,]\n", "t.txt:1: record \"x\": bad shape "
		  "\"[2,]\": want [] or [N,...] of up to 8 dims" },
		{ "record x f32 [1,1,1,1,1,1,1,1,1]\n", "t.txt:1: record \"x\": "
		  "bad shape \"[1,1,1,1,1,1,1,1,1]\": want [] or [N,...] of up "
		  "to 8 dims" },
		{ "record x f32 [0,1073741824,2]\n", "t.txt:1: record \"x\": "
		  "shape [0,1073741824,2] exceeds 4294967296 bytes" },
		{ "record x f32 [1000000000000]\n1\n", "t.txt:1: record \"x\": "
		  "shape [1000000000000] exceeds 4294967296 bytes" },
		{ "record x u8 [1000000000]\n1\n", "t.txt:1: record \"x\": "
		  "1 values, but the shape holds 1000000000" },
		{ "record x f32 [] size 3\n", "t.txt:1: record \"x\": unknown "
		  "word \"size\" (want frame N, end, zlib [LEVEL], pad N)" },
		{ "record x f32 [] pad 64\n", "t.txt:1: record \"x\": pad wants "
		  "a number in 0..63" },
		{ "record x f32 [] frame -1\n", "t.txt:1: record \"x\": frame "
		  "wants a number" },
		{ "record x f32 [2]\n\n1\n\nrecord y u8 []\n", "t.txt:1: record "
		  "\"x\": 1 values, but the shape holds 2" },
		{ "record x f32 [1]\n1 2\n", "t.txt:2: record \"x\": more values "
		  "than the shape holds (1)" },
		{ "record x f32 [1]\n\"a\"\n", "t.txt:2: record \"x\": a string "
		  "is only for u8 and i8 values" },
		{ "record x u8 [1]\n\"a\n", "t.txt:2: record \"x\": string not "
		  "closed on its line" },
		{ "record x u8 [2]\n\"\\q\"\n", "t.txt:2: record \"x\": unknown "
		  "escape \\q in a string (want \\n \\t \\r \\\" \\\\ \\xNN)" },
		{ "record x f32 [1]\ninfinity\n", "t.txt:2: record \"x\": value "
		  "0: \"infinity\" is not a f32" },
		{ "record x f32 [1]\nnan:0x3f800000\n", "t.txt:2: record \"x\": "
		  "value 0: \"nan:0x3f800000\" is not a f32" },
		{ "record x i32 [1]\n2147483648\n", "t.txt:2: record \"x\": "
		  "value 0: \"2147483648\" is not a i32" },
	};
	struct tensor t;
	struct tsr_text_attr a;

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		ck_assert_msg(parse(cases[i].text, &t, &a) == -1, "%s",
			      cases[i].text);
		ck_assert_str_eq(err_msg(), cases[i].msg);
		ck_assert_ptr_null(t.data);
	}
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("text");
	TCase *tc = tcase_create("text");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, every_half);
	tcase_add_test(tc, many_floats);
	tcase_add_test(tc, printed_form);
	tcase_add_test(tc, parsed_form);
	tcase_add_test(tc, errors);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(suite());
}
