/*
 * test_transformer_dec_pack.c: the packed matrices the Transformer's
 * decoders of one model share (transformer_dec_pack.c).  A decoder with
 * a shortlist never reads the full output layer, so the shared packs do
 * without it until a decoder without one asks: such a decoder, made
 * while one with a shortlist holds the packs, gets the logits a decoder
 * made alone gets, bit for bit, and so does one with a shortlist made
 * while one without holds them.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "base/errmsg.h"
#include "models/shortlist.h"
#include "run_suite.h"
#include "tfdec.h"

enum { NS = TFDEC_NS, V = 50, PLANES = 2 * 2, SMAX = 11 };

/* The first step's log-probabilities of the fixture's NS sentences by a
 * decoder of options o (more rows than SMALL_STEP: packed) into logp
 * [NS, V], zero elsewhere; the decoder stays alive, returned. */
static struct decoder *first_step(const struct dec_opts *o, float *logp)
{
	const struct arch *a = tfdec_m->arch;
	static float attw[NS * PLANES * SMAX];
	int32_t prev[NS];
	struct decoder *d = a->dec_new(tfdec_m, o, tfdec_fp, NS, 1);

	ck_assert_msg(d != NULL, "%s", err_msg());
	for (int i = 0; i < NS; i++)
		prev[i] = tfdec_m->bos_id;
	/* a shortlist's step writes its units' places alone */
	memset(logp, 0, sizeof(float) * NS * V);
	ck_assert_msg(a->dec_step(d, NS, prev, logp, attw) == 0, "%s",
		      err_msg());
	return d;
}

START_TEST(test_output_layer_packed_when_asked)
{
	static float alone[NS * V], sl_alone[NS * V], logp[NS * V];
	static int32_t trans[V * 2];
	const struct arch *a = tfdec_m->arch;
	struct dec_opts plain = tfdec_opts, sl = tfdec_opts;
	struct decoder *d, *e;
	struct sl_table *t;

	for (int i = 0; i < V * 2; i++)
		trans[i] = 4 + i % (V - 4);
	t = shortlist_table_new(tfdec_m, NULL, 0, trans, 2);
	ck_assert_msg(t != NULL, "%s", err_msg());
	sl.shortlist = t;

	a->dec_free(first_step(&plain, alone));
	a->dec_free(first_step(&sl, sl_alone));
	/* with a shortlist first: the packs lack the output layer */
	d = first_step(&sl, logp);
	e = first_step(&plain, logp);
	ck_assert(memcmp(logp, alone, sizeof alone) == 0);
	a->dec_free(d);
	a->dec_free(e);
	/* without one first */
	d = first_step(&plain, logp);
	ck_assert(memcmp(logp, alone, sizeof alone) == 0);
	e = first_step(&sl, logp);
	ck_assert(memcmp(logp, sl_alone, sizeof sl_alone) == 0);
	a->dec_free(d);
	a->dec_free(e);
	/* the shortlist's own rows: another distribution */
	ck_assert(memcmp(alone, sl_alone, sizeof alone) != 0);
	shortlist_table_free(t);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("transformer_dec_pack");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, tfdec_setup, tfdec_teardown);
	tcase_add_test(tc, test_output_layer_packed_when_asked);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
