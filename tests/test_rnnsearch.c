/*
 * test_rnnsearch.c: the recurrent models rnnsearch and rnnencdec
 * (doc/MODELS.md): the decoder against the equations computed in double,
 * every parameter's gradient against finite differences, scoring through
 * the step-wise decoder against training, padding and threads that never
 * change a result, hypotheses duplicated by dec_select, the paper's
 * initialisation, and the refusals of records and batches that disagree
 * with the model (the shared checks: tests/lib/seqcheck.h).
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/errmsg.h"
#include "models/model.h"
#include "run_suite.h"
#include "seqcheck.h"

/* ---- helpers ------------------------------------------------------------- */

/*
 * sc_model's model (emb 5, hidden 4, maxout 3, att 3; extra: more
 * settings separated by spaces, or NULL) with Wa and va from N(0, 2^2),
 * not 0.5^2: the attention's weights then move with s_{i-1}, so that its
 * path carries a gradient of a size finite differences can see too.
 */
static struct model *make_model(const char *arch, const char *extra)
{
	struct model *m = sc_model(arch, strcmp(arch, "rnnsearch") == 0 ?
				   "emb=5 hidden=4 maxout=3 att=3" :
				   "emb=5 hidden=4 maxout=3", extra);

	for (int i = 0; i < m->nparam; i++) {
		struct param *p = &m->param[i];

		if (strcmp(p->name, "att.W") == 0 ||
		    strcmp(p->name, "att.v") == 0)
			for (size_t j = 0; j < p->n; j++)
				p->w[j] *= 4;
	}
	return m;
}

/* ---- the equations of doc/MODELS.md, in double --------------------------- */

static const float *W_(const struct model *m, const char *name)
{
	const struct param *p = model_param(m, name);

	ck_assert_msg(p != NULL, "no %s", name);
	return p->w;
}

/* y [rows] += W [rows, cols] (row stride ld, from column c0) x */
static void ref_mv(double *y, const float *W, int ld, int c0,
		   const double *x, int rows, int cols)
{
	for (int r = 0; r < rows; r++)
		for (int c = 0; c < cols; c++)
			y[r] += (double)W[(size_t)r * ld + c0 + c] * x[c];
}

static int size_of(const struct model *m, const char *key)
{
	long v;

	ck_assert_int_eq(config_int(&m->cfg, key, &v), 0);
	return (int)v;
}

static double ref_sigma(double x)
{
	return 1 / (1 + exp(-x));
}

/*
 * The paper's GRU, written from doc/MODELS.md: rows z, r, h of W [3n, in],
 * U [3n, n], b [3n] and, for the decoder, C [3n, dc] times c:
 *   z = sigma(Wz x + Uz h + Cz c + bz), r likewise,
 *   h~ = tanh(W x + U (r * h) + C c + b), h' = (1 - z) h + z h~.
 */
static void ref_gru(double *h, const float *W, const float *U,
		    const float *b, const float *C, const double *x, int in,
		    const double *c, int dc, int n)
{
	double pre[3 * 64], rh[64], hn[64];

	for (int k = 0; k < 3 * n; k++)
		pre[k] = b[k];
	ref_mv(pre, W, in, 0, x, 3 * n, in);
	if (C)
		ref_mv(pre, C, dc, 0, c, 3 * n, dc);
	ref_mv(pre, U, n, 0, h, 2 * n, n);
	for (int k = 0; k < n; k++)
		rh[k] = ref_sigma(pre[n + k]) * h[k];
	ref_mv(pre + 2 * n, U + (size_t)2 * n * n, n, 0, rh, n, n);
	for (int k = 0; k < n; k++) {
		double z = ref_sigma(pre[k]);
		hn[k] = (1 - z) * h[k] + z * tanh(pre[2 * n + k]);
	}
	memcpy(h, hn, n * sizeof(double));
}

