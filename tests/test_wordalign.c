/*
 * test_wordalign.c: the word aligner of lib/align.  The diagonal prior's
 * closed forms against direct sums; digamma at known values; one EM
 * iteration of IBM Model 1 and of Model 2 worked out by hand (in the
 * comments); the tension left alone when the data agree with it, grown
 * on a diagonal corpus and shrunk on a reversed one; convergence to a
 * known lexicon and permutation; the symmetrisation heuristics on hand
 * cases, the posterior one too, and Model 2's posteriors against their
 * definition; the same model for any thread count and either way of
 * building the table; the model file's round trip and refusals, every
 * record out of bounds, the HMM's jump widths too; the HMM after Model 2
 * on a corpus of swapped neighbours, its jumps and links; word folding.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "align/bitext.h"
#include "align/diagonal.h"
#include "align/em.h"
#include "align/symmetrize.h"
#include "align/wamodel.h"
#include "base/errmsg.h"
#include "kernels/kernels.h"
#include "run_suite.h"
#include "stream/stream.h"
#include "tmpdir.h"

/* The bitext of pairs "source ||| target" into m's vocabularies. */
static void bitext(struct wa_model *m, struct wa_bitext *b,
		   const char *const *pairs, int n)
{
	struct wa_vocab *v[2] = { &m->vocab[0], &m->vocab[1] };

	for (int p = 0; p < n; p++) {
		const char *sep = strstr(pairs[p], "|||");
		const char *s[2] = { pairs[p], sep + 3 };
		size_t len[2] = { sep - pairs[p], strlen(sep + 3) };

		ck_assert_int_eq(wa_bitext_add(b, v, s, len, m->fold, 1), 0);
	}
}

static void train(struct wa_model *m, const struct wa_bitext *b,
		  const struct wa_em_opts *o)
{
	for (int k = 0; k < 2; k++)
		ck_assert_msg(wa_em_train(&m->dir[k], b, k, m->vocab[k].n,
					  m->vocab[!k].n, o, NULL, NULL) == 0,
			      "%s", err_msg());
}

/* t(f | e) of direction k, by the words' text. */
static double t_of(const struct wa_model *m, int k, const char *e,
		   const char *f)
{
	struct wa_vocab *ve = (struct wa_vocab *)&m->vocab[k],
			*vf = (struct wa_vocab *)&m->vocab[!k];
	int32_t ie = e ? wa_vocab_id(ve, e, strlen(e), 0) : 0;
	int32_t jf = wa_vocab_id(vf, f, strlen(f), 0);

	ck_assert(ie >= 0 && jf > 0);
	return wa_dir_t(&m->dir[k], ie, jf);
}

START_TEST(diagonal_closed_forms)
{
	static const double lambdas[] = { 0, 1e-4, 0.1, 4, 17.5, 60 };

	for (int n = 1; n <= 9; n++)
		for (int m = 1; m <= 9; m++)
			for (int j = 1; j <= m; j++)
				for (int l = 0; l < 6; l++) {
					double lam = lambdas[l], z = 0, hz = 0;

					for (int i = 1; i <= n; i++) {
						double h = wa_diag_h(i, j, m, n);

						z += exp(lam * h);
						hz += h * exp(lam * h);
					}
					ck_assert_double_eq_tol(
						wa_diag_z(j, m, n, lam), z,
						1e-12 * z);
					ck_assert_double_eq_tol(
						wa_diag_dlogz(j, m, n, lam),
						hz / z, 1e-10);
				}
	/* a long sentence, the closed form's own ground */
	double z = 0;

	for (int i = 1; i <= 300; i++)
		z += exp(4 * wa_diag_h(i, 7, 280, 300));
	ck_assert_double_eq_tol(wa_diag_z(7, 280, 300, 4), z, 1e-11 * z);
	/* h itself: -|i/n - j/m| */
	ck_assert_double_eq_tol(wa_diag_h(1, 2, 4, 3), -(0.5 - 1.0 / 3), 1e-15);
}
END_TEST

START_TEST(digamma_known)
{
	const double gamma = 0.57721566490153286;

	ck_assert_double_eq_tol(wa_digamma(1), -gamma, 1e-12);
	ck_assert_double_eq_tol(wa_digamma(0.5), -gamma - 2 * log(2), 1e-12);
	ck_assert_double_eq_tol(wa_digamma(10), 2.251752589066721, 1e-12);
	/* psi(x + 1) = psi(x) + 1 / x, at a small x */
	ck_assert_double_eq_tol(wa_digamma(1.01), wa_digamma(0.01) + 100, 1e-9);
}
END_TEST

/*
 * IBM Model 1 (uniform prior 1 / (n + 1)), plain EM, one iteration, on
 * "a b ||| x y" and "a ||| x".  t starts at 1 / 2 (two target words), so
 * every link's posterior is its prior: 1/3 in the first pair, 1/2 in
 * the second.  Counts: c(NULL, x) = 1/3 + 1/2 = 5/6, c(NULL, y) = 1/3,
 * c(a, x) = 5/6, c(a, y) = 1/3, c(b, x) = c(b, y) = 1/3; so t(x | NULL)
 * = t(x | a) = 5/7, t(y | .) = 2/7, t(x | b) = t(y | b) = 1/2.  Each
 * target word's p(f | e) is 1/2: log-likelihood 3 ln 1/2.
 */
