/*
 * seqcheck.c: the checks the recurrent models' tests share (seqcheck.h).
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/errmsg.h"
#include "kernels/kernels.h"
#include "seqcheck.h"

/* ---- models and batches -------------------------------------------------- */

struct model *sc_model(const char *arch, const char *set, const char *extra)
{
	const char *kv[16];
	char all[256];
	int k = 0;
	struct model *m;
	struct rng r;

	snprintf(all, sizeof all, "src_vocab=%d tgt_vocab=%d %s %s", SC_VS,
		 SC_VT, set, extra ? extra : "");
	for (char *t = strtok(all, " "); t; t = strtok(NULL, " ")) {
		ck_assert_int_lt(k, 16);
		kv[k++] = t;
	}
	m = model_create(arch, kv, k, "", "");
	ck_assert_msg(m != NULL, "%s", err_msg());
	rng_seed(&r, 7);
	for (size_t j = 0; j < m->nw; j++)
		m->w[j] = (float)(0.5 * rng_normal(&r));
	return m;
}

void sc_grads_on(struct model *m)
{
	m->g = calloc(m->nw, sizeof(float));
	ck_assert_ptr_nonnull(m->g);
	for (int i = 0; i < m->nparam; i++)
		m->param[i].g = m->g + (m->param[i].w - m->w);
	ck_assert_int_eq(m->arch->bind(m), 0);
}

void sc_make_batch(struct sc_batch *x, int B, const int *len, int V,
		   uint64_t seed)
{
	struct rng r;

	rng_seed(&r, seed);
	memset(x, 0, sizeof *x);
	ck_assert_int_le(B, 8);
	x->b.B = B;
	for (int b = 0; b < B; b++)
		if (len[b] > x->b.S)
			x->b.S = len[b];
	ck_assert_int_le(B * x->b.S, 64);
	for (int b = 0; b < B; b++) {
		x->len[b] = len[b];
		for (int t = 0; t < len[b]; t++)
			x->ids[b * x->b.S + t] = t == len[b] - 1 ? 2 :
				3 + (int32_t)rng_below(&r, V - 3);
	}
	x->b.ids = x->ids;
	x->b.len = x->len;
}

void sc_one_sentence(struct sc_batch *one, const struct sc_batch *x, int b,
		     int len)
{
	memset(one, 0, sizeof *one);
	one->b.B = 1;
	one->b.S = len;
	one->len[0] = len;
	memcpy(one->ids, x->ids + b * x->b.S, len * sizeof(int32_t));
	one->b.ids = one->ids;
	one->b.len = one->len;
}

static struct rng fixed;
static int fixed_set;

static int dropout;

void sc_fix_masks(const struct rng *r)
{
	fixed_set = r != NULL;
	if (r)
		fixed = *r;
}

void sc_dropout(int on)
{
	dropout = on;
}

double sc_train(struct model *m, const struct sc_batch *src,
		const struct sc_batch *tgt, float scale, double *nll)
{
	int ntok;
	double loss;

	if (fixed_set)
		m->rng = fixed;
	loss = m->arch->train_batch(m, &src->b, &tgt->b, scale, dropout, nll,
				    &ntok);
	ck_assert_msg(loss >= 0, "%s", err_msg());
	return loss;
}

struct frame *sc_pipeline(const struct model *m, const struct sc_batch *x)
{
	struct frame *f = calloc(x->b.B, sizeof *f);
	struct frame *fp[8];

	ck_assert_ptr_nonnull(f);
	for (int b = 0; b < x->b.B; b++) {
		uint64_t dim = x->len[b];
		struct tensor t;

		f[b].number = b;
		ck_assert_int_eq(tensor_init_copy(&t, "src.ids", DT_I32, 1,
						  &dim, x->ids + b * x->b.S),
				 0);
		ck_assert_ptr_nonnull(frame_put(&f[b], &t));
		fp[b] = &f[b];
	}
	ck_assert_msg(m->arch->embed(m, fp, x->b.B) == 0, "%s", err_msg());
	ck_assert_msg(m->arch->encode(m, fp, x->b.B) == 0, "%s", err_msg());
	ck_assert_msg(m->arch->attend(m, fp, x->b.B) == 0, "%s", err_msg());
	return f;
}

void sc_free_frames(struct frame *f, int n)
{
	for (int i = 0; i < n; i++)
		frame_free(&f[i]);
	free(f);
}

