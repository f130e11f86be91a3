/*
 * test_hmm.c: the HMM alignment model of lib/align/hmm.h against the
 * plain definition: every alignment of a small pair enumerated, its
 * probability the product of its links' (the memory the last word's
 * position), summed for ln p(f | e), the posteriors and the expected jump
 * counts, maximised for the Viterbi path; pairs longer than the jumps'
 * reach, so the clamped ends are tried too; and the scratch reused across
 * pairs of other sizes.
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "align/hmm.h"
#include "base/rng.h"
#include "run_suite.h"

/* A random pair's model: jumps summing to 1, emissions in (0.01, 1). */
static void random_model(struct rng *seed, int n, int m, double *J,
			 double *emis)
{
	double s = 0;

	for (int k = 0; k < WA_HMM_JUMPS; k++)
		s += J[k] = 0.05 + rng_uniform(seed);
	for (int k = 0; k < WA_HMM_JUMPS; k++)
		J[k] /= s;
	for (int q = 0; q < m * (n + 1); q++)
		emis[q] = 0.01 + 0.99 * rng_uniform(seed);
}

/* Z(k) by its definition. */
static double z_of(const double *J, int n, int k)
{
	double z = 0;

	for (int i = 1; i <= n; i++)
		z += J[wa_hmm_cell(i - k)];
	return z;
}

/* Enumerates every a in {0 (NULL), 1..n}^m: the total, the posteriors
 * post [m (n + 1)], the jump counts cnt [WA_HMM_JUMPS], those from each
 * memory from [n + 1] and the best path best [m] (a_j - 1 as
 * wa_hmm_viterbi gives it). */
static double brute(const double *J, double p0, int n, int m,
		    const double *emis, double *post, double *cnt,
		    double *from, int32_t *best)
{
	int a[8] = { 0 };
	double total = 0, top = -1;

	memset(post, 0, m * (n + 1) * sizeof *post);
	memset(cnt, 0, WA_HMM_JUMPS * sizeof *cnt);
	memset(from, 0, (n + 1) * sizeof *from);
	for (;;) {
		double p = 1;
		int mem = 0;

		for (int j = 0; j < m; j++) {
			const double *e = emis + j * (n + 1);

			if (a[j] == 0) {
				p *= p0 * e[0];
			} else {
				p *= (1 - p0) * J[wa_hmm_cell(a[j] - mem)] /
				     z_of(J, n, mem) * e[a[j]];
				mem = a[j];
			}
		}
		total += p;
		mem = 0;
		for (int j = 0; j < m; j++) {
			post[j * (n + 1) + a[j]] += p;
			if (a[j]) {
				cnt[wa_hmm_cell(a[j] - mem)] += p;
				from[mem] += p;
				mem = a[j];
			}
		}
		if (p > top) {
			top = p;
			for (int j = 0; j < m; j++)
				best[j] = a[j] - 1;
		}
		int j = 0;

		while (j < m && ++a[j] > n)
			a[j++] = 0;
		if (j == m)
			break;
	}
	for (int q = 0; q < m * (n + 1); q++)
		post[q] /= total;
	for (int k = 0; k < WA_HMM_JUMPS; k++)
		cnt[k] /= total;
	for (int k = 0; k <= n; k++)
		from[k] /= total;
	return total;
}

