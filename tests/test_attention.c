/*
 * test_attention.c: scaled dot-product attention and Bahdanau's additive
 * attention against naive double-precision versions written here
 * (softmax(q k^T scale + mask) v, one entry at a time), for every
 * instruction set of the machine; their backward passes against central
 * differences of those double versions on small shapes, and against the
 * reference instruction set on large ones.  With dropout, the double
 * version applies attn_dropout_keep's mask, so the differences are those
 * of the function with the mask fixed.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/kernels.h"
#include "kerntest.h"
#include "run_suite.h"

#define H_FD 1e-4
#define EXP_REL (3 * KT_U)      /* as test_kern.c: vexp's bound */

/* ---- scaled dot-product attention --------------------------------------- */

/* The problem: layout [B, T or S, H * dk] for q, k, v, out. */
struct prob {
	int B, H, T, S, dk, causal, q_pos0;
	int *klen;
	int shared_kv;          /* one k, v for the whole batch (kv_bs 0) */
	float dropout;          /* of the weights, with the seed DROP_SEED */
	int mask;               /* the additive mask mask_at */
};

#define DROP_SEED 0x5eedULL

/*
 * The additive mask's entry [t, j]: -inf for every key of row 1, for the
 * first 70 keys of row 2 (whole blocks of keys, then finite ones), and
 * where t + 2 j is a multiple of 5; else a multiple of 0.3 in [-1.5,
 * 1.5].  mask_buf holds it for the kernels.
 */
#define MASK_MAX 1.5
#define MASK_CELLS (80 * 160)
static float mask_buf[MASK_CELLS];

static float mask_at(int t, int j)
{
	if (t == 1 || (t == 2 && j < 70) || (t + 2 * j) % 5 == 0)
		return -INFINITY;
	return ((t * 7 + j * 3) % 11 - 5) * 0.3f;
}

static const float *make_mask(const struct prob *p)
{
	if (!p->mask)
		return NULL;
	ck_assert_int_le(p->T * p->S, MASK_CELLS);
	for (int t = 0; t < p->T; t++)
		for (int j = 0; j < p->S; j++)
			mask_buf[t * p->S + j] = mask_at(t, j);
	return mask_buf;
}

static size_t nq(const struct prob *p) { return (size_t)p->B * p->T * p->H * p->dk; }
static size_t nkv(const struct prob *p)
{
	return (size_t)(p->shared_kv ? 1 : p->B) * p->S * p->H * p->dk;
}

static struct attn_args args(const struct prob *p, const float *q,
			     const float *k, const float *v, float *out,
			     float *weights, float *lse)
{
	long w = (long)p->H * p->dk;
	struct attn_args a = {
		.B = p->B, .H = p->H, .T = p->T, .S = p->S, .dk = p->dk,
		.scale = 1 / sqrtf(p->dk),
		.q = q, .q_bs = p->T * w, .q_rs = w,
		.k = k, .v = v, .kv_bs = p->shared_kv ? 0 : p->S * w, .kv_rs = w,
		.out = out, .o_bs = p->T * w, .o_rs = w,
		.klen = p->klen, .mask = make_mask(p),
		.causal = p->causal, .q_pos0 = p->q_pos0,
		.weights = weights, .lse = lse,
		.dropout = p->dropout, .seed = DROP_SEED,
	};
	return a;
}

static int allowed(const struct prob *p, int b, int t, int j)
{
	if (p->klen && j >= p->klen[b])
		return 0;
	return !p->causal || j <= p->q_pos0 + t;
}

