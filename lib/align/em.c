/*
 * em.c: EM for one direction of the word aligner; see em.h.
 *
 * Every link of every pair (target word j, source word i or NULL) has a
 * slot: pair p's start at cbase[p], then j (n + 1) + i.  cell[slot] is
 * the link's cell of the table, found once; post[slot] its posterior of
 * the last E-step.  The E-step fills a pair's slots (and ll[p], feat[p])
 * from any thread; the M-step reads them in slot order, alone.  The HMM's
 * E-step writes the same slots, and each pair's jump counts into its own
 * row of jc, summed in pair order by the M-step.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "em.h"
#include "diagonal.h"
#include "base/errmsg.h"
#include "kernels/kernels.h"

/* Pair lengths (m, n) and, per target position, the weights of the
 * tension's M-step. */
struct size_class {
	int m, n;
	int64_t woff;		/* w[woff .. woff + m) */
};

struct em {
	const struct wa_bitext *b;
	int s, t;		/* the source's and the target's side */
	int32_t ne, nf;
	const struct wa_em_opts *o;
	double lambda;
	int64_t *cbase;		/* [b->n + 1] */
	int32_t *cell;		/* [cbase[b->n]] */
	float *post;		/* [cbase[b->n]] */
	double *ll, *feat;	/* [b->n] */
	int64_t nnz;
	int64_t *row;		/* [ne + 2] */
	int32_t *col;		/* [nnz] */
	double *tt, *cnt;	/* [nnz]: t and the counts */
	struct size_class *cls;
	int ncls;
	int32_t *pcls;		/* [b->n]: the pair's class, -1 none */
	double *w;		/* the classes' weights */
	double jump[WA_HMM_JUMPS];	/* the HMM's J */
	double *jc;		/* [b->n WA_HMM_JUMPS]: its counts by pair */
	int64_t *foff;		/* [b->n + 1]: pair p's from[] at fr[foff[p]] */
	double *fr;		/* transitions from each memory (hmm.h) */
	int32_t *lens;		/* the source lengths present, increasing */
	int nlens;
	int64_t *loff;		/* [WA_MAX_WORDS + 1]: a length's row in agg */
	double *agg;		/* fr summed by source length */
	int oom;		/* set by a thread that lacked memory */
};

static int oom(void)
{
	err_set("word aligner: out of memory");
	return -1;
}

/* Sorts k [n] by its bits lo .. lo + bits - 1 (those above are 0), by
 * LSD radix: stable, so the bits below lo keep their order among equal
 * keys. */
static int radix_sort(uint64_t *k, size_t n, int lo, int bits)
{
	uint64_t *tmp = malloc((n ? n : 1) * sizeof *tmp), *a = k, *x = tmp;
	size_t *count = malloc(65537 * sizeof *count);

	if (!tmp || !count) {
		free(tmp);
		free(count);
		return oom();
	}
	for (int shift = lo; shift < lo + bits; shift += 16) {
		memset(count, 0, 65537 * sizeof *count);
		for (size_t i = 0; i < n; i++)
			count[(a[i] >> shift & 0xffff) + 1]++;
		for (int d = 0; d < 65536; d++)
			count[d + 1] += count[d];
		for (size_t i = 0; i < n; i++)
			x[count[a[i] >> shift & 0xffff]++] = a[i];
		uint64_t *sw = a;
		a = x;
		x = sw;
	}
	if (a != k)
		memcpy(k, a, n * sizeof *k);
	free(tmp);
	free(count);
	return 0;
}

/* The source word of link i (0 NULL) in pair p. */
static inline int32_t src_word(const struct em *em, int p, int i)
{
	return i ? wa_words(em->b, em->s, p)[i - 1] : 0;
}

static int unpacked;		/* wa_em_set_unpacked */

void wa_em_set_unpacked(int on)
{
	unpacked = on;
}

/* Bits to hold the values below n. */
static int bits_for(uint64_t n)
{
	int bits = 0;

	while (bits < 64 && n > (uint64_t)1 << bits)
		bits++;
	return bits;
}

/*
 * The slots, and the table's cells: every (e, f) of a pair.  Each slot's
 * key, e (nf + 1) + f, is sorted with the slot's number in its low sbits
 * bits, so that the run of a key, its cell, names its slots: the cells
 * of the slots (em->cell) come with the table, in one pass.  When the two
 * do not fit in 64 bits, the keys are sorted alone and *found is 0: the
 * slots' cells are then looked up (find_cells).
 */
