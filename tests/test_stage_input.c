/*
 * test_stage_input.c: what a decoder makes of memory records that
 * disagree (a stream edited by hand): att.1.k shorter than att.0.k is
 * refused with the true row counts (read_memory once read them from freed
 * memory).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/errmsg.h"
#include "models/model.h"
#include "run_suite.h"

/* A tiny Transformer: vocabulary 9, d 4, 2 heads, 2 decoder layers. */
static struct model *tiny(void)
{
	const char *set[] = {
		"src_vocab=9", "tgt_vocab=9", "d_model=4", "heads=2",
		"ffn=6", "enc_layers=1", "dec_layers=2", "seed=5",
	};
	struct model *m = model_create("transformer", set, 8, "", "");

	ck_assert_msg(m != NULL, "%s", err_msg());
	return m;
}

/* Frame `number` with src.ids of S tokens, run through embed, encode and
 * attend: it holds att.0.k .. att.1.v of S rows. */
static void attended(const struct model *m, struct frame *f, int number,
		     int S)
{
	struct frame *fp = f;
	struct tensor t;
	uint64_t dim = S;
	int32_t ids[16];
	int i;

	ck_assert_int_le(S, 16);
	for (i = 0; i < S; i++)
		ids[i] = i + 1 < S ? 4 + i % 5 : 2;
	memset(f, 0, sizeof *f);
	f->number = number;
	ck_assert_int_eq(tensor_init_copy(&t, "src.ids", DT_I32, 1, &dim,
					  ids), 0);
	ck_assert_ptr_nonnull(frame_put(f, &t));
	ck_assert_msg(m->arch->embed(m, &fp, 1) == 0, "%s", err_msg());
	ck_assert_msg(m->arch->encode(m, &fp, 1) == 0, "%s", err_msg());
	ck_assert_msg(m->arch->attend(m, &fp, 1) == 0, "%s", err_msg());
}

/* Replaces record name of f by its first `rows` rows. */
static void shorten(struct frame *f, const char *name, int rows)
{
	struct tensor *old = frame_find(f, name), t;
	uint64_t dim[2];

	ck_assert_ptr_nonnull(old);
	dim[0] = rows;
	dim[1] = old->dim[1];
	ck_assert_int_eq(tensor_init_copy(&t, name, DT_F32, 2, dim,
					  old->data), 0);
	frame_drop(f, name);
	ck_assert_ptr_nonnull(frame_put(f, &t));
}

START_TEST(shorter_layer_named_with_its_rows)
{
	struct model *m = tiny();
	struct frame f[2], *fp[2] = { &f[0], &f[1] };
	int i;

	attended(m, &f[0], 7, 5);
	attended(m, &f[1], 8, 6);
	shorten(&f[1], "att.1.k", 4);
	ck_assert_ptr_null(m->arch->dec_new(m, fp, 2, 1));
	ck_assert_str_eq(err_msg(),
			 "frame 8: att.1.k has 4 rows where att.0.k has 6");
	for (i = 0; i < 2; i++)
		frame_free(&f[i]);
	model_free(m);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("stage_input");
	TCase *tc = tcase_create("stage_input");

	tcase_add_test(tc, shorter_layer_named_with_its_rows);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(suite());
}