/* out [as q] and, if wanted, weights [B, H, T, S] and lse [B, H, T]. */
static void attention_d(const struct prob *p, const double *q, const double *k,
			const double *v, double *out, double *wts, double *lse)
{
	int w = p->H * p->dk;
	double s[600];
	struct attn_args mask = args(p, NULL, NULL, NULL, NULL, NULL, NULL);
	double zs = p->dropout > 0 ? 1 / (1 - (double)p->dropout) : 1;
	for (int b = 0; b < p->B; b++)
	for (int h = 0; h < p->H; h++)
	for (int t = 0; t < p->T; t++) {
		const double *qr = q + ((size_t)b * p->T + t) * w + h * p->dk;
		size_t kb = p->shared_kv ? 0 : (size_t)b * p->S;
		double m = -INFINITY, sum = 0;
		for (int j = 0; j < p->S; j++) {
			const double *kr = k + (kb + j) * w + h * p->dk;
			double d = 0;
			for (int c = 0; c < p->dk; c++)
				d += qr[c] * kr[c];
			s[j] = allowed(p, b, t, j) ? d / sqrt(p->dk) : -INFINITY;
			if (p->mask)
				s[j] += mask_at(t, j);
			m = fmax(m, s[j]);
		}
		double *o = out + ((size_t)b * p->T + t) * w + h * p->dk;
		size_t row = ((size_t)b * p->H + h) * p->T + t;
		for (int c = 0; c < p->dk; c++)
			o[c] = 0;
		if (m == -INFINITY) {
			if (wts)
				for (int j = 0; j < p->S; j++)
					wts[row * p->S + j] = 0;
			if (lse)
				lse[row] = -INFINITY;
			continue;
		}
		for (int j = 0; j < p->S; j++)
			sum += exp(s[j] - m);
		for (int j = 0; j < p->S; j++) {
			double a = exp(s[j] - m) / sum;
			double z = attn_dropout_keep(&mask, b, h, t, j) * zs;
			const double *vr = v + (kb + j) * w + h * p->dk;
			for (int c = 0; c < p->dk; c++)
				o[c] += a * z * vr[c];
			if (wts)
				wts[row * p->S + j] = a;
		}
		if (lse)
			lse[row] = m + log(sum);
	}
}

static double *to_d(const float *x, size_t n)
{
	double *d = kt_dzeros(n);
	for (size_t i = 0; i < n; i++)
		d[i] = x[i];
	return d;
}

static double maxabs(const float *x, size_t n)
{
	double m = 0;
	for (size_t i = 0; i < n; i++)
		m = fmax(m, fabs(x[i]));
	return m;
}

/*
 * Bound of the forward pass: a score is off by es = (dk + 2) u scale
 * max|q| max|k| dk (plus, with the mask, u times the largest sum of a
 * score and a mask entry); a weight by relative 2 es + the exp's bound +
 * (S + 8) u for the sum; an output entry by that times max|v|, plus
 * (S + 2) u max|v| for its own sum.
 */
static double fwd_rel(const struct prob *p, double mq, double mk)
{
	double smax = mq * mk * p->dk / sqrt(p->dk);
	double es = (p->dk + 2) * KT_U * smax;
	if (p->mask)
		es += KT_U * (smax + MASK_MAX);
	return 2 * es + EXP_REL + (2 * p->S + 10) * KT_U;
}

static void check_forward(const struct prob *p, int with_weights)
{
	size_t n = nq(p), m = nkv(p), nr = (size_t)p->B * p->H * p->T;
	float *q = kt_rand(n, -2, 2), *k = kt_rand(m, -1, 1), *v = kt_rand(m, -1, 1);
	float *out = kt_rand(n, -1, 1), *lse = kt_zeros(nr);
	float *wts = with_weights ? kt_rand(nr * p->S, -1, 1) : NULL;
	double *qd = to_d(q, n), *kd = to_d(k, m), *vd = to_d(v, m);
	double *od = kt_dzeros(n), *ld = kt_dzeros(nr), *wd = kt_dzeros(nr * p->S);
	double rel = fwd_rel(p, 2, 1);
	char what[128];

	struct attn_args a = args(p, q, k, v, out, wts, lse);
	attention_forward(&a);
	attention_d(p, qd, kd, vd, od, wd, ld);
	snprintf(what, sizeof(what), "attention B=%d H=%d T=%d S=%d dk=%d "
		 "causal=%d q_pos0=%d klen=%s weights=%d dropout=%g mask=%d",
		 p->B, p->H, p->T, p->S, p->dk, p->causal, p->q_pos0,
		 p->klen ? "yes" : "no", with_weights, p->dropout, p->mask);
	double zs = p->dropout > 0 ? 1 / (1 - p->dropout) : 1;
	kt_check(what, out, od, NULL, rel * zs * maxabs(v, m), n);
	/* lse: the scores' error plus (S + 8) u relative for the sum's log */
	double *tl = kt_dzeros(nr);
	for (size_t i = 0; i < nr; i++)
		tl[i] = rel + (p->S + 8) * KT_U * fabs(ld[i]);
	kt_check(what, lse, ld, tl, 0, nr);
	if (wts)
		kt_check(what, wts, wd, NULL, rel, nr * p->S);
	free(q); free(k); free(v); free(out); free(lse); free(wts);
	free(qd); free(kd); free(vd); free(od); free(ld); free(wd); free(tl);
}

static double attn_loss(const struct prob *p, const double *q, const double *k,
			const double *v, const float *w)
{
	size_t n = nq(p);
	double *o = kt_dzeros(n), L = 0;
	attention_d(p, q, k, v, o, NULL, NULL);
	for (size_t i = 0; i < n; i++)
		L += w[i] * o[i];
	free(o);
	return L;
}

