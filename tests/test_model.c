/*
 * test_model.c: model.config parsing, and making, saving and loading
 * models (on the tests' fake architecture): round trips, the refusals of
 * a model whose records disagree with its config, and never saving NaN.
 */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "base/config.h"
#include "base/errmsg.h"
#include "fake_arch.h"
#include "models/model.h"
#include "run_suite.h"
#include "tmpdir.h"

static void setup(void)
{
	tmpdir_setup();
	fake_arch_register();
}

START_TEST(config_parse_rules)
{
	const char *text = "# comment\n  arch = rnnsearch  \n\nemb=620\n"
			   "unknown.key = some value \n  # indented\nx=";
	struct config c = { 0 };
	size_t len;
	char *out;
	long v;
	double d;

	ck_assert_int_eq(config_parse(&c, text, strlen(text), "t"), 0);
	ck_assert_int_eq(c.n, 4);
	ck_assert_str_eq(config_get(&c, "arch"), "rnnsearch");
	ck_assert_str_eq(config_get(&c, "unknown.key"), "some value");
	ck_assert_str_eq(config_get(&c, "x"), "");
	ck_assert_int_eq(config_int(&c, "emb", &v), 0);
	ck_assert_int_eq(v, 620);
	ck_assert_int_eq(config_int(&c, "arch", &v), -1);
	ck_assert_ptr_nonnull(strstr(err_msg(), "arch"));
	ck_assert_int_eq(config_int(&c, "x", &v), -1);
	ck_assert_int_eq(config_double(&c, "missing", &d), -1);
	ck_assert_ptr_nonnull(strstr(err_msg(), "missing"));
	ck_assert_int_eq(config_set(&c, "emb", "1.5e-3"), 0);
	ck_assert_int_eq(config_double(&c, "emb", &d), 0);
	ck_assert(d == 1.5e-3);
	ck_assert_int_eq(config_set_kv(&c, " new = 7 "), 0);
	ck_assert_str_eq(config_get(&c, "new"), "7");
	out = config_format(&c, &len);
	ck_assert_str_eq(out, "arch=rnnsearch\nemb=1.5e-3\n"
			 "unknown.key=some value\nx=\nnew=7\n");
	ck_assert_uint_eq(len, strlen(out));
	free(out);
	config_free(&c);
}
END_TEST

START_TEST(config_refusals)
{
	const char *bad[] = {
		"a=1\nb=2\na=3\n",	/* repeated key */
		"a=1\njust words\n",	/* no '=' */
		" = 3\n",		/* empty key */
		"a b=3\n",		/* space inside the key */
	};
	const char *where[] = { "line 3", "line 2", "line 1", "line 1" };
	size_t i;

	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct config c = { 0 };

		ck_assert_int_eq(config_parse(&c, bad[i], strlen(bad[i]),
					      "cfg"), -1);
		ck_assert_ptr_nonnull(strstr(err_msg(), "cfg"));
		ck_assert_ptr_nonnull(strstr(err_msg(), where[i]));
		config_free(&c);
	}
	{
		struct config c = { 0 };

		ck_assert_int_eq(config_set_kv(&c, "novalue"), -1);
		config_free(&c);
	}
	{
		/* CONFIG_MAX_KEYS keys parse, one more is refused (a line
		 * of its own: repeats were once looked for key by key, so
		 * that a million keys took hours) */
		struct config c = { 0 };
		char *text = malloc(16 * (CONFIG_MAX_KEYS + 1)), *p = text;
		int i;

		for (i = 0; i <= CONFIG_MAX_KEYS; i++)
			p += sprintf(p, "k%d=%d\n", i, i);
		ck_assert_int_eq(config_parse(&c, text, p - text - 11, "cfg"),
				 0);
		ck_assert_int_eq(c.n, CONFIG_MAX_KEYS);
		config_free(&c);
		ck_assert_int_eq(config_parse(&c, text, p - text, "cfg"), -1);
		ck_assert_str_eq(err_msg(), "cfg: line 1025: more than 1024 "
			"keys");
		config_free(&c);
		free(text);
	}
}
END_TEST

static struct model *make(const char *dim)
{
	const char *set[] = { "src_vocab=7", "tgt_vocab=9", dim, "seed=42" };
	struct model *m = model_create("fake", set, 4, "src vocab text",
				       "tgt vocab text");

	ck_assert_msg(m != NULL, "%s", err_msg());
	return m;
}

