/*
 * test_tensor.c: dtypes, tensor_init, names, and the f16/bf16 conversions
 * against a reference that rounds by comparing distances in double
 * precision (independent of the bit tricks in tensor.c).
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "base/errmsg.h"
#include "run_suite.h"
#include "stream/half.h"
#include "stream/tensor.h"

static float bitsf(uint32_t x)
{
	float f;

	memcpy(&f, &x, 4);
	return f;
}

START_TEST(dtypes)
{
	static const char *names[] = { NULL, "f32", "f16", "bf16", "i32",
				       "i8", "u8", "f64", "i64" };
	static const size_t sizes[] = { 0, 4, 2, 2, 4, 1, 1, 8, 8 };

	for (int i = 0; i <= 8; i++) {
		ck_assert_uint_eq(dtype_size(i), sizes[i]);
		if (i) {
			ck_assert_str_eq(dtype_name(i), names[i]);
			ck_assert_int_eq(dtype_parse(names[i]), i);
		}
	}
	ck_assert_ptr_null(dtype_name(0));
	ck_assert_ptr_null(dtype_name(9));
	ck_assert_ptr_null(dtype_name(-1));
	ck_assert_uint_eq(dtype_size(9), 0);
	ck_assert_int_eq(dtype_parse("f31"), 0);
	ck_assert_int_eq(dtype_parse(""), 0);
}
END_TEST

START_TEST(names)
{
	char long_name[300];

	ck_assert(tensor_name_ok("src.ids", 7));
	ck_assert(tensor_name_ok("a-b_c:d/e.F9", 12));
	ck_assert(!tensor_name_ok("", 0));
	ck_assert(!tensor_name_ok("a b", 3));
	ck_assert(!tensor_name_ok("a\0b", 3));
	ck_assert(!tensor_name_ok("é", 2));
	ck_assert(!tensor_name_ok("a+b", 3));
	memset(long_name, 'x', sizeof long_name);
	ck_assert(tensor_name_ok(long_name, 255));
	ck_assert(!tensor_name_ok(long_name, 256));
}
END_TEST

START_TEST(init)
{
	struct tensor t;
	uint64_t dim[9] = { 2, 3, 4, 1, 1, 1, 1, 1, 1 };
	unsigned char src[96];

	ck_assert_int_eq(tensor_init(&t, "x", DT_F32, 3, dim), 0);
	ck_assert_uint_eq(tensor_numel(&t), 24);
	ck_assert_uint_eq(t.nbytes, 96);
	ck_assert_int_eq(t.owned, 1);
	ck_assert_int_eq((uintptr_t)t.data % 64, 0);
	for (size_t i = 0; i < t.nbytes; i++)
		ck_assert_int_eq(((unsigned char *)t.data)[i], 0);
	tensor_free(&t);
	ck_assert_ptr_null(t.data);
	tensor_free(&t);                /* twice is harmless */

	ck_assert_int_eq(tensor_init(&t, "s", DT_I64, 0, NULL), 0);
	ck_assert_uint_eq(tensor_numel(&t), 1);
	ck_assert_uint_eq(t.nbytes, 8);
	tensor_free(&t);

	dim[1] = 0;
	ck_assert_int_eq(tensor_init(&t, "e", DT_F16, 3, dim), 0);
	ck_assert_uint_eq(tensor_numel(&t), 0);
	ck_assert_uint_eq(t.nbytes, 0);
	ck_assert_ptr_nonnull(t.data);
	tensor_free(&t);
	dim[1] = 3;

	for (int i = 0; i < 96; i++)
		src[i] = i * 7;
	ck_assert_int_eq(tensor_init_copy(&t, "c", DT_U8, 2, dim, src), 0);
	ck_assert(memcmp(t.data, src, 6) == 0);
	tensor_free(&t);

	ck_assert_int_eq(tensor_init(&t, "bad name", DT_F32, 1, dim), -1);
	ck_assert_str_eq(err_msg(), "bad tensor name \"bad name\": want 1 to "
			 "255 of A-Z a-z 0-9 . _ : - /");
	ck_assert_int_eq(tensor_init(&t, "x", 0, 1, dim), -1);
	ck_assert_str_eq(err_msg(), "tensor x: unknown dtype 0");
	ck_assert_int_eq(tensor_init(&t, "x", DT_F32, 9, dim), -1);
	ck_assert_str_eq(err_msg(), "tensor x: rank 9 not in 0..8");
	dim[0] = dim[1] = (uint64_t)1 << 40;
	ck_assert_int_eq(tensor_init(&t, "x", DT_F32, 2, dim), -1);
	ck_assert_str_eq(err_msg(), "tensor x: shape too large");
}
END_TEST