/* logp [T, SC_VT] of tgt [T] given src [S] (teacher forcing), in double. */
static void ref_logp(const struct model *m, const int32_t *src, int S,
		     const int32_t *tgt, int T, double *logp)
{
	int search = strcmp(m->arch->name, "rnnsearch") == 0;
	int me = size_of(m, "emb"), n = size_of(m, "hidden");
	int l = size_of(m, "maxout"), na = search ? size_of(m, "att") : 0;
	int da = search ? 2 * n : n;
	double x[16][8], ann[16][16], h[8], s[8], c[16], y[8];

	ck_assert(S <= 16 && me <= 8 && n <= 8 && na <= 8 && l <= 8);
	for (int j = 0; j < S; j++)
		for (int k = 0; k < me; k++)
			x[j][k] = W_(m, "src.emb")[src[j] * me + k];
	memset(h, 0, sizeof h);
	for (int j = 0; j < S; j++) {
		ref_gru(h, W_(m, "enc.fwd.W"), W_(m, "enc.fwd.U"),
			W_(m, "enc.fwd.b"), NULL, x[j], me, NULL, 0, n);
		memcpy(ann[j], h, n * sizeof(double));
	}
	if (search) {
		memset(h, 0, sizeof h);
		for (int j = S - 1; j >= 0; j--) {
			ref_gru(h, W_(m, "enc.bwd.W"), W_(m, "enc.bwd.U"),
				W_(m, "enc.bwd.b"), NULL, x[j], me, NULL, 0, n);
			memcpy(ann[j] + n, h, n * sizeof(double));
		}
		/* s_0 = tanh(Ws bwd h_1 + bs) */
		for (int k = 0; k < n; k++)
			s[k] = W_(m, "dec.init.b")[k];
		ref_mv(s, W_(m, "dec.init.W"), n, 0, ann[0] + n, n, n);
	} else {
		/* c = tanh(Wc h_S + bc), s_0 = tanh(Ws c + bs) */
		for (int k = 0; k < n; k++)
			c[k] = W_(m, "enc.sum.b")[k];
		ref_mv(c, W_(m, "enc.sum.W"), n, 0, ann[S - 1], n, n);
		for (int k = 0; k < n; k++) {
			c[k] = tanh(c[k]);
			s[k] = W_(m, "dec.init.b")[k];
		}
		ref_mv(s, W_(m, "dec.init.W"), n, 0, c, n, n);
	}
	for (int k = 0; k < n; k++)
		s[k] = tanh(s[k]);

	for (int i = 0; i < T; i++) {
		int prev = i == 0 ? 1 : tgt[i - 1];
		double tt[16], t[8], z[SC_VT], max = -INFINITY, sum = 0;

		for (int k = 0; k < me; k++)
			y[k] = W_(m, "tgt.emb")[prev * me + k];
		if (search) {
			/* e_j = va . tanh(Wa s + Ua h_j + ba);
			 * c = sum a_j h_j */
			double e[16], wa[8], emax = -INFINITY, esum = 0;

			memset(wa, 0, sizeof wa);
			ref_mv(wa, W_(m, "att.W"), n, 0, s, na, n);
			for (int j = 0; j < S; j++) {
				double u[8];

				for (int k = 0; k < na; k++)
					u[k] = W_(m, "att.b")[k] + wa[k];
				ref_mv(u, W_(m, "att.U"), da, 0, ann[j], na,
				       da);
				e[j] = 0;
				for (int k = 0; k < na; k++)
					e[j] += W_(m, "att.v")[k] * tanh(u[k]);
				emax = fmax(emax, e[j]);
			}
			for (int j = 0; j < S; j++)
				esum += e[j] = exp(e[j] - emax);
			memset(c, 0, sizeof c);
			for (int j = 0; j < S; j++)
				for (int k = 0; k < da; k++)
					c[k] += e[j] / esum * ann[j][k];
		}
		/* the deep output reads s_{i-1} */
		for (int k = 0; k < 2 * l; k++)
			tt[k] = W_(m, "out.b")[k];
		ref_mv(tt, W_(m, "out.U"), n, 0, s, 2 * l, n);
		ref_mv(tt, W_(m, "out.V"), me, 0, y, 2 * l, me);
		ref_mv(tt, W_(m, "out.C"), da, 0, c, 2 * l, da);
		for (int k = 0; k < l; k++)
			t[k] = fmax(tt[2 * k], tt[2 * k + 1]);
		for (int v = 0; v < SC_VT; v++) {
			z[v] = W_(m, "out.bias")[v];
			for (int k = 0; k < l; k++)
				z[v] += W_(m, "out.W")[v * l + k] * t[k];
			max = fmax(max, z[v]);
		}
		for (int v = 0; v < SC_VT; v++)
			sum += exp(z[v] - max);
		for (int v = 0; v < SC_VT; v++)
			logp[i * SC_VT + v] = z[v] - max - log(sum);
		ref_gru(s, W_(m, "dec.W"), W_(m, "dec.U"), W_(m, "dec.b"),
			W_(m, "dec.C"), y, me, c, da, n);
	}
}