static double ll_seen;
static void keep_ll(void *ctx, const struct wa_em_report *r)
{
	(void)ctx;
	ll_seen = r->log_lik;
	ck_assert_int_eq(r->words, 3);
}

START_TEST(em_model1_by_hand)
{
	static const char *const pairs[] = { "a b ||| x y", "a ||| x" };
	struct wa_em_opts o = { .iterations = 1, .p0 = 0.08, .tension = 4 };
	struct wa_model m = { 0 };
	struct wa_bitext b = { 0 };

	bitext(&m, &b, pairs, 2);
	ck_assert_int_eq(wa_em_train(&m.dir[0], &b, 0, 2, 2, &o, keep_ll,
				     NULL), 0);
	ck_assert_double_eq_tol(ll_seen, 3 * log(0.5), 1e-12);
	ck_assert_double_eq_tol(t_of(&m, 0, NULL, "x"), 5.0 / 7, 1e-7);
	ck_assert_double_eq_tol(t_of(&m, 0, NULL, "y"), 2.0 / 7, 1e-7);
	ck_assert_double_eq_tol(t_of(&m, 0, "a", "x"), 5.0 / 7, 1e-7);
	ck_assert_double_eq_tol(t_of(&m, 0, "a", "y"), 2.0 / 7, 1e-7);
	ck_assert_double_eq_tol(t_of(&m, 0, "b", "x"), 0.5, 1e-7);
	ck_assert_double_eq_tol(t_of(&m, 0, "b", "y"), 0.5, 1e-7);
	ck_assert_int_eq(m.dir[0].nnz, 6);
	wa_bitext_free(&b);
	wa_model_free(&m);
}
END_TEST

/*
 * Model 2, one iteration on "a b ||| x y", tension 4, p0 0.08.  For x
 * (j = 1 of 2): h(a) = -|1/2 - 1/2| = 0, h(b) = -|2/2 - 1/2| = -1/2, so
 * the prior is 0.08 for NULL, P = 0.92 / (1 + e^-2) for a, Q = 0.92
 * e^-2 / (1 + e^-2) for b; for y the other way round.  With t uniform
 * the posteriors are the priors: c(a, x) = c(b, y) = P, c(a, y) =
 * c(b, x) = Q, c(NULL, .) = 0.08.  Plain EM: t(x | a) = P / (P + Q) =
 * 1 / (1 + e^-2), t(x | NULL) = 1/2.  With alpha = 0.01: t(x | a) =
 * exp(psi(P + alpha) - psi(P + Q + 2 alpha)).  The tension stays 4: with
 * t uniform the links' expected h is the prior's, the slope zero (to the
 * float precision the posteriors are kept in).
 */
START_TEST(em_model2_by_hand)
{
	static const char *const pairs[] = { "a b ||| x y" };
	struct wa_em_opts o = { .iterations = 1, .diagonal = 1, .optimize = 1,
				.tension = 4, .p0 = 0.08 };
	double e2 = exp(-2), P = 0.92 / (1 + e2), Q = 0.92 * e2 / (1 + e2);

	for (int vb = 0; vb < 2; vb++) {
		struct wa_model m = { 0 };
		struct wa_bitext b = { 0 };
		double want = 1 / (1 + e2);

		o.alpha = vb ? 0.01 : 0;
		if (vb)
			want = exp(wa_digamma(P + 0.01) -
				   wa_digamma(P + Q + 0.02));
		bitext(&m, &b, pairs, 1);
		train(&m, &b, &o);
		ck_assert_double_eq_tol(t_of(&m, 0, "a", "x"), want, 1e-7);
		ck_assert_double_eq_tol(t_of(&m, 0, "b", "y"), want, 1e-7);
		ck_assert_double_eq_tol(t_of(&m, 1, "x", "a"), want, 1e-7);
		if (!vb)
			ck_assert_double_eq_tol(t_of(&m, 0, NULL, "x"), 0.5,
						1e-7);
		ck_assert_msg(fabs(m.dir[0].tension - 4) < 1e-6, "%.17g",
			      m.dir[0].tension);
		wa_bitext_free(&b);
		wa_model_free(&m);
	}
}
END_TEST

/* count pairs of random words (none twice) of a vocabulary of 20, 3 to 8: target
 * word k is "T<perm of k>"; order: 0 the same, 1 reversed, 2 adjacent
 * pairs swapped.  With pos, where target word j's source word is. */
static char **synthetic(int count, int order, unsigned seed)
{
	char **p = malloc(count * sizeof *p);

	for (int q = 0; q < count; q++) {
		int n = 3 + (int)((seed = seed * 1103515245 + 12345) >> 16) % 6;
		int w[8];
		char s[256] = "", t[256] = "", x[16];

		for (int i = 0; i < n; i++) {
			int dup;

			do {	/* no word twice in a sentence */
				w[i] = (int)((seed = seed * 1103515245 +
					      12345) >> 16) % 20;
				dup = 0;
				for (int k = 0; k < i; k++)
					dup |= w[k] == w[i];
			} while (dup);
			snprintf(x, sizeof x, "s%d ", w[i]);
			strcat(s, x);
		}
		strcat(s, "|||");
		for (int j = 0; j < n; j++) {
			int i = order == 0 ? j : order == 1 ? n - 1 - j :
				(j ^ 1) < n ? j ^ 1 : j;

			snprintf(x, sizeof x, " T%d", (w[i] * 7 + 3) % 20);
			strcat(t, x);
		}
		p[q] = malloc(strlen(s) + strlen(t) + 1);
		strcpy(p[q], s);
		strcat(p[q], t);
	}
	return p;
}