static int build_cells(struct em *em, int *found)
{
	const struct wa_bitext *b = em->b;
	uint64_t *key, width = (uint64_t)em->nf + 1, mask, prev = 0;
	int64_t total;
	int bits, sbits;

	if (!(em->cbase = malloc((b->n + 1) * sizeof *em->cbase)))
		return oom();
	em->cbase[0] = 0;
	for (int p = 0; p < b->n; p++) {
		int n = wa_len(b, em->s, p), m = wa_len(b, em->t, p);

		em->cbase[p + 1] = em->cbase[p] +
			(n && m ? (int64_t)(n + 1) * m : 0);
	}
	total = em->cbase[b->n];
	bits = bits_for(((uint64_t)em->ne + 1) * width);
	sbits = bits_for((uint64_t)total);
	*found = bits + sbits <= 64 && !unpacked;
	if (!*found)
		sbits = 0;
	mask = sbits ? ((uint64_t)1 << sbits) - 1 : 0;
	key = malloc((total ? total : 1) * sizeof *key);
	em->cell = malloc((total ? total : 1) * sizeof *em->cell);
	if (!key || !em->cell) {
		free(key);
		return oom();
	}
	for (int p = 0; p < b->n; p++) {
		int n = wa_len(b, em->s, p), k = 0;
		const int32_t *f = wa_words(b, em->t, p);

		for (int64_t q = em->cbase[p]; q < em->cbase[p + 1]; k++)
			for (int i = 0; i <= n; i++, q++)
				key[q] = (src_word(em, p, i) * width + f[k]) <<
					 sbits | (*found ? (uint64_t)q : 0);
	}
	if (radix_sort(key, total, sbits, bits) < 0) {
		free(key);
		return -1;
	}
	em->nnz = 0;
	for (int64_t q = 0; q < total; q++) {
		uint64_t k = key[q] >> sbits;

		em->nnz += q == 0 || k != prev;
		prev = k;
	}
	if (em->nnz > INT32_MAX) {
		free(key);
		err_set("word aligner: %lld word pairs, more than %d",
			(long long)em->nnz, INT32_MAX);
		return -1;
	}
	em->row = calloc(em->ne + 2, sizeof *em->row);
	em->col = malloc((em->nnz ? em->nnz : 1) * sizeof *em->col);
	if (!em->row || !em->col) {
		free(key);
		return oom();
	}
	for (int64_t q = 0, c = -1; q < total; q++) {
		uint64_t k = key[q] >> sbits;

		if (q == 0 || k != prev) {
			em->col[++c] = (int32_t)(k % width);
			em->row[k / width + 1]++;
			prev = k;
		}
		if (*found)
			em->cell[key[q] & mask] = (int32_t)c;
	}
	for (int32_t e = 0; e <= em->ne; e++)
		em->row[e + 1] += em->row[e];
	free(key);
	return 0;
}