/*
 * dec_step along a reference against the equations in double: the f32
 * path differs by rounding only, a few 1e-7 of values of order one; 1e-5
 * leaves room and fails any misread equation (a reset gate after U, the
 * output from s_i, another order of the gates), which moves the numbers in
 * the first or second digit.
 */
static void reference_case(const char *arch)
{
	static const int slen[] = { 5, 3 }, tlen[] = { 4, 6 };
	struct model *m = make_model(arch, NULL);
	struct sc_batch src, tgt;
	struct frame *f;
	double ref[2][6 * SC_VT];

	sc_make_batch(&src, 2, slen, SC_VS, 15);
	sc_make_batch(&tgt, 2, tlen, SC_VT, 16);
	for (int b = 0; b < 2; b++)
		ref_logp(m, src.ids + b * src.b.S, slen[b],
			 tgt.ids + b * tgt.b.S, tlen[b], ref[b]);
	f = sc_pipeline(m, &src);
	sc_decoder_vs_ref(m, f, &tgt, ref[0], 1e-5, arch);
	sc_free_frames(f, 2);
	model_free(m);
}

START_TEST(equations_rnnsearch)
{
	reference_case("rnnsearch");
}
END_TEST

START_TEST(equations_rnnencdec)
{
	reference_case("rnnencdec");
}
END_TEST

/* ---- gradients ----------------------------------------------------------- */

/* Sources of 4, 2 and 3 ids, targets of 3, 5 and 1: every kind of
 * padding on both sides (sc_check_gradients). */
static void grad_case(const char *arch, const char *extra)
{
	struct model *m = make_model(arch, extra);

	sc_check_gradients(m);
	model_free(m);
}

START_TEST(gradients_rnnsearch)
{
	grad_case("rnnsearch", NULL);
}
END_TEST

START_TEST(gradients_rnnencdec)
{
	grad_case("rnnencdec", NULL);
}
END_TEST

/* The window's and the diagonal's (doc/MODELS.md); every step of
 * the batch's longest target moves the diagonal (ratio 0.7). */
START_TEST(gradients_window)
{
	grad_case("rnnsearch", "attention=window window_k=3");
}
END_TEST

START_TEST(gradients_diagonal)
{
	grad_case("rnnsearch", "attention=diagonal diag_ratio=0.7");
}
END_TEST

START_TEST(gradients_label_smoothing)
{
	grad_case("rnnsearch", "label_smoothing=0.1");
	grad_case("rnnencdec", "label_smoothing=0.1");
}
END_TEST

/* The gradient is that of (sum of losses) * scale, and adds to m->g. */
START_TEST(gradients_scale_and_accumulate)
{
	static const int slen[] = { 4, 2 }, tlen[] = { 3, 5 };
	struct model *m = make_model("rnnsearch", NULL);
	struct sc_batch src, tgt;
	float *g1;
	double nll;

	sc_make_batch(&src, 2, slen, SC_VS, 3);
	sc_make_batch(&tgt, 2, tlen, SC_VT, 4);
	sc_grads_on(m);
	sc_train(m, &src, &tgt, 1.0f, &nll);
	g1 = malloc(m->nw * sizeof(float));
	memcpy(g1, m->g, m->nw * sizeof(float));
	sc_train(m, &src, &tgt, 0.5f, &nll);
	for (size_t i = 0; i < m->nw; i++)
		ck_assert_msg(fabsf(m->g[i] - 1.5f * g1[i]) <=
			      1e-5f * (1 + fabsf(g1[i])), "g[%zu]", i);
	free(g1);
	model_free(m);
}
END_TEST

