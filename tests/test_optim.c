/*
 * test_optim.c: Adam and Adadelta against updates computed here in double
 * from their definitions, the noam schedule at hand-computed points,
 * global-norm clipping, and the optimiser's state through a model file.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "base/errmsg.h"
#include "fake_arch.h"
#include "kernels/kernels.h"
#include "run/optim.h"
#include "run_suite.h"

static struct model *make(const char *optim, const char *extra)
{
	const char *set[] = {
		"src_vocab=5", "tgt_vocab=6", "dim=2", optim, extra,
	};
	struct model *m;
	char dir[] = "/tmp/test_optim.XXXXXX", p[64];

	fake_arch_register();
	m = model_create("fake", set, extra ? 5 : 4, "", "");
	ck_assert_msg(m != NULL, "%s", err_msg());
	/* reload to get gradient buffers, as training does */
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(p, sizeof p, "%s/m", dir);
	ck_assert_int_eq(model_save(m, p, NULL, 0), 0);
	model_free(m);
	m = model_load(p, 1, NULL);
	ck_assert_msg(m != NULL, "%s", err_msg());
	unlink(p);
	rmdir(dir);
	return m;
}

static void fill_grad(struct model *m, int seed)
{
	int i, k;

	for (i = 0; i < m->nparam; i++)
		for (k = 0; k < (int)m->param[i].n; k++)
			m->param[i].g[k] = sin(seed * 100 + i * 10 + k) * 0.3;
}

/* Two Adam updates against the definition (with bias correction). */
START_TEST(adam_matches_definition)
{
	struct model *m = make("optim=adam", "lr=0.01");
	struct optim o;
	double *w, *mm, *vv, b1 = 0.9, b2 = 0.98, eps = 1e-9, lr = 0.01;
	size_t i;
	int t;

	ck_assert_int_eq(optim_init(&o, m), 0);
	w = malloc(m->nw * sizeof *w);
	mm = calloc(m->nw, sizeof *mm);
	vv = calloc(m->nw, sizeof *vv);
	for (i = 0; i < m->nw; i++)
		w[i] = m->w[i];
	for (t = 1; t <= 2; t++) {
		fill_grad(m, t);
		ck_assert(optim_update(&o, m, 0.5) == lr);
		for (i = 0; i < m->nw; i++) {
			double g = m->g[i] * 0.5;

			mm[i] = b1 * mm[i] + (1 - b1) * g;
			vv[i] = b2 * vv[i] + (1 - b2) * g * g;
			w[i] -= lr * (mm[i] / (1 - pow(b1, t))) /
				(sqrt(vv[i] / (1 - pow(b2, t))) + eps);
			ck_assert_msg(fabs(m->w[i] - w[i]) < 1e-6,
				      "step %d, w[%zu] = %g, expected %g", t,
				      i, m->w[i], w[i]);
		}
	}
	ck_assert_int_eq(o.step, 2);
	free(w);
	free(mm);
	free(vv);
	optim_free(&o);
	model_free(m);
}
END_TEST

/* One Adadelta update by hand: E[g^2] = (1 - rho) g^2, then
 * dx = -sqrt(eps) / sqrt(E[g^2] + eps) g, w += lr dx. */
START_TEST(adadelta_matches_hand_values)
{
	struct model *m = make("optim=adadelta", "lr=1");
	struct optim o;
	float w0 = m->w[0], w1 = m->w[1], w5 = m->w[5];
	double g2, dx;

	ck_assert_int_eq(optim_init(&o, m), 0);
	memset(m->g, 0, m->nw * sizeof(float));
	m->g[0] = 0.5f;
	m->g[1] = -2.0f;
	optim_update(&o, m, 1.0);
	g2 = 0.05 * 0.25;
	dx = -sqrt(1e-6) / sqrt(g2 + 1e-6) * 0.5;
	ck_assert_msg(fabs(m->w[0] - (w0 + dx)) < 1e-7, "%g vs %g",
		      m->w[0], w0 + dx);
	ck_assert(fabs(o.s[0][0] - g2) < 1e-6 * g2);
	ck_assert(fabs(o.s[1][0] - 0.05 * dx * dx) < 1e-6 * dx * dx);
	g2 = 0.05 * 4.0;
	dx = -sqrt(1e-6) / sqrt(g2 + 1e-6) * -2.0;
	ck_assert(fabs(m->w[1] - (w1 + dx)) < 1e-7);
	/* no gradient, no move */
	ck_assert(m->w[5] == w5 && o.s[0][5] == 0 && o.s[1][5] == 0);
	optim_free(&o);
	model_free(m);
}
END_TEST

