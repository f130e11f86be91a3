/*
 * test_shortlist.c: the vocabulary shortlist.  Dice's coefficients and
 * the table learned from a hand-made corpus against values worked out by
 * hand (in the comments); a decoder's shortlists (the union, each
 * sentence's units in order) and their log-probabilities against a
 * naive log-softmax over the sentence's units; the refusals.
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "base/errmsg.h"
#include "models/shortlist.h"
#include "run/lexicon.h"
#include "lib/run_suite.h"

/*
 * Four pairs, </s> (2) ending each side:
 *	1: 4 5     -> 6 7
 *	2: 4       -> 6
 *	3: 5 5     -> 7 7 8
 *	4: 9       -> 8 6 10 11
 * c(s): 4: 2, 5: 2 (pair 3 counts once), 9: 1.
 * c(t): 6: 3, 7: 2, 8: 2, 10: 1, 11: 1.  Occurrences: 6: 3, 7: 3, 8: 2,
 * 10: 1, 11: 1.
 * dice(4, 6) = 2 2 / (2 + 3) = 0.8, dice(4, 7) = 2 / (2 + 2) = 0.5;
 * dice(5, 7) = 2 2 / (2 + 2) = 1, dice(5, 8) = 2 / 4 = 0.5,
 * dice(5, 6) = 2 / 5 = 0.4;
 * dice(9, 10) = dice(9, 11) = 2 / 2 = 1 (a tie: the lower id first),
 * dice(9, 8) = 2 / 3, dice(9, 6) = 2 / 4 = 0.5.
 */
static const int32_t src_ids[] = { 4, 5, 2, 4, 2, 5, 5, 2, 9, 2 };
static const int32_t tgt_ids[] = { 6, 7, 2, 6, 2, 7, 7, 8, 2,
				   8, 6, 10, 11, 2 };
static int slen[] = { 3, 2, 3, 2 }, tlen[] = { 3, 2, 4, 5 };
static size_t soff[] = { 0, 3, 5, 8 }, toff[] = { 0, 3, 5, 9 };

/* attn's own vocabularies' special units: <pad> <s> </s> <unk> */
static const int32_t attn_special[4] = { 0, 1, 2, 3 };

static struct corpus corpus(void)
{
	struct corpus c = { 0 };

	c.n = 4;
	c.src = (int32_t *)src_ids;
	c.tgt = (int32_t *)tgt_ids;
	c.slen = slen;
	c.tlen = tlen;
	c.soff = soff;
	c.toff = toff;
	return c;
}

START_TEST(dice_by_hand)
{
	struct corpus c = corpus();
	enum { V = 12, K = 3 };
	int32_t freq[20], trans[V * K];
	float dice[V * K];
	int found, s, j;
	static const int32_t want[V][K] = {
		[4] = { 6, 7, -1 }, [5] = { 7, 8, 6 }, [9] = { 10, 11, 8 },
	};
	static const float want_dice[V][K] = {
		[4] = { 0.8f, 0.5f, 0 }, [5] = { 1, 0.5f, 0.4f },
		[9] = { 1, 1, 2.0f / 3 },
	};

	ck_assert_int_eq(lexicon_learn(&c, V, V, attn_special, 4, 3, K, freq,
				       &found, trans, dice), 0);
	/* 6 and 7 occur 3 times (the lower id first), then 8 */
	ck_assert_int_eq(found, 3);
	ck_assert_int_eq(freq[0], 6);
	ck_assert_int_eq(freq[1], 7);
	ck_assert_int_eq(freq[2], 8);
	for (s = 0; s < V; s++)
		for (j = 0; j < K; j++) {
			int32_t w = want[s][0] ? want[s][j] : -1;

			ck_assert_msg(trans[s * K + j] == w, "unit %d, %d: %d, "
				      "not %d", s, j, trans[s * K + j], w);
			ck_assert_float_eq_tol(dice[s * K + j], want_dice[s][j],
					       1e-6);
		}
	/* more frequent units than there are: every non-special one, those
	 * never seen after the rest by id, then -1 */
	ck_assert_int_eq(lexicon_learn(&c, V, V, attn_special, 4, 10, 1, freq,
				       &found, trans, NULL), 0);
	ck_assert_int_eq(found, 8);
	{
		static const int32_t all[10] = { 6, 7, 8, 10, 11, 4, 5, 9,
						 -1, -1 };

		for (j = 0; j < 10; j++)
			ck_assert_int_eq(freq[j], all[j]);
	}
	/* an id beyond the vocabularies is refused */
	ck_assert_int_eq(lexicon_learn(&c, 9, V, attn_special, 4, 3, K, freq,
				       &found, trans, NULL), -1);
	ck_assert_ptr_nonnull(strstr(err_msg(), "outside the vocabularies"));
}
END_TEST