static void free_pairs(char **p, int count)
{
	for (int q = 0; q < count; q++)
		free(p[q]);
	free(p);
}

/* Every pair's intersection links each target word j to the source word
 * of synthetic()'s order 2: j's neighbour, swapped (j ^ 1). */
static void assert_swapped_links(const struct wa_model *m,
				 const struct wa_bitext *b)
{
	struct wa_links l;

	ck_assert_int_eq(wa_align_bitext(m, b, WA_SYM_INTERSECT, 0.5, &l), 0);
	for (int p = 0; p < b->n; p++) {
		int n = wa_len(b, 0, p);
		const int32_t *ij = l.ij + 2 * l.off[p];

		ck_assert_int_eq(l.count[p], n);
		for (int k = 0; k < n; k++) {
			int j = ij[2 * k + 1], i = ij[2 * k];

			ck_assert_int_eq(i, (j ^ 1) < n ? j ^ 1 : j);
		}
	}
	wa_links_free(&l);
}

/* The known permutation comes back, every link of every pair, and the
 * lexicon is learned: t(T(7k+3 mod 20) | s_k) near 1. */
START_TEST(em_converges)
{
	struct wa_em_opts o = { .iterations = 10, .diagonal = 1, .optimize = 1,
				.tension = 4, .p0 = 0.08, .alpha = 0.01 };
	char **pairs = synthetic(300, 2, 7);
	struct wa_model m = { 0 };
	struct wa_bitext b = { 0 };

	bitext(&m, &b, (const char *const *)pairs, 300);
	train(&m, &b, &o);
	ck_assert_double_gt(t_of(&m, 0, "s5", "T18"), 0.95);
	ck_assert_double_gt(t_of(&m, 1, "T18", "s5"), 0.95);
	assert_swapped_links(&m, &b);
	wa_bitext_free(&b);
	wa_model_free(&m);
	free_pairs(pairs, 300);
}
END_TEST

/* The HMM after Model 2 on pairs whose adjacent words swap: the same
 * lexicon and links, and jump widths that say so: back one (2 to 1, 4
 * to 3, ...) and forward three (1 to 4, ...) the likeliest. */
START_TEST(hmm_converges)
{
	struct wa_em_opts o = { .iterations = 5, .diagonal = 1, .optimize = 1,
				.tension = 4, .p0 = 0.08, .alpha = 0.01,
				.hmm_iterations = 5 };
	char **pairs = synthetic(300, 2, 7);
	struct wa_model m = { 0 };
	struct wa_bitext b = { 0 };

	bitext(&m, &b, (const char *const *)pairs, 300);
	train(&m, &b, &o);
	ck_assert(m.dir[0].hmm && m.dir[1].hmm);
	ck_assert_double_gt(t_of(&m, 0, "s5", "T18"), 0.95);
	for (int k = 0; k < 2; k++) {
		const double *J = m.dir[k].jump;

		ck_assert_double_gt(J[wa_hmm_cell(-1)], 0.3);
		ck_assert_double_gt(J[wa_hmm_cell(3)], 0.2);
		ck_assert_double_lt(J[wa_hmm_cell(1)], 0.05);
	}
	assert_swapped_links(&m, &b);
	wa_bitext_free(&b);
	wa_model_free(&m);
	free_pairs(pairs, 300);
}
END_TEST

/* The tension grows on a monotone corpus and falls on a reversed one
 * (not to its least: the middle words of a reversed line stay near the
 * diagonal). */
START_TEST(tension_follows_data)
{
	struct wa_em_opts o = { .iterations = 4, .diagonal = 1, .optimize = 1,
				.tension = 4, .p0 = 0.08, .alpha = 0.01 };

	for (int order = 0; order < 2; order++) {
		char **pairs = synthetic(200, order, 3);
		struct wa_model m = { 0 };
		struct wa_bitext b = { 0 };

		bitext(&m, &b, (const char *const *)pairs, 200);
		train(&m, &b, &o);
		if (order == 0)
			ck_assert_double_gt(m.dir[0].tension, 8);
		else
			ck_assert_double_lt(m.dir[0].tension, 2);
		wa_bitext_free(&b);
		wa_model_free(&m);
		free_pairs(pairs, 200);
	}
}
END_TEST

/* The links of sym as "i-j ..." */
static char *sym_text(int sym, const int32_t *fwd, int m, const int32_t *rev,
		      int n)
{
	static char out[256];
	unsigned char grid[64];
	int32_t ij[32];
	int k = wa_symmetrize(sym, fwd, m, rev, n, grid, ij), len = 0;

	out[0] = 0;
	for (int q = 0; q < k; q++)
		len += snprintf(out + len, sizeof out - len, "%s%d-%d",
				q ? " " : "", ij[2 * q], ij[2 * q + 1]);
	return out;
}