/* Central differences of L = sum w out in every entry of x. */
static void fd_grad(const struct prob *p, double *q, double *k, double *v,
		    double *x, size_t n, const float *w, const float *g0,
		    double *want)
{
	for (size_t i = 0; i < n; i++) {
		double keep = x[i];
		x[i] = keep + H_FD;
		double lp = attn_loss(p, q, k, v, w);
		x[i] = keep - H_FD;
		double lm = attn_loss(p, q, k, v, w);
		x[i] = keep;
		want[i] = g0[i] + (lp - lm) / (2 * H_FD);
	}
}

/*
 * Backward against central differences.  Each gradient entry is a sum of
 * at most S + T terms of products of dk-term dot products, each term at
 * most the largest entry of the gradient's tensor in size with the
 * forward's relative error: 4 (S + T + dk + 8) u + the forward's bound,
 * times that size (plus the 1e-8 of the differences).
 */
static void check_backward(const struct prob *p)
{
	size_t n = nq(p), m = nkv(p), nr = (size_t)p->B * p->H * p->T;
	float *q = kt_rand(n, -2, 2), *k = kt_rand(m, -1, 1), *v = kt_rand(m, -1, 1);
	float *out = kt_zeros(n), *lse = kt_zeros(nr), *dout = kt_rand(n, -1, 1);
	float *dq = kt_rand(n, -1, 1), *dk = kt_rand(m, -1, 1), *dv = kt_rand(m, -1, 1);
	double *qd = to_d(q, n), *kd = to_d(k, m), *vd = to_d(v, m);
	double *wq = kt_dzeros(n), *wk = kt_dzeros(m), *wv = kt_dzeros(m);
	char what[128];

	fd_grad(p, qd, kd, vd, qd, n, dout, dq, wq);
	fd_grad(p, qd, kd, vd, kd, m, dout, dk, wk);
	fd_grad(p, qd, kd, vd, vd, m, dout, dv, wv);
	struct attn_args a = args(p, q, k, v, out, NULL, lse);
	attention_forward(&a);
	attention_backward(&a, dout, dq, dk, dv);
	double rel = 4 * (p->S + p->T + p->dk + 8) * KT_U + fwd_rel(p, 2, 1);
	double gq = 0, gk = 0, gv = 0;
	for (size_t i = 0; i < n; i++)
		gq = fmax(gq, fabs(wq[i]));
	for (size_t i = 0; i < m; i++) {
		gk = fmax(gk, fabs(wk[i]));
		gv = fmax(gv, fabs(wv[i]));
	}
	snprintf(what, sizeof(what), "attention_backward B=%d H=%d T=%d S=%d "
		 "dk=%d causal=%d q_pos0=%d klen=%s shared=%d dropout=%g "
		 "mask=%d", p->B, p->H, p->T, p->S, p->dk, p->causal,
		 p->q_pos0, p->klen ? "yes" : "no", p->shared_kv, p->dropout,
		 p->mask);
	kt_check(what, dq, wq, NULL, rel * gq + 1e-8, n);
	kt_check(what, dk, wk, NULL, rel * gk + 1e-8, m);
	kt_check(what, dv, wv, NULL, rel * gv + 1e-8, m);
	free(q); free(k); free(v); free(out); free(lse); free(dout);
	free(dq); free(dk); free(dv); free(qd); free(kd); free(vd);
	free(wq); free(wk); free(wv);
}

