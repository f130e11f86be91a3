/*
 * test_model_load.c: model_load's mapped mode (MODEL_LOAD_MAPPED, for
 * translation): f32 parameters used in place in the read-only mapping,
 * with the values saved; f16 ones converted into m->w; int8 exports
 * (the matrices of products as int8 with row scales, quant_rows_i8's, the
 * rest f32) read back exactly, their scales required, training refused;
 * a damaged parameter refused before use; a write into a mapped parameter
 * faults.
 */
#include <check.h>
#include <float.h>
#include <math.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "base/errmsg.h"
#include "fake_arch.h"
#include "kernels/gemm_packed.h"
#include "models/model.h"
#include "models/model_parts.h"
#include "run_suite.h"
#include "tmpdir.h"

static void setup(void)
{
	tmpdir_setup();
	fake_arch_register();
}

static struct model *make(void)
{
	const char *set[] = { "src_vocab=7", "tgt_vocab=9", "dim=5",
			      "seed=3" };
	struct model *m = model_create("fake", set, 4, "src", "tgt");

	ck_assert_msg(m != NULL, "%s", err_msg());
	return m;
}

static int in_map(const struct model *m, const float *p)
{
	const char *b = m->map->base;

	return (const char *)p >= b && (const char *)p < b + m->map->size;
}

START_TEST(f32_in_place)
{
	struct model *m = make(), *l;
	struct tsr_map *map;
	int i;

	ck_assert_int_eq(model_save(m, tmpdir_path("m"), NULL, 0), 0);
	l = model_load(tmpdir_path("m"), MODEL_LOAD_MAPPED, NULL);
	ck_assert_msg(l != NULL, "%s", err_msg());
	ck_assert_ptr_nonnull(l->map);
	ck_assert_uint_eq(l->nw, 0);            /* nothing copied */
	ck_assert_int_eq(l->nparam, m->nparam);
	for (i = 0; i < l->nparam; i++) {
		const struct param *p = &l->param[i];

		ck_assert(in_map(l, p->w));
		ck_assert_int_eq((uintptr_t)p->w % 64, 0);
		ck_assert_ptr_null(p->g);
		ck_assert_int_eq(memcmp(p->w, m->param[i].w,
					p->n * sizeof(float)), 0);
	}
	ck_assert_str_eq(l->vocab_src, "src");
	model_free(l);
	/* the map stays with the model: it is not handed out */
	ck_assert_ptr_null(model_load(tmpdir_path("m"), MODEL_LOAD_MAPPED,
				      &map));
	model_free(m);
}
END_TEST

START_TEST(f16_converted)
{
	struct model *m = make(), *l;
	int i;
	size_t j;

	ck_assert_int_eq(model_export(m, tmpdir_path("h"), DT_F16), 0);
	l = model_load(tmpdir_path("h"), MODEL_LOAD_MAPPED, NULL);
	ck_assert_msg(l != NULL, "%s", err_msg());
	for (i = 0; i < l->nparam; i++) {
		const struct param *p = &l->param[i];

		ck_assert(!in_map(l, p->w));
		ck_assert(p->w >= l->w && p->w + p->n <= l->w + l->nw);
		for (j = 0; j < p->n; j++)
			ck_assert(p->w[j] ==
				  f16_to_f32(f32_to_f16(m->param[i].w[j])));
	}
	model_free(l);
	model_free(m);
}
END_TEST

/* The fake model's out.W is int8, q and scales those of quant_rows_i8,
 * dequantised into w; the embeddings and out.b f32, bit for bit. */
START_TEST(int8_round_trip)
{
	struct model *m = make(), *l;
	const struct param *o = model_param(m, "out.W");
	int8_t q[9 * 5];
	float qs[9];
	int i, mode;
	size_t j;

	quant_rows_i8(q, qs, o->w, 9, 5, 5);
	ck_assert_int_eq(model_export(m, tmpdir_path("q"), DT_I8), 0);
	for (mode = MODEL_LOAD_COPY; mode <= MODEL_LOAD_MAPPED; mode++) {
		if (mode == MODEL_LOAD_TRAIN) {
			ck_assert_ptr_null(model_load(tmpdir_path("q"), mode,
						      NULL));
			ck_assert_ptr_nonnull(strstr(err_msg(),
					      "'out.W' is i8: an exported"));
			continue;
		}
		l = model_load(tmpdir_path("q"), mode, NULL);
		ck_assert_msg(l != NULL, "%s", err_msg());
		ck_assert_int_eq(l->int8, 1);
		for (i = 0; i < l->nparam; i++) {
			const struct param *p = &l->param[i];

			ck_assert_int_eq(model_param_int8(p),
					 strcmp(p->name, "out.W") == 0);
			if (!model_param_int8(p)) {
				ck_assert_ptr_null(p->q);
				ck_assert_mem_eq(p->w, m->param[i].w,
						 p->n * sizeof(float));
				continue;
			}
			ck_assert_mem_eq(p->q, q, sizeof q);
			ck_assert_mem_eq(p->qs, qs, sizeof qs);
			for (j = 0; j < p->n; j++)
				ck_assert(p->w[j] == q[j] * qs[j / 5]);
		}
		model_free(l);
	}
	model_free(m);
}
END_TEST