void sc_assert_close(const float *a, const float *b, size_t n, double tol,
		     const char *what)
{
	for (size_t i = 0; i < n; i++) {
		double scale = fabs(a[i]) > 1 ? fabs(a[i]) : 1;
		ck_assert_msg(fabs(a[i] - b[i]) <= tol * scale,
			      "%s[%zu]: %.9g vs %.9g", what, i, a[i], b[i]);
	}
}

/* ---- gradients ----------------------------------------------------------- */

/* Central differences of the loss in parameter entry e of p, step h. */
static double central(struct model *m, struct param *p, size_t e, float h,
		      const struct sc_batch *src, const struct sc_batch *tgt)
{
	float w = p->w[e];
	double up, down, nll;

	p->w[e] = w + h;
	up = sc_train(m, src, tgt, 1.0f, &nll);
	p->w[e] = w - h;
	down = sc_train(m, src, tgt, 1.0f, &nll);
	p->w[e] = w;
	return (up - down) / (2 * h);
}

/*
 * Central differences in f32 on a loss that sums about ten token losses of
 * order 2 (xent sums in double).  With h = 1e-2 the truncation error
 * h^2/6 |f'''| and the f32 rounding of the forward pass (mostly the same in
 * both evaluations) leave them within 1e-4 of the true gradient (measured:
 * typically 1e-5), so 1e-4 + 1% passes a right gradient and fails a wrong
 * one, which is off by the size of a whole term.  RNNsearch's maxout has
 * kinks: where w +- h crosses one (the larger of a pair changes), the
 * differences are off; an LSTM has none, but a large third derivative.
 * So an entry that fails at h = 1e-2 is tried again at h = 1e-3 (whose
 * rounding error is still within the tolerance); a wrong gradient fails
 * both.  Every tensor is checked; of a large one, 12 entries drawn at
 * random, and at least one of them must be 1e-3 or more, ten times the
 * absolute tolerance, or the check proves nothing.
 */
void sc_check_gradients(struct model *m)
{
	static const int slen[] = { 4, 2, 3 }, tlen[] = { 3, 5, 1 };
	struct sc_batch src, tgt;
	float *g0 = malloc(m->nw * sizeof(float));
	struct rng r;
	double nll;

	ck_assert_ptr_nonnull(g0);
	sc_make_batch(&src, 3, slen, SC_VS, 1);
	sc_make_batch(&tgt, 3, tlen, SC_VT, 2);
	sc_grads_on(m);
	sc_train(m, &src, &tgt, 1.0f, &nll);
	memcpy(g0, m->g, m->nw * sizeof(float));
	rng_seed(&r, 11);
	for (int i = 0; i < m->nparam; i++) {
		struct param *p = &m->param[i];
		size_t k = p->n <= 12 ? p->n : 12;
		double gmax = 0;

		for (size_t j = 0; j < k; j++) {
			size_t e = p->n <= 12 ? j : rng_below(&r, p->n);
			double an = g0[(p->g - m->g) + e];
			double fd = central(m, p, e, 1e-2f, &src, &tgt);

			if (fabs(fd - an) > 1e-4 + 0.01 * fabs(an))
				fd = central(m, p, e, 1e-3f, &src, &tgt);
			ck_assert_msg(fabs(fd - an) <= 1e-4 + 0.01 * fabs(an),
				      "%s %s[%zu]: analytic %.6g, finite "
				      "differences %.6g", m->arch->name,
				      p->name, e, an, fd);
			if (fabs(an) > gmax)
				gmax = fabs(an);
		}
		ck_assert_msg(gmax >= 1e-3, "%s %s: gradient %g", m->arch->name,
			      p->name, gmax);
	}
	free(g0);
}

/* ---- the decoder --------------------------------------------------------- */

void sc_decoder_vs_ref(const struct model *m, struct frame *f,
		       const struct sc_batch *tgt, const double *ref,
		       double tol, const char *what)
{
	int B = tgt->b.B, S = tgt->b.S;
	struct frame *fp[8];
	struct decoder *d;
	float logp[8 * SC_VT];
	int32_t prev[8];

	for (int b = 0; b < B; b++) {
		fp[b] = &f[b];
		prev[b] = 1;
	}
	d = m->arch->dec_new(m, NULL, fp, B, 1);
	ck_assert_msg(d != NULL, "%s", err_msg());
	for (int i = 0; i < S; i++) {
		ck_assert_int_eq(m->arch->dec_step(d, B, prev, logp, NULL), 0);
		for (int b = 0; b < B; b++) {
			if (i >= tgt->len[b])
				continue;
			for (int v = 0; v < SC_VT; v++) {
				double got = logp[b * SC_VT + v];
				double want = ref[(b * S + i) * SC_VT + v];

				ck_assert_msg(fabs(got - want) <= tol,
					      "%s sentence %d step %d id %d: "
					      "%.7g, reference %.7g", what,
					      b, i, v, got, want);
			}
			prev[b] = tgt->ids[b * S + i];
		}
	}
	m->arch->dec_free(d);
}