/* The cell of (e, f), which exists. */
static int32_t find_cell(const struct em *em, int32_t e, int32_t f)
{
	int64_t lo = em->row[e], hi = em->row[e + 1];

	while (lo < hi) {
		int64_t mid = lo + (hi - lo) / 2;

		if (em->col[mid] < f)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (int32_t)lo;
}

static void find_cells(void *ctx, int64_t lo, int64_t hi)
{
	struct em *em = ctx;

	for (int p = (int)lo; p < hi; p++) {
		int n = wa_len(em->b, em->s, p);
		const int32_t *f = wa_words(em->b, em->t, p);
		int64_t q = em->cbase[p];

		for (int k = 0; q < em->cbase[p + 1]; k++)
			for (int i = 0; i <= n; i++)
				em->cell[q++] = find_cell(em, src_word(em, p, i),
							  f[k]);
	}
}

/* The pairs' size classes (m, n) and their weights' places. */
static int build_classes(struct em *em)
{
	const struct wa_bitext *b = em->b;
	size_t nslot = 1024;
	int32_t *slot;
	int64_t nw = 0;

	while (nslot < 2 * (size_t)b->n)
		nslot *= 2;
	slot = calloc(nslot, sizeof *slot);
	em->cls = malloc((b->n ? b->n : 1) * sizeof *em->cls);
	em->pcls = malloc((b->n ? b->n : 1) * sizeof *em->pcls);
	if (!slot || !em->cls || !em->pcls) {
		free(slot);
		return oom();
	}
	for (int p = 0; p < b->n; p++) {
		int n = wa_len(b, em->s, p), m = wa_len(b, em->t, p);
		size_t k = ((size_t)m * 8191 + n) * 2654435761u & (nslot - 1);

		em->pcls[p] = -1;
		if (!n || !m)
			continue;
		while (slot[k] && (em->cls[slot[k] - 1].m != m ||
				   em->cls[slot[k] - 1].n != n))
			k = (k + 1) & (nslot - 1);
		if (!slot[k]) {
			em->cls[em->ncls] = (struct size_class){ m, n, nw };
			nw += m;
			slot[k] = ++em->ncls;
		}
		em->pcls[p] = slot[k] - 1;
	}
	free(slot);
	if (!(em->w = malloc((nw ? nw : 1) * sizeof *em->w)))
		return oom();
	return 0;
}

static void e_step(void *ctx, int64_t lo, int64_t hi)
{
	struct em *em = ctx;
	const struct wa_em_opts *o = em->o;
	double *pr = malloc((WA_MAX_WORDS + 1) * sizeof *pr);

	if (!pr) {
		__atomic_store_n(&em->oom, 1, __ATOMIC_RELAXED);
		return;
	}
	for (int p = (int)lo; p < hi; p++) {
		int n = wa_len(em->b, em->s, p), m = wa_len(em->b, em->t, p);
		double ll = 0, feat = 0;
		int64_t q = em->cbase[p];

		for (int j = 0; j < m && n; j++, q += n + 1) {
			double sum = 0;

			wa_diag_prior(o->diagonal, em->lambda, o->p0, j + 1, m,
				      n, pr);
			for (int i = 0; i <= n; i++)
				sum += pr[i] *= em->tt[em->cell[q + i]];
			ll += log(sum);
			for (int i = 0; i <= n; i++) {
				double x = pr[i] / sum;

				em->post[q + i] = (float)x;
				if (i)
					feat += x * wa_diag_h(i, j + 1, m, n);
			}
		}
		em->ll[p] = ll;
		em->feat[p] = feat;
	}
	free(pr);
}

static void hmm_e_step(void *ctx, int64_t lo, int64_t hi)
{
	struct em *em = ctx;
	struct wa_hmm_work w = { 0 };

	for (int p = (int)lo; p < hi; p++) {
		int n = wa_len(em->b, em->s, p), m = wa_len(em->b, em->t, p);
		int64_t q = em->cbase[p], slots = em->cbase[p + 1] - q;
		double *jc = em->jc + (int64_t)p * WA_HMM_JUMPS, *emis;

		double *from = em->fr + em->foff[p];

		memset(jc, 0, WA_HMM_JUMPS * sizeof *jc);
		memset(from, 0, (em->foff[p + 1] - em->foff[p]) * sizeof *from);
		em->ll[p] = em->feat[p] = 0;
		if (!slots)
			continue;
		if (!(emis = wa_hmm_room(&w, slots)))
			goto oom;
		for (int64_t k = 0; k < slots; k++)
			emis[k] = em->tt[em->cell[q + k]];
		if (wa_hmm_posteriors(em->jump, em->o->p0, n, m, emis,
				      em->post + q, jc, from, &em->ll[p],
				      &w) < 0)
			goto oom;
	}
	wa_hmm_work_free(&w);
	return;
oom:
	__atomic_store_n(&em->oom, 1, __ATOMIC_RELAXED);
	wa_hmm_work_free(&w);
}

/* The HMM's room: each pair's from[], and the source lengths present. */
static int hmm_setup(struct em *em)
{
	const struct wa_bitext *b = em->b;
	int64_t total = 0;

	em->jc = malloc((b->n ? b->n : 1) * sizeof *em->jc * WA_HMM_JUMPS);
	em->foff = malloc((b->n + 1) * sizeof *em->foff);
	em->loff = malloc((WA_MAX_WORDS + 1) * sizeof *em->loff);
	em->lens = malloc((WA_MAX_WORDS + 1) * sizeof *em->lens);
	if (!em->jc || !em->foff || !em->loff || !em->lens)
		return oom();
	for (int n = 0; n <= WA_MAX_WORDS; n++)
		em->loff[n] = -1;
	em->foff[0] = 0;
	for (int p = 0; p < b->n; p++) {
		int n = wa_len(b, em->s, p), m = wa_len(b, em->t, p);

		em->foff[p + 1] = em->foff[p] + (n && m ? n + 1 : 0);
		if (n && m)
			em->loff[n] = 0;
	}
	for (int n = 1; n <= WA_MAX_WORDS; n++)
		if (em->loff[n] == 0) {
			em->loff[n] = total;
			em->lens[em->nlens++] = n;
			total += n + 1;
		}
	em->fr = malloc((em->foff[b->n] ? em->foff[b->n] : 1) *
			sizeof *em->fr);
	em->agg = malloc((total ? total : 1) * sizeof *em->agg);
	if (!em->fr || !em->agg)
		return oom();
	for (int k = 0; k < WA_HMM_JUMPS; k++)
		em->jump[k] = 1.0 / WA_HMM_JUMPS;
	return 0;
}

/* The HMM's M-step of J (hmm.h), the counts summed in pair order. */
static void jump_m_step(struct em *em)
{
	double cnt[WA_HMM_JUMPS] = { 0 };
	int64_t total = 0;

	for (int x = 0; x < em->nlens; x++)
		total += em->lens[x] + 1;
	memset(em->agg, 0, total * sizeof *em->agg);
	for (int p = 0; p < em->b->n; p++) {
		int64_t len = em->foff[p + 1] - em->foff[p];
		double *row = em->agg + (len ? em->loff[len - 1] : 0);

		for (int k = 0; k < WA_HMM_JUMPS; k++)
			cnt[k] += em->jc[(int64_t)p * WA_HMM_JUMPS + k];
		for (int64_t k = 0; k < len; k++)
			row[k] += em->fr[em->foff[p] + k];
	}
	wa_hmm_jump_m_step(em->jump, cnt, em->lens, em->nlens, em->agg);
}

/* The tension's M-step: the derivative of the expected log-likelihood. */
static double tension_slope(const struct em *em, double emp, double lambda)
{
	double mod = 0;

	for (int c = 0; c < em->ncls; c++) {
		const struct size_class *k = &em->cls[c];

		for (int j = 0; j < k->m; j++)
			mod += em->w[k->woff + j] *
			       wa_diag_dlogz(j + 1, k->m, k->n, lambda);
	}
	return emp - mod;
}

static double best_tension(const struct em *em, double emp)
{
	double lo = WA_TENSION_MIN, hi = WA_TENSION_MAX;

	if (tension_slope(em, emp, lo) <= 0)
		return lo;
	if (tension_slope(em, emp, hi) >= 0)
		return hi;
	for (int it = 0; it < 45; it++) {
		double mid = 0.5 * (lo + hi);

		if (tension_slope(em, emp, mid) > 0)
			lo = mid;
		else
			hi = mid;
	}
	return 0.5 * (lo + hi);
}

static void m_step(struct em *em, struct wa_em_report *r)
{
	const struct wa_bitext *b = em->b;
	double emp = 0, alpha = em->o->alpha;

	memset(em->cnt, 0, em->nnz * sizeof *em->cnt);
	memset(em->w, 0, (em->ncls ? em->cls[em->ncls - 1].woff +
			  em->cls[em->ncls - 1].m : 0) * sizeof *em->w);
	r->log_lik = 0;
	r->words = 0;
	for (int p = 0; p < b->n; p++) {
		int n = wa_len(b, em->s, p), m = wa_len(b, em->t, p);

		for (int64_t q = em->cbase[p]; q < em->cbase[p + 1]; q++)
			em->cnt[em->cell[q]] += em->post[q];
		if (em->pcls[p] < 0)
			continue;
		double *w = em->w + em->cls[em->pcls[p]].woff;

		for (int j = 0; j < m; j++)
			w[j] += 1 - em->post[em->cbase[p] + (int64_t)j * (n + 1)];
		r->log_lik += em->ll[p];
		r->words += m;
		emp += em->feat[p];
	}
	for (int32_t e = 0; e <= em->ne; e++) {
		int64_t a = em->row[e], z = em->row[e + 1];
		double tot = 0;

		for (int64_t k = a; k < z; k++)
			tot += em->cnt[k] + alpha;
		if (!(tot > 0)) {
			for (int64_t k = a; k < z; k++)
				em->tt[k] = 1.0 / (double)(z - a);
			continue;
		}
		if (alpha > 0) {
			double dt = wa_digamma(tot);

			for (int64_t k = a; k < z; k++)
				em->tt[k] = exp(wa_digamma(em->cnt[k] + alpha) - dt);
		} else {
			for (int64_t k = a; k < z; k++)
				em->tt[k] = em->cnt[k] / tot;
		}
	}
	if (r->hmm)
		jump_m_step(em);
	else if (em->o->diagonal && em->o->optimize)
		em->lambda = best_tension(em, emp);
	r->tension = em->lambda;
}

/* The table kept: cells of t >= WA_T_MIN, as float. */
static int keep(struct em *em, struct wa_dir *d)
{
	int64_t k = 0;

	d->ne = em->ne;
	d->nf = em->nf;
	d->row = malloc((em->ne + 2) * sizeof *d->row);
	for (int64_t c = 0; c < em->nnz; c++)
		k += em->tt[c] >= WA_T_MIN;
	d->col = malloc((k ? k : 1) * sizeof *d->col);
	d->prob = malloc((k ? k : 1) * sizeof *d->prob);
	if (!d->row || !d->col || !d->prob)
		return oom();
	d->nnz = k;
	k = 0;
	for (int32_t e = 0; e <= em->ne; e++) {
		d->row[e] = k;
		for (int64_t c = em->row[e]; c < em->row[e + 1]; c++)
			if (em->tt[c] >= WA_T_MIN) {
				d->col[k] = em->col[c];
				d->prob[k++] = (float)em->tt[c];
			}
	}
	d->row[em->ne + 1] = k;
	d->diagonal = em->o->diagonal;
	d->tension = em->lambda;
	d->p0 = em->o->p0;
	d->hmm = em->o->hmm_iterations > 0;
	if (d->hmm)
		memcpy(d->jump, em->jump, sizeof d->jump);
	return 0;
}

int wa_em_train(struct wa_dir *d, const struct wa_bitext *b, int reverse,
		int32_t ne, int32_t nf, const struct wa_em_opts *o,
		void (*progress)(void *ctx, const struct wa_em_report *r),
		void *ctx)
{
	struct em em = { .b = b, .s = reverse, .t = !reverse, .ne = ne,
			 .nf = nf, .o = o, .lambda = o->tension };
	int rc = -1, found;

	memset(d, 0, sizeof *d);
	if (build_cells(&em, &found) < 0 || build_classes(&em) < 0)
		goto out;
	em.post = malloc((em.cbase[b->n] ? em.cbase[b->n] : 1) * sizeof *em.post);
	em.ll = malloc((b->n ? b->n : 1) * sizeof *em.ll);
	em.feat = malloc((b->n ? b->n : 1) * sizeof *em.feat);
	em.tt = malloc((em.nnz ? em.nnz : 1) * sizeof *em.tt);
	em.cnt = malloc((em.nnz ? em.nnz : 1) * sizeof *em.cnt);
	if (!em.post || !em.ll || !em.feat || !em.tt || !em.cnt) {
		oom();
		goto out;
	}
	if (!found)
		kern_parallel_for(b->n, 64, find_cells, &em);
	for (int64_t c = 0; c < em.nnz; c++)
		em.tt[c] = 1.0 / nf;
	if (o->hmm_iterations > 0 && hmm_setup(&em) < 0)
		goto out;
	for (int it = 1; it <= o->iterations + o->hmm_iterations; it++) {
		int hmm = it > o->iterations;
		struct wa_em_report r = { .hmm = hmm,
			.iteration = hmm ? it - o->iterations : it };

		kern_parallel_for(b->n, 16, hmm ? hmm_e_step : e_step, &em);
		if (em.oom) {
			oom();
			goto out;
		}
		m_step(&em, &r);
		if (progress)
			progress(ctx, &r);
	}
	rc = keep(&em, d);
out:
	free(em.cbase);
	free(em.cell);
	free(em.post);
	free(em.ll);
	free(em.feat);
	free(em.row);
	free(em.col);
	free(em.tt);
	free(em.cnt);
	free(em.cls);
	free(em.pcls);
	free(em.w);
	free(em.jc);
	free(em.foff);
	free(em.fr);
	free(em.lens);
	free(em.loff);
	free(em.agg);
	if (rc < 0)
		wa_dir_free(d);
	return rc;
}

double wa_digamma(double x)
{
	double r = 0, f, f2;

	while (x < 10) {
		r -= 1 / x;
		x += 1;
	}
	f = 1 / x;
	f2 = f * f;
	/* the asymptotic series: ln x - 1/2x - sum of B_2k / (2k x^2k) */
	return r + log(x) - 0.5 * f - f2 * (1.0 / 12 - f2 * (1.0 / 120 -
		f2 * (1.0 / 252 - f2 * (1.0 / 240 - f2 * (1.0 / 132)))));
}
