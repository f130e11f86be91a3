/*
 * test_seq2seq.c: the seq2seq model (doc/MODELS.md): the stages and the
 * decoder against the equations computed in double, reversed and not,
 * every parameter's gradient against finite differences (with dropout
 * too, its masks drawn again from the same generator state), scoring
 * through the step-wise decoder against training, padding and batching
 * that never change a result, threads that never change a bit,
 * hypotheses duplicated by dec_select, the initialisation, the parameter
 * table, and refusals.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/errmsg.h"
#include "base/rng.h"
#include "kernels/kernels.h"
#include "models/model.h"
#include "nn/lstm.h"
#include "run_suite.h"
#include "seqcheck.h"

/* ---- helpers ------------------------------------------------------------- */

enum { M = 5, N = 4 };

/* sc_model's seq2seq (emb 5, hidden 4, 2 layers unless extra, settings
 * separated by spaces or NULL, says otherwise). */
static struct model *make_model(const char *extra)
{
	return sc_model("seq2seq", "emb=5 hidden=4", extra);
}

/* ---- the equations of doc/MODELS.md, in double --------------------------- */

static const float *W_(const struct model *m, const char *fmt, int l)
{
	char name[64];
	const struct param *p;

	snprintf(name, sizeof name, fmt, l);
	p = model_param(m, name);
	ck_assert_msg(p != NULL, "no %s", name);
	return p->w;
}

static double sig(double x)
{
	return 1 / (1 + exp(-x));
}

/* One LSTM step of layer side.l (side "enc" or "dec"): h, c [N] from
 * input x [in]; gates i, f, g, o. */
static void ref_step(const struct model *m, const char *side, int l,
		     const double *x, int in, double *h, double *c)
{
	char fmt[32];
	double pre[4 * N], hn[N];

	snprintf(fmt, sizeof fmt, "%s.%%d.W", side);
	const float *W = W_(m, fmt, l);
	snprintf(fmt, sizeof fmt, "%s.%%d.U", side);
	const float *U = W_(m, fmt, l);
	snprintf(fmt, sizeof fmt, "%s.%%d.b", side);
	const float *b = W_(m, fmt, l);
	for (int r = 0; r < 4 * N; r++) {
		pre[r] = b[r];
		for (int k = 0; k < in; k++)
			pre[r] += (double)W[r * in + k] * x[k];
		for (int k = 0; k < N; k++)
			pre[r] += (double)U[r * N + k] * h[k];
	}
	for (int k = 0; k < N; k++) {
		double i = sig(pre[k]), f = sig(pre[N + k]);
		double g = tanh(pre[2 * N + k]), o = sig(pre[3 * N + k]);
		c[k] = f * c[k] + i * g;
		hn[k] = o * tanh(c[k]);
	}
	memcpy(h, hn, sizeof hn);
}

/*
 * The model's equations: the source read in order ids[S-2], ..., ids[0],
 * ids[S-1] with reverse (else as it is) through the encoder's L layers
 * from zero states; top [S, N] the top layer's state after each source
 * position (in source order); h, c [L, N] the last ones; then the
 * decoder from them, fed <s>, tgt[0], ...: logp [T, SC_VT].
 */