/*
 * Case 1 (4 x 4): forward 0-0 3-1 2-2, reverse 0-0 2-2 3-3.  The
 * intersection 0-0 2-2; grow: 0-0 has no neighbour in the union; 2-2's
 * diagonal neighbour 3-1 is (source 3 unaligned), then 3-3 (target 3
 * unaligned): the union.
 *
 * Case 2 (4 x 4): forward 0-0 0-1 3-2 3-3, reverse 0-0.  Grow from 0-0
 * adds 0-1 (target 1 unaligned), nothing else touches; final-and, the
 * forward links in order: 3-2 (both unaligned) yes, then 3-3 no (source
 * 3 is aligned now).
 */
START_TEST(symmetrize_by_hand)
{
	static const int32_t f1[4] = { 0, 3, 2, -1 }, r1[4] = { 0, -1, 2, 3 };
	static const int32_t f2[4] = { 0, 0, 3, 3 }, r2[4] = { 0, -1, -1, -1 };

	ck_assert_str_eq(sym_text(WA_SYM_FORWARD, f1, 4, r1, 4),
			 "0-0 2-2 3-1");
	ck_assert_str_eq(sym_text(WA_SYM_REVERSE, f1, 4, r1, 4),
			 "0-0 2-2 3-3");
	ck_assert_str_eq(sym_text(WA_SYM_INTERSECT, f1, 4, r1, 4), "0-0 2-2");
	ck_assert_str_eq(sym_text(WA_SYM_UNION, f1, 4, r1, 4),
			 "0-0 2-2 3-1 3-3");
	ck_assert_str_eq(sym_text(WA_SYM_GDFA, f1, 4, r1, 4),
			 "0-0 2-2 3-1 3-3");
	ck_assert_str_eq(sym_text(WA_SYM_GDFA, f2, 4, r2, 4), "0-0 0-1 3-2");
	ck_assert_str_eq(sym_text(WA_SYM_INTERSECT, f2, 4, r2, 4), "0-0");
	ck_assert_str_eq(sym_text(WA_SYM_UNION, f2, 4, r2, 4),
			 "0-0 0-1 3-2 3-3");
	/* not square: 2 source words, 3 target words */
	static const int32_t f3[3] = { 0, -1, 1 }, r3[2] = { 0, 1 };

	ck_assert_str_eq(sym_text(WA_SYM_GDFA, f3, 3, r3, 2), "0-0 1-1 1-2");
	ck_assert_int_eq(wa_sym_parse("grow-diag-final-and"), WA_SYM_GDFA);
	ck_assert_int_eq(wa_sym_parse("grow-diag"), -1);
}
END_TEST

static int same_dir(const struct wa_dir *a, const struct wa_dir *b)
{
	return a->ne == b->ne && a->nf == b->nf && a->nnz == b->nnz &&
	       a->tension == b->tension && a->p0 == b->p0 &&
	       a->diagonal == b->diagonal && a->hmm == b->hmm &&
	       !memcmp(a->jump, b->jump, sizeof a->jump) &&
	       !memcmp(a->row, b->row, (a->ne + 2) * sizeof *a->row) &&
	       !memcmp(a->col, b->col, a->nnz * sizeof *a->col) &&
	       !memcmp(a->prob, b->prob, a->nnz * sizeof *a->prob);
}

/* The posterior heuristic by hand: the two directions' posteriors of
 * each link averaged, (0,0) (0.8 + 0.6) / 2 = 0.7, (0,1) 0.3, (1,0)
 * 0.15, (1,1) (0.5 + 0.8) / 2 = 0.65, against thresholds. */
START_TEST(posterior_by_hand)
{
	/* forward, by target word: NULL, source 0, source 1 */
	static const float fwd[] = { 0.1f, 0.8f, 0.1f, 0.2f, 0.3f, 0.5f };
	/* reverse, by source word: NULL, target 0, target 1 */
	static const float rev[] = { 0.1f, 0.6f, 0.3f, 0.0f, 0.2f, 0.8f };
	static const struct { double t; int k; int32_t ij[4]; } want[] = {
		{ 0.5, 2, { 0, 0, 1, 1 } }, { 0.65, 2, { 0, 0, 1, 1 } },
		{ 0.66, 1, { 0, 0 } }, { 0.7, 1, { 0, 0 } }, { 0.71, 0, { 0 } },
	};
	int32_t ij[8];

	ck_assert_int_eq(wa_sym_parse("posterior"), WA_SYM_POSTERIOR);
	for (size_t c = 0; c < sizeof want / sizeof *want; c++) {
		int k = wa_symmetrize_posterior(fwd, 2, rev, 2, want[c].t, ij);

		ck_assert_int_eq(k, want[c].k);
		ck_assert(!memcmp(ij, want[c].ij, 2 * k * sizeof *ij));
	}
}
END_TEST

/* Model 2's posteriors as the plain definition gives them: the prior
 * times t, normalised over the NULL word and the source words, for
 * every target word of every pair; their largest is wa_dir_align's
 * link.  The HMM's are hmm.c's (test_hmm). */
