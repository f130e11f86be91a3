/*
 * hmm.c: forward-backward and Viterbi of the HMM alignment model; see
 * hmm.h.
 *
 * The forward values are scaled step by step (Rabiner 1989): alpha of
 * step j is divided by c_j, its sum, so the memories' masses of a step
 * sum to 1 and ln p(f | e) is the sum of ln c_j; the backward values are
 * divided by the same c_j, so that alpha beta is the posterior itself.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "hmm.h"
#include "base/errmsg.h"

#define R WA_HMM_REACH

/* Makes *buf hold at least n items of size bytes, *cap its room. */
static int reserve(void **buf, size_t *cap, size_t n, size_t size)
{
	void *p;

	if (n <= *cap)
		return 0;
	if (!(p = realloc(*buf, n * size))) {
		err_set("word aligner: out of memory");
		return -1;
	}
	*buf = p;
	*cap = n;
	return 0;
}

double *wa_hmm_room(struct wa_hmm_work *w, size_t n)
{
	return reserve((void **)&w->e, &w->ecap, n, sizeof *w->e) < 0 ?
	       NULL : w->e;
}

void wa_hmm_work_free(struct wa_hmm_work *w)
{
	free(w->d);
	free(w->e);
	free(w->i);
	memset(w, 0, sizeof *w);
}

static int grow(struct wa_hmm_work *w, size_t nd, size_t ni)
{
	return reserve((void **)&w->d, &w->dcap, nd, sizeof *w->d) < 0 ||
	       reserve((void **)&w->i, &w->icap, ni, sizeof *w->i) < 0 ? -1 : 0;
}

/* pre [n + 2]: pre[x] the sum of x [0 .. x) of x [n + 1]. */
static void prefix(const double *x, int n, double *pre)
{
	pre[0] = 0;
	for (int k = 0; k <= n; k++)
		pre[k + 1] = pre[k] + x[k];
}

/* out[i] = sum over k = 0..n of u[k] J(i - k), i = 1..n; pre [n + 2]. */
static void to_words(const double *J, const double *u, int n, double *pre,
		     double *out)
{
	prefix(u, n, pre);
	for (int i = 1; i <= n; i++) {
		int lo = i - R + 1 > 0 ? i - R + 1 : 0;
		int hi = i + R - 1 < n ? i + R - 1 : n;
		double s = 0;

		for (int k = lo; k <= hi; k++)
			s += u[k] * J[i - k + R];
		if (i - R >= 0)			/* k <= i - R */
			s += J[2 * R] * pre[i - R + 1];
		if (i + R <= n)			/* k >= i + R */
			s += J[0] * (pre[n + 1] - pre[i + R]);
		out[i] = s;
	}
}

/* out[k] = sum over i = 1..n of J(i - k) v[i], k = 0..n (v[0] is
 * ignored); pre [n + 2]. */
static void from_memories(const double *J, double *v, int n, double *pre,
			  double *out)
{
	v[0] = 0;
	prefix(v, n, pre);
	for (int k = 0; k <= n; k++) {
		int lo = k - R + 1 > 1 ? k - R + 1 : 1;
		int hi = k + R - 1 < n ? k + R - 1 : n;
		double s = 0;

		for (int i = lo; i <= hi; i++)
			s += J[i - k + R] * v[i];
		if (k + R <= n)			/* i >= k + R */
			s += J[2 * R] * (pre[n + 1] - pre[k + R]);
		if (k - R >= 1)			/* i <= k - R */
			s += J[0] * pre[k - R + 1];
		out[k] = s;
	}
}

/* zinv [n + 1]: 1 / Z(k); v [n + 1] and pre [n + 2] scratch. */
static void normalisers(const double *J, int n, double *v, double *pre,
			double *zinv)
{
	for (int i = 0; i <= n; i++)
		v[i] = 1;
	from_memories(J, v, n, pre, zinv);
	for (int k = 0; k <= n; k++)
		zinv[k] = 1 / zinv[k];
}

/* Adds into cnt the sum over k, i of u[k] J(i - k) v[i] by jump cell;
 * pre [n + 2]. */