/* An int8 file without out.W.scale, or with the scales of the wrong
 * length, is refused naming them; so is an embedding in int8. */
START_TEST(int8_refused)
{
	struct model *m = make();
	struct tsr_map *map;
	struct tsr_writer *w;
	struct tensor t;
	static const char *const bad[] = { "drop", "short", "emb" };
	int8_t zero[9 * 5] = { 0 };
	int i, b;

	ck_assert_int_eq(model_export(m, tmpdir_path("q"), DT_I8), 0);
	map = tsr_map_open(tmpdir_path("q"));
	ck_assert_ptr_nonnull(map);
	for (b = 0; b < 3; b++) {
		w = tsr_writer_atomic(tmpdir_path("bad"), 0);
		ck_assert_ptr_nonnull(w);
		for (i = 0; i < map->f.n; i++) {
			t = map->f.rec[i];
			if (strcmp(t.name, "out.W.scale") == 0 && b == 0)
				continue;
			if (strcmp(t.name, "out.W.scale") == 0 && b == 1)
				t.dim[0] = 8, t.nbytes = 32;
			if (strcmp(t.name, "src.emb") == 0 && b == 2) {
				t.dtype = DT_I8;
				t.data = zero;
				t.nbytes = 7 * 5;
			}
			ck_assert_int_eq(tsr_write(w, &t, 0,
						   i == map->f.n - 1), 0);
		}
		ck_assert_int_eq(tsr_writer_commit(w), 0);
		ck_assert_ptr_null(model_load(tmpdir_path("bad"),
					      MODEL_LOAD_MAPPED, NULL));
		ck_assert_msg(strstr(err_msg(), b == 2 ?
				     "'src.emb' is i8, which only" :
				     "'out.W' is i8 without its row scales "
				     "'out.W.scale', f32 [9]"), "%s: %s",
			      bad[b], err_msg());
	}
	tsr_map_close(map);
	model_free(m);
}
END_TEST

/* A value that is not finite, in any dtype (f32, f16, an int8 export's
 * row scales; checksums made anew), is refused at load naming the
 * parameter, not translated into NaN states. */
/* floats_finite, which every loaded parameter and every stage's input
 * pass: a NaN or an infinity at each place of each length up to 40 (the
 * eight sums and the tail), among finite values at their extremes
 * (FLT_MAX either way, the least subnormal, -0). */
START_TEST(floats_finite_every_place)
{
	const float good[] = { FLT_MAX, -FLT_MAX, 1e-45f, -0.0f, 1, -3.5f };
	const float bad[] = { NAN, INFINITY, -INFINITY };
	float x[40];

	for (int n = 0; n <= 40; n++) {
		for (int i = 0; i < n; i++)
			x[i] = good[(i * 7 + n) % 6];
		ck_assert_msg(floats_finite(x, n), "n %d", n);
		for (int p = 0; p < n; p++)
			for (int b = 0; b < 3; b++) {
				float keep = x[p];

				x[p] = bad[b];
				ck_assert_msg(!floats_finite(x, n),
					      "n %d, %g at %d", n, bad[b], p);
				x[p] = keep;
			}
	}
}
END_TEST

