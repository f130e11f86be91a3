/* tfdec.c: the step decoder tests' fixture and helpers; see tfdec.h. */
#include <check.h>
#include <string.h>

#include "base/errmsg.h"
#include "base/rng.h"
#include "tfdec.h"

enum { V = 50 };

struct dec_opts tfdec_opts;
struct model *tfdec_m;
struct frame tfdec_fr[TFDEC_NS], *tfdec_fp[TFDEC_NS];

void tfdec_setup(void)
{
	memset(&tfdec_opts, 0, sizeof tfdec_opts);
	static const char *const set[] = {
		"src_vocab=50", "tgt_vocab=50", "d_model=40", "heads=2",
		"ffn=72", "enc_layers=1", "dec_layers=2", "seed=5",
	};
	struct model *m;
	struct rng r;

	m = tfdec_m = model_create("transformer", set, 8, "", "");
	ck_assert_msg(m != NULL, "%s", err_msg());
	rng_seed(&r, 3);
	memset(tfdec_fr, 0, sizeof tfdec_fr);
	for (int i = 0; i < TFDEC_NS; i++) {
		int32_t ids[12];
		uint64_t n = 2 + rng_below(&r, 10);
		struct tensor t;

		for (uint64_t k = 0; k + 1 < n; k++)
			ids[k] = 3 + (int32_t)rng_below(&r, V - 3);
		ids[n - 1] = 2;
		tfdec_fr[i].number = i;
		tfdec_fp[i] = &tfdec_fr[i];
		ck_assert_int_eq(tensor_init_copy(&t, "src.ids", DT_I32, 1,
						  &n, ids), 0);
		ck_assert_ptr_nonnull(frame_put(&tfdec_fr[i], &t));
	}
	ck_assert_msg(m->arch->embed(m, tfdec_fp, TFDEC_NS) == 0 &&
		      m->arch->encode(m, tfdec_fp, TFDEC_NS) == 0 &&
		      m->arch->attend(m, tfdec_fp, TFDEC_NS) == 0, "%s",
		      err_msg());
}

void tfdec_teardown(void)
{
	for (int i = 0; i < TFDEC_NS; i++)
		frame_free(&tfdec_fr[i]);
	model_free(tfdec_m);
	tfdec_m = NULL;
}

void tfdec_run(int k, int b, struct search_result *res)
{
	struct search_opts o;

	search_opts_default(&o);
	o.k = k;
	o.dec = tfdec_opts;
	for (int i = 0; i < TFDEC_NS; i += b)
		ck_assert_msg(search(tfdec_m, tfdec_fp + i, TFDEC_NS - i < b ?
				     TFDEC_NS - i : b, &o, res + i) == 0, "%s",
			      err_msg());
}

void tfdec_free(struct search_result *res)
{
	for (int i = 0; i < TFDEC_NS; i++)
		search_result_free(&res[i]);
}

int tfdec_same(const struct hyp *a, const struct hyp *b)
{
	return a->len == b->len && a->score == b->score &&
	       memcmp(a->ids, b->ids, sizeof(int32_t) * a->len) == 0;
}