START_TEST(test_attention_small)
{
	int klen[3] = { 3, 7, 0 }, klen2[2] = { 9, 4 };
	struct prob probs[] = {
		{ 2, 3, 5, 7, 4, 0, 0, NULL, 0, 0, 0 },
		{ 1, 2, 9, 9, 5, 1, 0, NULL, 0, 0, 0 },       /* causal */
		{ 2, 1, 1, 7, 3, 1, 6, NULL, 0, 0, 0 },       /* a cached decoder */
		{ 2, 2, 3, 9, 4, 1, 5, NULL, 0, 0, 0 },
		{ 3, 2, 4, 7, 4, 0, 0, klen, 0, 0, 0 },       /* padding, all masked */
		{ 2, 2, 6, 9, 3, 1, 0, klen2, 0, 0, 0 },
		{ 3, 2, 4, 5, 1, 0, 0, NULL, 1, 0, 0 },       /* keys shared */
		{ 1, 1, 1, 1, 1, 0, 0, NULL, 0, 0, 0 },
		{ 2, 3, 5, 7, 4, 0, 0, NULL, 0, 0.3f, 0 }, /* dropout */
		{ 1, 2, 9, 9, 5, 1, 0, NULL, 0, 0.5f, 0 },
		{ 2, 2, 6, 9, 3, 1, 0, klen2, 0, 0.2f, 0 },
		{ 3, 2, 4, 5, 1, 0, 0, NULL, 1, 0.4f, 0 },
		{ 1, 1, 3, 20, 2, 0, 0, NULL, 0, 0.2f, 0 },   /* 17-32 keys */
		{ 1, 2, 18, 18, 3, 1, 0, NULL, 0, 0, 0 },
		/* the additive mask */
		{ 2, 3, 5, 7, 4, 0, 0, NULL, 0, 0, 1 },
		{ 1, 2, 9, 9, 5, 1, 0, NULL, 0, 0, 1 },
		{ 2, 2, 6, 9, 3, 1, 0, klen2, 0, 0.2f, 1 },
		{ 3, 2, 4, 7, 4, 0, 0, klen, 1, 0, 1 },
		{ 1, 1, 3, 20, 2, 0, 0, NULL, 0, 0.2f, 1 },
	};
	int isa[3], ni = kt_isas(isa);
	for (int i = 0; i < ni; i++) {
		kern_set_isa(isa[i]);
		kt_seed(10);
		for (size_t c = 0; c < sizeof(probs) / sizeof(probs[0]); c++) {
			check_forward(&probs[c], 0);
			check_forward(&probs[c], 1);
			check_backward(&probs[c]);
		}
	}
}
END_TEST

/* Shapes past any block of keys or queries, and vector tails. */
START_TEST(test_attention_large)
{
	int klen[2] = { 131, 77 }, klen2[2] = { 16, 11 }, klen3[2] = { 32, 19 };
	struct prob probs[] = {
		{ 2, 2, 70, 131, 64, 0, 0, klen, 0, 0, 0 },
		{ 1, 3, 67, 67, 33, 1, 0, NULL, 0, 0, 0 },
		{ 2, 1, 19, 100, 17, 1, 81, NULL, 0, 0, 0 },
		{ 2, 2, 70, 131, 64, 0, 0, klen, 0, 0.1f, 0 },
		{ 1, 2, 67, 67, 33, 1, 0, NULL, 0, 0.3f, 0 },
		/* AVX-512's whole-head path (T, S <= 32, dk <= 64; up to
		 * 16 keys a register a row, else two) and just past it */
		{ 2, 2, 16, 16, 64, 0, 0, NULL, 0, 0.1f, 0 },
		{ 2, 2, 16, 16, 64, 1, 0, klen2, 0, 0, 0 },
		{ 2, 2, 8, 16, 64, 0, 0, klen2, 0, 0.2f, 0 },
		{ 1, 2, 17, 16, 64, 1, 0, NULL, 0, 0.1f, 0 },
		{ 1, 2, 16, 17, 64, 0, 0, NULL, 0, 0, 0 },
		{ 2, 2, 32, 32, 64, 0, 0, NULL, 0, 0.1f, 0 },
		{ 2, 2, 32, 32, 64, 1, 0, klen3, 0, 0.1f, 0 },
		{ 1, 2, 33, 32, 64, 1, 0, NULL, 0, 0.1f, 0 },
		{ 1, 2, 32, 33, 64, 0, 0, NULL, 0, 0, 0 },
		{ 1, 2, 16, 16, 65, 0, 0, NULL, 0, 0.1f, 0 },
		/* the additive mask: row 2's first block of keys all -inf */
		{ 2, 2, 70, 131, 64, 0, 0, klen, 0, 0, 1 },
		{ 1, 3, 67, 67, 33, 1, 0, NULL, 0, 0.3f, 1 },
		{ 2, 2, 16, 16, 64, 0, 0, NULL, 0, 0.1f, 1 },
		{ 2, 2, 32, 32, 64, 1, 0, klen3, 0, 0, 1 },
	};
	int isa[3], ni = kt_isas(isa);
	kt_seed(11);
	for (size_t c = 0; c < sizeof(probs) / sizeof(probs[0]); c++) {
		const struct prob *p = &probs[c];
		size_t n = nq(p), m = nkv(p), nr = (size_t)p->B * p->H * p->T;
		float *q = kt_rand(n, -2, 2), *k = kt_rand(m, -1, 1);
		float *v = kt_rand(m, -1, 1), *dout = kt_rand(n, -1, 1);
		float *out = kt_zeros(n), *lse = kt_zeros(nr);
		float *g[3] = { kt_zeros(n), kt_zeros(m), kt_zeros(m) };
		double *want[3] = { kt_dzeros(n), kt_dzeros(m), kt_dzeros(m) };
		size_t len[3] = { n, m, m };
		for (int i = 0; i < ni; i++) {
			kern_set_isa(isa[i]);
			check_forward(p, i & 1);
			struct attn_args a = args(p, q, k, v, out, NULL, lse);
			attention_forward(&a);
			for (int t = 0; t < 3; t++)
				memset(g[t], 0, len[t] * sizeof(float));
			attention_backward(&a, dout, g[0], g[1], g[2]);
			/* Against the reference (checked by differences
			 * above): twice the bound of check_backward. */
			for (int t = 0; t < 3; t++) {
				if (i == 0) {
					for (size_t e = 0; e < len[t]; e++)
						want[t][e] = g[t][e];
					continue;
				}
				double mg = maxabs(g[t], len[t]);
				double rel = 8 * (p->S + p->T + p->dk + 8) * KT_U +
					     2 * fwd_rel(p, 2, 1);
				kt_check("attention_backward (large) vs reference",
					 g[t], want[t], NULL, rel * mg, len[t]);
			}
		}
		free(q); free(k); free(v); free(dout); free(out); free(lse);
		for (int t = 0; t < 3; t++) {
			free(g[t]);
			free(want[t]);
		}
	}
}
END_TEST

