/*
 * test_stage_input.c: what the stages and the decoders make of input
 * records that are not a model's output (a stream edited by hand): NaN or
 * Inf, and rows that disagree with src.ids or with each other, are
 * refused with a message naming the frame, the record and the value or
 * the rows (frame_check_input, and read_memory's own check, which once
 * read the row counts from freed memory).
 */
#include <math.h>
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/errmsg.h"
#include "models/model.h"
#include "run_suite.h"

/* A tiny Transformer (vocabulary 9, d 4, 2 heads, 2 decoder layers), or
 * RNNsearch. */
static struct model *tiny_arch(const char *arch)
{
	const char *tf[] = {
		"src_vocab=9", "tgt_vocab=9", "d_model=4", "heads=2",
		"ffn=6", "enc_layers=1", "dec_layers=2", "seed=5",
	};
	const char *rnn[] = {
		"src_vocab=9", "tgt_vocab=9", "emb=3", "hidden=4", "att=5",
		"maxout=2", "seed=5",
	};
	struct model *m = strcmp(arch, "transformer") == 0 ?
		model_create(arch, tf, 8, "", "") :
		model_create(arch, rnn, 7, "", "");

	ck_assert_msg(m != NULL, "%s", err_msg());
	return m;
}

static struct model *tiny(void)
{
	return tiny_arch("transformer");
}

/* Frame `number` with src.ids of S tokens, run through embed, and when
 * `all` also encode and attend: a Transformer's frame then holds att.0.k
 * .. att.1.v of S rows. */
static void stages(const struct model *m, struct frame *f, int number,
		   int S, int all)
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
	if (!all)
		return;
	ck_assert_msg(m->arch->encode(m, &fp, 1) == 0, "%s", err_msg());
	ck_assert_msg(m->arch->attend(m, &fp, 1) == 0, "%s", err_msg());
}

static void attended(const struct model *m, struct frame *f, int number,
		     int S)
{
	stages(m, f, number, S, 1);
}

/* Sets element i of record name of f to x. */
static void poke(struct frame *f, const char *name, size_t i, float x)
{
	struct tensor *t = frame_find(f, name);

	ck_assert_ptr_nonnull(t);
	ck_assert_uint_lt(i, t->nbytes / sizeof(float));
	((float *)t->data)[i] = x;
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
	/* without src.ids, read_memory's check is the one that sees it */
	frame_drop(&f[1], "src.ids");
	shorten(&f[1], "att.1.k", 4);
	ck_assert_ptr_null(m->arch->dec_new(m, NULL, fp, 2, 1));
	ck_assert_str_eq(err_msg(),
			 "frame 8: att.1.k has 4 rows where att.0.k has 6");
	for (i = 0; i < 2; i++)
		frame_free(&f[i]);
	model_free(m);
}
END_TEST

START_TEST(decoder_memory_not_finite)
{
	struct model *m = tiny();
	struct frame f[2], *fp[2] = { &f[0], &f[1] };
	int i;

	attended(m, &f[0], 3, 4);
	attended(m, &f[1], 4, 5);
	poke(&f[1], "att.1.v", 2 * 4 + 3, NAN);		/* row 2, column 3 */
	ck_assert_ptr_null(m->arch->dec_new(m, NULL, fp, 2, 1));
	ck_assert_str_eq(err_msg(), "frame 4: att.1.v[2, 3] is nan: a "
			 "model's input is finite");
	poke(&f[1], "att.1.v", 2 * 4 + 3, 0);
	poke(&f[0], "att.0.k", 1, -INFINITY);
	ck_assert_ptr_null(m->arch->dec_new(m, NULL, fp, 2, 1));
	ck_assert_str_eq(err_msg(), "frame 3: att.0.k[0, 1] is -inf: a "
			 "model's input is finite");
	poke(&f[0], "att.0.k", 1, 0);
	{
		struct decoder *d = m->arch->dec_new(m, NULL, fp, 2, 1);

		ck_assert_msg(d != NULL, "%s", err_msg());
		m->arch->dec_free(d);
	}
	for (i = 0; i < 2; i++)
		frame_free(&f[i]);
	model_free(m);
}
END_TEST

START_TEST(decoder_memory_rows_against_tokens)
{
	struct model *m = tiny();
	struct frame f, *fp = &f;
	const char *name[] = { "att.0.k", "att.0.v", "att.1.k", "att.1.v" };
	int i;

	attended(m, &f, 9, 6);
	for (i = 0; i < 4; i++)
		shorten(&f, name[i], 4);
	ck_assert_ptr_null(m->arch->dec_new(m, NULL, &fp, 1, 1));
	ck_assert_str_eq(err_msg(), "frame 9: att.0.k has 4 rows and src.ids "
			 "6 tokens: a row for each token");
	frame_free(&f);
	model_free(m);
}
END_TEST

/* RNNsearch checks every input it reads (rnn_need_rows, _vector). */
START_TEST(rnn_stage_inputs)
{
	struct model *m = tiny_arch("rnnsearch");
	struct frame f, *fp = &f;
	struct decoder *d;

	stages(m, &f, 2, 4, 0);
	shorten(&f, "src.emb", 2);
	ck_assert_int_eq(m->arch->encode(m, &fp, 1), -1);
	ck_assert_str_eq(err_msg(), "frame 2: src.emb has 2 rows and src.ids "
			 "4 tokens: a row for each token");
	frame_free(&f);

	stages(m, &f, 2, 4, 0);
	poke(&f, "src.emb", 3 * 3 + 2, INFINITY);
	ck_assert_int_eq(m->arch->encode(m, &fp, 1), -1);
	ck_assert_str_eq(err_msg(), "frame 2: src.emb[3, 2] is inf: a "
			 "model's input is finite");
	frame_free(&f);

	attended(m, &f, 5, 4);
	poke(&f, "att.init", 1, NAN);
	ck_assert_ptr_null(m->arch->dec_new(m, NULL, &fp, 1, 1));
	ck_assert_str_eq(err_msg(), "frame 5: att.init[1] is nan: a "
			 "model's input is finite");
	poke(&f, "att.init", 1, 0);
	d = m->arch->dec_new(m, NULL, &fp, 1, 1);
	ck_assert_msg(d != NULL, "%s", err_msg());
	m->arch->dec_free(d);
	frame_free(&f);
	model_free(m);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("stage_input");
	TCase *tc = tcase_create("stage_input");

	tcase_add_test(tc, shorter_layer_named_with_its_rows);
	tcase_add_test(tc, decoder_memory_not_finite);
	tcase_add_test(tc, decoder_memory_rows_against_tokens);
	tcase_add_test(tc, rnn_stage_inputs);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(suite());
}
