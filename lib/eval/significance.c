/*
 * significance.c: paired significance tests of a system against a
 * baseline on their segment statistics, as sacreBLEU 2.x runs them.
 *
 * Bootstrap (Koehn 2004): n_samples resamples of the segments (with
 * replacement; the same resamples for both systems); p is the share of
 * resamples whose centred absolute difference exceeds the real one.
 * Approximate randomisation (Riezler and Maxwell 2005): in each trial every
 * segment's outputs are swapped between the systems with probability 1/2;
 * p is the share of trials whose absolute difference exceeds the real one.
 * Both count with +1 in numerator and denominator (multeval).
 *
 * sacreBLEU draws from numpy's generator seeded with 12345; this draws from
 * xoshiro256** (rng.h) with the same seed, so resamples, p-values and
 * intervals are of the same method but not numerically numpy's.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "bleu.h"
#include "base/errmsg.h"
#include "base/rng.h"

double sig_p_value(const double *stats, int n, double real)
{
	int c = 0;

	for (int i = 0; i < n; i++)
		c += stats[i] > real;
	return (c + 1.0) / (n + 1.0);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

void sig_estimate_ci(double *scores, int n, double *mean, double *ci)
{
	int lo = n / 40, hi = n - lo - 1;
	double sum = 0;

	qsort(scores, n, sizeof *scores, cmp_double);
	for (int i = 0; i < n; i++)
		sum += scores[i];
	*mean = sum / n;
	*ci = 0.5 * (scores[hi] - scores[lo]);
}

/*
 * Draws below one n, each the number rng_below(r, n) gives, without its
 * two 64-bit divisions (most of a resample's time): the rejection limit
 * once, and x % n as Lemire's direct remainder, the top 64 bits of
 * (M x mod 2^128) n with M = ceil(2^128 / n), exact for every 64-bit x
 * and n (M wraps to 0 for n = 1, and gives 0).
 */
struct below {
	uint64_t n, limit;
	unsigned __int128 m;
};

static void below_init(struct below *b, uint64_t n)
{
	b->n = n;
	b->limit = UINT64_MAX - UINT64_MAX % n;
	b->m = ~(unsigned __int128)0 / n + 1;
}

static inline uint64_t below_draw(struct rng *r, const struct below *b)
{
	unsigned __int128 low;
	uint64_t x;

	do
		x = rng_next(r);
	while (x >= b->limit);
	low = b->m * x;
	return ((low >> 64) * b->n + ((unsigned __int128)(uint64_t)low * b->n >> 64)) >> 64;
}

/* acc += row: two at a time (the compiler does not vectorise a loop of
 * unknown length at -O2) */
typedef int64_t pair __attribute__((vector_size(16)));

static inline void add_row(int64_t *restrict acc, const int64_t *restrict row, int n)
{
	int k = 0;

	for (; k + 2 <= n; k += 2) {
		pair a, b;

		memcpy(&a, acc + k, sizeof a);
		memcpy(&b, row + k, sizeof b);
		a += b;
		memcpy(acc + k, &a, sizeof a);
	}
	if (k < n)
		acc[k] += row[k];
}

static void sum_rows(const int64_t *rows, size_t n, int nstats, int64_t *sum)
{
	memset(sum, 0, nstats * sizeof *sum);
	for (size_t i = 0; i < n; i++)
		for (int k = 0; k < nstats; k++)
			sum[k] += rows[i * nstats + k];
}

int sig_paired_bs(const struct metric *m, const int64_t *bl, const int64_t *sys,
		  size_t n, int n_samples, uint64_t seed,
		  struct sig_result *bl_res, struct sig_result *sys_res)
{
	int ns = m->nstats;
	double *sb = malloc(3 * n_samples * sizeof *sb), *ss, *diff;
	int64_t *acc = malloc(2 * ns * sizeof *acc);
	/* both systems' rows side by side: one place to read a draw from */
	int64_t *both = malloc(2 * ns * n * sizeof *both);
	double real, mean = 0;
	struct below below;
	struct rng r;

	if (!sb || !acc || !both || n == 0 || n_samples < 1) {
		free(sb);
		free(acc);
		free(both);
		err_set(n == 0 ? "no segments to resample" : "out of memory");
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		memcpy(both + 2 * ns * i, bl + ns * i, ns * sizeof *both);
		memcpy(both + 2 * ns * i + ns, sys + ns * i, ns * sizeof *both);
	}
	ss = sb + n_samples;
	diff = ss + n_samples;
	rng_seed(&r, seed);
	below_init(&below, n);
	for (int s = 0; s < n_samples; s++) {
		memset(acc, 0, 2 * ns * sizeof *acc);
		for (size_t i = 0; i < n; i++) {
			add_row(acc, both + 2 * ns * below_draw(&r, &below), 2 * ns);
		}
		sb[s] = metric_score(m, acc);
		ss[s] = metric_score(m, acc + ns);
		diff[s] = fabs(ss[s] - sb[s]);
		mean += diff[s];
	}
	mean /= n_samples;
	for (int s = 0; s < n_samples; s++)
		diff[s] -= mean;
	sum_rows(bl, n, ns, acc);
	sum_rows(sys, n, ns, acc + ns);
	sys_res->score = metric_score(m, acc + ns);
	real = fabs(metric_score(m, acc) - sys_res->score);
	sys_res->p_value = sig_p_value(diff, n_samples, real);
	sig_estimate_ci(ss, n_samples, &sys_res->mean, &sys_res->ci);
	if (bl_res) {
		bl_res->score = metric_score(m, acc);
		bl_res->p_value = -1;
		sig_estimate_ci(sb, n_samples, &bl_res->mean, &bl_res->ci);
	}
	free(sb);
	free(acc);
	free(both);
	return 0;
}

int sig_paired_ar(const struct metric *m, const int64_t *bl, const int64_t *sys,
		  size_t n, int n_trials, uint64_t seed, struct sig_result *sys_res)
{
	int ns = m->nstats;
	double *d = malloc(n_trials * sizeof *d), real;
	/* delta[i] = bl[i] - sys[i]: a swap moves it from one side to the other */
	int64_t *delta = malloc((n * ns + 4 * ns) * sizeof *delta);
	int64_t *tb, *ts, *a, *b;
	struct rng r;

	if (!d || !delta || n_trials < 1) {
		free(d);
		free(delta);
		err_set("out of memory");
		return -1;
	}
	tb = delta + n * ns;
	ts = tb + ns;
	a = ts + ns;
	b = a + ns;
	for (size_t i = 0; i < n * ns; i++)
		delta[i] = bl[i] - sys[i];
	sum_rows(bl, n, ns, tb);
	sum_rows(sys, n, ns, ts);
	sys_res->score = metric_score(m, ts);
	real = fabs(metric_score(m, tb) - sys_res->score);
	rng_seed(&r, seed);
	for (int t = 0; t < n_trials; t++) {
		uint64_t bits = 0;

		/* a: the system with the swapped segments' baseline outputs */
		memcpy(a, ts, ns * sizeof *a);
		for (size_t i = 0; i < n; i++) {
			if (i % 64 == 0)
				bits = rng_next(&r);
			if (bits >> (i % 64) & 1)
				add_row(a, delta + i * ns, ns);
		}
		for (int k = 0; k < ns; k++)
			b[k] = tb[k] + ts[k] - a[k];
		d[t] = fabs(metric_score(m, a) - metric_score(m, b));
	}
	sys_res->p_value = sig_p_value(d, n_trials, real);
	sys_res->mean = 0;
	sys_res->ci = -1;
	free(d);
	free(delta);
	return 0;
}
