/*
 * test_train.c: training on the tests' fake architecture: the order of a
 * pass, a copying task that an untrained model cannot do, resuming bit for
 * bit, skipping batches whose loss is not finite, the dev loss, and
 * checkpoints kept and averaged.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "base/errmsg.h"
#include "fake_arch.h"
#include "run_suite.h"
#include "run/search.h"
#include "tmpdir.h"
#include "run/train.h"

static void setup(void)
{
	tmpdir_setup();
	fake_arch_register();
}

enum { V = 12 };

/* n pairs of random sequences of ids 4 .. V-2 (1 to 6 of them, then
 * </s>): the target copies the source.  Id V-1 is rare: one id in 100. */
static void write_pairs(const char *p, int n, uint64_t seed)
{
	struct tsr_writer *w = tsr_writer_atomic(p, 0);
	struct rng r;
	int i, j;

	rng_seed(&r, seed);
	ck_assert_ptr_nonnull(w);
	for (i = 0; i < n; i++) {
		uint64_t S = 2 + rng_below(&r, 6);
		struct tensor t;
		int32_t ids[8];

		for (j = 0; j < (int)S - 1; j++)
			ids[j] = rng_below(&r, 100) == 0 ? V - 1 :
				 4 + rng_below(&r, V - 5);
		ids[S - 1] = 2;
		ck_assert_int_eq(tensor_init_copy(&t, "src.ids", DT_I32, 1, &S,
						  ids), 0);
		ck_assert_int_eq(tsr_write(w, &t, i, 0), 0);
		strcpy(t.name, "tgt.ids");
		ck_assert_int_eq(tsr_write(w, &t, i, 1), 0);
		tensor_free(&t);
	}
	ck_assert_int_eq(tsr_writer_finish(w), 0);
}

static struct model *make(const char *p, const char *extra)
{
	const char *set[] = {
		"src_vocab=12", "tgt_vocab=12", "dim=16", "optim=adam",
		"lr=0.05", "batch_tokens=40", extra,
	};
	struct model *m = model_create("fake", set, extra ? 7 : 6, "", "");

	ck_assert_msg(m != NULL, "%s", err_msg());
	ck_assert_int_eq(model_save(m, p, NULL, 0), 0);
	return m;
}

static struct train_opts quiet_opts(long steps)
{
	struct train_opts o;

	memset(&o, 0, sizeof o);
	o.steps = steps;	/* no report: quiet */
	return o;
}

/* corpus_read of the file at p: its rc. */
static int read_path(struct corpus *c, const char *p, const struct model *m)
{
	struct tsr_reader *r = tsr_reader_path(p);
	int rc;

	ck_assert_msg(r != NULL, "%s", err_msg());
	rc = corpus_read(c, r, m, NULL, NULL);
	tsr_reader_free(r);
	return rc;
}

static void read_corpus(struct corpus *c, const char *p)
{
	struct model *m = make(tmpdir_path("tmp.model"), NULL);

	ck_assert_msg(read_path(c, p, m) == 0, "%s", err_msg());
	model_free(m);
}

START_TEST(plan_covers_every_pair_once)
{
	struct corpus c;
	struct epoch_plan p, q;
	int *seen, i, b;

	write_pairs(tmpdir_path("pairs"), 300, 1);
	read_corpus(&c, tmpdir_path("pairs"));
	ck_assert_int_eq(c.n, 300);
	ck_assert_int_eq(epoch_plan_make(&p, &c, 7, 40), 0);
	seen = calloc(c.n, sizeof *seen);
	for (b = 0; b < p.nbatch; b++) {
		int n = p.start[b + 1] - p.start[b], tmax = 0;

		ck_assert_int_ge(n, 1);
		for (i = p.start[b]; i < p.start[b + 1]; i++) {
			seen[p.idx[i]]++;
			if (c.tlen[p.idx[i]] > tmax)
				tmax = c.tlen[p.idx[i]];
		}
		ck_assert_int_le(n * tmax, 40);
	}
	for (i = 0; i < c.n; i++)
		ck_assert_int_eq(seen[i], 1);
	/* a function of the seed */
	ck_assert_int_eq(epoch_plan_make(&q, &c, 7, 40), 0);
	ck_assert_int_eq(q.nbatch, p.nbatch);
	ck_assert_int_eq(memcmp(p.idx, q.idx, c.n * sizeof(int)), 0);
	epoch_plan_free(&q);
	ck_assert_int_eq(epoch_plan_make(&q, &c, 8, 40), 0);
	ck_assert_int_ne(memcmp(p.idx, q.idx, c.n * sizeof(int)), 0);
	epoch_plan_free(&q);
	epoch_plan_free(&p);
	free(seen);
	corpus_free(&c);
}
END_TEST