/* ---- decoding agrees with training --------------------------------------- */

/* sc_decoder_vs_training: each token's log-probability through dec_step
 * against train_batch's on the prefixes of the reference. */
static void decoder_vs_training(const char *arch, const char *extra)
{
	struct model *m = make_model(arch, extra);

	sc_decoder_vs_training(m);
	model_free(m);
}

START_TEST(decoder_scores_as_training_rnnsearch)
{
	decoder_vs_training("rnnsearch", NULL);
	decoder_vs_training("rnnsearch", "attention=window window_k=3");
	decoder_vs_training("rnnsearch", "attention=diagonal diag_ratio=0.7");
}
END_TEST

START_TEST(decoder_scores_as_training_rnnencdec)
{
	decoder_vs_training("rnnencdec", NULL);
}
END_TEST

/* ---- padding never changes a result -------------------------------------- */

/*
 * A sentence alone and in a batch with longer ones: the stages' records and
 * the decoder's log-probabilities and attention weights.  Not asserted
 * bitwise: the sgemm may take another path (small-M kernel, another
 * blocking) for another number of rows, which changes the order of a dot
 * product's additions, so 1e-6 relative (a few f32 ulps of values of order
 * one).  A padding bug (a backward GRU starting in the padding, attention
 * on padded keys) changes results by orders of magnitude more.  The
 * embeddings are looked up, not computed: the same bits.
 */
static void padding_case(const char *arch, const char *extra)
{
	struct model *m = make_model(arch, extra);
	struct sc_record rec[4] = {
		{ "src.emb", 0 }, { "enc.out", 1e-6 }, { "att.init", 1e-6 },
	};
	int nrec = 3;

	if (strcmp(arch, "rnnsearch") != 0)
		rec[nrec++] = (struct sc_record){ "att.ctx", 1e-6 };
	else if (!extra)	/* additive attention */
		rec[nrec++] = (struct sc_record){ "att.keys", 1e-6 };
	sc_padding(m, rec, nrec, 1e-6, 0);
	model_free(m);
}

START_TEST(padding_rnnsearch)
{
	padding_case("rnnsearch", NULL);
	padding_case("rnnsearch", "attention=window window_k=3");
	padding_case("rnnsearch", "attention=diagonal diag_ratio=0.7");
}
END_TEST

START_TEST(padding_rnnencdec)
{
	padding_case("rnnencdec", NULL);
}
END_TEST

/* Training: the batch's loss and gradients are the sums of its sentences'. */
START_TEST(padding_in_training)
{
	const char *arch[] = { "rnnsearch", "rnnencdec", "rnnsearch",
			       "rnnsearch" };
	const char *extra[] = { "label_smoothing=0.1", "label_smoothing=0.1",
				"attention=window window_k=3",
				"attention=diagonal diag_ratio=0.7" };

	for (int a = 0; a < 4; a++) {
		struct model *m = make_model(arch[a], extra[a]);

		sc_padding_in_training(m);
		model_free(m);
	}
}
END_TEST

/*
 * Training splits the batch's rows over the threads (and runs the
 * encoder's directions side by side): the loss and every gradient have
 * the same bits on 1, 2 and 3 threads, but for att.v's, which sums the
 * parts' shares in another order.
 */
static void threads_case(const char *arch, const char *extra)
{
	struct model *m = make_model(arch, extra);

	sc_threads(m, "att.v");
	model_free(m);
}