/* The nearest of the finite values table[0..n) (ascending, positive) to
 * x, ties to the even index; n (infinity) past the largest + half ulp. */
static int nearest(const double *table, int n, double x, double inf_from)
{
	int lo = 0, hi = n - 1;

	if (x >= inf_from)
		return n;
	while (hi - lo > 1) {
		int mid = (lo + hi) / 2;
		if (table[mid] <= x)
			lo = mid;
		else
			hi = mid;
	}
	if (x - table[lo] < table[hi] - x)
		return lo;
	if (x - table[lo] > table[hi] - x)
		return hi;
	return lo % 2 == 0 ? lo : hi;
}

/* Reference: f32 to half by searching the table of non-negative values
 * (bits 0..limit-1, which are in increasing order). */
static double f16_table[0x7c00], bf16_table[0x7f80];

static double f16_value(uint16_t h)
{
	int e = (h >> 10) & 0x1f, m = h & 0x3ff;

	return e ? ldexp(1024 + m, e - 25) : ldexp(m, -24);
}

static uint16_t ref_half(float f, const double *table, int n, double inf_from,
			 uint16_t inf, uint16_t sign)
{
	double x = fabs((double)f);

	return (signbit(f) ? sign : 0) | (nearest(table, n, x, inf_from) == n
					  ? inf : nearest(table, n, x, inf_from));
}

static void tables(void)
{
	for (int h = 0; h < 0x7c00; h++)
		f16_table[h] = f16_value(h);
	for (int h = 0; h < 0x7f80; h++)
		bf16_table[h] = (double)bitsf((uint32_t)h << 16);
}

static float interesting(uint32_t i, uint32_t *state)
{
	/* Random bit patterns, then values near half's range and midpoints */
	uint32_t x = *state;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	*state = x;
	switch (i % 4) {
	case 0:
		return bitsf(x);
	case 1:         /* within half's exponent range */
		return bitsf((x & 0x80ffffff) | ((uint32_t)(100 + i % 60) << 23));
	case 2:         /* exact midpoints between halves */
		return bitsf((x & 0x8fffe000) | 0x1000 | 0x30000000);
	default:        /* midpoints between bfloat16s */
		return bitsf((x & 0xffff0000) | 0x8000);
	}
}