START_TEST(model2_posteriors)
{
	struct wa_em_opts o = { .iterations = 3, .diagonal = 1, .optimize = 1,
				.tension = 4, .p0 = 0.08, .alpha = 0.01 };
	char **pairs = synthetic(50, 2, 3);
	struct wa_model m = { 0 };
	struct wa_bitext b = { 0 };
	struct wa_hmm_work w = { 0 };
	float post[9 * 9];
	double prior[9];
	int32_t a[8];

	bitext(&m, &b, (const char *const *)pairs, 50);
	train(&m, &b, &o);
	for (int p = 0; p < b.n; p++) {
		const struct wa_dir *d = &m.dir[0];
		const int32_t *e = wa_words(&b, 0, p), *f = wa_words(&b, 1, p);
		int n = wa_len(&b, 0, p), mm = wa_len(&b, 1, p);

		ck_assert_int_eq(wa_dir_posteriors(d, e, n, f, mm, post, &w), 0);
		ck_assert_int_eq(wa_dir_align(d, e, n, f, mm, a, &w), 0);
		for (int j = 0; j < mm; j++) {
			double z = 0;
			int best = 0;

			wa_diag_prior(1, d->tension, d->p0, j + 1, mm, n, prior);
			for (int i = 0; i <= n; i++)
				z += prior[i] * wa_dir_t(d, i ? e[i - 1] : 0, f[j]);
			for (int i = 0; i <= n; i++) {
				double q = prior[i] *
					   wa_dir_t(d, i ? e[i - 1] : 0, f[j]) / z;

				ck_assert(fabs(post[j * (n + 1) + i] - q) < 1e-6);
				if (post[j * (n + 1) + i] > post[j * (n + 1) + best])
					best = i;
			}
			ck_assert_int_eq(a[j], best - 1);
		}
	}
	wa_hmm_work_free(&w);
	wa_bitext_free(&b);
	wa_model_free(&m);
	free_pairs(pairs, 50);
}
END_TEST

/* One model for 1, 2 and 3 threads, bit for bit; IBM Model 2 alone,
 * and followed by the HMM. */
START_TEST(threads_same_model)
{
	struct wa_em_opts o = { .iterations = 3, .diagonal = 1, .optimize = 1,
				.tension = 4, .p0 = 0.08, .alpha = 0.01,
				.hmm_iterations = 2 * _i };
	char **pairs = synthetic(500, 2, 11);
	struct wa_model m[3];
	struct wa_bitext b[3] = { { 0 } };

	memset(m, 0, sizeof m);
	for (int k = 0; k < 3; k++) {
		kern_set_threads(k + 1);
		bitext(&m[k], &b[k], (const char *const *)pairs, 500);
		train(&m[k], &b[k], &o);
	}
	for (int k = 1; k < 3; k++)
		for (int d = 0; d < 2; d++)
			ck_assert(same_dir(&m[0].dir[d], &m[k].dir[d]));
	for (int k = 0; k < 3; k++) {
		wa_bitext_free(&b[k]);
		wa_model_free(&m[k]);
	}
	free_pairs(pairs, 500);
}
END_TEST

/* The table's cells found by one sort of keys and slots, or by a sort
 * of the keys and a search for each slot: the same model, bit for bit. */
START_TEST(packed_same_as_unpacked)
{
	struct wa_em_opts o = { .iterations = 3, .diagonal = 1, .optimize = 1,
				.tension = 4, .p0 = 0.08, .alpha = 0.01 };
	char **pairs = synthetic(700, 2, 23);
	struct wa_model m[2];
	struct wa_bitext b[2] = { { 0 } };

	memset(m, 0, sizeof m);
	for (int k = 0; k < 2; k++) {
		wa_em_set_unpacked(k);
		bitext(&m[k], &b[k], (const char *const *)pairs, 700);
		train(&m[k], &b[k], &o);
	}
	wa_em_set_unpacked(0);
	for (int d = 0; d < 2; d++)
		ck_assert(same_dir(&m[0].dir[d], &m[1].dir[d]));
	for (int k = 0; k < 2; k++) {
		wa_bitext_free(&b[k]);
		wa_model_free(&m[k]);
	}
	free_pairs(pairs, 700);
}
END_TEST

/* Saved and loaded: the same tables, vocabularies and alignments;
 * IBM Model 2 in a file of version 1, the HMM in one of 2. */
