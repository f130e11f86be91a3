/*
 * test_transformer_dec_bf16.c: the Transformer's decoder with bf16
 * products (arch.h's dec_opts).  A sentence searched alone (a decoder of
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
#include "run_suite.h"
#include "tfdec.h"

enum { NS = TFDEC_NS };

START_TEST(test_batch_independent)
{
	struct search_result f32[NS], all[NS], alone[NS], again[NS];
	struct decoder *keep_f32, *keep_bf16;
	int differ = 0;

	tfdec_run(1, NS, f32);
	/* an f32 decoder that packs, alive throughout the bf16 runs */
	keep_f32 = tfdec_m->arch->dec_new(tfdec_m, NULL, tfdec_fp, NS, 1);
	ck_assert_ptr_nonnull(keep_f32);
	tfdec_opts.bf16 = 1;
	for (int k = 1; k <= 3; k += 2) {
		tfdec_run(k, NS, all);
		tfdec_run(k, 1, alone);
		for (int i = 0; i < NS; i++) {
			ck_assert_msg(tfdec_same(&all[i].hyp[0], &alone[i].hyp[0]),
				      "k %d: sentence %d alone differs", k, i);
			if (k == 1)
				differ += f32[i].hyp[0].score !=
					  all[i].hyp[0].score;
		}
		tfdec_free(all);
		tfdec_free(alone);
	}
	ck_assert_msg(differ > 0, "bf16 scores are f32's");
	/* a bf16 decoder alive while f32 runs again: f32's bits */
	keep_bf16 = tfdec_m->arch->dec_new(tfdec_m, &tfdec_opts, tfdec_fp, 1, 1);
	ck_assert_ptr_nonnull(keep_bf16);
	tfdec_opts.bf16 = 0;
	tfdec_run(1, 5, again);
	for (int i = 0; i < NS; i++)
		ck_assert_msg(tfdec_same(&f32[i].hyp[0], &again[i].hyp[0]),
			      "f32: sentence %d differs", i);
	tfdec_m->arch->dec_free(keep_f32);
	tfdec_m->arch->dec_free(keep_bf16);
	tfdec_free(f32);
	tfdec_free(again);
}
END_TEST

START_TEST(test_refused)
{
	tfdec_opts.bf16 = 1;
	struct decoder *d = tfdec_m->arch->dec_new(tfdec_m, &tfdec_opts,
						   tfdec_fp, NS, 1);
	ck_assert_ptr_null(d);
	ck_assert_ptr_nonnull(strstr(err_msg(), "AVX512_BF16"));
	tfdec_opts.bf16 = 0;
}
END_TEST

int main(void)
{
	Suite *s = suite_create("transformer_dec_bf16");
	TCase *tc = tcase_create("bf16 decoder");

	tcase_add_checked_fixture(tc, tfdec_setup, tfdec_teardown);
	tcase_set_timeout(tc, 60);
	if (wpack_bf16_check() == 0)
		tcase_add_test(tc, test_batch_independent);
	else	/* only the refusal can be tested */
		tcase_add_test(tc, test_refused);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