START_TEST(create_declares_and_initialises)
{
	struct model *m = make("dim=5"), *m2 = make("dim=5");
	struct param *p = model_param(m, "out.W");
	size_t i;

	ck_assert_int_eq(m->nparam, 4);
	ck_assert_int_eq(m->src_vocab, 7);
	ck_assert_int_eq(m->tgt_vocab, 9);
	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(p->dim[0], 9);
	ck_assert_int_eq(p->dim[1], 5);
	ck_assert_ptr_null(p->g);
	/* parameters start on 64-byte boundaries */
	for (i = 0; i < (size_t)m->nparam; i++)
		ck_assert_int_eq((uintptr_t)m->param[i].w % 64, 0);
	/* every key: training defaults, arch defaults, settings */
	ck_assert_str_eq(config_get(&m->cfg, "arch"), "fake");
	ck_assert_str_eq(config_get(&m->cfg, "step"), "0");
	ck_assert_str_eq(config_get(&m->cfg, "optim"), "adadelta");
	ck_assert_str_eq(config_get(&m->cfg, "batch_tokens"), "4000");
	ck_assert_str_eq(config_get(&m->cfg, "dim"), "5");
	ck_assert_str_eq(config_get(&m->cfg, "seed"), "42");
	/* the same seed, the same initialisation; and not all zero */
	ck_assert_int_eq(memcmp(m->w, m2->w, m->nw * sizeof(float)), 0);
	ck_assert(m->w[0] != 0);
	model_free(m);
	model_free(m2);
	ck_assert_ptr_null(model_create("nosuch", NULL, 0, "", ""));
	ck_assert_ptr_nonnull(strstr(err_msg(), "nosuch"));
	{
		const char *set[] = { "src_vocab=7", "tgt_vocab=9",
				      "dim=zero" };

		ck_assert_ptr_null(model_create("fake", set, 3, "", ""));
		ck_assert_ptr_nonnull(strstr(err_msg(), "dim"));
	}
}
END_TEST

/* The special units: 0 1 2 3 by default; the config's keys; refusals. */
START_TEST(special_ids)
{
	struct model *m = make("dim=3");
	const char *marian[] = { "src_vocab=7", "tgt_vocab=9", "dim=3",
				 "eos_id=0", "unk_id=1", "bos_id=4",
				 "pad_id=0" };
	const char *bad[][2] = {
		{ "eos_id=9", "eos_id=9 is not a unit of a vocabulary of 7" },
		{ "unk_id=-1", "unk_id=-1 is not a unit" },
		{ "bos_id=2", "bos_id and eos_id are both 2" },
		{ "bos_id=-1", "not from a zero vector" },
		{ "eos_id=x", "eos_id" },
	};

	ck_assert_int_eq(m->pad_id, 0);
	ck_assert_int_eq(m->bos_id, 1);
	ck_assert_int_eq(m->eos_id, 2);
	ck_assert_int_eq(m->unk_id, 3);
	model_free(m);
	m = model_create("fake", marian, 7, "", "");
	ck_assert_msg(m != NULL, "%s", err_msg());
	ck_assert_int_eq(m->pad_id, 0);
	ck_assert_int_eq(m->bos_id, 4);
	ck_assert_int_eq(m->eos_id, 0);
	ck_assert_int_eq(m->unk_id, 1);
	/* kept by the file */
	ck_assert_int_eq(model_save(m, tmpdir_path("m"), NULL, 0), 0);
	model_free(m);
	m = model_load(tmpdir_path("m"), MODEL_LOAD_COPY, NULL);
	ck_assert_msg(m != NULL, "%s", err_msg());
	ck_assert_int_eq(m->bos_id, 4);
	ck_assert_int_eq(m->eos_id, 0);
	model_free(m);
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		const char *set[] = { "src_vocab=7", "tgt_vocab=9", "dim=3",
				      bad[i][0] };

		ck_assert_ptr_null(model_create("fake", set, 4, "", ""));
		ck_assert_msg(strstr(err_msg(), bad[i][1]), "%s: %s",
			      bad[i][0], err_msg());
	}
}
END_TEST

/* A vocabulary of any bytes (a SentencePiece model's: NULs inside)
 * comes back byte for byte, with its length. */