START_TEST(model_round_trip)
{
	struct wa_em_opts o = { .iterations = 3, .diagonal = 1, .optimize = 1,
				.tension = 4, .p0 = 0.1, .alpha = 0.01,
				.hmm_iterations = 2 * _i };
	char **pairs = synthetic(100, 2, 5);
	struct wa_model m = { .fold = 1 }, r;
	struct wa_bitext b = { 0 };
	struct wa_links l1, l2;
	const char *path = tmpdir_path("m.tsr");

	bitext(&m, &b, (const char *const *)pairs, 100);
	train(&m, &b, &o);
	ck_assert_msg(wa_model_save(&m, path) == 0, "%s", err_msg());
	ck_assert_msg(wa_model_load(&r, path) == 0, "%s", err_msg());
	ck_assert_int_eq(r.fold, 1);
	struct tsr_map *map = tsr_map_open(path);
	const struct tensor *v = frame_find(&map->f, "align.version");

	ck_assert_int_eq(*(const int32_t *)v->data, _i ? 2 : 1);
	ck_assert(!frame_find(&map->f, "align.fwd.jumps") == !_i);
	tsr_map_close(map);
	ck_assert_int_eq(r.dir[0].hmm, _i);
	for (int k = 0; k < 2; k++) {
		ck_assert(same_dir(&m.dir[k], &r.dir[k]));
		ck_assert_int_eq(m.vocab[k].n, r.vocab[k].n);
		for (int32_t id = 1; id <= m.vocab[k].n; id++)
			ck_assert_str_eq(wa_vocab_word(&m.vocab[k], id),
					 wa_vocab_word(&r.vocab[k], id));
	}
	for (int sym = 0; sym <= WA_SYM_POSTERIOR; sym++) {
		ck_assert_int_eq(wa_align_bitext(&m, &b, sym, 0.7, &l1), 0);
		ck_assert_int_eq(wa_align_bitext(&r, &b, sym, 0.7, &l2), 0);
		ck_assert(!memcmp(l1.count, l2.count, b.n * sizeof *l1.count));
		for (int p = 0; p < b.n; p++)
			ck_assert(!memcmp(l1.ij + 2 * l1.off[p],
					  l2.ij + 2 * l2.off[p],
					  2 * l1.count[p] * sizeof *l1.ij));
		wa_links_free(&l1);
		wa_links_free(&l2);
	}
	wa_model_free(&r);
	wa_bitext_free(&b);
	wa_model_free(&m);
	free_pairs(pairs, 100);
}
END_TEST

/* A file of another kind, and one cut short, are refused. */
START_TEST(model_refused)
{
	static const char *const pairs[] = { "a b ||| x y" };
	struct wa_em_opts o = { .iterations = 1, .diagonal = 1, .tension = 4,
				.p0 = 0.08 };
	struct wa_model m = { 0 }, r;
	struct wa_bitext b = { 0 };
	const char *path = tmpdir_path("m.tsr"), *cut = tmpdir_path("cut.tsr");
	FILE *f;
	char buf[1 << 16];
	size_t n;

	ck_assert_int_eq(wa_model_load(&r, tmpdir_path("none.tsr")), -1);
	ck_assert_ptr_nonnull(strstr(err_msg(), "none.tsr"));
	bitext(&m, &b, pairs, 1);
	train(&m, &b, &o);
	ck_assert_int_eq(wa_model_save(&m, path), 0);
	f = fopen(path, "rb");
	n = fread(buf, 1, sizeof buf, f);
	fclose(f);
	f = fopen(cut, "wb");
	fwrite(buf, 1, n - 10, f);
	fclose(f);
	ck_assert_int_eq(wa_model_load(&r, cut), -1);
	ck_assert_ptr_nonnull(strstr(err_msg(), "cut.tsr"));
	/* a rows record that runs backwards */
	m.dir[0].row[1] = m.dir[0].row[2] + 1;
	ck_assert_int_eq(wa_model_save(&m, path), 0);
	ck_assert_int_eq(wa_model_load(&r, path), -1);
	ck_assert_ptr_nonnull(strstr(err_msg(), "align.fwd"));
	wa_bitext_free(&b);
	wa_model_free(&m);
}
END_TEST

/* The good model file good with record name replaced (dtype, rank, n
 * elements of data) or, data NULL, dropped, written to path. */
static void edit_model(const char *good, const char *path, const char *name,
		       int dtype, int rank, uint64_t n, const void *data)
{
	struct tsr_map *map = tsr_map_open(good);
	struct tsr_writer *w = tsr_writer_atomic(path, 0);
	int last = -1;

	ck_assert_msg(map && w, "%s", err_msg());
	for (int i = 0; i < map->f.n; i++)
		if (data || strcmp(map->f.rec[i].name, name))
			last = i;
	for (int i = 0; i < map->f.n; i++) {
		struct tensor t = map->f.rec[i];

		if (!strcmp(t.name, name)) {
			if (!data)
				continue;
			t.dtype = dtype;
			t.rank = rank;
			t.dim[0] = rank ? n : 1;
			t.data = (void *)data;
			t.nbytes = n * dtype_size(dtype);
		}
		t.owned = 0;
		ck_assert_int_eq(tsr_write(w, &t, 0, i == last), 0);
	}
	ck_assert_int_eq(tsr_writer_commit(w), 0);
	tsr_map_close(map);
}

/* path is refused, the message naming it and saying what. */
static void refused(const char *path, const char *what)
{
	struct wa_model r;

	ck_assert_int_eq(wa_model_load(&r, path), -1);
	ck_assert_msg(strstr(err_msg(), path) && strstr(err_msg(), what),
		      "said \"%s\", want %s", err_msg(), what);
}

/* Each record out of bounds is refused by the loader with a message
 * naming the file and the record, before the tables are copied; the
 * first case read past the cells before (ASan: make SAN=1 check). */