START_TEST(f16_rounding)
{
	uint32_t state = 12345;

	tables();
	for (uint32_t i = 0; i < 100000; i++) {
		float f = interesting(i, &state);
		uint16_t want;
		if (isnan(f)) {
			uint16_t h = f32_to_f16(f);
			ck_assert_int_eq(h & 0x7e00, 0x7e00);   /* a quiet NaN */
			continue;
		}
		want = ref_half(f, f16_table, 0x7c00, 65520.0, 0x7c00, 0x8000);
		ck_assert_msg(f32_to_f16(f) == want,
			      "f16(%a) = 0x%04x, want 0x%04x", f, f32_to_f16(f),
			      want);
	}
	/* Hand-picked values. */
	ck_assert_int_eq(f32_to_f16(1.0f), 0x3c00);
	ck_assert_int_eq(f32_to_f16(-2.0f), 0xc000);
	ck_assert_int_eq(f32_to_f16(65504.0f), 0x7bff);
	ck_assert_int_eq(f32_to_f16(65519.99f), 0x7bff);
	ck_assert_int_eq(f32_to_f16(65520.0f), 0x7c00);
	ck_assert_int_eq(f32_to_f16(0x1p-24f), 0x0001);
	ck_assert_int_eq(f32_to_f16(0x1p-25f), 0x0000);         /* tie: even */
	ck_assert_int_eq(f32_to_f16(0x1.8p-24f), 0x0002);       /* tie: even */
	ck_assert_int_eq(f32_to_f16(-0.0f), 0x8000);
	ck_assert_int_eq(f32_to_f16(INFINITY), 0x7c00);
	ck_assert_int_eq(f32_to_f16(-INFINITY), 0xfc00);
}
END_TEST

START_TEST(f16_exhaustive_back)
{
	/* Every half converts to f32 exactly and back to itself. */
	for (uint32_t h = 0; h < 0x10000; h++) {
		float f = f16_to_f32(h);
		if ((h & 0x7c00) == 0x7c00 && (h & 0x3ff)) {
			ck_assert(isnan(f));
			ck_assert_int_eq(f32_to_f16(f), h | 0x200);
			continue;
		}
		ck_assert_int_eq(f32_to_f16(f), h);
		if ((h & 0x7fff) < 0x7c00)
			ck_assert(fabs((double)f) == f16_value(h & 0x7fff));
	}
}
END_TEST

/* The array conversions (half.h), portable and F16C where the CPU has
 * it, and the choice: the same bits as f16_to_f32 for all 65536 halves
 * (NaNs, signalling ones included, and infinities, in the blocks of eight
 * of the vector kernel and in its tail), from every alignment. */
START_TEST(f16_arrays)
{
	void (*k[3])(float *, const void *, size_t) = {
		f16_to_f32_array, f16_to_f32_portable, NULL
	};
	size_t n = 0x10000 + 13;
	unsigned char *src = malloc(2 * n + 16);
	float *dst = malloc(sizeof(float) * n);

	ck_assert(src && dst);
	if (f16c_supported())
		k[2] = f16_to_f32_f16c;
	for (int i = 0; i < 3 && k[i]; i++)
		for (int align = 0; align < 16; align += 3) {
			for (size_t j = 0; j < n; j++) {
				uint16_t h = (uint16_t)j;
				memcpy(src + align + 2 * j, &h, 2);
			}
			k[i](dst, src + align, n);
			for (size_t j = 0; j < n; j++) {
				float want = f16_to_f32((uint16_t)j);
				ck_assert_msg(!memcmp(&dst[j], &want, 4),
					      "kernel %d, 0x%04x", i,
					      (unsigned)(uint16_t)j);
			}
			/* every length up to 20: the tail */
			for (size_t len = 0; len <= 20; len++) {
				memset(dst, 0xff, sizeof(float) * 21);
				k[i](dst, src + align + 2 * 0x7bf8, len);
				for (size_t j = 0; j < len; j++) {
					float want = f16_to_f32(0x7bf8 + j);
					ck_assert(!memcmp(&dst[j], &want, 4));
				}
				ck_assert(isnan(dst[len]));
			}
		}
	free(src);
	free(dst);
}
END_TEST