START_TEST(binary_vocabulary)
{
	static const char bytes[] = { 0x0a, 0x00, 0x12, (char)0xff, 0x00, 'x' };
	struct model *m = make("dim=3"), *l;

	ck_assert_int_eq(model_set_vocab(m, 1, bytes, sizeof bytes), 0);
	ck_assert_int_eq(model_set_vocab(m, 0, "", 0), 0);
	ck_assert_int_eq(model_save(m, tmpdir_path("m"), NULL, 0), 0);
	l = model_load(tmpdir_path("m"), MODEL_LOAD_MAPPED, NULL);
	ck_assert_msg(l != NULL, "%s", err_msg());
	ck_assert_uint_eq(l->vocab_tgt_len, sizeof bytes);
	ck_assert_int_eq(memcmp(l->vocab_tgt, bytes, sizeof bytes), 0);
	ck_assert_uint_eq(l->vocab_src_len, 0);
	ck_assert_uint_eq(model_vocab_hash(l->vocab_src, 0, l->vocab_tgt,
					   sizeof bytes),
			  model_vocab_hash(m->vocab_src, 0, m->vocab_tgt,
					   sizeof bytes));
	ck_assert(model_vocab_hash("", 0, bytes, sizeof bytes) !=
		  model_vocab_hash("", 0, bytes, 2));
	model_free(l);
	model_free(m);
}
END_TEST

/* Annexes (shortlist.*) travel with the model: loading keeps them,
 * saving and exporting write them back; set_annexes replaces them and
 * keeps every other record; other prefixes are refused. */
START_TEST(annexes_kept)
{
	struct model *m = make("dim=3"), *l;
	struct tensor t[2];
	uint64_t d1 = 3, d2 = 2;
	struct tsr_map *map;

	ck_assert_int_eq(tensor_init(&t[0], "shortlist.a", DT_I32, 1, &d1), 0);
	ck_assert_int_eq(tensor_init(&t[1], "shortlist.b", DT_I32, 1, &d2), 0);
	((int32_t *)t[0].data)[2] = 7;
	ck_assert_int_eq(model_save(m, tmpdir_path("m"), NULL, 0), 0);
	ck_assert_int_eq(model_file_set_annexes(tmpdir_path("m"),
						"shortlist.", t, 2), 0);
	l = model_load(tmpdir_path("m"), MODEL_LOAD_MAPPED, NULL);
	ck_assert_msg(l != NULL, "%s", err_msg());
	ck_assert_int_eq(l->nannex, 2);
	ck_assert_int_eq(((int32_t *)model_annex(l, "shortlist.a")->data)[2],
			 7);
	ck_assert_ptr_null(model_annex(l, "shortlist.c"));
	/* an export keeps them */
	ck_assert_int_eq(model_export(l, tmpdir_path("e"), DT_F16), 0);
	model_free(l);
	map = tsr_map_open(tmpdir_path("e"));
	ck_assert_ptr_nonnull(map);
	ck_assert_ptr_nonnull(frame_find(&map->f, "shortlist.b"));
	ck_assert_ptr_nonnull(frame_find(&map->f, "out.W"));
	tsr_map_close(map);
	/* replaced by one: the other goes, the parameters stay */
	ck_assert_int_eq(model_file_set_annexes(tmpdir_path("e"),
						"shortlist.", t + 1, 1), 0);
	l = model_load(tmpdir_path("e"), MODEL_LOAD_MAPPED, NULL);
	ck_assert_msg(l != NULL, "%s", err_msg());
	ck_assert_int_eq(l->nannex, 1);
	ck_assert_ptr_nonnull(model_annex(l, "shortlist.b"));
	model_free(l);
	/* a prefix that is no annex's, or a record outside the prefix */
	ck_assert_int_eq(model_file_set_annexes(tmpdir_path("e"), "out.",
						t, 1), -1);
	ck_assert_int_eq(model_file_set_annexes(tmpdir_path("e"),
						"shortlist.x", t, 1), -1);
	tensor_free(&t[0]);
	tensor_free(&t[1]);
	model_free(m);
}
END_TEST