/*
 * Each sentence's reference scored through dec_step (teacher forcing by
 * hand) against train_batch on the prefixes of the reference: the loss of
 * prefix k+1 minus that of prefix k is token k's.  The two compute the
 * same numbers in a different batching (rows of one sgemm vs another), so
 * they agree to f32 rounding: 1e-5.  The whole batch's nll equals the sum
 * of all tokens' too.
 */
void sc_decoder_vs_training(struct model *m)
{
	static const int slen[] = { 4, 2, 5 }, tlen[] = { 3, 6, 2 };
	struct sc_batch src, tgt, s1, t1;
	struct frame *f, *fp[3];
	struct decoder *d;
	float logp[3 * SC_VT];
	int32_t prev[3] = { 1, 1, 1 };
	double total = 0, nll, pre[3][8];

	sc_make_batch(&src, 3, slen, SC_VS, 5);
	sc_make_batch(&tgt, 3, tlen, SC_VT, 6);
	sc_grads_on(m);
	f = sc_pipeline(m, &src);
	for (int b = 0; b < 3; b++)
		fp[b] = &f[b];
	d = m->arch->dec_new(m, NULL, fp, 3, 1);
	ck_assert_msg(d != NULL, "%s", err_msg());
	/* every sentence's nll of its prefixes */
	for (int b = 0; b < 3; b++) {
		pre[b][0] = 0;
		sc_one_sentence(&s1, &src, b, slen[b]);
		for (int k = 1; k <= tlen[b]; k++) {
			sc_one_sentence(&t1, &tgt, b, k);
			sc_train(m, &s1, &t1, 1.0f, &nll);
			pre[b][k] = nll;
		}
	}
	for (int i = 0; i < 6; i++) {
		ck_assert_int_eq(m->arch->dec_step(d, 3, prev, logp, NULL), 0);
		for (int b = 0; b < 3; b++) {
			int32_t y;
			double token;

			if (i >= tlen[b]) {
				prev[b] = 0;
				continue;
			}
			y = tgt.ids[b * tgt.b.S + i];
			token = pre[b][i + 1] - pre[b][i];
			ck_assert_msg(fabs(-logp[b * SC_VT + y] - token) <=
				      1e-5 * (1 + fabs(token)),
				      "%s sentence %d token %d: decoder %.7g, "
				      "training %.7g", m->arch->name, b, i,
				      -logp[b * SC_VT + y], token);
			total -= logp[b * SC_VT + y];
			prev[b] = y;
		}
	}
	sc_train(m, &src, &tgt, 1.0f, &nll);
	ck_assert_msg(fabs(nll - total) <= 1e-5 * total, "%s: batch nll %.7g, "
		      "decoder %.7g", m->arch->name, nll, total);
	m->arch->dec_free(d);
	sc_free_frames(f, 3);
}

/* ---- padding, batching and threads change no result ---------------------- */

static void assert_records_close(const struct frame *a, const struct frame *b,
				 const char *name, double tol)
{
	const struct tensor *x = frame_find(a, name), *y = frame_find(b, name);

	ck_assert_msg(x && y, "no %s", name);
	ck_assert_int_eq(x->rank, y->rank);
	ck_assert_uint_eq(x->dim[0], y->dim[0]);
	ck_assert_uint_eq(x->nbytes, y->nbytes);
	sc_assert_close(x->data, y->data, x->nbytes / sizeof(float), tol,
			name);
}