START_TEST(model_bounds)
{
	static const char *const pairs[] = { "a b c ||| x y", "b c ||| y z" };
	struct wa_em_opts o = { .iterations = 2, .diagonal = 1, .tension = 4,
				.p0 = 0.08 };
	struct wa_model m = { 0 }, r;
	struct wa_bitext b = { 0 };
	const char *good = tmpdir_path("good.tsr"), *bad = tmpdir_path("bad.tsr");
	const struct wa_dir *d;
	int64_t *row;
	int32_t *col;
	float *prob;
	double nan = NAN, inf = INFINITY;

	bitext(&m, &b, pairs, 2);
	train(&m, &b, &o);
	ck_assert_int_eq(wa_model_save(&m, good), 0);
	ck_assert_msg(wa_model_load(&r, good) == 0, "%s", err_msg());
	wa_model_free(&r);
	d = &m.dir[0];
	ck_assert_int_ge(d->nnz, 3);
	row = malloc((d->ne + 2) * sizeof *row);
	col = malloc(d->nnz * sizeof *col);
	prob = malloc(d->nnz * sizeof *prob);

	/* a row that ends past the cells, the last one back at them: read
	 * past the cells before the check of rows went row by row */
	memcpy(row, d->row, (d->ne + 2) * sizeof *row);
	row[1] = d->nnz + 1000;
	edit_model(good, bad, "align.fwd.rows", DT_I64, 1, d->ne + 2, row);
	refused(bad, "record align.fwd.rows: row 0 ends at");
	/* 2^40 cells claimed: refused before anything is allocated */
	memcpy(row, d->row, (d->ne + 2) * sizeof *row);
	row[d->ne + 1] = (int64_t)1 << 40;
	edit_model(good, bad, "align.fwd.rows", DT_I64, 1, d->ne + 2, row);
	refused(bad, "record align.fwd.rows: the rows run from 0 to "
		"1099511627776, not from 0 to the");
	row[0] = -1;
	row[d->ne + 1] = d->nnz;
	edit_model(good, bad, "align.fwd.rows", DT_I64, 1, d->ne + 2, row);
	refused(bad, "record align.fwd.rows");
	/* rows of the wrong length */
	edit_model(good, bad, "align.fwd.rows", DT_I64, 1, d->ne + 1, d->row);
	refused(bad, "records align.fwd.*: shapes");
	/* target words outside the vocabulary, or out of order */
	const int32_t outside[] = { 0, d->nf + 1, -5, INT32_MAX, INT32_MIN };

	for (size_t k = 0; k < sizeof outside / sizeof *outside; k++) {
		memcpy(col, d->col, d->nnz * sizeof *col);
		col[d->nnz - 1] = outside[k];
		edit_model(good, bad, "align.fwd.cols", DT_I32, 1, d->nnz, col);
		refused(bad, "record align.fwd.cols: row");
	}
	memcpy(col, d->col, d->nnz * sizeof *col);
	col[1] = col[0];
	edit_model(good, bad, "align.fwd.cols", DT_I32, 1, d->nnz, col);
	refused(bad, "out of order or range");
	/* cells and probabilities of different lengths */
	edit_model(good, bad, "align.fwd.cols", DT_I32, 1, d->nnz - 1, d->col);
	refused(bad, "records align.fwd.*: shapes");
	/* probabilities not finite or out of (0, 1] */
	const float badp[] = { NAN, INFINITY, -INFINITY, 0, -0.5f, 1.5f };

	for (size_t k = 0; k < sizeof badp / sizeof *badp; k++) {
		memcpy(prob, d->prob, d->nnz * sizeof *prob);
		prob[1] = badp[k];
		edit_model(good, bad, "align.fwd.probs", DT_F32, 1, d->nnz, prob);
		refused(bad, "record align.fwd.probs: row");
	}
	/* the parameters: diagonal, tension, p0 */
	const double badpa[][3] = {
		{ 0.5, 4, 0.08 }, { nan, 4, 0.08 }, { 1, nan, 0.08 },
		{ 1, -1, 0.08 }, { 1, inf, 0.08 }, { 1, 4, 1 }, { 1, 4, nan },
		{ 1, 4, -0.1 },
	};

	for (size_t k = 0; k < sizeof badpa / sizeof *badpa; k++) {
		edit_model(good, bad, "align.rev.params", DT_F64, 1, 3, badpa[k]);
		refused(bad, "record align.rev.params");
	}
	edit_model(good, bad, "align.rev.params", DT_F64, 1, 2, badpa[0]);
	refused(bad, "records align.rev.*: shapes");
	/* words: repeated, with a space, not ended, empty */
	static const char *const words[] = { "a\na\nq\n", "a b\nc\nd\n",
					     "a\nb\nc", "a\n\nc\n" };

	for (size_t k = 0; k < sizeof words / sizeof *words; k++) {
		edit_model(good, bad, "align.src.words", DT_U8, 1,
			   strlen(words[k]), words[k]);
		refused(bad, "record align.src.words");
	}
	/* one word more: the rows no longer fit the vocabulary */
	edit_model(good, bad, "align.tgt.words", DT_U8, 1, 8, "x\ny\nz\nw\n");
	refused(bad, "records align.rev.*: shapes");
	/* a record missing, of another type, another version */
	edit_model(good, bad, "align.tgt.words", 0, 0, 0, NULL);
	refused(bad, "no record align.tgt.words");
	edit_model(good, bad, "align.fold", DT_F32, 0, 1, &(float){ 1 });
	refused(bad, "record align.fold: f32 of rank 0, want i32");
	edit_model(good, bad, "align.version", DT_I32, 0, 1, &(int32_t){ 3 });
	refused(bad, "record align.version: version 3");
	edit_model(good, bad, "align.rev.probs", DT_F64, 1, 0, "");
	refused(bad, "record align.rev.probs: f64 of rank 1");
	free(row);
	wa_bitext_free(&b);
	wa_model_free(&m);

	/* the HMM's jump widths: not finite, out of (0, 1], not summing to
	 * 1, too few, of another type */
	o.hmm_iterations = 1;
	bitext(&m, &b, pairs, 2);
	train(&m, &b, &o);
	ck_assert_int_eq(wa_model_save(&m, good), 0);
	ck_assert_msg(wa_model_load(&r, good) == 0, "%s", err_msg());
	wa_model_free(&r);
	double J[WA_HMM_JUMPS];
	const double badj[] = { nan, inf, 0, -0.1, 1.5 };

	for (size_t k = 0; k < sizeof badj / sizeof *badj; k++) {
		memcpy(J, m.dir[1].jump, sizeof J);
		J[3] = badj[k];
		edit_model(good, bad, "align.rev.jumps", DT_F64, 1,
			   WA_HMM_JUMPS, J);
		refused(bad, "record align.rev.jumps: jump width -4 is");
	}
	memcpy(J, m.dir[1].jump, sizeof J);
	J[0] *= 1.5;
	edit_model(good, bad, "align.rev.jumps", DT_F64, 1, WA_HMM_JUMPS, J);
	refused(bad, "record align.rev.jumps: the jump widths sum to");
	edit_model(good, bad, "align.rev.jumps", DT_F64, 1, WA_HMM_JUMPS - 1,
		   J);
	refused(bad, "record align.rev.jumps: 14 jump widths, want 15");
	edit_model(good, bad, "align.fwd.jumps", DT_F32, 1, 1, &(float){ 1 });
	refused(bad, "record align.fwd.jumps: f32 of rank 1");
	free(col);
	free(prob);
	wa_bitext_free(&b);
	wa_model_free(&m);
}
END_TEST