START_TEST(threads_rnnsearch)
{
	threads_case("rnnsearch", NULL);
	threads_case("rnnsearch", "attention=window window_k=3");
	threads_case("rnnsearch", "attention=diagonal diag_ratio=0.7");
}
END_TEST

START_TEST(threads_rnnencdec)
{
	threads_case("rnnencdec", NULL);
}
END_TEST

/* ---- beam bookkeeping ---------------------------------------------------- */

/* sc_select_duplicates; the window's kappa and the diagonal's step go
 * with the parent. */
START_TEST(select_duplicates)
{
	const char *arch[] = { "rnnsearch", "rnnencdec", "rnnsearch",
			       "rnnsearch" };
	const char *extra[] = { NULL, NULL, "attention=window window_k=3",
				"attention=diagonal diag_ratio=0.7" };

	for (int a = 0; a < 4; a++) {
		struct model *m = make_model(arch[a], extra[a]);

		sc_select_duplicates(m);
		model_free(m);
	}
}
END_TEST

/* ---- initialisation ------------------------------------------------------ */

static double sd_of(const float *w, size_t n)
{
	double s = 0;

	for (size_t i = 0; i < n; i++)
		s += (double)w[i] * w[i];
	return sqrt(s / n);
}

/* q [n, n] times its transpose is the identity, to 1e-5. */
static void assert_orthogonal(const float *q, int n, const char *name,
			      int block)
{
	for (int r = 0; r < n; r++)
		for (int c = 0; c < n; c++) {
			double dot = 0;

			for (int k = 0; k < n; k++)
				dot += (double)q[r * n + k] * q[c * n + k];
			ck_assert_msg(fabs(dot - (r == c)) < 1e-5,
				      "%s block %d: %g", name, block, dot);
		}
}

/* The paper's: orthogonal U blocks, Wa and Ua N(0, 0.001^2), va and
 * biases 0, the rest N(0, 0.01^2); sample deviations within 10% (each
 * tensor has at least 400 entries: the estimate's error is ~4%). */
START_TEST(paper_initialisation)
{
	const char *set[] = { "src_vocab=100", "tgt_vocab=120", "emb=20",
			      "hidden=24", "att=20", "maxout=10" };
	struct model *m = model_create("rnnsearch", set, 6, "", "");

	ck_assert_msg(m != NULL, "%s", err_msg());
	for (int i = 0; i < m->nparam; i++) {
		const struct param *p = &m->param[i];
		const char *name = p->name;
		size_t len = strlen(name);

		if (p->rank == 1 && strcmp(name, "att.v") != 0 &&
		    name[len - 1] != 'b' && strcmp(name, "out.bias") != 0)
			ck_abort_msg("%s: a vector that is not a bias", name);
		if (p->rank == 1) {
			for (size_t j = 0; j < p->n; j++)
				ck_assert_msg(p->w[j] == 0, "%s", name);
		} else if (name[len - 1] == 'U' && strncmp(name, "att", 3) &&
			   strncmp(name, "out", 3)) {
			int n = p->dim[1];

			for (int g = 0; g < 3; g++)
				assert_orthogonal(p->w + (size_t)g * n * n, n,
						  name, g);
		} else {
			double want = strncmp(name, "att.", 4) == 0 ? 0.001 :
				      0.01;
			double sd = sd_of(p->w, p->n);
			ck_assert_msg(fabs(sd / want - 1) < 0.1, "%s: sd %g",
				      name, sd);
		}
	}
	model_free(m);
}
END_TEST

