/*
 * test_guided.c: guided alignment's loss (layers.h's
 * guided_forward_backward) on cases worked out by hand, its gradient
 * against finite differences of its loss, and a sentence's result the
 * same alone as in a padded batch; each at the query that predicts a
 * unit and at the one after it (shift).
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "nn/layers.h"
#include "run_suite.h"

/*
 * One query over three keys (the third padding), d 2, one head: scores
 * q.k / sqrt(2) of 0 and ln 3, so p = (1/4, 3/4).
 */
START_TEST(by_hand)
{
	float q[2] = { sqrtf(2) * logf(3), 0 };
	float k[6] = { 0, 0, 1, 0, 5, 5 };
	float ref[3] = { 1, 0, 1 };	/* the padded key's link ignored */
	float dq[2] = { 0 }, dk[6] = { 0 };
	int klen[1] = { 2 };
	double l;

	/* r = (1, 0): L = w ln 4; dL/dz = w (p - r) = w (-3/4, 3/4) */
	l = guided_forward_backward(dq, dk, q, k, ref, klen, 1, 1, 3, 2, 1, 0, 0,
				    0.5f, 2.0f);
	ck_assert_double_eq_tol(l, 0.5 * log(4), 1e-6);
	/* dq = scale sc sum_s dz_s k_s, sc = 1/sqrt(2): 2 * 0.5 * 0.75 /
	 * sqrt(2) in the first column */
	ck_assert_float_eq_tol(dq[0], 0.75f / sqrtf(2), 1e-6f);
	ck_assert_float_eq_tol(dq[1], 0, 1e-7f);
	/* dk_s = scale sc dz_s q: -(3/4) ln 3 and (3/4) ln 3 */
	ck_assert_float_eq_tol(dk[0], -0.75f * logf(3), 1e-5f);
	ck_assert_float_eq_tol(dk[2], 0.75f * logf(3), 1e-5f);
	ck_assert_float_eq(dk[1], 0);
	ck_assert_float_eq(dk[4], 0);	/* padding: no gradient */
	ck_assert_float_eq(dk[5], 0);

	/* two links: r = (1/2, 1/2), L = (ln 4 + ln 4/3) / 2, weight 1 */
	ref[1] = 1;
	memset(dq, 0, sizeof dq);
	memset(dk, 0, sizeof dk);
	l = guided_forward_backward(dq, dk, q, k, ref, klen, 1, 1, 3, 2, 1, 0, 0,
				    1.0f, 1.0f);
	ck_assert_double_eq_tol(l, (log(4) + log(4.0 / 3)) / 2, 1e-6);
	/* dz = (1/4 - 1/2, 3/4 - 1/2) */
	ck_assert_float_eq_tol(dq[0], 0.25f / sqrtf(2), 1e-6f);

	/* no link: no loss, no gradient */
	memset(ref, 0, sizeof ref);
	memset(dq, 0, sizeof dq);
	l = guided_forward_backward(dq, dk, q, k, ref, klen, 1, 1, 3, 2, 1, 0, 0,
				    1.0f, 1.0f);
	ck_assert_double_eq(l, 0);
	ck_assert_float_eq(dq[0], 0);
}
END_TEST

/* With shift 1, query t + 1 learns row t of the reference: query 1 of
 * two, with the scores above, learns row 0; row 1 and query 0 count
 * nothing. */
START_TEST(shifted_by_hand)
{
	float q[4] = { 9, -7, sqrtf(2) * logf(3), 0 };
	float k[4] = { 0, 0, 1, 0 };
	float ref[4] = { 1, 0, 0, 1 };
	float dq[4] = { 0 }, dk[4] = { 0 };
	int klen[1] = { 2 };
	double l;

	l = guided_forward_backward(dq, dk, q, k, ref, klen, 1, 2, 2, 2, 1, 0,
				    1, 1.0f, 1.0f);
	ck_assert_double_eq_tol(l, log(4), 1e-6);
	ck_assert_float_eq(dq[0], 0);
	ck_assert_float_eq(dq[1], 0);
	ck_assert_float_eq_tol(dq[2], 0.75f / sqrtf(2), 1e-6f);
}
END_TEST

enum { B = 2, TQ = 3, TK = 4, D = 6, HEADS = 3, HEAD = 1 };

/* guided_forward_backward's shift in the tests below */
static int shift;