static void ref_model(const struct model *m, const int32_t *src, int S,
		      const int32_t *tgt, int T, double *top, double *h,
		      double *c, double *logp)
{
	long L, rev;
	const float *se = W_(m, "src.emb", 0), *te = W_(m, "tgt.emb", 0);
	const float *oW = W_(m, "out.W", 0), *ob = W_(m, "out.b", 0);
	double x[8][M > N ? M : N], hd[16 * N], cd[16 * N];

	ck_assert_int_eq(config_int(&m->cfg, "layers", &L), 0);
	ck_assert_int_eq(config_int(&m->cfg, "reverse", &rev), 0);
	memset(h, 0, L * N * sizeof *h);
	memset(c, 0, L * N * sizeof *c);
	for (int t = 0; t < S; t++) {
		int j = rev && t < S - 1 ? S - 2 - t : t;
		double in[M];

		for (int k = 0; k < M; k++)
			in[k] = se[src[j] * M + k];
		for (int l = 0; l < L; l++) {
			ref_step(m, "enc", l, l ? h + (l - 1) * N : in,
				 l ? N : M, h + l * N, c + l * N);
		}
		memcpy(top + j * N, h + (L - 1) * N, N * sizeof *h);
	}
	(void)x;
	memcpy(hd, h, L * N * sizeof *h);
	memcpy(cd, c, L * N * sizeof *c);
	for (int i = 0; i < T; i++) {
		int prev = i ? tgt[i - 1] : 1;
		double in[M], z[SC_VT], mx = -1e300, sum = 0;

		for (int k = 0; k < M; k++)
			in[k] = te[prev * M + k];
		for (int l = 0; l < L; l++)
			ref_step(m, "dec", l, l ? hd + (l - 1) * N : in,
				 l ? N : M, hd + l * N, cd + l * N);
		for (int v = 0; v < SC_VT; v++) {
			z[v] = ob[v];
			for (int k = 0; k < N; k++)
				z[v] += (double)oW[v * N + k] *
					hd[(L - 1) * N + k];
			if (z[v] > mx)
				mx = z[v];
		}
		for (int v = 0; v < SC_VT; v++)
			sum += exp(z[v] - mx);
		for (int v = 0; v < SC_VT; v++)
			logp[i * SC_VT + v] = z[v] - mx - log(sum);
	}
}

/*
 * Three sentences through the stages at once and the decoder fed a
 * target: enc.out, att.h, att.c and every step's log-probabilities
 * against the equations in double, to f32 rounding (1e-5).  Reading the
 * source the other way changes every one of them.
 */
static void equations_case(const char *extra)
{
	static const int slen[] = { 5, 2, 4 }, tlen[] = { 4, 4, 4 };
	struct model *m = make_model(extra);
	struct sc_batch src, tgt;
	long L;

	ck_assert_int_eq(config_int(&m->cfg, "layers", &L), 0);
	sc_make_batch(&src, 3, slen, SC_VS, 1);
	sc_make_batch(&tgt, 3, tlen, SC_VT, 2);
	struct frame *f = sc_pipeline(m, &src);
	double top[8 * N], h[16 * N], c[16 * N], lp[3][4 * SC_VT];

	for (int b = 0; b < 3; b++) {
		const struct tensor *t;
		ref_model(m, src.ids + b * src.b.S, slen[b],
			  tgt.ids + b * tgt.b.S, 4, top, h, c, lp[b]);
		t = frame_find(&f[b], "enc.out");
		ck_assert_int_eq(t->rank, 2);
		ck_assert_uint_eq(t->dim[0], slen[b]);
		ck_assert_uint_eq(t->dim[1], N);
		for (int i = 0; i < slen[b] * N; i++)
			ck_assert_msg(fabs(((float *)t->data)[i] - top[i]) <=
				      1e-5, "enc.out[%d]", i);
		for (int k = 0; k < 2; k++) {
			t = frame_find(&f[b], k ? "att.c" : "att.h");
			ck_assert_ptr_nonnull(t);
			ck_assert_int_eq(t->rank, 1);
			ck_assert_uint_eq(t->dim[0], L * N);
			for (int i = 0; i < L * N; i++)
				ck_assert_msg(fabs(((float *)t->data)[i] -
						   (k ? c : h)[i]) <= 1e-5,
					      "%s[%d]", t->name, i);
		}
	}
	sc_decoder_vs_ref(m, f, &tgt, lp[0], 1e-5, extra);
	sc_free_frames(f, 3);
	model_free(m);
}

START_TEST(equations)
{
	equations_case("reverse=1");
	equations_case("reverse=0");
	equations_case("layers=1");
	equations_case("layers=3");
}
END_TEST

/* The source's order matters: the same model reading it the other way
 * gives other states. */
START_TEST(reverse_changes_the_reading)
{
	static const int slen[] = { 4 };
	struct model *a = make_model("reverse=1"), *b = make_model("reverse=0");
	struct sc_batch src;

	sc_make_batch(&src, 1, slen, SC_VS, 3);
	struct frame *fa = sc_pipeline(a, &src), *fb = sc_pipeline(b, &src);
	const struct tensor *ha = frame_find(fa, "att.h");
	const struct tensor *hb = frame_find(fb, "att.h");
	double diff = 0;
	for (int i = 0; i < 2 * N; i++)
		diff += fabs(((float *)ha->data)[i] - ((float *)hb->data)[i]);
	ck_assert_msg(diff > 1e-2, "att.h the same both ways: %g", diff);
	sc_free_frames(fa, 1);
	sc_free_frames(fb, 1);
	model_free(a);
	model_free(b);
}
END_TEST