START_TEST(words_folded)
{
	char out[64];
	size_t n;

	n = wa_vocab_key("¡Señor!", strlen("¡Señor!"), 1, out);
	ck_assert_int_eq(n, strlen("señor"));
	ck_assert(!memcmp(out, "señor", n));
	n = wa_vocab_key("...", 3, 1, out);
	ck_assert(n == 3 && !memcmp(out, "...", 3));
	n = wa_vocab_key("Don't,", 6, 1, out);
	ck_assert(n == 5 && !memcmp(out, "don't", 5));
	n = wa_vocab_key("Señor!", strlen("Señor!"), 0, out);
	ck_assert(n == strlen("Señor!") && !memcmp(out, "Señor!", n));

	/* a line's words: spaces and tabs, one id per word, -1 unknown */
	struct wa_vocab v = { 0 };
	int32_t *ids = NULL;
	size_t k = 0, cap = 0;

	ck_assert_int_eq(wa_vocab_words(&v, " El  perro\tel", 13, 1, 1, &ids,
					&k, &cap), 3);
	ck_assert_int_eq(k, 3);
	ck_assert(ids[0] == 1 && ids[1] == 2 && ids[2] == 1);
	ck_assert_int_eq(wa_vocab_words(&v, "gato el", 7, 1, 0, &ids, &k,
					&cap), 2);
	ck_assert(ids[3] == -1 && ids[4] == 1);
	free(ids);
	wa_vocab_free(&v);
}
END_TEST

/* A line past WA_MAX_WORDS is refused, naming its side; b unchanged. */
START_TEST(long_line_refused)
{
	struct wa_vocab v0 = { 0 }, v1 = { 0 }, *v[2] = { &v0, &v1 };
	struct wa_bitext b = { 0 };
	size_t n = 2 * (WA_MAX_WORDS + 1);
	char *line = malloc(n);
	const char *s[2] = { "a", line };
	size_t len[2] = { 1, n };

	for (size_t i = 0; i < n; i += 2) {
		line[i] = 'w';
		line[i + 1] = ' ';
	}
	ck_assert_int_eq(wa_bitext_add(&b, v, s, len, 0, 1), -1);
	ck_assert_str_eq(err_msg(), "target line of 4097 words, more than 4096");
	ck_assert_int_eq(b.n, 0);
	ck_assert_uint_eq(b.nids[0], 0);
	free(line);
	wa_bitext_free(&b);
	wa_vocab_free(&v0);
	wa_vocab_free(&v1);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("wordalign");
	TCase *tc = tcase_create("wordalign");

	tcase_add_checked_fixture(tc, tmpdir_setup, tmpdir_teardown);
	tcase_add_test(tc, diagonal_closed_forms);
	tcase_add_test(tc, digamma_known);
	tcase_add_test(tc, em_model1_by_hand);
	tcase_add_test(tc, em_model2_by_hand);
	tcase_add_test(tc, em_converges);
	tcase_add_test(tc, hmm_converges);
	tcase_add_test(tc, tension_follows_data);
	tcase_add_test(tc, symmetrize_by_hand);
	tcase_add_test(tc, posterior_by_hand);
	tcase_add_test(tc, model2_posteriors);
	tcase_add_loop_test(tc, threads_same_model, 0, 2);
	tcase_add_test(tc, packed_same_as_unpacked);
	tcase_add_loop_test(tc, model_round_trip, 0, 2);
	tcase_add_test(tc, model_refused);
	tcase_add_test(tc, model_bounds);
	tcase_add_test(tc, words_folded);
	tcase_add_test(tc, long_line_refused);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