START_TEST(against_enumeration)
{
	/* n past the reach (7) reaches the clamped cells both ways */
	static const int size[][2] = { { 1, 1 }, { 1, 4 }, { 3, 1 },
				       { 3, 3 }, { 5, 4 }, { 9, 3 },
				       { 12, 3 }, { 16, 2 }, { 2, 6 } };
	static const double p0s[] = { 0.08, 0.3, 0 };
	struct wa_hmm_work w = { 0 };
	struct rng seed;

	rng_seed(&seed, 11);

	for (size_t t = 0; t < sizeof size / sizeof *size; t++)
		for (size_t q = 0; q < 3; q++) {
			int n = size[t][0], m = size[t][1];
			double J[WA_HMM_JUMPS], emis[16 * 17], want[16 * 17];
			double cnt[WA_HMM_JUMPS], got[WA_HMM_JUMPS] = { 0 };
			double from[17], gotfrom[17] = { 0 };
			double p0 = p0s[q], ll, tot = 0;
			float post[16 * 17];
			int32_t best[8], path[8];

			random_model(&seed, n, m, J, emis);
			double z = brute(J, p0, n, m, emis, want, cnt, from,
					 best);

			ck_assert_int_eq(wa_hmm_posteriors(J, p0, n, m, emis,
					 post, got, gotfrom, &ll, &w), 0);
			ck_assert_msg(fabs(ll - log(z)) < 1e-10,
				      "n %d m %d p0 %g: ln p %.12g, want %.12g",
				      n, m, p0, ll, log(z));
			for (int k = 0; k < m * (n + 1); k++)
				ck_assert_msg(fabs(post[k] - want[k]) < 1e-6,
					      "n %d m %d p0 %g: posterior %d: "
					      "%g, want %g", n, m, p0, k,
					      post[k], want[k]);
			for (int k = 0; k < WA_HMM_JUMPS; k++) {
				ck_assert_msg(fabs(got[k] - cnt[k]) < 1e-9,
					      "n %d m %d p0 %g: jump cell %d: "
					      "%g, want %g", n, m, p0, k,
					      got[k], cnt[k]);
				tot += got[k];
			}
			for (int k = 0; k <= n; k++)
				ck_assert_msg(fabs(gotfrom[k] - from[k]) < 1e-9,
					      "n %d m %d p0 %g: from memory %d: "
					      "%g, want %g", n, m, p0, k,
					      gotfrom[k], from[k]);
			/* jumps counted: the words not aligned to NULL */
			double words = 0;

			for (int j = 0; j < m; j++)
				words += 1 - want[j * (n + 1)];
			ck_assert(fabs(tot - words) < 1e-9);
			ck_assert_int_eq(wa_hmm_viterbi(J, p0, n, m, emis, path,
							&w), 0);
			for (int j = 0; j < m; j++)
				ck_assert_msg(path[j] == best[j],
					      "n %d m %d p0 %g: Viterbi a[%d] "
					      "%d, want %d", n, m, p0, j,
					      path[j], best[j]);
		}
	wa_hmm_work_free(&w);
}
END_TEST

/* A monotone pair whose emissions cannot tell two source words apart
 * (the same word twice): only the jumps can, and a model that prefers
 * forward steps of one aligns the two copies in order. */
START_TEST(jumps_break_ties)
{
	double J[WA_HMM_JUMPS], emis[3 * 4];
	struct wa_hmm_work w = { 0 };
	int32_t a[3];

	for (int k = 0; k < WA_HMM_JUMPS; k++)
		J[k] = 0.02;
	J[wa_hmm_cell(1)] = 1 - 0.02 * (WA_HMM_JUMPS - 1);
	/* source "x x y", target "X X Y": t(X | x) = 0.9, t(Y | y) = 0.9 */
	for (int j = 0; j < 3; j++)
		for (int i = 0; i <= 3; i++)
			emis[j * 4 + i] = (j < 2) == (i >= 1 && i <= 2) &&
					  i ? 0.9 : 0.01;
	ck_assert_int_eq(wa_hmm_viterbi(J, 0.08, 3, 3, emis, a, &w), 0);
	ck_assert_int_eq(a[0], 0);
	ck_assert_int_eq(a[1], 1);
	ck_assert_int_eq(a[2], 2);
	wa_hmm_work_free(&w);
}
END_TEST

/* The objective of wa_hmm_jump_m_step's maximum (hmm.h). */
static double jump_objective(const double *J, const double *c,
			     const int32_t *len, int nn, const double *from)
{
	double f = 0;

	for (int d = 0; d < WA_HMM_JUMPS; d++)
		f += c[d] * log(J[d]);
	for (int x = 0; x < nn; from += len[x] + 1, x++)
		for (int k = 0; k <= len[x]; k++)
			f -= from[k] * log(z_of(J, len[x], k));
	return f;
}