/* ---- gradients ----------------------------------------------------------- */

/* sc_check_gradients, with dropout on when dropout is, its masks the same
 * in every evaluation. */
static void grad_case(const char *extra, int dropout)
{
	struct model *m = make_model(extra);
	struct rng r;

	rng_seed(&r, 99);
	sc_dropout(dropout);
	sc_fix_masks(dropout ? &r : NULL);
	sc_check_gradients(m);
	sc_fix_masks(NULL);
	sc_dropout(0);
	model_free(m);
}

START_TEST(gradients)
{
	grad_case(NULL, 0);
	grad_case("reverse=0 layers=1", 0);
	grad_case("layers=3 label_smoothing=0.1", 0);
}
END_TEST

/* With dropout on, its masks the same in every evaluation: the gradient
 * of that network.  And the masks do drop: the loss differs from the
 * network's without. */
START_TEST(gradients_dropout)
{
	static const int slen[] = { 4, 2, 3 }, tlen[] = { 3, 5, 1 };
	struct model *m = make_model("dropout=0.3");
	struct sc_batch src, tgt;
	double on, off, nll;

	grad_case("dropout=0.3", 1);
	sc_make_batch(&src, 3, slen, SC_VS, 1);
	sc_make_batch(&tgt, 3, tlen, SC_VT, 2);
	sc_grads_on(m);
	off = sc_train(m, &src, &tgt, 1.0f, &nll);
	sc_dropout(1);
	on = sc_train(m, &src, &tgt, 1.0f, &nll);
	ck_assert_msg(fabs(on - off) > 1e-3, "dropout changed nothing");
	sc_dropout(0);
	ck_assert(sc_train(m, &src, &tgt, 1.0f, &nll) == off);
	model_free(m);
}
END_TEST

/*
 * The LSTM layer forces the states and cells at padding to zero, so a
 * gradient put there flows nowhere: the layer's gradients are those of
 * the same gradients with the padding's zeroed, bit for bit.
 */
START_TEST(lstm_padding_backward)
{
	enum { S = 3, B = 2, IN = 2, H = 3 };
	static const int len[B] = { 3, 1 };
	float x[S * B * IN], W[4 * H * IN], U[4 * H * H], b[4 * H];
	float hs[(S + 1) * B * H] = { 0 }, cs[(S + 1) * B * H] = { 0 };
	float act[S * B * 4 * H], dpre[S * B * 4 * H];
	float dh[2][(S + 1) * B * H], dc[2][(S + 1) * B * H];
	float dx[2][S * B * IN], dW[2][4 * H * IN], dU[2][4 * H * H];
	float db[2][4 * H];
	struct rng r;

	rng_seed(&r, 4);
#define FILL(a) for (size_t i = 0; i < sizeof a / sizeof a[0]; i++) \
		a[i] = (float)rng_normal(&r)
	FILL(x);
	FILL(W);
	FILL(U);
	FILL(b);
	FILL(dh[0]);
	FILL(dc[0]);
#undef FILL
	lstm_forward(hs, cs, act, x, W, U, b, len, S, B, IN, H);
	memcpy(dh[1], dh[0], sizeof dh[0]);
	memcpy(dc[1], dc[0], sizeof dc[0]);
	for (int t = 0; t < S; t++)
		for (int k = 0; k < B; k++)
			if (t >= len[k])
				for (int j = 0; j < H; j++) {
					ck_assert(hs[((t + 1) * B + k) * H + j]
						  == 0);
					dh[1][((t + 1) * B + k) * H + j] = 0;
					dc[1][((t + 1) * B + k) * H + j] = 0;
				}
	memset(dx, 0, sizeof dx);
	memset(dW, 0, sizeof dW);
	memset(dU, 0, sizeof dU);
	memset(db, 0, sizeof db);
	for (int v = 0; v < 2; v++)
		lstm_backward(dx[v], dW[v], dU[v], db[v], dh[v], dc[v], dpre,
			      hs, cs, act, x, W, U, len, S, B, IN, H);
	ck_assert(memcmp(dx[0], dx[1], sizeof dx[0]) == 0);
	ck_assert(memcmp(dW[0], dW[1], sizeof dW[0]) == 0);
	ck_assert(memcmp(dU[0], dU[1], sizeof dU[0]) == 0);
	ck_assert(memcmp(db[0], db[1], sizeof db[0]) == 0);
	/* the initial state's and cell's gradients too */
	ck_assert(memcmp(dh[0], dh[1], B * H * sizeof(float)) == 0);
	ck_assert(memcmp(dc[0], dc[1], B * H * sizeof(float)) == 0);
}
END_TEST