/*
 * The dropout mask: the fraction kept within 5 standard deviations of
 * 1 - p, rows of other heads, batch items, seeds and neighbouring rows
 * agreeing as often as independent masks would (p^2 + (1 - p)^2), and
 * dropout 0 keeping everything.
 */
START_TEST(test_dropout_mask)
{
	const int B = 3, H = 4, T = 40, S = 300;
	const float rates[] = { 0.1f, 0.5f, 0.9f };
	for (size_t i = 0; i < sizeof(rates) / sizeof(rates[0]); i++) {
		double p = rates[i], n = (double)B * H * T * S;
		struct attn_args a = { .B = B, .H = H, .T = T, .S = S,
				       .dropout = rates[i], .seed = 42 };
		struct attn_args a2 = a;
		a2.seed = 43;
		long kept = 0, same[4] = { 0 };
		for (int b = 0; b < B; b++)
		for (int h = 0; h < H; h++)
		for (int t = 0; t < T; t++)
		for (int j = 0; j < S; j++) {
			int k = attn_dropout_keep(&a, b, h, t, j);
			kept += k;
			same[0] += k == attn_dropout_keep(&a, b, (h + 1) % H, t, j);
			same[1] += k == attn_dropout_keep(&a, (b + 1) % B, h, t, j);
			same[2] += k == attn_dropout_keep(&a2, b, h, t, j);
			same[3] += k == attn_dropout_keep(&a, b, h, (t + 1) % T, j);
		}
		double sd = sqrt(n * p * (1 - p)), agree = p * p + (1 - p) * (1 - p);
		ck_assert_msg(fabs(kept - n * (1 - p)) < 5 * sd,
			      "dropout %g: %ld of %.0f kept", p, kept, n);
		for (int c = 0; c < 4; c++)
			ck_assert_msg(fabs(same[c] - n * agree) <
				      5 * sqrt(n * agree * (1 - agree)),
				      "dropout %g: masks %d agree %ld of %.0f",
				      p, c, same[c], n);
		a.dropout = 0;
		ck_assert_int_eq(attn_dropout_keep(&a, 1, 2, 3, 4), 1);
	}
}
END_TEST

/* ---- other weights: act and no_norm ------------------------------------- */

static double act_d(int act, double s)
{
	if (act == ATTN_RELU)
		return s > 0 ? s : 0;
	if (act == ATTN_GELU)
		return 0.5 * s * (1 + erf(s / sqrt(2)));
	return exp(s);
}

/*
 * out (and weights [B, H, T, S]) with the weights w_j = act(s_j),
 * divided by their sum unless no_norm, in double; tol [as out] the bound
 * of each entry: a score is off by es (fwd_rel's), its weight by
 * |act'(s)| es (|act'| <= 1.13 for relu and gelu; exp(s) for exp) plus
 * 8 u |w| for act's own rounding (EXP_REL for exp); the sums of S terms
 * add (S + 2) u of their sums of absolute values; a normalised row
 * divides all of it by |sum_j w_j| and adds |out| times the sum's
 * relative error.  Twice that, for the bound's own slack.
 */