START_TEST(noam_schedule)
{
	struct model *m = make("schedule=noam", "warmup=100");
	struct optim o;

	/* lr 1; the fake has no d_model or hidden key: d = 1 */
	ck_assert_int_eq(optim_init(&o, m), 0);
	ck_assert(fabs(optim_lr(&o, 1) - 1.0 / 1000.0) < 1e-12);
	ck_assert(fabs(optim_lr(&o, 100) - 0.1) < 1e-12);
	ck_assert(fabs(optim_lr(&o, 400) - 0.05) < 1e-12);
	o.d = 256;
	ck_assert(fabs(optim_lr(&o, 50) - 50 / 1000.0 / 16) < 1e-12);
	o.schedule = SCHED_CONSTANT;
	ck_assert(optim_lr(&o, 7) == 1.0);
	optim_free(&o);
	model_free(m);
}
END_TEST

START_TEST(clipping)
{
	struct model *m = make("clip=1", NULL);
	struct optim o;
	float g[2] = { 3, 4 };
	float *big;
	double n1, n2;
	size_t i, n = 100003;

	ck_assert_int_eq(optim_init(&o, m), 0);
	ck_assert(grad_norm(g, 2) == 5.0);
	ck_assert(clip_factor(&o, 5.0) == 0.2);
	ck_assert(clip_factor(&o, 0.5) == 1.0);
	o.clip = 0;
	ck_assert(clip_factor(&o, 5.0) == 1.0);
	g[1] = NAN;
	ck_assert(isnan(grad_norm(g, 2)));
	/* the same norm whatever the threads */
	big = malloc(n * sizeof *big);
	for (i = 0; i < n; i++)
		big[i] = sin(i * 0.37);
	kern_set_threads(1);
	n1 = grad_norm(big, n);
	kern_set_threads(2);
	n2 = grad_norm(big, n);
	ck_assert(n1 == n2);
	{
		double s = 0;

		for (i = 0; i < n; i++)
			s += (double)big[i] * big[i];
		ck_assert(fabs(n1 - sqrt(s)) < 1e-9 * sqrt(s));
	}
	free(big);
	optim_free(&o);
	model_free(m);
}
END_TEST

/*
 * The norm is the square root of a sum of squares in double taken in a
 * fixed order: chunks of 16384 elements, each summed in 8 interleaved
 * partial sums (element i into sum i % 8), the tail on its own, then the
 * tail's sum and the 8 partial sums added, then the chunks in order.
 * Here that order by hand, one element at a time, on sizes around the
 * chunk's and the eight's edges: the same bits.
 */
static double norm_by_hand(const float *g, size_t n)
{
	double total = 0;

	for (size_t c = 0; c < n; c += 16384) {
		size_t end = c + 16384 < n ? c + 16384 : n, i;
		double p[8] = { 0 }, s = 0;

		for (i = c; i + 8 <= end; i += 8)
			for (int k = 0; k < 8; k++)
				p[k] += (double)g[i + k] * g[i + k];
		for (; i < end; i++)
			s += (double)g[i] * g[i];
		for (int k = 0; k < 8; k++)
			s += p[k];
		total += s;
	}
	return sqrt(total);
}