/* ---- decoding agrees with training --------------------------------------- */

/* sc_decoder_vs_training: each token's log-probability through dec_step
 * against train_batch's on the prefixes of the reference. */
START_TEST(decoder_scores_as_training)
{
	struct model *m = make_model(NULL);

	sc_decoder_vs_training(m);
	model_free(m);
}
END_TEST

/* ---- padding and batching never change a result -------------------------- */

/*
 * A sentence alone and in a batch with longer ones: the stages' records
 * and the decoder's log-probabilities, to a few f32 ulps (sgemm may block
 * another number of rows otherwise); and with the reference kernels,
 * whose rounding does not depend on the rows, bit for bit.  The
 * attention weights are zero.
 */
static void padding_case(double tol)
{
	struct model *m = make_model(NULL);
	const struct sc_record rec[] = {
		{ "enc.out", tol }, { "att.h", tol }, { "att.c", tol },
	};

	sc_padding(m, rec, 3, tol, 1);
	model_free(m);
}

START_TEST(padding)
{
	int isa = kern_isa();

	padding_case(1e-6);
	kern_set_isa(ISA_REFERENCE);
	padding_case(0);
	kern_set_isa(isa);
}
END_TEST

/* Training: the batch's loss and gradients are the sums of its
 * sentences'. */
START_TEST(padding_in_training)
{
	struct model *m = make_model("label_smoothing=0.1");

	sc_padding_in_training(m);
	model_free(m);
}
END_TEST

/* The loss and every gradient have the same bits on 1, 2 and 3 threads,
 * with dropout too. */
START_TEST(threads)
{
	struct model *m = make_model("dropout=0.2");
	struct rng r;

	rng_seed(&r, 5);
	sc_dropout(1);
	sc_fix_masks(&r);
	sc_threads(m, NULL);
	sc_fix_masks(NULL);
	sc_dropout(0);
	model_free(m);
}
END_TEST

/* sc_select_duplicates, through 3 layers. */
START_TEST(select_duplicates)
{
	struct model *m = make_model("layers=3");

	sc_select_duplicates(m);
	model_free(m);
}
END_TEST

/* ---- initialisation and the parameter table ------------------------------ */

/* The paper's U(-0.08, 0.08) for every matrix (sample deviation within
 * 10% of 0.08 / sqrt 3 over at least 400 entries), biases 0 but the
 * forget gate's rows n .. 2n-1, 1. */
START_TEST(initialisation)
{
	const char *set[] = { "src_vocab=100", "tgt_vocab=120", "emb=20",
			      "hidden=24", "layers=2" };
	struct model *m = model_create("seq2seq", set, 5, "", "");

	ck_assert_msg(m != NULL, "%s", err_msg());
	for (int i = 0; i < m->nparam; i++) {
		const struct param *p = &m->param[i];
		double s = 0;

		if (p->rank == 1) {
			int forget = strcmp(p->name, "out.b") != 0;
			for (size_t j = 0; j < p->n; j++)
				ck_assert_msg(p->w[j] == (forget && j >= 24 &&
							  j < 48),
					      "%s[%zu] = %g", p->name, j,
					      p->w[j]);
			continue;
		}
		for (size_t j = 0; j < p->n; j++) {
			ck_assert_msg(fabsf(p->w[j]) <= 0.08f, "%s", p->name);
			s += (double)p->w[j] * p->w[j];
		}
		s = sqrt(s / p->n);
		ck_assert_msg(fabs(s / (0.08 / sqrt(3)) - 1) < 0.1,
			      "%s: sd %g", p->name, s);
	}
	model_free(m);
}
END_TEST