static void attention_act_d(const struct prob *p, int act, int no_norm,
			    const double *q, const double *k, const double *v,
			    double *out, double *wts, double *tol, double es)
{
	int w = p->H * p->dk;
	struct attn_args mask = args(p, NULL, NULL, NULL, NULL, NULL, NULL);
	double zs = p->dropout > 0 ? 1 / (1 - (double)p->dropout) : 1;
	for (int b = 0; b < p->B; b++)
	for (int h = 0; h < p->H; h++)
	for (int t = 0; t < p->T; t++) {
		const double *qr = q + ((size_t)b * p->T + t) * w + h * p->dk;
		size_t kb = p->shared_kv ? 0 : (size_t)b * p->S;
		size_t row = ((size_t)b * p->H + h) * p->T + t;
		double a[600], e[600], sum = 0, err = 0, asum = 0, f;
		for (int j = 0; j < p->S; j++) {
			const double *kr = k + (kb + j) * w + h * p->dk;
			double s = 0;
			for (int c = 0; c < p->dk; c++)
				s += qr[c] * kr[c];
			s /= sqrt(p->dk);
			if (p->mask)
				s += mask_at(t, j);
			if (!allowed(p, b, t, j) || s == -INFINITY) {
				a[j] = e[j] = 0;
				continue;
			}
			a[j] = act_d(act, s);
			e[j] = act == ATTN_SOFTMAX ?
			       fabs(a[j]) * (es + EXP_REL) :
			       1.13 * es + 8 * KT_U * fabs(a[j]);
			sum += a[j];
			asum += fabs(a[j]);
			err += e[j];
		}
		f = no_norm ? 1 : sum != 0 ? 1 / sum : 0;
		double *o = out + ((size_t)b * p->T + t) * w + h * p->dk;
		double *to = tol + ((size_t)b * p->T + t) * w + h * p->dk;
		for (int c = 0; c < p->dk; c++) {
			double ab = 0, eb = 0;
			o[c] = 0;
			for (int j = 0; j < p->S; j++) {
				double z = attn_dropout_keep(&mask, b, h, t, j) * zs;
				double vj = v[(kb + j) * w + h * p->dk + c];
				o[c] += a[j] * z * vj;
				ab += fabs(a[j] * z * vj);
				eb += e[j] * z * fabs(vj);
			}
			o[c] *= f;
			to[c] = 2 * (fabs(f) * (eb + (p->S + 2) * KT_U * ab) +
				     (no_norm || sum == 0 ? 0 : fabs(o[c]) *
				      (err + (p->S + 2) * KT_U * asum) /
				      fabs(sum)));
		}
		for (int j = 0; wts && j < p->S; j++)
			wts[row * p->S + j] = a[j] * f;
	}
}

/*
 * Every act, normalised or not, on every instruction set (AVX-512's
 * whole-head path, the blocks, the reference with weights), with
 * padding, causal rows, the mask (rows wholly masked) and dropout,
 * against attention_act_d; the weights within 4 (es + S u) relative.
 */
START_TEST(test_attention_act)
{
	int klen[3] = { 3, 7, 0 }, klen2[2] = { 131, 77 };
	struct prob probs[] = {
		{ 2, 3, 5, 7, 4, 0, 0, NULL, 0, 0, 0 },
		{ 3, 2, 4, 7, 4, 0, 0, klen, 0, 0, 1 },
		{ 1, 2, 9, 9, 5, 1, 0, NULL, 0, 0.3f, 0 },
		{ 2, 2, 16, 16, 64, 0, 0, NULL, 0, 0.1f, 0 },
		{ 2, 2, 32, 32, 64, 1, 0, NULL, 0, 0, 1 },
		{ 2, 2, 70, 131, 64, 0, 0, klen2, 0, 0, 0 },
		{ 1, 3, 67, 67, 33, 1, 0, NULL, 0, 0.3f, 1 },
	};
	int isa[3], ni = kt_isas(isa);
	kt_seed(12);
	for (int i = 0; i < ni; i++)
	for (size_t c = 0; c < sizeof(probs) / sizeof(probs[0]); c++)
	for (int act = ATTN_SOFTMAX; act <= ATTN_GELU; act++)
	for (int nn = 0; nn < 2; nn++) {
		if (act == ATTN_SOFTMAX && !nn)
			continue;       /* test_attention_small's */
		const struct prob *p = &probs[c];
		size_t n = nq(p), m = nkv(p), nr = (size_t)p->B * p->H * p->T;
		int ww = (int)c & 1;
		float *q = kt_rand(n, -2, 2), *k = kt_rand(m, -1, 1);
		float *v = kt_rand(m, -1, 1), *out = kt_rand(n, -1, 1);
		float *wts = ww ? kt_rand(nr * p->S, -1, 1) : NULL;
		double *qd = to_d(q, n), *kd = to_d(k, m), *vd = to_d(v, m);
		double *od = kt_dzeros(n), *tl = kt_dzeros(n);
		double *wd = kt_dzeros(nr * p->S);
		double smax = 2.0 * p->dk / sqrt(p->dk);
		double es = (p->dk + 2) * KT_U * smax +
			    (p->mask ? KT_U * (smax + MASK_MAX) : 0);
		char what[160];
		kern_set_isa(isa[i]);
		struct attn_args a = args(p, q, k, v, out, wts, NULL);
		a.act = act;
		a.no_norm = nn;
		attention_forward(&a);
		attention_act_d(p, act, nn, qd, kd, vd, od, wd, tl, es);
		snprintf(what, sizeof(what), "attention act=%d no_norm=%d "
			 "isa=%d B=%d H=%d T=%d S=%d dk=%d weights=%d", act,
			 nn, isa[i], p->B, p->H, p->T, p->S, p->dk, ww);
		kt_check(what, out, od, tl, 0, n);
		if (wts && nn) {
			double *tw = kt_dzeros(nr * p->S);
			for (size_t e = 0; e < nr * p->S; e++)
				tw[e] = 4 * (es * (act == ATTN_SOFTMAX ?
					     fabs(wd[e]) : 1.13) +
					     (p->S + 8) * KT_U * fabs(wd[e]));
			kt_check(what, wts, wd, tw, 0, nr * p->S);
			free(tw);
		}
		free(q); free(k); free(v); free(out); free(wts);
		free(qd); free(kd); free(vd); free(od); free(tl); free(wd);
	}
}
END_TEST