static struct frame frames[2];
static struct frame *fp[2] = { &frames[0], &frames[1] };

static void put_src(struct frame *f, const int32_t *ids, uint64_t n)
{
	struct tensor t;

	frame_clear(f);
	ck_assert_int_eq(tensor_init_copy(&t, "src.ids", DT_I32, 1, &n, ids),
			 0);
	ck_assert_ptr_nonnull(frame_put(f, &t));
}

/*
 * Frequent: 6; translations (k = 2): 4 -> 7 8, 5 -> 9.  Sentence 0,
 * "4 </s>": 0 1 2 3 6 7 8; sentence 1, "5 5 </s>": 0 1 2 3 6 9; the
 * union 0 1 2 3 6 7 8 9.  Rows of sentences 0, 1, 0 (not in runs), in a
 * greedy decoder and in a beam's.
 */
START_TEST(decoder_shortlists)
{
	struct model m = { 0 }, other;
	struct sl_table *t;
	enum { V = 12, K = 3 };
	static const int32_t freq[] = { 6 };
	int32_t trans[V * 2];
	static const int32_t s0[] = { 4, 2 }, s1[] = { 5, 5, 2 };
	static const int32_t ids0[] = { 0, 1, 2, 3, 6, 7, 8 };
	static const int32_t ids1[] = { 0, 1, 2, 3, 6, 9 };
	static const int sent[] = { 0, 1, 0 };
	float W[V * K], b[V], x[3 * K], logp[3 * V];
	struct shortlist *sl;
	int i, j, r, cap;

	m.src_vocab = m.tgt_vocab = V;
	m.pad_id = 0, m.bos_id = 1, m.eos_id = 2, m.unk_id = 3;
	for (i = 0; i < V * 2; i++)
		trans[i] = -1;
	trans[4 * 2] = 7;
	trans[4 * 2 + 1] = 8;
	trans[5 * 2] = 9;
	for (i = 0; i < V * K; i++)
		W[i] = sinf(1.3f * i);
	for (i = 0; i < V; i++)
		b[i] = 0.1f * i - 0.5f;
	for (i = 0; i < 3 * K; i++)
		x[i] = cosf(0.7f * i);
	put_src(&frames[0], s0, 2);
	put_src(&frames[1], s1, 3);

	/* a table made for other vocabularies */
	other = m;
	other.tgt_vocab = V + 1;
	t = shortlist_table_new(&other, freq, 1, trans, 2);
	ck_assert_ptr_nonnull(t);
	ck_assert_ptr_null(shortlist_new(&m, t, fp, 2, 3, W, b, K,
					 WPACK_F32));
	ck_assert_ptr_nonnull(strstr(err_msg(), "for a model of"));
	shortlist_table_free(t);
	t = shortlist_table_new(&m, freq, 1, trans, 2);
	ck_assert_ptr_nonnull(t);

	/* greedy (one row a sentence): the union; beam: each sentence's */
	for (cap = 3; cap <= 6; cap += 3) {
		sl = shortlist_new(&m, t, fp, 2, cap, W, b, K, WPACK_F32);
		ck_assert_ptr_nonnull(sl);
		ck_assert_int_eq(sl->nw, cap == 3 ? 1 : 2);
		ck_assert_int_eq(sl->U, 8);
		ck_assert_int_eq(sl->uid[7], 9);
		ck_assert_int_eq(sl->off[1] - sl->off[0], 7);
		ck_assert_int_eq(sl->off[2] - sl->off[1], 6);
		for (j = 0; j < 7; j++)
			ck_assert_int_eq(sl->ids[sl->off[0] + j], ids0[j]);
		for (j = 0; j < 6; j++)
			ck_assert_int_eq(sl->ids[sl->off[1] + j], ids1[j]);
		ck_assert_int_eq(shortlist_find(sl, 1, 9), 5);
		ck_assert_int_eq(shortlist_find(sl, 1, 7), -1);
		ck_assert_int_eq(shortlist_find(sl, 0, 8), 6);
		ck_assert_int_eq(shortlist_find(sl, 0, 11), -1);

		/* rows of sentences 0, 1, 0: a naive log-softmax over each
		 * sentence's units of x W^T + b */
		ck_assert_int_eq(shortlist_logp(sl, logp, V, x, 3, sent), 0);
		for (r = 0; r < 3; r++) {
			const int32_t *ids = sent[r] ? ids1 : ids0;
			int n = sent[r] ? 6 : 7;
			double z[7], mx = -INFINITY, sum = 0;

			for (j = 0; j < n; j++) {
				z[j] = b[ids[j]];
				for (i = 0; i < K; i++)
					z[j] += (double)x[r * K + i] *
						W[ids[j] * K + i];
				mx = fmax(mx, z[j]);
			}
			for (j = 0; j < n; j++)
				sum += exp(z[j] - mx);
			for (j = 0; j < n; j++)
				ck_assert_double_eq_tol(logp[r * V + j],
					z[j] - mx - log(sum), 1e-5);
	}
	shortlist_free(sl);
	}

	/* a frame without src.ids */
	frame_clear(&frames[1]);
	ck_assert_ptr_null(shortlist_new(&m, t, fp, 2, 3, W, b, K,
					 WPACK_F32));
	ck_assert_ptr_nonnull(strstr(err_msg(), "src.ids"));

	/* bad tables */
	trans[3] = V;
	ck_assert_ptr_null(shortlist_table_new(&m, freq, 1, trans, 2));
	trans[3] = -1;
	ck_assert_ptr_null(shortlist_table_new(&m, freq, 1, trans, 0));
	ck_assert_ptr_null(shortlist_table_new(&m, (int32_t[]){ -1 }, 1,
					       trans, 2));
	shortlist_table_free(t);
	frame_clear(&frames[0]);
}
END_TEST

