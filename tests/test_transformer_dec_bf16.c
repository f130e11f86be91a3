/*
 * test_transformer_dec_bf16.c: the Transformer's decoder with bf16
 * products (model.h's dec_bf16).  A sentence searched alone (a decoder of
 * one row, which f32 would not pack) gets the ids and the score bits it
 * gets in a batch, greedy and with beams; its scores are not f32's; f32
 * and bf16 decoders of one model alive at once each keep their own packs
 * (f32 results the same with a bf16 decoder alive, and the other way
 * round); where the CPU has no AVX512_BF16, a bf16 decoder is refused.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "base/errmsg.h"
#include "kernels/gemm_packed.h"
#include "kernels/kernels.h"
#include "models/model.h"
#include "base/rng.h"
#include "run_suite.h"
#include "run/search.h"

enum { NS = 12, V = 50 };

static struct model *m;
static struct frame fr[NS], *fp[NS];

/* A fresh model (sizes off the kernels' widths) and the memory of NS
 * random sentences. */
static void setup(void)
{
	static const char *const set[] = {
		"src_vocab=50", "tgt_vocab=50", "d_model=40", "heads=2",
		"ffn=72", "enc_layers=1", "dec_layers=2", "seed=5",
	};
	struct rng r;

	m = model_create("transformer", set, 8, "", "");
	ck_assert_msg(m != NULL, "%s", err_msg());
	rng_seed(&r, 3);
	memset(fr, 0, sizeof fr);
	for (int i = 0; i < NS; i++) {
		int32_t ids[12];
		uint64_t n = 2 + rng_below(&r, 10);
		struct tensor t;

		for (uint64_t k = 0; k + 1 < n; k++)
			ids[k] = 3 + (int32_t)rng_below(&r, V - 3);
		ids[n - 1] = 2;
		fr[i].number = i;
		fp[i] = &fr[i];
		ck_assert_int_eq(tensor_init_copy(&t, "src.ids", DT_I32, 1,
						  &n, ids), 0);
		ck_assert_ptr_nonnull(frame_put(&fr[i], &t));
	}
	ck_assert_msg(m->arch->embed(m, fp, NS) == 0 &&
		      m->arch->encode(m, fp, NS) == 0 &&
		      m->arch->attend(m, fp, NS) == 0, "%s", err_msg());
}

static void teardown(void)
{
	for (int i = 0; i < NS; i++)
		frame_free(&fr[i]);
	model_free(m);
}

/* The best hypotheses of the NS sentences with beams of k, in batches
 * of b sentences. */
static void run(int k, int b, struct search_result *res)
{
	struct search_opts o;

	search_opts_default(&o);
	o.k = k;
	for (int i = 0; i < NS; i += b)
		ck_assert_msg(search(m, fp + i, NS - i < b ? NS - i : b, &o,
				     res + i) == 0, "%s", err_msg());
}

static int same(const struct hyp *a, const struct hyp *b)
{
	return a->len == b->len && a->score == b->score &&
	       memcmp(a->ids, b->ids, sizeof(int32_t) * a->len) == 0;
}

static void free_all(struct search_result *res)
{
	for (int i = 0; i < NS; i++)
		search_result_free(&res[i]);
}

START_TEST(test_batch_independent)
{
	struct search_result f32[NS], all[NS], alone[NS], again[NS];
	struct decoder *keep_f32, *keep_bf16;
	int differ = 0;

	run(1, NS, f32);
	/* an f32 decoder that packs, alive throughout the bf16 runs */
	keep_f32 = m->arch->dec_new(m, fp, NS, 1);
	ck_assert_ptr_nonnull(keep_f32);
	m->dec_bf16 = 1;
	for (int k = 1; k <= 3; k += 2) {
		run(k, NS, all);
		run(k, 1, alone);
		for (int i = 0; i < NS; i++) {
			ck_assert_msg(same(&all[i].hyp[0], &alone[i].hyp[0]),
				      "k %d: sentence %d alone differs", k, i);
			if (k == 1)
				differ += f32[i].hyp[0].score !=
					  all[i].hyp[0].score;
		}
		free_all(all);
		free_all(alone);
	}
	ck_assert_msg(differ > 0, "bf16 scores are f32's");
	/* a bf16 decoder alive while f32 runs again: f32's bits */
	keep_bf16 = m->arch->dec_new(m, fp, 1, 1);
	ck_assert_ptr_nonnull(keep_bf16);
	m->dec_bf16 = 0;
	run(1, 5, again);
	for (int i = 0; i < NS; i++)
		ck_assert_msg(same(&f32[i].hyp[0], &again[i].hyp[0]),
			      "f32: sentence %d differs", i);
	m->arch->dec_free(keep_f32);
	m->arch->dec_free(keep_bf16);
	free_all(f32);
	free_all(again);
}
END_TEST

START_TEST(test_refused)
{
	m->dec_bf16 = 1;
	struct decoder *d = m->arch->dec_new(m, fp, NS, 1);
	ck_assert_ptr_null(d);
	ck_assert_ptr_nonnull(strstr(err_msg(), "AVX512_BF16"));
	m->dec_bf16 = 0;
}
END_TEST

int main(void)
{
	Suite *s = suite_create("transformer_dec_bf16");
	TCase *tc = tcase_create("bf16 decoder");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	if (wpack_bf16_check() == 0)
		tcase_add_test(tc, test_batch_independent);
	else	/* only the refusal can be tested */
		tcase_add_test(tc, test_refused);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