/* ---- additive attention ------------------------------------------------- */

struct aprob { int B, S, na, dv; int *len; };

static int alen(const struct aprob *p, int b)
{
	return p->len ? p->len[b] : p->S;
}

/* ctx [B, dv], a [B, S] */
static void additive_d(const struct aprob *p, const double *wq,
		       const double *keys, const double *va, const double *ann,
		       double *ctx, double *a)
{
	for (int b = 0; b < p->B; b++) {
		int len = alen(p, b);
		double e[200], m = -INFINITY, sum = 0;
		for (int j = 0; j < len; j++) {
			e[j] = 0;
			for (int i = 0; i < p->na; i++)
				e[j] += va[i] * tanh(wq[b * p->na + i] +
						     keys[((size_t)b * p->S + j) * p->na + i]);
			m = fmax(m, e[j]);
		}
		for (int j = 0; j < len; j++)
			sum += exp(e[j] - m);
		for (int i = 0; i < p->dv; i++)
			ctx[b * p->dv + i] = 0;
		for (int j = 0; j < p->S; j++) {
			double w = j < len ? exp(e[j] - m) / sum : 0;
			a[b * p->S + j] = w;
			for (int i = 0; i < p->dv; i++)
				ctx[b * p->dv + i] += w * ann[((size_t)b * p->S + j) * p->dv + i];
		}
	}
}

struct aparams { double *wq, *keys, *va, *ann; };

static double additive_loss(const struct aprob *p, const struct aparams *x,
			    const float *w)
{
	double *ctx = kt_dzeros((size_t)p->B * p->dv);
	double *a = kt_dzeros((size_t)p->B * p->S), L = 0;
	additive_d(p, x->wq, x->keys, x->va, x->ann, ctx, a);
	for (int i = 0; i < p->B * p->dv; i++)
		L += w[i] * ctx[i];
	free(ctx);
	free(a);
	return L;
}

/*
 * Bound of the forward pass: e is a sum of na terms |va| |tanh| <= |va|,
 * each with the tanh's bound and na roundings: ee = (na + 8) u na max|va|
 * (tanh's relative bound is below 8 u); a weight is then off by relative
 * 2 ee + exp's bound + (S + 8) u; ctx by that times max|ann| plus
 * (S + 2) u max|ann|.
 */
static double add_rel(const struct aprob *p, double mva)
{
	double ee = (p->na + 8) * KT_U * p->na * mva;
	return 2 * ee + EXP_REL + (2 * p->S + 10) * KT_U;
}