START_TEST(save_load_roundtrip)
{
	struct model *m = make("dim=3"), *l;
	struct tsr_map *map;
	struct tensor extra;
	uint64_t shape[1] = { 2 };
	int i;

	rng_next(&m->rng);
	ck_assert_int_eq(tensor_init(&extra, "optim.test", DT_F32, 1, shape),
			 0);
	((float *)extra.data)[1] = 2.5f;
	ck_assert_msg(model_save(m, tmpdir_path("m"), &extra, 1) == 0, "%s",
		      err_msg());
	l = model_load(tmpdir_path("m"), 1, &map);
	ck_assert_msg(l != NULL, "%s", err_msg());
	ck_assert_int_eq(l->nparam, m->nparam);
	for (i = 0; i < m->nparam; i++) {
		ck_assert_str_eq(l->param[i].name, m->param[i].name);
		ck_assert_int_eq(memcmp(l->param[i].w, m->param[i].w,
					m->param[i].n * sizeof(float)), 0);
		ck_assert_ptr_nonnull(l->param[i].g);
	}
	ck_assert_str_eq(l->vocab_src, "src vocab text");
	ck_assert_str_eq(l->vocab_tgt, "tgt vocab text");
	ck_assert_int_eq(l->cfg.n, m->cfg.n);
	for (i = 0; i < m->cfg.n; i++)
		ck_assert_str_eq(config_get(&l->cfg, m->cfg.key[i]),
				 m->cfg.val[i]);
	ck_assert_int_eq(memcmp(&l->rng, &m->rng, sizeof m->rng), 0);
	ck_assert_ptr_nonnull(frame_find(&map->f, "optim.test"));
	ck_assert(((float *)frame_find(&map->f, "optim.test")->data)[1] ==
		  2.5f);
	tsr_map_close(map);
	model_free(l);
	model_free(m);
	tensor_free(&extra);
}
END_TEST

START_TEST(never_saves_nan)
{
	struct model *m = make("dim=3");
	struct model *l;
	float keep;

	ck_assert_int_eq(model_save(m, tmpdir_path("m"), NULL, 0), 0);
	keep = m->w[0];
	m->w[1] = NAN;
	ck_assert_int_eq(model_save(m, tmpdir_path("m"), NULL, 0), -1);
	ck_assert_ptr_nonnull(strstr(err_msg(), "src.emb"));
	m->w[1] = INFINITY;
	ck_assert_int_eq(model_save(m, tmpdir_path("m"), NULL, 0), -1);
	/* the old file is intact */
	l = model_load(tmpdir_path("m"), 0, NULL);
	ck_assert_ptr_nonnull(l);
	ck_assert(l->w[0] == keep && isfinite(l->w[1]));
	model_free(l);
	model_free(m);
}
END_TEST

/* Writes a model file by hand: config text, then the given records. */
static void write_model(const char *p, const char *cfg, struct tensor *rec,
			int n)
{
	struct tsr_writer *w = tsr_writer_atomic(p, 0);
	struct tensor t = { 0 };
	int i;

	ck_assert_ptr_nonnull(w);
	strcpy(t.name, "model.config");
	t.dtype = DT_U8;
	t.rank = 1;
	t.dim[0] = strlen(cfg);
	t.data = (void *)cfg;
	t.nbytes = strlen(cfg);
	ck_assert_int_eq(tsr_write(w, &t, 0, 0), 0);
	strcpy(t.name, "vocab.src");
	ck_assert_int_eq(tsr_write(w, &t, 0, 0), 0);
	strcpy(t.name, "vocab.tgt");
	ck_assert_int_eq(tsr_write(w, &t, 0, n == 0), 0);
	for (i = 0; i < n; i++)
		ck_assert_int_eq(tsr_write(w, &rec[i], 0, i == n - 1), 0);
	ck_assert_int_eq(tsr_writer_commit(w), 0);
}

static void param_rec(struct tensor *t, const char *name, int rank, int d0,
		      int d1)
{
	uint64_t dim[2] = { d0, d1 };

	ck_assert_int_eq(tensor_init(t, name, DT_F32, rank, dim), 0);
}