START_TEST(bf16_rounding)
{
	uint32_t state = 999;

	tables();
	for (uint32_t i = 0; i < 100000; i++) {
		float f = interesting(i, &state);
		uint16_t want;
		if (isnan(f)) {
			ck_assert(isnan(bf16_to_f32(f32_to_bf16(f))));
			continue;
		}
		/* Past the largest bfloat16 by half an ulp: infinity. */
		want = ref_half(f, bf16_table, 0x7f80,
				(double)bitsf(0x7f7f0000) + ldexp(1, 127 - 8),
				0x7f80, 0x8000);
		ck_assert_msg(f32_to_bf16(f) == want,
			      "bf16(%a) = 0x%04x, want 0x%04x", f,
			      f32_to_bf16(f), want);
	}
	ck_assert_int_eq(f32_to_bf16(1.0f), 0x3f80);
	ck_assert_int_eq(f32_to_bf16(bitsf(0x3f808000)), 0x3f80);  /* tie */
	ck_assert_int_eq(f32_to_bf16(bitsf(0x3f818000)), 0x3f82);  /* tie */
	ck_assert_int_eq(f32_to_bf16(bitsf(0x7f7fffff)), 0x7f80);  /* inf */
	ck_assert_int_eq(f32_to_bf16(bitsf(0x7f800001)) & 0x7fc0, 0x7fc0);
	for (uint32_t h = 0; h < 0x10000; h++)
		if ((h & 0x7f80) != 0x7f80 || !(h & 0x7f))
			ck_assert_int_eq(f32_to_bf16(bf16_to_f32(h)), h);
}
END_TEST

START_TEST(convert_to_f32)
{
	float out[4];
	const float f32[4] = { 1.5f, -2, 0, 1e30f };
	const uint16_t f16[4] = { 0x3c00, 0xc000, 0x0001, 0x7c00 };
	const uint16_t bf16[4] = { 0x3f80, 0xc000, 0x0000, 0xff80 };
	const int32_t i32[4] = { 1, -2, 16777217, INT32_MIN };
	const int8_t i8[4] = { 1, -2, 127, -128 };
	const uint8_t u8[4] = { 1, 2, 255, 0 };
	const double f64[4] = { 1.5, -2, 1e-50, 1e300 };
	const int64_t i64[4] = { 1, -2, (int64_t)1 << 40, INT64_MIN };
	unsigned char unaligned[33];

	to_f32(out, f32, 4, DT_F32);
	ck_assert(memcmp(out, f32, 16) == 0);
	to_f32(out, f16, 4, DT_F16);
	ck_assert(out[0] == 1 && out[1] == -2 && out[2] == 0x1p-24f &&
		  isinf(out[3]));
	to_f32(out, bf16, 4, DT_BF16);
	ck_assert(out[0] == 1 && out[1] == -2 && out[2] == 0 &&
		  isinf(out[3]) && out[3] < 0);
	to_f32(out, i32, 4, DT_I32);
	ck_assert(out[0] == 1 && out[1] == -2 && out[2] == 16777216.0f &&
		  out[3] == -2147483648.0f);
	to_f32(out, i8, 4, DT_I8);
	ck_assert(out[0] == 1 && out[1] == -2 && out[2] == 127 &&
		  out[3] == -128);
	to_f32(out, u8, 4, DT_U8);
	ck_assert(out[0] == 1 && out[1] == 2 && out[2] == 255 && out[3] == 0);
	to_f32(out, f64, 4, DT_F64);
	ck_assert(out[0] == 1.5f && out[1] == -2 && out[2] == 0 &&
		  isinf(out[3]));
	to_f32(out, i64, 4, DT_I64);
	ck_assert(out[0] == 1 && out[1] == -2 && out[2] == 0x1p40f &&
		  out[3] == -0x1p63f);
	/* A payload need not be aligned for its type. */
	memcpy(unaligned + 1, f64, 32);
	to_f32(out, unaligned + 1, 4, DT_F64);
	ck_assert(out[0] == 1.5f && out[1] == -2);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("tensor");
	TCase *tc = tcase_create("tensor");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, dtypes);
	tcase_add_test(tc, names);
	tcase_add_test(tc, init);
	tcase_add_test(tc, f16_rounding);
	tcase_add_test(tc, f16_exhaustive_back);
	tcase_add_test(tc, f16_arrays);
	tcase_add_test(tc, bf16_rounding);
	tcase_add_test(tc, convert_to_f32);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(suite());
}