/*
 * Another vocabulary's special units (a Marian model's: </s> 0 and <unk>
 * 1, no <s>, its <pad> the last id; or </s> far from 2): the table leaves
 * out those, not ids 0 to 3, and every sentence's shortlist holds them.
 * The corpus above with </s> as 2 read as a unit: with specials 0 1 11,
 * 2 is the most frequent target unit (4 pairs), then 6 7 (3), 8 (2), 10.
 */
START_TEST(the_models_special_units)
{
	struct corpus c = corpus();
	struct model m = { 0 };
	enum { V = 12, K = 2 };
	int32_t special[4], freq[20], trans[V * K];
	static const int32_t src[] = { 9, 0 };
	struct sl_table *t;
	struct shortlist *sl;
	int found, j;

	m.src_vocab = m.tgt_vocab = V;
	m.pad_id = 11, m.bos_id = -1, m.eos_id = 0, m.unk_id = 1;
	ck_assert_int_eq(shortlist_specials(&m, special), 3);
	ck_assert_int_eq(special[0], 0);
	ck_assert_int_eq(special[1], 1);
	ck_assert_int_eq(special[2], 11);
	m.pad_id = 0;	/* one id twice; and one outside the vocabulary */
	m.unk_id = V;
	ck_assert_int_eq(shortlist_specials(&m, special), 1);
	ck_assert_int_eq(special[0], 0);
	m.pad_id = 11, m.unk_id = 1;
	ck_assert_int_eq(shortlist_specials(&m, special), 3);

	ck_assert_int_eq(lexicon_learn(&c, V, V, special, 3, 5, K, freq,
				       &found, trans, NULL), 0);
	ck_assert_int_eq(found, 5);
	ck_assert_int_eq(freq[0], 2);
	ck_assert_int_eq(freq[1], 6);
	ck_assert_int_eq(freq[2], 7);
	ck_assert_int_eq(freq[3], 8);
	ck_assert_int_eq(freq[4], 10);
	/* 2 is a unit now: dice(9, 2) = 2 / (1 + 4) = 0.4, below 10, 11's
	 * 1, but 11 is special: 10, then 8 (2 / 3) */
	ck_assert_int_eq(trans[9 * K], 10);
	ck_assert_int_eq(trans[9 * K + 1], 8);

	/* a sentence "9 </s>" with no frequent units: 0 1 8 10 11 */
	t = shortlist_table_new(&m, freq, 0, trans, K);
	ck_assert_ptr_nonnull(t);
	ck_assert_int_eq(t->nspecial, 3);
	put_src(&frames[0], src, 2);
	sl = shortlist_new(&m, t, fp, 1, 1, (float[V * 2]){ 0 },
			   (float[V]){ 0 }, 2, WPACK_F32);
	ck_assert_ptr_nonnull(sl);
	ck_assert_int_eq(sl->off[1] - sl->off[0], 5);
	for (j = 0; j < 5; j++)
		ck_assert_int_eq(sl->ids[j], ((int32_t[]){ 0, 1, 8, 10, 11 })[j]);
	shortlist_free(sl);
	shortlist_table_free(t);
	frame_clear(&frames[0]);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("shortlist");
	TCase *tc = tcase_create("shortlist");

	tcase_add_test(tc, dice_by_hand);
	tcase_add_test(tc, decoder_shortlists);
	tcase_add_test(tc, the_models_special_units);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