/* The fraction of pairs whose greedy translation is the target exactly. */
static double copy_accuracy(const char *model, const struct corpus *c)
{
	struct model *m = model_load(model, 0, NULL);
	struct frame f[50], *fp[50];
	struct search_result r[50];
	struct search_opts o;
	int i, right = 0;

	ck_assert_ptr_nonnull(m);
	search_opts_default(&o);
	memset(f, 0, sizeof f);
	for (i = 0; i < 50; i++) {
		struct tensor t;
		uint64_t S = c->slen[i];

		ck_assert_int_eq(tensor_init_copy(&t, "src.ids", DT_I32, 1, &S,
						  c->src + c->soff[i]), 0);
		ck_assert_ptr_nonnull(frame_put(&f[i], &t));
		fp[i] = &f[i];
	}
	ck_assert_int_eq(m->arch->embed(m, fp, 50), 0);
	ck_assert_int_eq(m->arch->encode(m, fp, 50), 0);
	ck_assert_int_eq(m->arch->attend(m, fp, 50), 0);
	ck_assert_int_eq(search(m, fp, 50, &o, r), 0);
	for (i = 0; i < 50; i++) {
		right += r[i].hyp[0].len == c->tlen[i] &&
			 memcmp(r[i].hyp[0].ids, c->tgt + c->toff[i],
				c->tlen[i] * 4) == 0;
		search_result_free(&r[i]);
		frame_free(&f[i]);
	}
	model_free(m);
	return right / 50.0;
}

START_TEST(learns_to_copy)
{
	struct corpus train, test;
	struct train_opts o = quiet_opts(300);
	struct model *m = make(tmpdir_path("m"), NULL);
	double before, after;

	model_free(m);
	write_pairs(tmpdir_path("train"), 400, 2);
	write_pairs(tmpdir_path("test"), 50, 3);
	read_corpus(&train, tmpdir_path("train"));
	read_corpus(&test, tmpdir_path("test"));
	before = copy_accuracy(tmpdir_path("m"), &test);
	ck_assert_msg(train_run(tmpdir_path("m"), &train, NULL, &o) == 0, "%s",
		      err_msg());
	after = copy_accuracy(tmpdir_path("m"), &test);
	ck_assert_msg(before < 0.1 && after >= 0.95, "before %g, after %g",
		      before, after);
	corpus_free(&train);
	corpus_free(&test);
}
END_TEST

static int same_file(const char *a, const char *b)
{
	char cmd[512];

	snprintf(cmd, sizeof cmd, "cmp -s %s %s", a, b);
	return system(cmd) == 0;
}

/* 2N steps in one run, and N + N, give the same file byte for byte, also
 * when a run stops in the middle of a pass and across pass ends. */