/* The M-step of J on counts of a consistent kind (the transitions from
 * the memories add up to those into the cells): the widths found,
 * unmixed from the floor, are a stationary point (c(d) / J(d) the same
 * multiple of the sum over (n, k) of N n_k(d) / Z(k) for every d), and
 * no other widths tried score higher; plain counting and normalising
 * scores lower when far jumps are counted. */
START_TEST(jump_m_step_maximises)
{
	static const int32_t len[] = { 3, 9, 14 };
	double from[3 + 9 + 14 + 3], c[WA_HMM_JUMPS] = { 0 }, J[WA_HMM_JUMPS];
	double naive[WA_HMM_JUMPS], tot = 0, best;
	struct rng r;

	rng_seed(&r, 5);
	/* counts from a made-up model: memory k's transitions spread over
	 * its positions by a hidden J */
	double hid[WA_HMM_JUMPS];

	for (int d = 0; d < WA_HMM_JUMPS; d++)
		hid[d] = 0.02 + (d == WA_HMM_REACH + 1) + 0.3 * rng_uniform(&r);
	for (int x = 0, o = 0; x < 3; o += len[x] + 1, x++)
		for (int k = 0; k <= len[x]; k++) {
			double n = 1 + 20 * rng_uniform(&r), z = z_of(hid, len[x], k);

			from[o + k] = n;
			for (int i = 1; i <= len[x]; i++)
				c[wa_hmm_cell(i - k)] += n * hid[wa_hmm_cell(i - k)] / z;
		}
	for (int d = 0; d < WA_HMM_JUMPS; d++) {
		J[d] = 1.0 / WA_HMM_JUMPS;
		tot += c[d];
	}
	for (int d = 0; d < WA_HMM_JUMPS; d++)
		naive[d] = c[d] / tot;
	wa_hmm_jump_m_step(J, c, len, 3, from);
	for (int d = 0; d < WA_HMM_JUMPS; d++)
		J[d] = (J[d] - WA_HMM_JUMP_FLOOR / WA_HMM_JUMPS) /
		       (1 - WA_HMM_JUMP_FLOOR);
	/* stationary: the ratio the same for every cell */
	double ratio0 = 0;

	for (int d = 0; d < WA_HMM_JUMPS; d++) {
		double s = 0;

		for (int x = 0, o = 0; x < 3; o += len[x] + 1, x++)
			for (int k = 0; k <= len[x]; k++) {
				double z = z_of(J, len[x], k), nk = 0;

				for (int i = 1; i <= len[x]; i++)
					nk += wa_hmm_cell(i - k) == d;
				s += from[o + k] * nk / z;
			}
		double ratio = c[d] / J[d] / s;

		if (d == 0)
			ratio0 = ratio;
		ck_assert_msg(fabs(ratio / ratio0 - 1) < 1e-6,
			      "cell %d: ratio %.9g, cell 0's %.9g", d, ratio,
			      ratio0);
	}
	/* the hidden J itself is the maximum: the counts are its */
	best = jump_objective(J, c, len, 3, from);
	tot = 0;
	for (int d = 0; d < WA_HMM_JUMPS; d++)
		tot += hid[d];
	for (int d = 0; d < WA_HMM_JUMPS; d++)
		ck_assert_msg(fabs(J[d] - hid[d] / tot) < 1e-6,
			      "cell %d: %.9g, the hidden %.9g", d, J[d],
			      hid[d] / tot);
	ck_assert(jump_objective(naive, c, len, 3, from) < best - 1e-3);
	for (int t = 0; t < 50; t++) {
		double p[WA_HMM_JUMPS];

		for (int d = 0; d < WA_HMM_JUMPS; d++)
			p[d] = J[d] * exp(0.05 * (rng_uniform(&r) - 0.5));
		ck_assert(jump_objective(p, c, len, 3, from) <= best + 1e-9);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("hmm");
	TCase *tc = tcase_create("hmm");

	tcase_add_test(tc, against_enumeration);
	tcase_add_test(tc, jumps_break_ties);
	tcase_add_test(tc, jump_m_step_maximises);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
