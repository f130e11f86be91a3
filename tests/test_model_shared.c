/*
 * test_model_shared.c: what the models share instead of each having its
 * own: model_size_key (the config's sizes), the arena (models/arena.h),
 * frames to padded batches and back (models/frames.h).
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "base/config.h"
#include "base/errmsg.h"
#include "models/arena.h"
#include "models/frames.h"
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

/* Frame number num with record name, f32 [rows, width], element (r, c)
 * num * 100 + r * 10 + c + 1 (never 0, so padding shows). */
static void make_frame(struct frame *f, uint64_t num, const char *name,
		       int rows, int width)
{
	uint64_t dim[2] = { (uint64_t)rows, (uint64_t)width };
	struct tensor t;
	float *x;
	int r, c;

	memset(f, 0, sizeof(*f));
	f->number = num;
	ck_assert_int_eq(tensor_init(&t, name, DT_F32, 2, dim), 0);
	x = t.data;
	for (r = 0; r < rows; r++)
		for (c = 0; c < width; c++)
			x[r * width + c] = (float)(num * 100 + r * 10 + c + 1);
	ck_assert_ptr_nonnull(frame_put(f, &t));
}

START_TEST(frames_gather_put_roundtrip)
{
	static const int rows[3] = { 3, 1, 2 };
	struct frame a[3], b[3], *fa[3], *fb[3];
	float *x;
	int *len, i, r, c, S;

	for (i = 0; i < 3; i++) {
		make_frame(&a[i], 7 + i, "enc.out", rows[i], 2);
		memset(&b[i], 0, sizeof(b[i]));
		fa[i] = &a[i];
		fb[i] = &b[i];
	}
	S = frames_gather(fa, 3, "enc.out", 2, "encode", &x, &len);
	ck_assert_int_eq(S, 3);
	for (i = 0; i < 3; i++) {
		ck_assert_int_eq(len[i], rows[i]);
		for (r = 0; r < S; r++)
			for (c = 0; c < 2; c++) {
				float v = x[(i * S + r) * 2 + c];

				if (r < rows[i])
					ck_assert_float_eq(v, (7 + i) * 100 +
							   r * 10 + c + 1);
				else
					ck_assert_float_eq(v, 0.0f);
			}
	}
	/* put back: each frame gets its own rows, byte for byte */
	ck_assert_int_eq(frames_put(fb, 3, "enc.out", 2, x, S, len), 0);
	for (i = 0; i < 3; i++) {
		const struct tensor *p = frame_find(&a[i], "enc.out");
		const struct tensor *q = frame_find(&b[i], "enc.out");

		ck_assert_ptr_nonnull(q);
		ck_assert_int_eq(q->dtype, DT_F32);
		ck_assert_int_eq(q->rank, 2);
		ck_assert_uint_eq(q->dim[0], rows[i]);
		ck_assert_uint_eq(q->dim[1], 2);
		ck_assert_mem_eq(q->data, p->data, p->nbytes);
	}
	free(x);
	free(len);
	/* no frames: S 0, and buffers to free */
	ck_assert_int_eq(frames_gather(fa, 0, "enc.out", 2, "encode", &x,
				       &len), 0);
	free(x);
	free(len);
	for (i = 0; i < 3; i++) {
		frame_free(&a[i]);
		frame_free(&b[i]);
	}
}
END_TEST

START_TEST(frames_put_vector_and_zeros)
{
	struct frame f;
	const struct tensor *t;
	const float v[3] = { 1.5f, -2.0f, 4.0f };
	float *p;

	memset(&f, 0, sizeof(f));
	p = frame_put_rows(&f, "att.init", 3, 0, v);
	ck_assert_ptr_nonnull(p);
	t = frame_find(&f, "att.init");
	ck_assert_int_eq(t->rank, 1);
	ck_assert_uint_eq(t->dim[0], 3);
	ck_assert_mem_eq(t->data, v, sizeof(v));
	p = frame_put_rows(&f, "att.keys", 2, 2, NULL);
	ck_assert_ptr_nonnull(p);
	t = frame_find(&f, "att.keys");
	ck_assert_ptr_eq(p, t->data);
	ck_assert_float_eq(p[0] + p[1] + p[2] + p[3], 0.0f);
	frame_free(&f);
}
END_TEST

/* frames_gather of frames[1] (after a good frames[0]) refused with a
 * message holding want */
static void refused(struct frame *bad, int width, const char *want)
{
	struct frame good, *fr[2] = { &good, bad };
	float *x = (float *)1;
	int *len = (int *)1;

	make_frame(&good, 1, "src.emb", 2, 4);
	ck_assert_int_eq(frames_gather(fr, 2, "src.emb", width, "embed", &x,
				       &len), -1);
	ck_assert_ptr_null(x);
	ck_assert_ptr_null(len);
	ck_assert_msg(strstr(err_msg(), want), "\"%s\" lacks \"%s\"",
		      err_msg(), want);
	frame_free(&good);
}

START_TEST(frames_gather_refusals)
{
	struct frame f;
	int S = -1;

	/* the limit: FRAME_ROWS_MAX rows taken, one more refused */
	make_frame(&f, 9, "src.emb", FRAME_ROWS_MAX, 1);
	ck_assert_ptr_nonnull(frame_rows(&f, "src.emb", 1, "embed", &S));
	ck_assert_int_eq(S, FRAME_ROWS_MAX);
	frame_free(&f);
	make_frame(&f, 9, "src.emb", FRAME_ROWS_MAX + 1, 4);
	refused(&f, 4, "frame 9: record \"src.emb\" is [1048577, 4]; the "
		"model wants [S, 4] with 1 <= S <= 1048576");
	frame_free(&f);
	make_frame(&f, 9, "src.emb", 2, 3);
	refused(&f, 4, "frame 9: record \"src.emb\" is [2, 3]");
	frame_free(&f);
	make_frame(&f, 9, "src.emb", 0, 4);
	refused(&f, 4, "frame 9: record \"src.emb\" is [0, 4]");
	frame_free(&f);
	make_frame(&f, 9, "other", 2, 4);
	refused(&f, 4, "(written by embed)");
	frame_free(&f);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("model_shared");
	TCase *tc = tcase_create("model_shared");

	tcase_add_test(tc, size_key_range);
	tcase_add_test(tc, arena_measures_then_lays_out);
	tcase_add_test(tc, frames_gather_put_roundtrip);
	tcase_add_test(tc, frames_put_vector_and_zeros);
	tcase_add_test(tc, frames_gather_refusals);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
