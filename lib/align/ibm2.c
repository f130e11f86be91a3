/* ibm2.c: one direction's table and alignment; see ibm2.h. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "ibm2.h"
#include "bitext.h"
#include "diagonal.h"
#include "base/errmsg.h"

double wa_dir_t(const struct wa_dir *d, int32_t e, int32_t f)
{
	int64_t lo, hi;

	if (e < 0 || e > d->ne || f < 1 || f > d->nf)
		return WA_T_FLOOR;
	lo = d->row[e];
	hi = d->row[e + 1];
	while (lo < hi) {
		int64_t mid = lo + (hi - lo) / 2;

		if (d->col[mid] < f)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < d->row[e + 1] && d->col[lo] == f ? d->prob[lo] : WA_T_FLOOR;
}

/* The emissions of a pair, as hmm.h lays them out, in w's room. */
static double *emissions(const struct wa_dir *d, const int32_t *e, int n,
			 const int32_t *f, int m, struct wa_hmm_work *w)
{
	size_t w1 = (size_t)n + 1;
	double *emis = wa_hmm_room(w, (size_t)m * w1);

	if (emis)
		for (int j = 0; j < m; j++)
			for (int i = 0; i <= n; i++)
				emis[j * w1 + i] = wa_dir_t(d, i ? e[i - 1] : 0,
							    f[j]);
	return emis;
}

int wa_dir_posteriors(const struct wa_dir *d, const int32_t *e, int n,
		      const int32_t *f, int m, float *post,
		      struct wa_hmm_work *w)
{
	size_t w1 = (size_t)n + 1;
	double *emis = emissions(d, e, n, f, m, w), ll;

	if (!emis)
		return -1;
	if (d->hmm)
		return wa_hmm_posteriors(d->jump, d->p0, n, m, emis, post,
					 NULL, NULL, &ll, w);
	/* Model 2: each target word's links alone; the prior in post */
	for (int j = 0; j < m; j++) {
		double *q = emis + j * w1, prior[WA_MAX_WORDS + 1], sum = 0;

		wa_diag_prior(d->diagonal, d->tension, d->p0, j + 1, m, n,
			      prior);
		for (int i = 0; i <= n; i++)
			sum += q[i] *= prior[i];
		for (int i = 0; i <= n; i++)
			post[j * w1 + i] = (float)(q[i] / sum);
	}
	return 0;
}

int wa_dir_align(const struct wa_dir *d, const int32_t *e, int n,
		 const int32_t *f, int m, int32_t *a, struct wa_hmm_work *w)
{
	size_t w1 = (size_t)n + 1;
	double *post;

	if (d->hmm) {
		double *emis = emissions(d, e, n, f, m, w);

		return emis ? wa_hmm_viterbi(d->jump, d->p0, n, m, emis, a, w)
			    : -1;
	}
	if (!(post = wa_hmm_room(w, w1)))
		return -1;
	for (int j = 0; j < m; j++) {
		int best = 0;

		wa_diag_prior(d->diagonal, d->tension, d->p0, j + 1, m, n, post);
		post[0] *= wa_dir_t(d, 0, f[j]);
		for (int i = 1; i <= n; i++) {
			post[i] *= wa_dir_t(d, e[i - 1], f[j]);
			if (post[i] > post[best])
				best = i;
		}
		a[j] = best - 1;
	}
	return 0;
}

int wa_dir_check(const struct wa_dir *d, const char *const name[5])
{
	static const char *const plain[5] = { "params", "rows", "cols",
					      "probs", "jumps" };

	if (!name)
		name = plain;
	if (d->ne < 0 || d->nf < 0 || d->nnz < 0 || d->row[0] != 0 ||
	    d->row[d->ne + 1] != d->nnz) {
		err_set("record %s: the rows run from %lld to %lld, not from 0 "
			"to the %lld cells of %s", name[1],
			(long long)d->row[0], (long long)d->row[d->ne + 1],
			(long long)d->nnz, name[2]);
		return -1;
	}
	for (int32_t e = 0; e <= d->ne; e++) {
		if (d->row[e + 1] < d->row[e] || d->row[e + 1] > d->nnz) {
			err_set("record %s: row %d ends at %lld, before it "
				"starts (%lld) or past the %lld cells", name[1],
				(int)e, (long long)d->row[e + 1],
				(long long)d->row[e], (long long)d->nnz);
			return -1;
		}
		for (int64_t k = d->row[e]; k < d->row[e + 1]; k++) {
			if (d->col[k] < 1 || d->col[k] > d->nf ||
			    (k > d->row[e] && d->col[k] <= d->col[k - 1])) {
				err_set("record %s: row %d: cell %lld: target "
					"word %d out of order or range (1 to %d)",
					name[2], (int)e, (long long)k,
					(int)d->col[k], (int)d->nf);
				return -1;
			}
			if (!(d->prob[k] > 0 && d->prob[k] <= 1)) {
				err_set("record %s: row %d: cell %lld: "
					"probability %g not in (0, 1]", name[3],
					(int)e, (long long)k, d->prob[k]);
				return -1;
			}
		}
	}
	if (!(d->tension >= 0 && d->tension <= 1000) ||
	    !(d->p0 >= 0 && d->p0 < 1)) {
		err_set("record %s: tension %g or NULL prior %g out of range "
			"([0, 1000], [0, 1))", name[0], d->tension, d->p0);
		return -1;
	}
	if (d->hmm) {
		double sum = 0;

		for (int k = 0; k < WA_HMM_JUMPS; k++) {
			if (!(d->jump[k] > 0 && d->jump[k] <= 1)) {
				err_set("record %s: jump width %d is %g, not in "
					"(0, 1]", name[4], k - WA_HMM_REACH,
					d->jump[k]);
				return -1;
			}
			sum += d->jump[k];
		}
		if (!(fabs(sum - 1) < 1e-6)) {
			err_set("record %s: the jump widths sum to %.9g, not 1",
				name[4], sum);
			return -1;
		}
	}
	return 0;
}

void wa_dir_free(struct wa_dir *d)
{
	free(d->row);
	free(d->col);
	free(d->prob);
	memset(d, 0, sizeof *d);
}