START_TEST(not_finite_refused)
{
	struct model *m = make();
	static const struct {
		int dtype;
		const char *record, *param;
	} c[] = {
		{ DT_F32, "out.W", "out.W" },
		{ DT_F16, "out.b", "out.b" },
		{ DT_I8, "out.W.scale", "out.W" },
	};

	for (size_t k = 0; k < sizeof c / sizeof c[0]; k++) {
		struct tsr_map *map;
		struct tsr_writer *w;
		struct model *l;

		if (c[k].dtype == DT_F32)
			ck_assert_int_eq(model_save(m, tmpdir_path("q"), NULL,
						    0), 0);
		else
			ck_assert_int_eq(model_export(m, tmpdir_path("q"),
						      c[k].dtype), 0);
		map = tsr_map_open(tmpdir_path("q"));
		ck_assert_ptr_nonnull(map);
		w = tsr_writer_atomic(tmpdir_path("bad"), 0);
		ck_assert_ptr_nonnull(w);
		for (int i = 0; i < map->f.n; i++) {
			struct tensor t = map->f.rec[i];
			unsigned char copy[4096];

			if (strcmp(t.name, c[k].record) == 0) {
				ck_assert_uint_le(t.nbytes, sizeof copy);
				memcpy(copy, t.data, t.nbytes);
				if (t.dtype == DT_F16) {
					copy[2] = 0x00;	/* element 1: +Inf */
					copy[3] = 0x7c;
				} else {
					float nan = NAN;
					memcpy(copy + 4, &nan, 4);
				}
				t.data = copy;
			}
			ck_assert_int_eq(tsr_write(w, &t, 0,
						   i == map->f.n - 1), 0);
		}
		ck_assert_int_eq(tsr_writer_commit(w), 0);
		tsr_map_close(map);
		for (int mode = 0; mode < 3; mode++) {
			if (c[k].dtype != DT_F32 && mode == MODEL_LOAD_TRAIN)
				continue;	/* refused for another reason */
			l = model_load(tmpdir_path("bad"), mode, NULL);
			ck_assert_ptr_null(l);
			ck_assert_msg(strstr(err_msg(), "not finite") &&
				      strstr(err_msg(), c[k].param), "%s: %s",
				      c[k].record, err_msg());
		}
	}
	model_free(m);
}
END_TEST

/* One byte of out.W's payload flipped: the checksum is verified before
 * the parameter is bound, in every mode. */
START_TEST(damaged_parameter)
{
	struct model *m = make(), *l;
	const struct param *p;
	size_t at;
	unsigned char c;
	int fd, mode;

	ck_assert_int_eq(model_save(m, tmpdir_path("m"), NULL, 0), 0);
	l = model_load(tmpdir_path("m"), MODEL_LOAD_MAPPED, NULL);
	ck_assert_msg(l != NULL, "%s", err_msg());
	p = model_param(l, "out.W");
	at = (const char *)p->w - (const char *)l->map->base + 7;
	model_free(l);
	fd = open(tmpdir_path("m"), O_RDWR);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pread(fd, &c, 1, at), 1);
	c ^= 0x40;
	ck_assert_int_eq(pwrite(fd, &c, 1, at), 1);
	close(fd);
	for (mode = MODEL_LOAD_COPY; mode <= MODEL_LOAD_MAPPED; mode++) {
		ck_assert_ptr_null(model_load(tmpdir_path("m"), mode, NULL));
		ck_assert_msg(strstr(err_msg(), "record \"out.W\"") &&
			      strstr(err_msg(), "checksum mismatch"), "%s",
			      err_msg());
	}
	model_free(m);
}
END_TEST

/* The mapping is read-only: a write into a mapped parameter faults. */
START_TEST(read_only)
{
	struct model *m = make(), *l;
	pid_t pid;
	int status;

	ck_assert_int_eq(model_save(m, tmpdir_path("m"), NULL, 0), 0);
	l = model_load(tmpdir_path("m"), MODEL_LOAD_MAPPED, NULL);
	ck_assert_msg(l != NULL, "%s", err_msg());
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		/* quietly: under ASan the fault is reported, then exit 1 */
		int null = open("/dev/null", O_WRONLY);

		dup2(null, 2);
		*(volatile float *)l->param[0].w = 1;
		_exit(0);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFSIGNALED(status) ||
		  (WIFEXITED(status) && WEXITSTATUS(status) != 0));
	model_free(l);
	model_free(m);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("model_load");
	TCase *tc = tcase_create("model_load");

	tcase_add_checked_fixture(tc, setup, tmpdir_teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, f32_in_place);
	tcase_add_test(tc, f16_converted);
	tcase_add_test(tc, int8_round_trip);
	tcase_add_test(tc, int8_refused);
	tcase_add_test(tc, floats_finite_every_place);
	tcase_add_test(tc, not_finite_refused);
	tcase_add_test(tc, damaged_parameter);
	tcase_add_test(tc, read_only);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(suite());
}