static void count_jumps(const double *J, const double *u, const double *v,
			int n, double *pre, double *cnt)
{
	prefix(u, n, pre);
	for (int i = 1; i <= n; i++) {
		int lo = i - R + 1 > 0 ? i - R + 1 : 0;
		int hi = i + R - 1 < n ? i + R - 1 : n;

		if (v[i] == 0)
			continue;
		for (int k = lo; k <= hi; k++)
			cnt[i - k + R] += u[k] * J[i - k + R] * v[i];
		if (i - R >= 0)
			cnt[2 * R] += J[2 * R] * pre[i - R + 1] * v[i];
		if (i + R <= n)
			cnt[0] += J[0] * (pre[n + 1] - pre[i + R]) * v[i];
	}
}

int wa_hmm_posteriors(const double *J, double p0, int n, int m,
		      const double *emis, float *post, double *jumps,
		      double *from, double *log_lik, struct wa_hmm_work *w)
{
	size_t w1 = (size_t)n + 1, grid = (size_t)m * w1;
	double *aw, *an, *c, *zinv, *u, *v, *pre, *b, *bn, *tmp, ll = 0;

	if (grow(w, 2 * grid + m + 7 * w1 + 2, 0) < 0)
		return -1;
	aw = w->d;			/* alpha of W_i, [m (n + 1)] */
	an = aw + grid;			/* alpha of N_k */
	c = an + grid;			/* [m] */
	zinv = c + m;
	u = zinv + w1;
	v = u + w1;
	b = v + w1;
	bn = b + w1;
	tmp = bn + w1;
	pre = tmp + w1;			/* [n + 2] */
	normalisers(J, n, v, pre, zinv);

	/* forward: u the previous step's masses over Z */
	for (int k = 0; k <= n; k++)
		u[k] = (k == 0) * zinv[0];
	for (int j = 0; j < m; j++) {
		const double *e = emis + j * w1;
		double *W = aw + j * w1, *N = an + j * w1, sum = 0;

		to_words(J, u, n, pre, W);
		W[0] = 0;
		for (int k = 0; k <= n; k++) {
			double mass = j ? aw[(j - 1) * w1 + k] +
					  an[(j - 1) * w1 + k] : k == 0;

			N[k] = p0 * e[0] * mass;
			if (k)
				W[k] *= (1 - p0) * e[k];
			sum += W[k] + N[k];
		}
		c[j] = sum;
		ll += log(sum);
		for (int k = 0; k <= n; k++) {
			W[k] /= sum;
			N[k] /= sum;
			u[k] = (W[k] + N[k]) * zinv[k];
		}
	}

	/* backward: b the memories' beta at step j */
	for (int k = 0; k <= n; k++)
		b[k] = 1;
	for (int j = m - 1; j >= 0; j--) {
		const double *e = emis + j * w1;
		const double *W = aw + j * w1, *N = an + j * w1;
		float *q = post + j * w1;
		double null = 0;

		for (int k = 0; k <= n; k++) {
			null += N[k] * b[k];
			if (k)
				q[k] = (float)(W[k] * b[k]);
		}
		q[0] = (float)null;
		/* the transitions into step j: from the memories of j - 1 */
		for (int k = 0; k <= n; k++)
			u[k] = (j ? aw[(j - 1) * w1 + k] +
				    an[(j - 1) * w1 + k] : k == 0) * zinv[k];
		for (int i = 1; i <= n; i++)
			v[i] = (1 - p0) * e[i] * b[i] / c[j];
		if (jumps)
			count_jumps(J, u, v, n, pre, jumps);
		from_memories(J, v, n, pre, tmp);
		for (int k = 0; k <= n; k++) {
			if (from)
				from[k] += u[k] * tmp[k];
			bn[k] = zinv[k] * tmp[k] + p0 * e[0] * b[k] / c[j];
		}
		double *sw = b;
		b = bn;
		bn = sw;
	}
	*log_lik = ll;
	return 0;
}