START_TEST(load_refuses_disagreeing_models)
{
	const char *cfg = "arch=fake\nsrc_vocab=7\ntgt_vocab=9\ndim=3\n"
			  "seed=1\n";
	struct tensor r[5];
	int i;

	param_rec(&r[0], "src.emb", 2, 7, 3);
	param_rec(&r[1], "tgt.emb", 2, 9, 3);
	param_rec(&r[2], "out.W", 2, 9, 4);	/* the config says [9, 3] */
	param_rec(&r[3], "out.b", 1, 9, 0);
	param_rec(&r[4], "extra.W", 1, 2, 0);
	write_model(tmpdir_path("shape"), cfg, r, 4);
	ck_assert_ptr_null(model_load(tmpdir_path("shape"), 0, NULL));
	ck_assert_ptr_nonnull(strstr(err_msg(), "out.W"));
	ck_assert_ptr_nonnull(strstr(err_msg(), "[9, 3]"));

	tensor_free(&r[2]);
	param_rec(&r[2], "out.W", 2, 9, 3);
	write_model(tmpdir_path("missing"), cfg, r, 3);	/* no out.b */
	ck_assert_ptr_null(model_load(tmpdir_path("missing"), 0, NULL));
	ck_assert_ptr_nonnull(strstr(err_msg(), "out.b"));
	ck_assert_ptr_nonnull(strstr(err_msg(), "missing"));

	write_model(tmpdir_path("extra"), cfg, r, 5);
	ck_assert_ptr_null(model_load(tmpdir_path("extra"), 0, NULL));
	ck_assert_ptr_nonnull(strstr(err_msg(), "extra.W"));

	write_model(tmpdir_path("good"), cfg, r, 4);
	{
		struct model *m = model_load(tmpdir_path("good"), 0, NULL);

		ck_assert_msg(m != NULL, "%s", err_msg());
		model_free(m);
	}
	write_model(tmpdir_path("arch"),
		    "arch=nosuch\nsrc_vocab=7\ntgt_vocab=9\n", r, 4);
	ck_assert_ptr_null(model_load(tmpdir_path("arch"), 0, NULL));
	ck_assert_ptr_nonnull(strstr(err_msg(), "nosuch"));
	write_model(tmpdir_path("key"), "arch=fake\nsrc_vocab=7\ndim=3\n", r,
		    4);
	ck_assert_ptr_null(model_load(tmpdir_path("key"), 0, NULL));
	ck_assert_ptr_nonnull(strstr(err_msg(), "tgt_vocab"));
	for (i = 0; i < 5; i++)
		tensor_free(&r[i]);
	/* a stream that is not a model */
	{
		struct tsr_writer *w = tsr_writer_atomic(tmpdir_path("ids"), 0);
		struct tensor t;
		uint64_t d = 3;

		ck_assert_int_eq(tensor_init(&t, "src.ids", DT_I32, 1, &d), 0);
		ck_assert_int_eq(tsr_write(w, &t, 0, 1), 0);
		ck_assert_int_eq(tsr_writer_commit(w), 0);
		tensor_free(&t);
		ck_assert_ptr_null(model_load(tmpdir_path("ids"), 0, NULL));
		ck_assert_ptr_nonnull(strstr(err_msg(), "model.config"));
	}
}
END_TEST

START_TEST(check_ids)
{
	struct frame f = { 0 };
	struct tensor t;
	uint64_t d = 3;
	int32_t *id;

	f.number = 5;
	ck_assert_int_eq(model_check_ids(&f, "src.ids", 10, "tokenize"), -1);
	ck_assert_ptr_nonnull(strstr(err_msg(), "src.ids"));
	ck_assert_ptr_nonnull(strstr(err_msg(), "tokenize"));
	ck_assert_int_eq(tensor_init(&t, "src.ids", DT_I32, 1, &d), 0);
	id = t.data;
	id[0] = 4, id[1] = 9, id[2] = 2;
	ck_assert_ptr_nonnull(frame_put(&f, &t));
	ck_assert_int_eq(model_check_ids(&f, "src.ids", 10, "tokenize"), 0);
	((int32_t *)frame_find(&f, "src.ids")->data)[1] = 10;
	ck_assert_int_eq(model_check_ids(&f, "src.ids", 10, "tokenize"), -1);
	ck_assert_ptr_nonnull(strstr(err_msg(), "frame 5"));
	ck_assert_ptr_nonnull(strstr(err_msg(), "id 10"));
	((int32_t *)frame_find(&f, "src.ids")->data)[1] = -1;
	ck_assert_int_eq(model_check_ids(&f, "src.ids", 10, "tokenize"), -1);
	frame_free(&f);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("model");
	TCase *tc = tcase_create("model");

	tcase_add_checked_fixture(tc, setup, tmpdir_teardown);
	tcase_add_test(tc, config_parse_rules);
	tcase_add_test(tc, config_refusals);
	tcase_add_test(tc, create_declares_and_initialises);
	tcase_add_test(tc, save_load_roundtrip);
	tcase_add_test(tc, special_ids);
	tcase_add_test(tc, binary_vocabulary);
	tcase_add_test(tc, annexes_kept);
	tcase_add_test(tc, never_saves_nan);
	tcase_add_test(tc, load_refuses_disagreeing_models);
	tcase_add_test(tc, check_ids);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