START_TEST(parameter_table)
{
	struct model *m = make_model(NULL);
	static const char *const want[] = {
		"src.emb [11,5]", "enc.0.W [16,5]", "enc.0.U [16,4]",
		"enc.0.b [16]", "enc.1.W [16,4]", "enc.1.U [16,4]",
		"enc.1.b [16]", "tgt.emb [13,5]", "dec.0.W [16,5]",
		"dec.0.U [16,4]", "dec.0.b [16]", "dec.1.W [16,4]",
		"dec.1.U [16,4]", "dec.1.b [16]", "out.W [13,4]", "out.b [13]",
	};
	char keys[512];

	ck_assert_ptr_eq(arch_find("seq2seq"), &arch_seq2seq);
	sc_param_table(m, want, 16);
	/* the defaults, and the keys a user may set */
	ck_assert_str_eq(config_get(&m->cfg, "layers"), "2");
	ck_assert_str_eq(config_get(&m->cfg, "reverse"), "1");
	ck_assert_str_eq(config_get(&m->cfg, "dropout"), "0");
	model_keys(&arch_seq2seq, keys, sizeof keys);
	for (const char *k = "emb hidden layers reverse dropout"; *k;) {
		char one[16];
		int len = (int)strcspn(k, " ");
		snprintf(one, sizeof one, "%.*s", len, k);
		ck_assert_msg(strstr(keys, one), "%s not in %s", one, keys);
		k += len + (k[len] == ' ');
	}
	ck_assert_int_eq(model_check_setting(&arch_seq2seq, "layers=4"), 0);
	ck_assert_int_eq(model_check_setting(&arch_seq2seq, "dropout=0.2"), 0);
	ck_assert_int_eq(model_check_setting(&arch_seq2seq, "reverse=2"), -1);
	ck_assert_int_eq(model_check_setting(&arch_seq2seq, "layers=65"), -1);
	ck_assert_int_eq(model_check_setting(&arch_seq2seq, "att=4"), -1);
	ck_assert_int_eq(model_check_setting(&arch_rnnsearch, "layers=2"), -1);
	model_free(m);
}
END_TEST

/* ---- refusals ------------------------------------------------------------ */

START_TEST(config_refused)
{
	sc_setting_refused("seq2seq", "reverse=2", "reverse");
	sc_setting_refused("seq2seq", "layers=0", "layers");
}
END_TEST

/* Records of a model of other sizes, missing ones, and bad ids. */
START_TEST(records_refused)
{
	static const int slen[] = { 3 };
	struct model *m = make_model(NULL);
	struct model *other = make_model("layers=3");
	struct sc_batch src;
	struct frame *f, *fp;

	sc_make_batch(&src, 1, slen, SC_VS, 13);
	f = sc_pipeline(m, &src);
	fp = f;
	/* att.h of 2 layers into a decoder of 3 */
	ck_assert_ptr_null(other->arch->dec_new(other, NULL, &fp, 1, 1));
	ck_assert_ptr_nonnull(strstr(err_msg(), "att.h"));
	ck_assert_int_eq(other->arch->attend(other, &fp, 1), -1);
	ck_assert_ptr_nonnull(strstr(err_msg(), "enc.h"));
	frame_drop(f, "att.c");
	ck_assert_ptr_null(m->arch->dec_new(m, NULL, &fp, 1, 1));
	ck_assert_ptr_nonnull(strstr(err_msg(), "att.c"));
	ck_assert_ptr_nonnull(strstr(err_msg(), "attend"));
	sc_ids_refused(m, f, &src);
	sc_free_frames(f, 1);
	model_free(m);
	model_free(other);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("seq2seq");
	TCase *t = tcase_create("core");

	tcase_set_timeout(t, 120);
	tcase_add_test(t, equations);
	tcase_add_test(t, reverse_changes_the_reading);
	tcase_add_test(t, gradients);
	tcase_add_test(t, gradients_dropout);
	tcase_add_test(t, lstm_padding_backward);
	tcase_add_test(t, decoder_scores_as_training);
	tcase_add_test(t, padding);
	tcase_add_test(t, padding_in_training);
	tcase_add_test(t, threads);
	tcase_add_test(t, select_duplicates);
	tcase_add_test(t, initialisation);
	tcase_add_test(t, parameter_table);
	tcase_add_test(t, config_refused);
	tcase_add_test(t, records_refused);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	return run_suite(suite());
}