void sc_padding(struct model *m, const struct sc_record *rec, int nrec,
		double tol, int noatt)
{
	static const int slen[] = { 6, 2, 4 };
	struct sc_batch src, one;
	struct frame *all;

	sc_make_batch(&src, 3, slen, SC_VS, 8);
	all = sc_pipeline(m, &src);
	for (int b = 0; b < 3; b++) {
		struct frame *pa[3] = { &all[0], &all[1], &all[2] }, *f;
		struct decoder *da, *d1;
		float la[3 * SC_VT], l1[SC_VT], wa[3 * 6], w1[6];
		int32_t prev[3] = { 1, 1, 1 };

		sc_one_sentence(&one, &src, b, slen[b]);
		f = sc_pipeline(m, &one);
		for (int r = 0; r < nrec; r++)
			assert_records_close(&all[b], f, rec[r].name,
					     rec[r].tol);
		da = m->arch->dec_new(m, NULL, pa, 3, 1);
		d1 = m->arch->dec_new(m, NULL, &f, 1, 1);
		ck_assert_ptr_nonnull(da);
		ck_assert_ptr_nonnull(d1);
		ck_assert_int_eq(m->arch->dec_srclen(da, b), slen[b]);
		for (int i = 0; i < 4; i++) {
			/* NaN: a weight the step leaves fails */
			memset(wa, 0xff, sizeof wa);
			memset(w1, 0xff, sizeof w1);
			ck_assert_int_eq(m->arch->dec_step(da, 3, prev, la, wa),
					 0);
			ck_assert_int_eq(m->arch->dec_step(d1, 1, prev + b, l1,
							   w1), 0);
			sc_assert_close(la + b * SC_VT, l1, SC_VT, tol, "logp");
			for (int j = 0; j < 3 * 6 && noatt; j++)
				ck_assert_msg(wa[j] == 0, "weight %d", j);
			for (int j = 0; j < slen[b] && noatt; j++)
				ck_assert_msg(w1[j] == 0, "weight %d", j);
			for (int j = 0; j < 6; j++) {
				float w = j < slen[b] ? w1[j] : 0;

				ck_assert_msg(fabsf(wa[b * 6 + j] - w) <= tol,
					      "%s att weight %d: %.9g vs %.9g",
					      m->arch->name, j, wa[b * 6 + j],
					      w);
			}
			for (int k = 0; k < 3; k++)
				prev[k] = 3 + (i * 5 + k) % (SC_VT - 3);
		}
		m->arch->dec_free(da);
		m->arch->dec_free(d1);
		sc_free_frames(f, 1);
	}
	sc_free_frames(all, 3);
}

void sc_padding_in_training(struct model *m)
{
	static const int slen[] = { 4, 2, 3 }, tlen[] = { 3, 5, 1 };
	struct sc_batch src, tgt, s1, t1;
	double loss, sum = 0, nll;
	float *gb = malloc(m->nw * sizeof(float));

	ck_assert_ptr_nonnull(gb);
	sc_make_batch(&src, 3, slen, SC_VS, 9);
	sc_make_batch(&tgt, 3, tlen, SC_VT, 10);
	sc_grads_on(m);
	loss = sc_train(m, &src, &tgt, 1.0f, &nll);
	memcpy(gb, m->g, m->nw * sizeof(float));
	memset(m->g, 0, m->nw * sizeof(float));
	for (int b = 0; b < 3; b++) {
		sc_one_sentence(&s1, &src, b, slen[b]);
		sc_one_sentence(&t1, &tgt, b, tlen[b]);
		sum += sc_train(m, &s1, &t1, 1.0f, &nll);
	}
	ck_assert_msg(fabs(loss - sum) <= 1e-5 * sum, "%s: %.8g vs %.8g",
		      m->arch->name, loss, sum);
	sc_assert_close(gb, m->g, m->nw, 1e-5, "gradient");
	free(gb);
}

void sc_threads(struct model *m, const char *inexact)
{
	static const int slen[] = { 4, 2, 3, 5 }, tlen[] = { 3, 5, 1, 4 };
	struct sc_batch src, tgt;
	float *want = malloc(m->nw * sizeof(float));
	int threads = kern_threads();
	double loss1 = 0, nll;

	ck_assert_ptr_nonnull(want);
	sc_make_batch(&src, 4, slen, SC_VS, 11);
	sc_make_batch(&tgt, 4, tlen, SC_VT, 12);
	sc_grads_on(m);
	for (int nt = 1; nt <= 3; nt++) {
		kern_set_threads(nt);
		memset(m->g, 0, m->nw * sizeof(float));
		double loss = sc_train(m, &src, &tgt, 1.0f, &nll);
		if (nt == 1) {
			loss1 = loss;
			memcpy(want, m->g, m->nw * sizeof(float));
			continue;
		}
		ck_assert_msg(loss == loss1, "%s: loss %.17g on %d threads, "
			      "%.17g on 1", m->arch->name, loss, nt, loss1);
		for (int i = 0; i < m->nparam; i++) {
			const struct param *p = &m->param[i];
			const float *w1 = want + (p->g - m->g);

			if (inexact && strcmp(p->name, inexact) == 0) {
				sc_assert_close(p->g, w1, p->n, 1e-6, p->name);
				continue;
			}
			ck_assert_msg(memcmp(p->g, w1, p->n * sizeof *w1) == 0,
				      "%s: %s's gradient on %d threads differs "
				      "from 1", m->arch->name, p->name, nt);
		}
	}
	kern_set_threads(threads);
	free(want);
}