/* The parameters of doc/MODELS.md's tables, in their order and shapes. */
START_TEST(parameter_tables)
{
	struct model *s = make_model("rnnsearch", NULL);
	struct model *e = make_model("rnnencdec", NULL);
	static const char *const sn[] = {
		"src.emb [11,5]", "enc.fwd.W [12,5]", "enc.fwd.U [12,4]",
		"enc.fwd.b [12]", "enc.bwd.W [12,5]", "enc.bwd.U [12,4]",
		"enc.bwd.b [12]", "tgt.emb [13,5]", "dec.init.W [4,4]",
		"dec.init.b [4]", "att.W [3,4]", "att.U [3,8]", "att.b [3]",
		"att.v [3]", "dec.W [12,5]", "dec.U [12,4]", "dec.C [12,8]",
		"dec.b [12]", "out.U [6,4]", "out.V [6,5]", "out.C [6,8]",
		"out.b [6]", "out.W [13,3]", "out.bias [13]",
	};
	static const char *const en[] = {
		"src.emb [11,5]", "enc.fwd.W [12,5]", "enc.fwd.U [12,4]",
		"enc.fwd.b [12]", "enc.sum.W [4,4]", "enc.sum.b [4]",
		"tgt.emb [13,5]", "dec.init.W [4,4]", "dec.init.b [4]",
		"dec.W [12,5]", "dec.U [12,4]", "dec.C [12,4]", "dec.b [12]",
		"out.U [6,4]", "out.V [6,5]", "out.C [6,4]", "out.b [6]",
		"out.W [13,3]", "out.bias [13]",
	};

	/* the programs find the models by name */
	ck_assert_ptr_eq(arch_find("rnnsearch"), &arch_rnnsearch);
	ck_assert_ptr_eq(arch_find("rnnencdec"), &arch_rnnencdec);
	sc_param_table(s, sn, 24);
	sc_param_table(e, en, 19);
	model_free(s);
	model_free(e);
}
END_TEST

/* ---- refusals ------------------------------------------------------------ */

START_TEST(config_refused)
{
	sc_setting_refused("rnnsearch", "hidden=0", "hidden");
	sc_setting_refused("rnnsearch", "att=big", "att");
}
END_TEST

/* Records made by a model of other sizes, and bad ids. */
START_TEST(records_refused)
{
	static const int slen[] = { 3 };
	struct model *m = make_model("rnnsearch", NULL);
	struct model *other = make_model("rnnsearch", "emb=6");
	struct sc_batch src;
	struct frame *f, *fp;

	sc_make_batch(&src, 1, slen, SC_VS, 13);
	f = sc_pipeline(m, &src);
	fp = f;
	/* src.emb of width 5 into a model of emb 6 */
	ck_assert_int_eq(other->arch->encode(other, &fp, 1), -1);
	ck_assert_ptr_nonnull(strstr(err_msg(), "src.emb"));
	/* no att.keys: the decoder names the record and the stage */
	frame_drop(f, "att.keys");
	ck_assert_ptr_null(m->arch->dec_new(m, NULL, &fp, 1, 1));
	ck_assert_ptr_nonnull(strstr(err_msg(), "att.keys"));
	ck_assert_ptr_nonnull(strstr(err_msg(), "attend"));
	sc_ids_refused(m, f, &src);
	sc_free_frames(f, 1);
	model_free(m);
	model_free(other);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("rnnsearch");
	TCase *t = tcase_create("core");

	tcase_set_timeout(t, 60);
	tcase_add_test(t, equations_rnnsearch);
	tcase_add_test(t, equations_rnnencdec);
	tcase_add_test(t, gradients_rnnsearch);
	tcase_add_test(t, gradients_rnnencdec);
	tcase_add_test(t, gradients_window);
	tcase_add_test(t, gradients_diagonal);
	tcase_add_test(t, gradients_label_smoothing);
	tcase_add_test(t, gradients_scale_and_accumulate);
	tcase_add_test(t, decoder_scores_as_training_rnnsearch);
	tcase_add_test(t, decoder_scores_as_training_rnnencdec);
	tcase_add_test(t, padding_rnnsearch);
	tcase_add_test(t, padding_rnnencdec);
	tcase_add_test(t, padding_in_training);
	tcase_add_test(t, threads_rnnsearch);
	tcase_add_test(t, threads_rnnencdec);
	tcase_add_test(t, select_duplicates);
	tcase_add_test(t, paper_initialisation);
	tcase_add_test(t, parameter_tables);
	tcase_add_test(t, config_refused);
	tcase_add_test(t, records_refused);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	return run_suite(suite());
}
