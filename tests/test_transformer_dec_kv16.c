/*
 * test_transformer_dec_kv16.c: the Transformer's decoder with its
 * attention's keys and values kept in f16 (arch.h's dec_opts).
 *
 * Exactly: where every key and value is an f16 number already (the
 * memory's rounded in the frames, the self-attention's K and V
 * projections zero with f16 biases), the f16 decoder has the f32
 * decoder's bits, greedy and with beams (which copy cache slots), on
 * every instruction set: what f16 changes is where keys and values are
 * kept, not the arithmetic.  On a model as made, a sentence searched
 * alone gets the ids and score bits it gets in a batch; the scores are
 * not f32's, and each within a bound of it.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/f16.h"
#include "base/rng.h"
#include "kernels/kernels.h"
#include "kerntest.h"
#include "run_suite.h"
#include "tfdec.h"

enum { NS = TFDEC_NS, L = 2 };

static float to_half(float x)
{
	return f16_to_f32(f32_to_f16(x));
}

static void round_to_half(float *x, size_t n)
{
	for (size_t i = 0; i < n; i++)
		x[i] = to_half(x[i]);
}

START_TEST(test_exact_on_half_values)
{
	struct search_result f32[NS], f16[NS];
	int isa[3], nisa = kt_isas(isa);
	char name[64];
	struct rng r;

	rng_seed(&r, 9);
	for (int l = 0; l < L; l++) {
		for (int kind = 0; kind < 2; kind++) {
			struct param *W, *b;

			snprintf(name, sizeof name, "dec.%d.self.%c.W", l,
				 "kv"[kind]);
			W = model_param(tfdec_m, name);
			snprintf(name, sizeof name, "dec.%d.self.%c.b", l,
				 "kv"[kind]);
			b = model_param(tfdec_m, name);
			ck_assert_ptr_nonnull(W);
			ck_assert_ptr_nonnull(b);
			memset(W->w, 0, sizeof(float) * W->n);
			for (size_t j = 0; j < b->n; j++)
				b->w[j] = to_half((float)rng_uniform(&r) *
						  2 - 1);
		}
		for (int i = 0; i < NS; i++)
			for (int kind = 0; kind < 2; kind++) {
				struct tensor *t;

				snprintf(name, sizeof name, "att.%d.%c", l,
					 "kv"[kind]);
				t = frame_head(&tfdec_fr[i], name);
				ck_assert_ptr_nonnull(t);
				round_to_half(t->data, t->nbytes /
					      sizeof(float));
			}
	}
	for (int i = 0; i < nisa; i++) {
		kern_set_isa(isa[i]);
		for (int k = 1; k <= 3; k += 2) {
			tfdec_opts.kv_f16 = 0;
			tfdec_run(k, NS, f32);
			tfdec_opts.kv_f16 = 1;
			tfdec_run(k, 5, f16);
			for (int s = 0; s < NS; s++)
				for (int h = 0; h < f32[s].n; h++)
					ck_assert_msg(tfdec_same(&f32[s].hyp[h],
							   &f16[s].hyp[h]),
						      "isa %d, k %d: sentence "
						      "%d, hypothesis %d "
						      "differs", isa[i], k, s,
						      h);
			tfdec_free(f32);
			tfdec_free(f16);
		}
	}
}
END_TEST

START_TEST(test_batch_independent)
{
	struct search_result f32[NS], all[NS], alone[NS];
	int differ = 0;

	tfdec_run(1, NS, f32);
	tfdec_opts.kv_f16 = 1;
	for (int k = 1; k <= 3; k += 2) {
		tfdec_run(k, NS, all);
		tfdec_run(k, 1, alone);
		for (int i = 0; i < NS; i++) {
			ck_assert_msg(tfdec_same(&all[i].hyp[0], &alone[i].hyp[0]),
				      "k %d: sentence %d alone differs", k, i);
			if (k > 1 || all[i].hyp[0].len != f32[i].hyp[0].len ||
			    memcmp(all[i].hyp[0].ids, f32[i].hyp[0].ids,
				   sizeof(int32_t) * f32[i].hyp[0].len))
				continue;
			/*
			 * The same ids: each step's log-probability moves by
			 * at most about the f16 rounding of keys and values
			 * (2^-11 relative) times the spread of the scores
			 * and values it feeds, a few units here: 0.01 a
			 * step is ten times that, and far below what a key
			 * in the wrong place or a value of another step
			 * would do.
			 */
			differ += f32[i].hyp[0].score != all[i].hyp[0].score;
			ck_assert_msg(fabs(f32[i].hyp[0].score -
					    all[i].hyp[0].score) <=
				      0.01f * f32[i].hyp[0].len,
				      "sentence %d: score %g, f32's %g", i,
				      all[i].hyp[0].score,
				      f32[i].hyp[0].score);
		}
		tfdec_free(all);
		tfdec_free(alone);
	}
	ck_assert_msg(differ > 0, "f16 keys and values give f32's scores");
	tfdec_free(f32);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("transformer_dec_kv16");
	TCase *tc = tcase_create("f16 keys and values");

	tcase_add_checked_fixture(tc, tfdec_setup, tfdec_teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_exact_on_half_values);
	tcase_add_test(tc, test_batch_independent);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