START_TEST(resume_is_exact)
{
	struct corpus c;
	struct train_opts all = quiet_opts(23), half1 = quiet_opts(9);
	struct train_opts half2 = quiet_opts(14);
	struct model *m = make(tmpdir_path("a"), "dropout=0");
	char cmd[512];

	model_free(m);
	snprintf(cmd, sizeof cmd, "cp %s %s", tmpdir_path("a"),
		 tmpdir_path("b"));
	ck_assert_int_eq(system(cmd), 0);
	write_pairs(tmpdir_path("pairs"), 60, 4);
	read_corpus(&c, tmpdir_path("pairs"));
	ck_assert_int_eq(train_run(tmpdir_path("a"), &c, NULL, &all), 0);
	ck_assert_int_eq(train_run(tmpdir_path("b"), &c, NULL, &half1), 0);
	ck_assert(!same_file(tmpdir_path("a"), tmpdir_path("b")));
	ck_assert_int_eq(train_run(tmpdir_path("b"), &c, NULL, &half2), 0);
	ck_assert(same_file(tmpdir_path("a"), tmpdir_path("b")));
	/* the runs did go past a pass */
	m = model_load(tmpdir_path("a"), 0, NULL);
	ck_assert_str_eq(config_get(&m->cfg, "step"), "23");
	ck_assert_str_ne(config_get(&m->cfg, "epoch"), "0");
	model_free(m);
	corpus_free(&c);
}
END_TEST

/* Batches with a NaN loss are skipped and reported; the model stays
 * finite and the steps count only the updates made. */
START_TEST(skips_non_finite_batches)
{
	struct corpus c;
	struct train_opts o = quiet_opts(0);
	struct model *m = make(tmpdir_path("m"), "poison=11"), *l;
	int i;

	write_pairs(tmpdir_path("pairs"), 100, 5);
	read_corpus(&c, tmpdir_path("pairs"));
	o.epochs = 1;
	ck_assert_int_eq(train_run(tmpdir_path("m"), &c, NULL, &o), 0);
	l = model_load(tmpdir_path("m"), 0, NULL);
	ck_assert_ptr_nonnull(l);
	{
		struct epoch_plan p;
		long b, clean = 0, step;
		uint64_t seed = strtoull(config_get(&l->cfg, "epoch_seed"),
					 NULL, 10);

		ck_assert_int_eq(epoch_plan_make(&p, &c, seed, 40), 0);
		for (b = 0; b < p.nbatch; b++) {
			int bad = 0, k, j;

			for (k = p.start[b]; k < p.start[b + 1]; k++)
				for (j = 0; j < c.tlen[p.idx[k]]; j++)
					bad |= c.tgt[c.toff[p.idx[k]] + j] == 11;
			clean += !bad;
		}
		ck_assert_int_eq(config_int(&l->cfg, "step", &step), 0);
		ck_assert_int_lt(clean, p.nbatch);
		ck_assert_int_gt(clean, 0);
		ck_assert_int_eq(step, clean);
		epoch_plan_free(&p);
	}
	for (i = 0; i < (int)l->nw; i++)
		ck_assert(isfinite(l->w[i]));
	ck_assert_int_ne(memcmp(l->w, m->w, l->nw * sizeof(float)), 0);
	model_free(l);
	model_free(m);
	corpus_free(&c);
}
END_TEST

/* The dev loss is the mean -log p of the target tokens, as train_batch
 * counts it. */
START_TEST(dev_loss_matches_train_batch)
{
	struct corpus c;
	struct model *m = make(tmpdir_path("m"), NULL), *l;
	struct epoch_plan p;
	double nll, nll2, sum = 0;
	long tok = 0;
	int b;

	model_free(m);
	write_pairs(tmpdir_path("pairs"), 30, 6);
	read_corpus(&c, tmpdir_path("pairs"));
	l = model_load(tmpdir_path("m"), 1, NULL);
	ck_assert_int_eq(dev_loss(l, &c, 7, &nll), 0);
	ck_assert_int_eq(dev_loss(l, &c, 30, &nll2), 0);
	/* equal up to the rounding of batched matrix products */
	ck_assert(fabs(nll - nll2) < 1e-5 * nll);
	ck_assert_int_eq(epoch_plan_make(&p, &c, 1, 40), 0);
	for (b = 0; b < p.nbatch; b++) {
		struct batch_ids s = { 0 }, t = { 0 };
		int n = p.start[b + 1] - p.start[b], i, cnt;
		double bn;

		s.B = t.B = n;
		s.S = t.S = 8;
		s.ids = calloc(n * 8, 4);
		t.ids = calloc(n * 8, 4);
		s.len = calloc(n, sizeof(int));
		t.len = calloc(n, sizeof(int));
		for (i = 0; i < n; i++) {
			int k = p.idx[p.start[b] + i];

			s.len[i] = t.len[i] = c.tlen[k];
			memcpy(s.ids + i * 8, c.src + c.soff[k], c.slen[k] * 4);
			memcpy(t.ids + i * 8, c.tgt + c.toff[k], c.tlen[k] * 4);
		}
		l->arch->train_batch(l, &s, &t, 1, 0, &bn, &cnt);
		sum += bn;
		tok += cnt;
		free(s.ids);
		free(t.ids);
		free(s.len);
		free(t.len);
	}
	ck_assert_msg(fabs(nll - sum / tok) < 1e-5, "%g vs %g", nll,
		      sum / tok);
	epoch_plan_free(&p);
	model_free(l);
	corpus_free(&c);
}
END_TEST