int wa_hmm_viterbi(const double *J, double p0, int n, int m,
		   const double *emis, int32_t *a, struct wa_hmm_work *w)
{
	size_t w1 = (size_t)n + 1, grid = (size_t)m * w1;
	double *d, *dn, *u, *zinv, *v, *pre, *lmax, *rmax;
	int32_t *bp, *from, *larg, *rarg;

	if (grow(w, 8 * w1 + 2, 2 * grid + 2 * w1) < 0)
		return -1;
	d = w->d;			/* the memories' best, this step */
	dn = d + w1;
	u = dn + w1;
	zinv = u + w1;
	v = zinv + w1;
	lmax = v + w1;
	rmax = lmax + w1;
	pre = rmax + w1;		/* [n + 2] */
	bp = w->i;			/* W_i's previous memory, [m (n + 1)] */
	from = bp + grid;		/* 1: memory k reached through NULL */
	larg = from + grid;
	rarg = larg + w1;
	normalisers(J, n, v, pre, zinv);
	for (int k = 0; k <= n; k++)
		d[k] = k == 0;
	for (int j = 0; j < m; j++) {
		const double *e = emis + j * w1;
		int32_t *bpj = bp + j * w1, *fj = from + j * w1;
		double top = 0;

		for (int k = 0; k <= n; k++)
			u[k] = d[k] * zinv[k];
		/* lmax[x]: the best u of memories 0..x; rmax[x]: of x..n,
		 * each the lowest memory of equal ones */
		for (int k = 0; k <= n; k++) {
			int keep = k && lmax[k - 1] >= u[k];

			lmax[k] = keep ? lmax[k - 1] : u[k];
			larg[k] = keep ? larg[k - 1] : k;
		}
		for (int k = n; k >= 0; k--) {
			int keep = k < n && rmax[k + 1] > u[k];

			rmax[k] = keep ? rmax[k + 1] : u[k];
			rarg[k] = keep ? rarg[k + 1] : k;
		}
		for (int i = 1; i <= n; i++) {
			int lo = i - R + 1 > 0 ? i - R + 1 : 0;
			int hi = i + R - 1 < n ? i + R - 1 : n;
			double best = -1;
			int arg = 0;

			if (i - R >= 0) {
				best = lmax[i - R] * J[2 * R];
				arg = larg[i - R];
			}
			for (int k = lo; k <= hi; k++)
				if (u[k] * J[i - k + R] > best) {
					best = u[k] * J[i - k + R];
					arg = k;
				}
			if (i + R <= n && rmax[i + R] * J[0] > best) {
				best = rmax[i + R] * J[0];
				arg = rarg[i + R];
			}
			v[i] = best * (1 - p0) * e[i];
			bpj[i] = arg;
		}
		for (int k = 0; k <= n; k++) {
			double nul = p0 * e[0] * d[k];

			fj[k] = k == 0 || nul > v[k];
			dn[k] = fj[k] ? nul : v[k];
			if (dn[k] > top)
				top = dn[k];
		}
		for (int k = 0; k <= n; k++)
			d[k] = dn[k] / top;
	}
	int k = 0;

	for (int x = 1; x <= n; x++)
		if (d[x] > d[k])
			k = x;
	for (int j = m - 1; j >= 0; j--) {
		if (from[j * w1 + k]) {
			a[j] = -1;
		} else {
			a[j] = k - 1;
			k = bp[j * w1 + k];
		}
	}
	return 0;
}

/* n_k(d) for every cell: the positions i = 1..n with cell(i - k) = d. */
static void positions(int n, int k, double *nk)
{
	for (int d = -R + 1; d < R; d++)
		nk[d + R] = k + d >= 1 && k + d <= n;
	nk[2 * R] = n - k - R + 1 > 0 ? n - k - R + 1 : 0;
	nk[0] = k - R > 0 ? k - R : 0;
}

/* Rounds of the fixed point: each a pass over the lengths' memories. */
#define JUMP_ROUNDS 200

void wa_hmm_jump_m_step(double *J, const double *c, const int32_t *len,
			int nn, const double *from)
{
	for (int round = 0; round < JUMP_ROUNDS; round++) {
		double s[WA_HMM_JUMPS] = { 0 }, nk[WA_HMM_JUMPS], tot = 0;
		const double *f = from;

		for (int x = 0; x < nn; f += len[x] + 1, x++)
			for (int k = 0; k <= len[x]; k++) {
				double z = 0;

				if (f[k] == 0)
					continue;
				positions(len[x], k, nk);
				for (int d = 0; d < WA_HMM_JUMPS; d++)
					z += nk[d] * J[d];
				for (int d = 0; d < WA_HMM_JUMPS; d++)
					s[d] += f[k] * nk[d] / z;
			}
		for (int d = 0; d < WA_HMM_JUMPS; d++) {
			if (s[d] > 0)
				J[d] = c[d] / s[d];
			tot += J[d];
		}
		if (!(tot > 0))
			return;		/* no transitions: J stays */
		for (int d = 0; d < WA_HMM_JUMPS; d++)
			J[d] /= tot;
	}
	for (int d = 0; d < WA_HMM_JUMPS; d++)
		J[d] = (1 - WA_HMM_JUMP_FLOOR) * J[d] +
		       WA_HMM_JUMP_FLOOR / WA_HMM_JUMPS;
}