void sc_select_duplicates(const struct model *m)
{
	static const int slen[] = { 3, 5 };
	static const int parent[5] = { 1, 0, 0, 1, 0 }, bad[1] = { 5 };
	struct sc_batch src;
	int32_t prev[5] = { 1, 1 }, rprev[2] = { 1, 1 };
	float lp[5 * SC_VT], rl[2 * SC_VT];

	sc_make_batch(&src, 2, slen, SC_VS, 12);
	struct frame *f = sc_pipeline(m, &src);
	struct frame *fp[2] = { &f[0], &f[1] };
	struct decoder *d = m->arch->dec_new(m, NULL, fp, 2, 3);
	struct decoder *ref = m->arch->dec_new(m, NULL, fp, 2, 1);

	ck_assert_ptr_nonnull(d);
	ck_assert_ptr_nonnull(ref);
	ck_assert_int_eq(m->arch->dec_step(d, 2, prev, lp, NULL), 0);
	ck_assert_int_eq(m->arch->dec_step(ref, 2, rprev, rl, NULL), 0);
	ck_assert_int_eq(m->arch->dec_select(d, 5, parent), 0);
	for (int i = 0; i < 5; i++)
		ck_assert_int_eq(m->arch->dec_sentence(d, i), parent[i]);
	for (int step = 0; step < 3; step++) {
		rprev[0] = 4 + step;
		rprev[1] = 7 + step;
		for (int i = 0; i < 5; i++)
			prev[i] = rprev[parent[i]];
		ck_assert_int_eq(m->arch->dec_step(d, 5, prev, lp, NULL), 0);
		ck_assert_int_eq(m->arch->dec_step(ref, 2, rprev, rl, NULL), 0);
		for (int i = 0; i < 5; i++)
			sc_assert_close(lp + i * SC_VT, rl + parent[i] * SC_VT,
					SC_VT, 1e-6, "continuation");
	}
	ck_assert_int_eq(m->arch->dec_select(d, 1, bad), -1);
	m->arch->dec_free(d);
	m->arch->dec_free(ref);
	sc_free_frames(f, 2);
}

/* ---- the parameter table and refusals ------------------------------------ */

void sc_param_table(const struct model *m, const char *const *want, int n)
{
	char buf[PARAM_NAME_MAX + 32];

	ck_assert_int_eq(m->nparam, n);
	for (int i = 0; i < m->nparam; i++) {
		const struct param *p = &m->param[i];

		if (p->rank == 2)
			snprintf(buf, sizeof buf, "%s [%d,%d]", p->name,
				 p->dim[0], p->dim[1]);
		else
			snprintf(buf, sizeof buf, "%s [%d]", p->name,
				 p->dim[0]);
		ck_assert_str_eq(buf, want[i]);
	}
}

void sc_setting_refused(const char *arch, const char *setting,
			const char *key)
{
	char sv[32], tv[32];
	const char *set[] = { sv, tv, setting };

	snprintf(sv, sizeof sv, "src_vocab=%d", SC_VS);
	snprintf(tv, sizeof tv, "tgt_vocab=%d", SC_VT);
	ck_assert_ptr_null(model_create(arch, set, 3, "", ""));
	ck_assert_msg(strstr(err_msg(), key), "%s: %s", setting, err_msg());
}

void sc_ids_refused(struct model *m, struct frame *f, struct sc_batch *src)
{
	static const int slen[] = { 3 };
	struct sc_batch tgt;
	struct frame *fp = f;
	double nll;
	int ntok;

	ck_assert_int_eq(src->b.B, 1);
	ck_assert_int_eq(src->len[0], 3);
	/* an id outside the source vocabulary */
	((int32_t *)frame_find(f, "src.ids")->data)[1] = SC_VS;
	ck_assert_int_eq(m->arch->embed(m, &fp, 1), -1);
	ck_assert_ptr_nonnull(strstr(err_msg(), "src.ids"));
	/* in training too, and a model without gradients */
	ck_assert(m->arch->train_batch(m, &src->b, &src->b, 1, 0, &nll,
				       &ntok) < 0);
	sc_grads_on(m);
	src->ids[0] = -1;
	sc_make_batch(&tgt, 1, slen, SC_VT, 14);
	ck_assert(m->arch->train_batch(m, &src->b, &tgt.b, 1, 0, &nll,
				       &ntok) < 0);
	ck_assert_ptr_nonnull(strstr(err_msg(), "source"));
}