START_TEST(checkpoints_and_average)
{
	struct corpus c;
	struct train_opts o = quiet_opts(10);
	struct model *m = make(tmpdir_path("m"), NULL), *a, *ck[3];
	char **last;
	int n, i;
	size_t k;

	model_free(m);
	write_pairs(tmpdir_path("pairs"), 50, 7);
	read_corpus(&c, tmpdir_path("pairs"));
	o.save_every = 2;
	o.keep = 3;
	ck_assert_int_eq(train_run(tmpdir_path("m"), &c, NULL, &o), 0);
	ck_assert_int_eq(access(tmpdir_path("m.ckpt.4"), F_OK), -1);
	ck_assert_int_eq(access(tmpdir_path("m.ckpt.6"), F_OK), 0);
	ck_assert(same_file(tmpdir_path("m.ckpt.10"), tmpdir_path("m")));
	last = checkpoints_last(tmpdir_path("m"), 3, &n);
	ck_assert_int_eq(n, 3);
	ck_assert_str_eq(last[0], tmpdir_path("m.ckpt.6"));
	ck_assert_str_eq(last[2], tmpdir_path("m.ckpt.10"));
	ck_assert_int_eq(model_average(tmpdir_path("avg"), last, n), 0);
	a = model_load(tmpdir_path("avg"), 0, NULL);
	ck_assert_ptr_nonnull(a);
	for (i = 0; i < 3; i++)
		ck_assert_ptr_nonnull(ck[i] = model_load(last[i], 0, NULL));
	for (k = 0; k < a->nw; k++) {
		double mean = ((double)ck[0]->w[k] + ck[1]->w[k] +
			       ck[2]->w[k]) / 3;

		ck_assert(fabs(a->w[k] - mean) < 1e-6);
	}
	ck_assert_str_eq(config_get(&a->cfg, "step"), "10");
	for (i = 0; i < 3; i++) {
		model_free(ck[i]);
		free(last[i]);
	}
	free(last);
	model_free(a);
	corpus_free(&c);
}
END_TEST

/* The reports of a run, in order. */
struct log {
	int n;
	struct train_report r[32];
};

static void record(const struct train_report *r, void *ctx)
{
	struct log *l = ctx;

	ck_assert_int_lt(l->n, 32);
	l->r[l->n++] = *r;
}