START_TEST(norm_in_its_order)
{
	size_t sizes[] = { 1, 3, 7, 8, 9, 15, 17, 31, 16383, 16384, 16385,
			   16384 * 3 + 13 };
	size_t nmax = 16384 * 3 + 13, i, k;
	float *g = malloc(nmax * sizeof *g);

	for (i = 0; i < nmax; i++)
		g[i] = (float)ldexp(sin(i * 0.61), (int)(i * 7 % 41) - 20);
	for (k = 0; k < sizeof sizes / sizeof *sizes; k++) {
		double want = norm_by_hand(g, sizes[k]);

		kern_set_threads(1);
		ck_assert_msg(grad_norm(g, sizes[k]) == want, "n %zu: %.17g "
			      "for %.17g", sizes[k], grad_norm(g, sizes[k]),
			      want);
		kern_set_threads(2);
		ck_assert(grad_norm(g, sizes[k]) == want);
	}
	kern_set_threads(1);
	free(g);
}
END_TEST

START_TEST(state_through_model_file)
{
	struct model *m = make("optim=adam", NULL), *l;
	struct optim o, o2;
	struct tsr_map *map;
	struct tensor *rec;
	char dir[] = "/tmp/test_optim.XXXXXX", p[64];
	int n;

	ck_assert_int_eq(optim_init(&o, m), 0);
	fill_grad(m, 3);
	optim_update(&o, m, 1.0);
	rec = optim_records(&o, m, &n);
	ck_assert_int_eq(n, 2 * m->nparam);
	ck_assert_str_eq(rec[0].name, "optim.m.src.emb");
	ck_assert_str_eq(rec[n - 1].name, "optim.v.out.b");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(p, sizeof p, "%s/m", dir);
	ck_assert_int_eq(model_save(m, p, rec, n), 0);
	l = model_load(p, 1, &map);
	ck_assert_msg(l != NULL, "%s", err_msg());
	ck_assert_int_eq(optim_init(&o2, l), 0);
	ck_assert_int_eq(optim_load(&o2, l, map), 0);
	ck_assert_int_eq(memcmp(o.s[0], o2.s[0], m->nw * sizeof(float)), 0);
	ck_assert_int_eq(memcmp(o.s[1], o2.s[1], m->nw * sizeof(float)), 0);
	tsr_map_close(map);
	/* half the state is an error */
	ck_assert_int_eq(model_save(m, p, rec, n / 2), 0);
	model_free(l);
	l = model_load(p, 1, &map);
	ck_assert_ptr_nonnull(l);
	ck_assert_int_eq(optim_load(&o2, l, map), -1);
	ck_assert_ptr_nonnull(strstr(err_msg(), "incomplete"));
	tsr_map_close(map);
	unlink(p);
	rmdir(dir);
	free(rec);
	optim_free(&o);
	optim_free(&o2);
	model_free(l);
	model_free(m);
}
END_TEST

START_TEST(refuses_bad_settings)
{
	struct model *m = make("optim=sgd", NULL);
	struct optim o;

	ck_assert_int_eq(optim_init(&o, m), -1);
	ck_assert_ptr_nonnull(strstr(err_msg(), "sgd"));
	config_set(&m->cfg, "optim", "adam");
	config_set(&m->cfg, "beta2", "1");
	ck_assert_int_eq(optim_init(&o, m), -1);
	config_set(&m->cfg, "beta2", "0.98");
	config_set(&m->cfg, "schedule", "cosine");
	ck_assert_int_eq(optim_init(&o, m), -1);
	ck_assert_ptr_nonnull(strstr(err_msg(), "cosine"));
	model_free(m);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("optim");
	TCase *tc = tcase_create("optim");

	tcase_add_test(tc, adam_matches_definition);
	tcase_add_test(tc, adadelta_matches_hand_values);
	tcase_add_test(tc, noam_schedule);
	tcase_add_test(tc, clipping);
	tcase_add_test(tc, norm_in_its_order);
	tcase_add_test(tc, state_through_model_file);
	tcase_add_test(tc, refuses_bad_settings);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