static void fill(float *q, float *k, float *ref, int *klen)
{
	int i;

	for (i = 0; i < B * TQ * D; i++)
		q[i] = (float)sin(i * 1.3 + 0.2);
	for (i = 0; i < B * TK * D; i++)
		k[i] = (float)cos(i * 0.7 - 0.4);
	memset(ref, 0, sizeof(float) * B * TQ * TK);
	ref[0 * TK + 1] = 1;		/* b 0, t 0: one link */
	ref[1 * TK + 0] = 1;		/* t 1: two */
	ref[1 * TK + 3] = 1;
	/* t 2: none */
	ref[(TQ + 0) * TK + 1] = 1;	/* b 1 (two keys): t 0 */
	ref[(TQ + 1) * TK + 0] = 1;
	ref[(TQ + 2) * TK + 0] = 1;	/* t 2: both */
	ref[(TQ + 2) * TK + 1] = 1;
	klen[0] = TK;
	klen[1] = 2;
}

START_TEST(finite_differences)
{
	shift = _i;
	float q[B * TQ * D], k[B * TK * D], ref[B * TQ * TK];
	float dq[B * TQ * D] = { 0 }, dk[B * TK * D] = { 0 };
	float dq0[B * TQ * D], dk0[B * TK * D];
	const float w = 0.7f, scale = 0.5f, h = 1e-3f;
	int klen[B], i, side;

	fill(q, k, ref, klen);
	ck_assert(guided_forward_backward(dq, dk, q, k, ref, klen, B, TQ, TK,
					  D, HEADS, HEAD, shift, w, scale) > 0);
	for (side = 0; side < 2; side++) {
		float *x = side ? k : q, *g = side ? dk : dq;
		int n = side ? B * TK * D : B * TQ * D;

		for (i = 0; i < n; i++) {
			float keep = x[i];
			double lp, lm, fd;

			x[i] = keep + h;
			lp = guided_forward_backward(dq0, dk0, q, k, ref,
						     klen, B, TQ, TK, D, HEADS,
						     HEAD, shift, w, scale);
			x[i] = keep - h;
			lm = guided_forward_backward(dq0, dk0, q, k, ref,
						     klen, B, TQ, TK, D, HEADS,
						     HEAD, shift, w, scale);
			x[i] = keep;
			fd = scale * (lp - lm) / (2 * h);
			ck_assert_msg(fabs(fd - g[i]) < 2e-3 * (1 + fabs(fd)),
				      "%s[%d]: %g by differences, %g", side ?
				      "k" : "q", i, fd, g[i]);
			/* other heads' columns, padded keys: nothing */
			if (i % D / (D / HEADS) != HEAD ||
			    (side && i / D >= TK + klen[1]))
				ck_assert_float_eq(g[i], 0);
		}
	}
}
END_TEST

/* Sentence 1 of the batch alone, padded to its own lengths: the same
 * loss and gradients, bit for bit. */
START_TEST(batch_independence)
{
	shift = _i;
	float q[B * TQ * D], k[B * TK * D], ref[B * TQ * TK];
	float dq[B * TQ * D] = { 0 }, dk[B * TK * D] = { 0 };
	float k1[2 * D], ref1[TQ * 2], dq1[TQ * D] = { 0 }, dk1[2 * D] = { 0 };
	int klen[B], klen1[1] = { 2 }, t, s;
	double lb, l0, l1;

	fill(q, k, ref, klen);
	lb = guided_forward_backward(dq, dk, q, k, ref, klen, B, TQ, TK, D,
				     HEADS, HEAD, shift, 1.0f, 1.0f);
	memset(dq, 0, sizeof dq);
	memset(dk, 0, sizeof dk);
	/* sentence 0 alone is the batch's first rows */
	l0 = guided_forward_backward(dq, dk, q, k, ref, klen, 1, TQ, TK, D,
				     HEADS, HEAD, shift, 1.0f, 1.0f);
	memcpy(k1, k + TK * D, sizeof k1);
	for (t = 0; t < TQ; t++)
		for (s = 0; s < 2; s++)
			ref1[t * 2 + s] = ref[(TQ + t) * TK + s];
	l1 = guided_forward_backward(dq1, dk1, q + TQ * D, k1, ref1, klen1, 1,
				     TQ, 2, D, HEADS, HEAD, shift, 1.0f,
				     1.0f);
	ck_assert_double_eq_tol(lb, l0 + l1, 1e-12);
	memset(dq, 0, sizeof dq);
	memset(dk, 0, sizeof dk);
	guided_forward_backward(dq, dk, q, k, ref, klen, B, TQ, TK, D, HEADS,
				HEAD, shift, 1.0f, 1.0f);
	ck_assert_mem_eq(dq + TQ * D, dq1, sizeof dq1);
	ck_assert_mem_eq(dk + TK * D, dk1, sizeof dk1);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("guided");
	TCase *tc = tcase_create("guided");

	tcase_add_test(tc, by_hand);
	tcase_add_test(tc, shifted_by_hand);
	tcase_add_loop_test(tc, finite_differences, 0, 2);
	tcase_add_loop_test(tc, batch_independence, 0, 2);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