START_TEST(reports_through_callback)
{
	static const struct { enum train_event e; long step; } want[] = {
		{ TRAIN_PROGRESS, 1 }, { TRAIN_PROGRESS, 3 }, { TRAIN_DEV, 5 },
		{ TRAIN_PROGRESS, 6 }, { TRAIN_PROGRESS, 9 }, { TRAIN_DEV, 10 },
		{ TRAIN_SAVED, 10 },
	};
	struct corpus c, dev;
	struct train_opts o = quiet_opts(10);
	struct model *m = make(tmpdir_path("m"), NULL);
	struct log l = { 0 };
	double nll;
	int i;

	model_free(m);
	write_pairs(tmpdir_path("pairs"), 200, 7);
	write_pairs(tmpdir_path("dev"), 20, 8);
	read_corpus(&c, tmpdir_path("pairs"));
	read_corpus(&dev, tmpdir_path("dev"));
	o.log_every = 3;
	o.dev_every = 5;
	o.batch = 8;
	o.report = record;
	o.ctx = &l;
	ck_assert_int_eq(train_run(tmpdir_path("m"), &c, &dev, &o), 0);
	ck_assert_int_eq(l.n, 7);
	for (i = 0; i < 7; i++) {
		const struct train_report *r = &l.r[i];

		ck_assert_int_eq(r->event, want[i].e);
		ck_assert_int_eq(r->step, want[i].step);
		ck_assert_int_ge(r->epoch, 1);
		ck_assert(r->epoch_done >= 0 && r->epoch_done < 1);
		ck_assert(r->elapsed >= 0 && (i == 0 ||
			  r->elapsed >= l.r[i - 1].elapsed));
		if (r->event == TRAIN_PROGRESS)
			ck_assert(r->loss > 0 && r->ppl > 1 && r->lr > 0 &&
				  r->tok_per_s > 0 && r->left >= 0);
		if (r->event == TRAIN_DEV)
			ck_assert(fabs(r->dev_ppl - exp(r->dev_nll)) < 1e-9 &&
				  r->dev_bleu < 0 && r->dev_lines == 20);
	}
	/* the last dev loss is the saved model's */
	m = model_load(tmpdir_path("m"), 0, NULL);
	ck_assert_int_eq(dev_loss(m, &dev, 8, &nll), 0);
	ck_assert(fabs(nll - l.r[5].dev_nll) < 1e-12);
	ck_assert(l.r[2].dev_nll > nll);
	model_free(m);
	corpus_free(&c);
	corpus_free(&dev);
}
END_TEST

START_TEST(refuses_bad_corpus)
{
	struct corpus c;
	struct model *m = make(tmpdir_path("m"), NULL);
	struct tsr_writer *w = tsr_writer_atomic(tmpdir_path("bad"), 0);
	struct tensor t;
	uint64_t S = 2;
	int32_t ids[2] = { 12, 2 };

	ck_assert_int_eq(tensor_init_copy(&t, "src.ids", DT_I32, 1, &S, ids),
			 0);
	ck_assert_int_eq(tsr_write(w, &t, 0, 1), 0);
	ck_assert_int_eq(tsr_writer_commit(w), 0);
	ck_assert_int_eq(read_path(&c, tmpdir_path("bad"), m), -1);
	ck_assert_ptr_nonnull(strstr(err_msg(), "src.ids"));
	ck_assert_ptr_nonnull(strstr(err_msg(), "12"));
	ids[0] = 4;
	w = tsr_writer_atomic(tmpdir_path("bad"), 0);
	memcpy(t.data, ids, sizeof ids);
	ck_assert_int_eq(tsr_write(w, &t, 0, 1), 0);
	ck_assert_int_eq(tsr_writer_commit(w), 0);
	ck_assert_int_eq(read_path(&c, tmpdir_path("bad"), m), -1);
	ck_assert_ptr_nonnull(strstr(err_msg(), "tgt.ids"));
	ck_assert_ptr_nonnull(strstr(err_msg(), "tokenize --pairs"));
	tensor_free(&t);
	model_free(m);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("train");
	TCase *tc = tcase_create("train");

	tcase_set_timeout(tc, 30);
	tcase_add_checked_fixture(tc, setup, tmpdir_teardown);
	tcase_add_test(tc, plan_covers_every_pair_once);
	tcase_add_test(tc, learns_to_copy);
	tcase_add_test(tc, resume_is_exact);
	tcase_add_test(tc, skips_non_finite_batches);
	tcase_add_test(tc, dev_loss_matches_train_batch);
	tcase_add_test(tc, checkpoints_and_average);
	tcase_add_test(tc, reports_through_callback);
	tcase_add_test(tc, refuses_bad_corpus);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