START_TEST(test_additive)
{
	int len1[3] = { 6, 2, 0 }, len2[4] = { 50, 17, 1, 33 };
	struct aprob probs[] = {
		{ 3, 6, 5, 7, len1 },
		{ 2, 4, 1, 1, NULL },
		{ 1, 1, 3, 2, NULL },
		{ 4, 50, 37, 41, len2 },
	};
	int isa[3], ni = kt_isas(isa);
	for (size_t c = 0; c < sizeof(probs) / sizeof(probs[0]); c++) {
		const struct aprob *p = &probs[c];
		size_t nwq = (size_t)p->B * p->na, nk = nwq * p->S;
		size_t nann = (size_t)p->B * p->S * p->dv, nctx = (size_t)p->B * p->dv;
		size_t nw = (size_t)p->B * p->S;
		int small = nk < 1000;
		kt_seed(20 + c);
		float *wq = kt_rand(nwq, -1, 1), *keys = kt_rand(nk, -1, 1);
		float *va = kt_rand(p->na, -2.0 / p->na, 2.0 / p->na);
		float *ann = kt_rand(nann, -1, 1), *dctx = kt_rand(nctx, -1, 1);
		float *ctx = kt_zeros(nctx), *a = kt_zeros(nw);
		struct aparams x = { to_d(wq, nwq), to_d(keys, nk), to_d(va, p->na),
				     to_d(ann, nann) };
		double *cd = kt_dzeros(nctx), *ad = kt_dzeros(nw);
		additive_d(p, x.wq, x.keys, x.va, x.ann, cd, ad);
		/* Gradients: by differences (small) or the reference (large). */
		double *want[4] = { kt_dzeros(nwq), kt_dzeros(nk), kt_dzeros(p->na),
				    kt_dzeros(nann) };
		double *px[4] = { x.wq, x.keys, x.va, x.ann };
		size_t len[4] = { nwq, nk, (size_t)p->na, nann };
		float *g0[4] = { kt_rand(nwq, -1, 1), kt_rand(nk, -1, 1),
				 kt_rand(p->na, -1, 1), kt_rand(nann, -1, 1) };
		float *g[4] = { kt_zeros(nwq), kt_zeros(nk), kt_zeros(p->na),
				kt_zeros(nann) };
		for (int t = 0; small && t < 4; t++)
			for (size_t i = 0; i < len[t]; i++) {
				double keep = px[t][i];
				px[t][i] = keep + H_FD;
				double lp = additive_loss(p, &x, dctx);
				px[t][i] = keep - H_FD;
				double lm = additive_loss(p, &x, dctx);
				px[t][i] = keep;
				want[t][i] = g0[t][i] + (lp - lm) / (2 * H_FD);
			}
		double rel = add_rel(p, 2.0 / p->na);
		for (int i = 0; i < ni; i++) {
			kern_set_isa(isa[i]);
			additive_attention_forward(ctx, a, wq, keys, va, ann,
						   p->len, p->B, p->S, p->na, p->dv);
			kt_check("additive_attention_forward ctx", ctx, cd, NULL, rel, nctx);
			kt_check("additive_attention_forward a", a, ad, NULL, rel, nw);
			for (int t = 0; t < 4; t++)
				memcpy(g[t], g0[t], len[t] * sizeof(float));
			additive_attention_backward(g[0], g[1], g[2], g[3], dctx, a,
						    wq, keys, va, ann, p->len,
						    p->B, p->S, p->na, p->dv);
			/*
			 * A gradient entry sums at most S terms (B na for
			 * dva), each a product of the forward's quantities:
			 * 4 ((B + 1) S + na + dv + 8) u + the forward's
			 * bound, relative to the tensor's largest entry.
			 */
			double brel = 4 * ((p->B + 1) * p->S + p->na + p->dv + 8) * KT_U +
				      rel;
			for (int t = 0; t < 4; t++) {
				if (!small && i == 0) {
					for (size_t e = 0; e < len[t]; e++)
						want[t][e] = g[t][e];
					continue;
				}
				double mg = 0;
				for (size_t e = 0; e < len[t]; e++)
					mg = fmax(mg, fabs(want[t][e] - g0[t][e]));
				kt_check(small ? "additive_attention_backward" :
					 "additive_attention_backward vs reference",
					 g[t], want[t], NULL,
					 (small ? 1 : 2) * brel * (mg + fabs(maxabs(g0[t], len[t]) * KT_U)) + 1e-8,
					 len[t]);
			}
		}
		/* Any d-buffer may be NULL. */
		additive_attention_backward(NULL, NULL, NULL, g[3], dctx, a, wq,
					    keys, va, ann, p->len, p->B, p->S,
					    p->na, p->dv);
		free(wq); free(keys); free(va); free(ann); free(dctx); free(ctx);
		free(a); free(cd); free(ad);
		for (int t = 0; t < 4; t++) {
			free(want[t]); free(px[t]); free(g0[t]); free(g[t]);
		}
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("attention");
	TCase *tc = tcase_create("attention");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_attention_small);
	tcase_add_test(tc, test_attention_large);
	tcase_add_test(tc, test_attention_act);
	tcase_add_test(tc, test_dropout_mask);
	tcase_add_test(tc, test_additive);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
