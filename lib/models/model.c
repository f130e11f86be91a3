/*
 * model.c: the architecture-neutral part of a model: its config, its
 * parameter table (named pointers into one allocation), and making,
 * loading and saving model files; see model.h.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/errmsg.h"
#include "kernels/gemm_packed.h"
#include "kernels/kernels.h"
#include "model.h"
#include "shortlist.h"
#include "nn/layers.h"

/* Architectures added at run time: the tests' fake ones. */
static const struct arch *registered[8];
static int nregistered;

int arch_register(const struct arch *a)
{
	if (nregistered == (int)(sizeof registered / sizeof registered[0])) {
		err_set("too many architectures");
		return -1;
	}
	registered[nregistered++] = a;
	return 0;
}

int dec_step_check(int nh, int live, const int32_t *prev, int V)
{
	if (nh < 0 || nh > live) {
		err_set("decoder: a step for %d hypotheses, %d live", nh, live);
		return -1;
	}
	for (int i = 0; i < nh; i++)
		if (prev[i] < 0 || prev[i] >= V) {
			err_set("decoder: token %d is outside the target "
				"vocabulary of %d", (int)prev[i], V);
			return -1;
		}
	return 0;
}

int dec_step_block(int nh, int shortlisted)
{
	int nt = kern_threads();

	if (nt < 2 || shortlisted || nh < 16 * nt)
		return 0;
	return (nh + nt - 1) / nt;
}

const struct arch *arch_find(const char *name)
{
	const struct arch *builtin[] = {
		&arch_rnnsearch, &arch_rnnencdec, &arch_seq2seq,
		&arch_transformer,
	};
	size_t i;

	for (i = 0; i < sizeof builtin / sizeof builtin[0]; i++)
		if (strcmp(builtin[i]->name, name) == 0)
			return builtin[i];
	for (i = 0; i < (size_t)nregistered; i++)
		if (strcmp(registered[i]->name, name) == 0)
			return registered[i];
	err_set("unknown architecture '%s'", name);
	return NULL;
}

/*
 * The training keys of doc/MODELS.md and their defaults: the RNNsearch paper's
 * Adadelta with clipping at 1; an architecture's defaults override them.
 */
static const char *const train_defaults[] = {
	"step=0", "seed=1", "optim=adadelta", "lr=1", "schedule=constant",
	"warmup=4000", "beta1=0.9", "beta2=0.98", "adam_eps=1e-9",
	"rho=0.95", "adadelta_eps=1e-6", "clip=1", "label_smoothing=0",
	"dropout=0", "batch_tokens=4000", NULL,
};

/*
 * The keys a user may set (train-step --set): their kind ('i' an integer,
 * 'r' a real number, 'w' one of words) and range.  An architecture takes
 * those of them that train_defaults or its own defaults hold, and only
 * (when arch names one) that architecture; a key without a default (its
 * absence is a meaning, as pos's) names its architecture.  The others
 * (arch, the vocabulary sizes, where training stands) are the program's
 * to write.
 */
static const struct {
	const char *name;
	char kind;
	double lo, hi;		/* a number's range ... */
	char open;		/* ... inclusive, or without '<' lo, '>' hi,
				 * 'b' both */
	const char *words;	/* 'w': the values, '|' between */
	const char *arch;	/* NULL: every architecture */
} settable[] = {
	{ "seed", 'i', 0, 9007199254740992.0, 0, NULL, NULL },
	{ "optim", 'w', 0, 0, 0, "adam|adadelta", NULL },
	{ "lr", 'r', 0, 1e9, 0, NULL, NULL },
	{ "schedule", 'w', 0, 0, 0, "constant|noam", NULL },
	{ "warmup", 'r', 0, 1e12, '<', NULL, NULL },
	{ "beta1", 'r', 0, 1, '>', NULL, NULL },
	{ "beta2", 'r', 0, 1, '>', NULL, NULL },
	{ "adam_eps", 'r', 0, 1, '<', NULL, NULL },
	{ "rho", 'r', 0, 1, '>', NULL, NULL },
	{ "adadelta_eps", 'r', 0, 1, '<', NULL, NULL },
	{ "clip", 'r', 0, 1e12, 0, NULL, NULL },
	{ "label_smoothing", 'r', 0, 1, '>', NULL, NULL },
	{ "dropout", 'r', 0, 1, '>', NULL, "transformer" },
	{ "dropout", 'r', 0, 1, '>', NULL, "seq2seq" },
	{ "batch_tokens", 'i', 1, 1 << 30, 0, NULL, NULL },
	/* The sizes' maxima (train-step(1) lists them): an architecture may
	 * allocate by them before a parameter is declared and checked
	 * against the file (a Transformer's table of positions is 512 x
	 * d_model floats), so they are well beyond any model trained here,
	 * and small enough that nothing a config asks for before then costs
	 * more than 32 MB.  model_size_key reads every size by them. */
	{ "src_vocab", 'i', 1, 1 << 20, 0, NULL, NULL },
	{ "tgt_vocab", 'i', 1, 1 << 20, 0, NULL, NULL },
	{ "emb", 'i', 1, 1 << 14, 0, NULL, NULL },
	{ "hidden", 'i', 1, 1 << 14, 0, NULL, NULL },
	{ "att", 'i', 1, 1 << 14, 0, NULL, NULL },
	{ "maxout", 'i', 1, 1 << 14, 0, NULL, NULL },
	{ "layers", 'i', 1, 64, 0, NULL, "seq2seq" },
	{ "reverse", 'i', 0, 1, 0, NULL, "seq2seq" },
	{ "attention", 'w', 0, 0, 0, "additive|diagonal|window", "rnnsearch" },
	{ "window_k", 'i', 1, 1 << 10, 0, NULL, "rnnsearch" },
	{ "diag_ratio", 'r', 0, 1e6, '<', NULL, "rnnsearch" },
	{ "d_model", 'i', 1, 1 << 14, 0, NULL, NULL },
	{ "heads", 'i', 1, 1 << 10, 0, NULL, NULL },
	{ "ffn", 'i', 1, 1 << 16, 0, NULL, NULL },
	{ "enc_layers", 'i', 1, 1 << 10, 0, NULL, NULL },
	{ "dec_layers", 'i', 1, 1 << 10, 0, NULL, NULL },
	{ "norm", 'w', 0, 0, 0, "pre|post", NULL },
	{ "tie", 'w', 0, 0, 0, "none|tgt|all", NULL },
	{ "ln_eps", 'r', 0, 1, 'b', NULL, NULL },
	{ "pos", 'w', 0, 0, 0, "sinusoidal|rope|learned", "transformer" },
	{ "max_pos", 'i', 1, 1 << 20, 0, NULL, "transformer" },
};

#define NSETTABLE (int)(sizeof settable / sizeof settable[0])

/* Whether "key=..." strings kv hold key. */
static int holds(const char *const *kv, const char *key)
{
	size_t n = strlen(key);

	for (; kv && *kv; kv++)
		if (strncmp(*kv, key, n) == 0 && (*kv)[n] == '=')
			return 1;
	return 0;
}

/* The index in settable[] of key if a may be given it, else -1. */
static int settable_key(const struct arch *a, const char *key, size_t len)
{
	int i;

	for (i = 0; i < NSETTABLE; i++)
		if (strlen(settable[i].name) == len &&
		    strncmp(settable[i].name, key, len) == 0 &&
		    (!settable[i].arch || strcmp(settable[i].arch,
						 a->name) == 0) &&
		    (settable[i].arch ||
		     holds(train_defaults, settable[i].name) ||
		     holds(a->defaults, settable[i].name)))
			return i;
	return -1;
}

void model_keys(const struct arch *a, char *buf, size_t size)
{
	size_t n = 0;
	int i;

	if (size)
		buf[0] = 0;
	for (i = 0; i < NSETTABLE; i++)
		if (settable_key(a, settable[i].name,
				 strlen(settable[i].name)) == i && n < size)
			n += snprintf(buf + n, size - n, "%s%s", n ? " " : "",
				      settable[i].name);
}

/* Whether s is one of the '|'-separated words. */
static int one_of(const char *words, const char *s)
{
	size_t n = strlen(s);

	for (;;) {
		if (strncmp(words, s, n) == 0 &&
		    (words[n] == '|' || words[n] == 0))
			return 1;
		if (!(words = strchr(words, '|')))
			return 0;
		words++;
	}
}

/* Whether x is in the range of settable[i]. */
static int in_range(int i, double x)
{
	char o = settable[i].open;

	return (strchr("<b", o) && o ? x > settable[i].lo :
		x >= settable[i].lo) &&
	       (strchr(">b", o) && o ? x < settable[i].hi :
		x <= settable[i].hi);
}

int model_check_setting(const struct arch *a, const char *kv)
{
	const char *eq = strchr(kv, '='), *v;
	char keys[1024], *end;
	double x;
	int i;

	if (!eq) {
		err_set("'%s' is not KEY=VALUE", kv);
		return -1;
	}
	i = settable_key(a, kv, eq - kv);
	if (i < 0) {
		model_keys(a, keys, sizeof keys);
		err_set("no key '%.*s' can be set for %s; the keys are: %s",
			(int)(eq - kv), kv, a->name, keys);
		return -1;
	}
	v = eq + 1;
	if (settable[i].kind == 'w') {
		if (one_of(settable[i].words, v))
			return 0;
		err_set("%s=%s: %s is one of %s", settable[i].name, v,
			settable[i].name, settable[i].words);
		return -1;
	}
	errno = 0;
	x = strtod(v, &end);
	if (end != v && !*end && !errno && in_range(i, x) &&
	    (settable[i].kind == 'r' || x == floor(x)))
		return 0;
	err_set("%s=%s: %s is %s %s %.16g %s %.16g", settable[i].name, v,
		settable[i].name, settable[i].kind == 'i' ? "an integer" :
		"a number", strchr("<b", settable[i].open) ? "above" : "from",
		settable[i].lo, strchr(">b", settable[i].open) ? "and below" :
		"to", settable[i].hi);
	return -1;
}

/* Parameters start on 64-byte boundaries, for the vector kernels. */
#define PARAM_ALIGN 16

/* FNV-1a: the slot of a parameter's name. */
static size_t name_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325u;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3u;
	return (size_t)(h ^ h >> 32);
}

/* Room for one more parameter: the table doubled, the slots rehashed
 * (at most half full). */
static int param_room(struct model *m)
{
	size_t nslot, i, j;
	struct param *p;
	int *slot, cap;

	if (m->nparam < m->param_cap)
		return 0;
	cap = m->param_cap ? 2 * m->param_cap : 64;
	nslot = 2 * (size_t)cap;
	p = realloc(m->param, cap * sizeof *p);
	if (p)
		m->param = p;
	slot = p ? calloc(nslot, sizeof *slot) : NULL;
	if (!slot) {
		err_set("out of memory for %d parameters", cap);
		return -1;
	}
	for (i = 0; i < (size_t)m->nparam; i++) {
		for (j = name_hash(p[i].name) & (nslot - 1); slot[j];
		     j = (j + 1) & (nslot - 1))
			;
		slot[j] = i + 1;
	}
	free(m->param_slot);
	m->param_slot = slot;
	m->param_mask = nslot - 1;
	m->param_cap = cap;
	return 0;
}

int model_add_param(struct model *m, const char *name, int rank, int d0,
		    int d1)
{
	struct param *p;
	size_t n, j;

	if (strlen(name) >= PARAM_NAME_MAX || rank < 1 || rank > 2 ||
	    d0 <= 0 || (rank == 2 && d1 <= 0)) {
		err_set("parameter '%s': bad name or shape", name);
		return -1;
	}
	if (model_param(m, name)) {
		err_set("parameter '%s' declared twice", name);
		return -1;
	}
	n = (size_t)d0 * (rank == 2 ? d1 : 1);
	if (n > m->param_budget - m->param_bytes) {
		err_set("the config declares more parameters than the file "
			"holds: '%s' [%d, %d] takes them beyond its %zu bytes "
			"of records", name, d0, rank == 2 ? d1 : 1,
			m->param_budget);
		return -1;
	}
	if (param_room(m) < 0)
		return -1;
	p = &m->param[m->nparam++];
	memset(p, 0, sizeof *p);
	strcpy(p->name, name);
	p->rank = rank;
	p->dim[0] = d0;
	p->dim[1] = rank == 2 ? d1 : 1;
	p->n = n;
	m->param_bytes += n;
	for (j = name_hash(name) & m->param_mask; m->param_slot[j];
	     j = (j + 1) & m->param_mask)
		;
	m->param_slot[j] = m->nparam;
	return 0;
}

int model_param_int8(const struct param *p)
{
	size_t n = strlen(p->name);

	return p->rank == 2 && !(n >= 4 && strcmp(p->name + n - 4, ".emb") == 0);
}

int model_wpack(const struct model *m, struct wpack *w, const float *W,
		int N, int K, int pack)
{
	for (int i = 0; pack == WPACK_I8 && i < m->nparam; i++) {
		const struct param *p = &m->param[i];
		if (p->w == W && p->q && p->dim[0] == N && p->dim[1] == K)
			return wpack_init_i8(w, p->q, p->qs, N, K);
	}
	return wpack_init(w, W, N, K, pack);
}

struct param *model_param(const struct model *m, const char *name)
{
	size_t j;

	if (!m->param_slot)
		return NULL;
	for (j = name_hash(name) & m->param_mask; m->param_slot[j];
	     j = (j + 1) & m->param_mask) {
		struct param *p = &m->param[m->param_slot[j] - 1];

		if (strcmp(p->name, name) == 0)
			return p;
	}
	return NULL;
}

static void zero_task(void *ctx, int64_t lo, int64_t hi)
{
	memset((float *)ctx + lo, 0, (size_t)(hi - lo) * sizeof(float));
}

/* Zeroed on the threads: the first touch of a model's pages (the kernel's
 * page faults) is a tenth of a decoder's start. */
static float *alloc_floats(size_t n)
{
	void *p;

	if (posix_memalign(&p, 64, (n ? n : 1) * sizeof(float)))
		return NULL;
	kern_parallel_for((int64_t)n, 1 << 18, zero_task, p);
	return p;
}

static size_t padded(size_t n)
{
	return (n + PARAM_ALIGN - 1) / PARAM_ALIGN * PARAM_ALIGN;
}

/* Reads the sizes and declares the parameters. */
static int model_declare(struct model *m)
{
	int sv, tv;

	if (model_size_key(m, "src_vocab", &sv) < 0 ||
	    model_size_key(m, "tgt_vocab", &tv) < 0)
		return -1;
	if (sv < 4 || tv < 4) {
		err_set("config: src_vocab=%d, tgt_vocab=%d: a vocabulary "
			"has at least the 4 special tokens", sv, tv);
		return -1;
	}
	m->src_vocab = sv;
	m->tgt_vocab = tv;
	return m->arch->declare(m);
}

/*
 * Allocates w (and g, when training) and binds the parameters.  A
 * parameter i with in[i] set (in may be NULL) is used where it lies, in a
 * mapped file, and takes no room in w.
 */
static int model_place(struct model *m, int training, float *const *in)
{
	size_t off = 0;
	int i;

	for (i = 0; i < m->nparam; i++)
		if (!in || !in[i])
			off += padded(m->param[i].n);
	m->nw = off;
	m->w = alloc_floats(m->nw);
	m->g = training ? alloc_floats(m->nw) : NULL;
	if (!m->w || (training && !m->g)) {
		err_set("out of memory for %zu parameters", m->nw);
		return -1;
	}
	for (off = 0, i = 0; i < m->nparam; i++) {
		struct param *p = &m->param[i];

		if (in && in[i]) {
			p->w = in[i];
			p->g = NULL;
			continue;
		}
		p->w = m->w + off;
		p->g = m->g ? m->g + off : NULL;
		off += padded(p->n);
	}
	return m->arch->bind(m);
}

static int set_all(struct config *c, const char *const *kv)
{
	for (; kv && *kv; kv++)
		if (config_set_kv(c, *kv) < 0)
			return -1;
	return 0;
}

static char *textdup(const char *s, size_t *len)
{
	char *d;

	s = s ? s : "";
	*len = strlen(s);
	d = strdup(s);
	if (!d)
		err_set("out of memory");
	return d;
}

struct model *model_create(const char *arch, const char *const *settings,
			   int nsettings, const char *vocab_src,
			   const char *vocab_tgt)
{
	const struct arch *a = arch_find(arch);
	struct model *m;
	const char *name;
	long seed;
	int i;

	if (!a)
		return NULL;
	m = calloc(1, sizeof *m);
	if (!m) {
		err_set("out of memory");
		return NULL;
	}
	m->arch = a;
	m->param_budget = SIZE_MAX;
	if (config_set(&m->cfg, "arch", a->name) < 0 ||
	    set_all(&m->cfg, train_defaults) < 0 ||
	    set_all(&m->cfg, a->defaults) < 0)
		goto fail;
	for (i = 0; i < nsettings; i++)
		if (config_set_kv(&m->cfg, settings[i]) < 0)
			goto fail;
	name = config_get(&m->cfg, "arch");
	if (strcmp(name, a->name) != 0) {
		err_set("arch=%s given with the %s architecture", name,
			a->name);
		goto fail;
	}
	m->vocab_src = textdup(vocab_src, &m->vocab_src_len);
	m->vocab_tgt = textdup(vocab_tgt, &m->vocab_tgt_len);
	if (!m->vocab_src || !m->vocab_tgt)
		goto fail;
	if (model_declare(m) < 0 || model_place(m, 0, NULL) < 0 ||
	    config_int(&m->cfg, "seed", &seed) < 0)
		goto fail;
	rng_seed(&m->rng, (uint64_t)seed);
	a->init(m);
	return m;
fail:
	model_free(m);
	return NULL;
}

/* A u8 [bytes] text record of the model file, NUL-terminated. */
static char *load_text(struct tsr_map *map, const char *name, size_t *len,
		       const char *path)
{
	const struct tensor *t = frame_find(&map->f, name);
	char *s;

	if (!t || t->dtype != DT_U8 || t->rank != 1) {
		err_set("%s: no %s record (u8 text): not a model file", path,
			name);
		return NULL;
	}
	if (tsr_map_verify(map, t) < 0)
		return NULL;
	s = malloc(t->nbytes + 1);
	if (!s) {
		err_set("out of memory");
		return NULL;
	}
	memcpy(s, t->data, t->nbytes);
	s[t->nbytes] = 0;
	*len = t->nbytes;
	return s;
}

/* NAME.scale of an int8 parameter p: f32 [out], verified; else NULL. */
static const struct tensor *find_scale(const struct param *p,
				       struct tsr_map *map, const char *path)
{
	char name[PARAM_NAME_MAX + 8];
	const struct tensor *t;

	snprintf(name, sizeof name, "%s.scale", p->name);
	t = frame_find(&map->f, name);
	if (!t || t->dtype != DT_F32 || t->rank != 1 ||
	    t->dim[0] != (uint64_t)p->dim[0]) {
		err_set("%s: parameter '%s' is i8 without its row scales "
			"'%s', f32 [%d]", path, p->name, name, p->dim[0]);
		return NULL;
	}
	return tsr_map_verify(map, t) < 0 ? NULL : t;
}

/* 1 when the record named name is the scales of an int8 parameter. */
static int is_scale(const struct model *m, struct tsr_map *map,
		    const char *name)
{
	char base[PARAM_NAME_MAX];
	size_t n = strlen(name);
	const struct tensor *t;

	if (n < 7 || n - 6 >= sizeof base ||
	    strcmp(name + n - 6, ".scale") != 0)
		return 0;
	memcpy(base, name, n - 6);
	base[n - 6] = 0;
	t = frame_find(&map->f, base);
	return model_param(m, base) && t && t->dtype == DT_I8;
}

/*
 * The record of every declared parameter (rec[i]), its dtype and shape
 * checked and its payload verified, and of an int8 one its scales
 * (scale[i], else NULL); and no record that is not a parameter.
 */
static int find_params(const struct model *m, struct tsr_map *map,
		       int training, const char *path,
		       const struct tensor **rec, const struct tensor **scale)
{
	const char *arch = m->arch->name;
	int i, j;

	for (i = 0; i < m->nparam; i++) {
		const struct param *p = &m->param[i];
		const struct tensor *t = frame_find(&map->f, p->name);
		int ok;

		if (!t) {
			err_set("%s: parameter '%s' of the %s model is "
				"missing", path, p->name, arch);
			return -1;
		}
		if (t->dtype != DT_F32 && t->dtype != DT_F16 &&
		    t->dtype != DT_BF16 && t->dtype != DT_I8) {
			err_set("%s: parameter '%s' is %s, not f32, f16, "
				"bf16 or i8", path, p->name,
				dtype_name(t->dtype));
			return -1;
		}
		ok = t->rank == p->rank && t->dim[0] == (uint64_t)p->dim[0] &&
		     (p->rank == 1 || t->dim[1] == (uint64_t)p->dim[1]);
		if (!ok) {
			char want[32];

			if (p->rank == 2)
				snprintf(want, sizeof want, "[%d, %d]",
					 p->dim[0], p->dim[1]);
			else
				snprintf(want, sizeof want, "[%d]", p->dim[0]);
			err_set("%s: parameter '%s' disagrees with the config, "
				"which makes it %s", path, p->name, want);
			return -1;
		}
		if (training && t->dtype != DT_F32) {
			err_set("%s: parameter '%s' is %s: an exported model, "
				"for translation only, is not trained further "
				"(train the f32 model it was exported from)",
				path, p->name, dtype_name(t->dtype));
			return -1;
		}
		if (t->dtype == DT_I8 && !model_param_int8(p)) {
			err_set("%s: parameter '%s' is i8, which only the "
				"matrices of products may be", path, p->name);
			return -1;
		}
		if (t->dtype == DT_I8 && !(scale[i] = find_scale(p, map, path)))
			return -1;
		if (tsr_map_verify(map, t) < 0)
			return -1;
		rec[i] = t;
	}
	for (j = 0; j < map->f.n; j++) {
		const char *name = map->f.rec[j].name;

		if (strcmp(name, "model.config") == 0 ||
		    strncmp(name, "vocab.", 6) == 0 ||
		    strncmp(name, "optim.", 6) == 0 ||
		    strncmp(name, "shortlist.", 10) == 0 ||
		    model_param(m, name) ||
		    is_scale(m, map, name))
			continue;
		err_set("%s: record '%s' is not a parameter of the %s model "
			"its config describes", path, name, arch);
		return -1;
	}
	return 0;
}

/*
 * The int8 parameters (those with scale[i]) copied into m->qbuf (p->q,
 * p->qs) and dequantised into p->w.
 */
static int load_int8(struct model *m, const struct tensor **rec,
		     const struct tensor **scale)
{
	size_t bytes = 0, off = 0;
	int i;

	for (i = 0; i < m->nparam; i++)
		if (scale[i])
			bytes += (m->param[i].n + 3) / 4 * 4 +
				 sizeof(float) * m->param[i].dim[0];
	if (!bytes)
		return 0;
	if (!(m->qbuf = malloc(bytes))) {
		err_set("out of memory for the int8 parameters");
		return -1;
	}
	for (i = 0; i < m->nparam; i++) {
		struct param *p = &m->param[i];
		int8_t *q = (int8_t *)m->qbuf + off;
		float *qs;

		if (!scale[i])
			continue;
		off += (p->n + 3) / 4 * 4;
		qs = (float *)((char *)m->qbuf + off);
		off += sizeof(float) * p->dim[0];
		memcpy(q, rec[i]->data, p->n);
		memcpy(qs, scale[i]->data, sizeof(float) * p->dim[0]);
		for (size_t k = 0; k < p->n; k++)
			p->w[k] = q[k] * qs[k / p->dim[1]];
		p->q = q;
		p->qs = qs;
	}
	m->int8 = 1;
	/* every product by them in int8 (layers.h's linear_forward) */
	if (!(m->i8packs = calloc(m->nparam, sizeof *m->i8packs))) {
		err_set("out of memory for the int8 parameters");
		return -1;
	}
	for (i = 0; i < m->nparam; i++) {
		struct param *p = &m->param[i];

		if (!p->q)
			continue;
		if (wpack_init_i8(&m->i8packs[i], p->q, p->qs, p->dim[0],
				  p->dim[1]) < 0)
			return -1;
		if (linear_int8_add(p->w, &m->i8packs[i]) < 0)
			return -1;
	}
	return 0;
}

struct convert_job {
	float *w;
	const struct tensor *t;
};

static void convert_task(void *ctx, int64_t lo, int64_t hi)
{
	const struct convert_job *j = ctx;

	to_f32(j->w + lo, (const char *)j->t->data + lo *
	       dtype_size(j->t->dtype), (size_t)(hi - lo), j->t->dtype);
}

/* p's values = record t's as f32, on the threads: a model stored in f16
 * loads at the memory's pace. */
static void convert_param(const struct param *p, const struct tensor *t)
{
	struct convert_job j = { p->w, t };

	kern_parallel_for((int64_t)p->n, 1 << 16, convert_task, &j);
}

/*
 * Binds the parameters to the file's records: f32 ones in place when
 * mapped (a mapped payload is 64-byte aligned, a copied one too), the rest
 * converted into m->w.
 */
static int load_params(struct model *m, struct tsr_map *map, int mode,
		       const char *path)
{
	const struct tensor **rec = calloc(m->nparam, sizeof *rec);
	const struct tensor **scale = calloc(m->nparam, sizeof *scale);
	float **in = calloc(m->nparam, sizeof *in);
	int i, rc = -1;

	if (!rec || !scale || !in) {
		err_set("out of memory");
		goto out;
	}
	if (find_params(m, map, mode == MODEL_LOAD_TRAIN, path, rec,
			scale) < 0)
		goto out;
	for (i = 0; mode == MODEL_LOAD_MAPPED && i < m->nparam; i++)
		if (rec[i]->dtype == DT_F32)
			in[i] = rec[i]->data;
	if (model_place(m, mode == MODEL_LOAD_TRAIN, in) < 0) {
		err_prefix("%s", path);
		goto out;
	}
	for (i = 0; i < m->nparam; i++)
		if (!in[i] && !scale[i])
			convert_param(&m->param[i], rec[i]);
	rc = load_int8(m, rec, scale);
out:
	free(rec);
	free(scale);
	free(in);
	return rc;
}

/*
 * The shortlist's records (shortlist.h), both or neither: i32
 * shortlist.frequent [N] and shortlist.translations [src_vocab, K].
 */
static int load_shortlist(struct model *m, struct tsr_map *map,
			  const char *path)
{
	const struct tensor *f = frame_find(&map->f, "shortlist.frequent");
	const struct tensor *t = frame_find(&map->f,
					    "shortlist.translations");

	if (!f && !t)
		return 0;
	if (!f || !t || f->dtype != DT_I32 || f->rank != 1 ||
	    t->dtype != DT_I32 || t->rank != 2 ||
	    t->dim[0] != (uint64_t)m->src_vocab ||
	    f->dim[0] > (uint64_t)m->tgt_vocab ||
	    t->dim[1] > (uint64_t)m->tgt_vocab) {
		err_set("%s: the shortlist is not shortlist.frequent, i32 "
			"[N], with shortlist.translations, i32 [%d, K] "
			"(N, K <= %d)", path, m->src_vocab, m->tgt_vocab);
		return -1;
	}
	if (tsr_map_verify(map, f) < 0 || tsr_map_verify(map, t) < 0 ||
	    shortlist_table_set(m, f->data, (int)f->dim[0], t->data,
				(int)t->dim[1]) < 0) {
		err_prefix("%s", path);
		return -1;
	}
	return 0;
}

/* The generator's state from optim.rng, or a fresh one from the seed. */
static int load_rng(struct model *m, struct tsr_map *map, const char *path)
{
	const struct tensor *t = frame_find(&map->f, "optim.rng");
	long seed;

	if (!t) {
		if (config_int(&m->cfg, "seed", &seed) < 0)
			return -1;
		rng_seed(&m->rng, (uint64_t)seed);
		return 0;
	}
	if (t->dtype != DT_I64 || t->rank != 1 || t->dim[0] != 4) {
		err_set("%s: optim.rng is not i64 [4]", path);
		return -1;
	}
	if (tsr_map_verify(map, t) < 0)
		return -1;
	memcpy(m->rng.s, t->data, sizeof m->rng.s);
	return 0;
}

struct model *model_load(const char *path, int mode, struct tsr_map **mapp)
{
	struct tsr_map *map;
	struct model *m;
	char *text = NULL;
	const char *arch;
	size_t len;
	int i;

	if (mapp)
		*mapp = NULL;
	if (mode == MODEL_LOAD_MAPPED && mapp) {
		err_set("%s: a mapped model keeps its map (m->map)", path);
		return NULL;
	}
	/* lazily: only the records used are read and verified */
	if (!(map = tsr_map_open_lazy(path)))
		return NULL;
	m = calloc(1, sizeof *m);
	if (!m) {
		err_set("out of memory");
		goto fail;
	}
	text = load_text(map, "model.config", &len, path);
	if (!text || config_parse(&m->cfg, text, len, path) < 0)
		goto fail;
	arch = config_get(&m->cfg, "arch");
	if (!arch) {
		err_set("%s: model.config has no arch key", path);
		goto fail;
	}
	m->arch = arch_find(arch);
	if (!m->arch) {
		err_prefix("%s", path);
		goto fail;
	}
	m->vocab_src = load_text(map, "vocab.src", &m->vocab_src_len, path);
	m->vocab_tgt = m->vocab_src ?
		load_text(map, "vocab.tgt", &m->vocab_tgt_len, path) : NULL;
	if (!m->vocab_tgt)
		goto fail;
	for (i = 0; i < map->f.n; i++)
		m->param_budget += map->f.rec[i].nbytes;
	if (model_declare(m) < 0) {
		err_prefix("%s", path);
		goto fail;
	}
	if (load_params(m, map, mode, path) < 0 ||
	    load_shortlist(m, map, path) < 0 ||
	    load_rng(m, map, path) < 0)
		goto fail;
	/* the caller reads the rest (the optimiser's state) */
	for (i = 0; mapp && i < map->f.n; i++)
		if (tsr_map_verify(map, &map->f.rec[i]) < 0)
			goto fail;
	free(text);
	if (mode == MODEL_LOAD_MAPPED)
		m->map = map;
	else if (mapp)
		*mapp = map;
	else
		tsr_map_close(map);
	return m;
fail:
	free(text);
	model_free(m);
	tsr_map_close(map);
	return NULL;
}

static void text_tensor(struct tensor *t, const char *name, const char *s,
			size_t len)
{
	memset(t, 0, sizeof *t);
	strcpy(t->name, name);
	t->dtype = DT_U8;
	t->rank = 1;
	t->dim[0] = len;
	t->data = (void *)s;
	t->nbytes = len;
}

/* An i32 [d0] (d1 0) or [d0, d1] record of ids, not copied. */
static void ids_tensor(struct tensor *t, const char *name,
		       const int32_t *ids, int d0, int d1)
{
	memset(t, 0, sizeof *t);
	strcpy(t->name, name);
	t->dtype = DT_I32;
	t->rank = d1 ? 2 : 1;
	t->dim[0] = d0;
	t->dim[1] = d1;
	t->data = (void *)ids;
	t->nbytes = sizeof(int32_t) * d0 * (d1 ? (size_t)d1 : 1);
}

static int all_finite(const float *x, size_t n)
{
	size_t i;
	float acc = 0;

	/* x * 0 is NaN exactly for NaN and infinities */
	for (i = 0; i < n; i++)
		acc += x[i] * 0.0f;
	return acc == 0;
}

/*
 * Parameter p as a record of dtype dt; *buf (reallocated as needed) holds
 * the converted values of f16 and bf16.  Refuses a value that is not
 * finite, or that overflows the narrower type.
 */
static int param_tensor(struct tensor *t, const struct param *p, int dt,
			uint16_t **buf, const char *path)
{
	uint16_t *h;
	size_t i;

	memset(t, 0, sizeof *t);
	strcpy(t->name, p->name);
	t->dtype = dt;
	t->rank = p->rank;
	t->dim[0] = p->dim[0];
	t->dim[1] = p->dim[1];
	if (!all_finite(p->w, p->n))
		goto not_finite;
	if (dt == DT_F32) {
		t->data = p->w;
		t->nbytes = p->n * sizeof(float);
		return 0;
	}
	if (!(h = realloc(*buf, p->n * sizeof *h))) {
		err_set("out of memory");
		return -1;
	}
	*buf = h;
	for (i = 0; i < p->n; i++) {
		h[i] = dt == DT_F16 ? f32_to_f16(p->w[i]) :
				      f32_to_bf16(p->w[i]);
		if (isinf(dt == DT_F16 ? f16_to_f32(h[i]) :
					 bf16_to_f32(h[i]))) {
			err_set("%s: not saved: parameter '%s' holds %g, "
				"beyond the range of %s", path, p->name,
				p->w[i], dtype_name(dt));
			return -1;
		}
	}
	t->data = h;
	t->nbytes = p->n * sizeof *h;
	return 0;
not_finite:
	err_set("%s: not saved: parameter '%s' holds a value that is not "
		"finite", path, p->name);
	return -1;
}

/*
 * Parameter p quantised per row into *buf (reallocated as needed): t, i8
 * [out, in], and ts, NAME.scale f32 [out].  Refuses a value that is not
 * finite.
 */
static int param_int8(struct tensor *t, struct tensor *ts,
		      const struct param *p, int8_t **buf, const char *path)
{
	size_t qb = (p->n + 3) / 4 * 4;
	int8_t *q;

	if (!all_finite(p->w, p->n)) {
		err_set("%s: not saved: parameter '%s' holds a value that is "
			"not finite", path, p->name);
		return -1;
	}
	if (!(q = realloc(*buf, qb + sizeof(float) * p->dim[0]))) {
		err_set("out of memory");
		return -1;
	}
	*buf = q;
	quant_rows_i8(q, (float *)(q + qb), p->w, p->dim[0], p->dim[1],
		      p->dim[1]);
	memset(t, 0, sizeof *t);
	strcpy(t->name, p->name);
	t->dtype = DT_I8;
	t->rank = 2;
	t->dim[0] = p->dim[0];
	t->dim[1] = p->dim[1];
	t->data = q;
	t->nbytes = p->n;
	memset(ts, 0, sizeof *ts);
	snprintf(ts->name, sizeof ts->name, "%s.scale", p->name);
	ts->dtype = DT_F32;
	ts->rank = 1;
	ts->dim[0] = p->dim[0];
	ts->data = q + qb;
	ts->nbytes = sizeof(float) * p->dim[0];
	return 0;
}

/*
 * Writes config, vocabularies and parameters (as dtype dt; with DT_I8,
 * the int8 ones so and the rest f32) atomically; with f32, also the
 * generator's state and the extra records.
 */
static int write_model(const struct model *m, const char *path, int dt,
		       const struct tensor *extra, int nextra)
{
	struct tsr_writer *w = NULL;
	struct tensor t, ts;
	uint16_t *buf = NULL;
	int8_t *qbuf = NULL;
	char *cfg;
	size_t len;
	int training = dt == DT_F32;
	int i, n = 0, total = 3 + m->nparam + (training ? 1 + nextra : 0);

	for (i = 0; dt == DT_I8 && i < m->nparam; i++)
		total += model_param_int8(&m->param[i]);	/* scales */
	total += m->sl.freq ? 2 : 0;

	cfg = config_format(&m->cfg, &len);
	if (!cfg)
		return -1;
	w = tsr_writer_atomic(path, 0);
	if (!w)
		goto fail;
#define PUT(tp) do { if (tsr_write(w, (tp), 0, ++n == total) < 0) \
		goto fail; } while (0)
	text_tensor(&t, "model.config", cfg, len);
	PUT(&t);
	text_tensor(&t, "vocab.src", m->vocab_src, m->vocab_src_len);
	PUT(&t);
	text_tensor(&t, "vocab.tgt", m->vocab_tgt, m->vocab_tgt_len);
	PUT(&t);
	for (i = 0; i < m->nparam; i++) {
		const struct param *p = &m->param[i];

		if (dt == DT_I8 && model_param_int8(p)) {
			if (param_int8(&t, &ts, p, &qbuf, path) < 0)
				goto fail;
			PUT(&t);
			PUT(&ts);
			continue;
		}
		if (param_tensor(&t, p, dt == DT_I8 ? DT_F32 : dt, &buf,
				 path) < 0)
			goto fail;
		PUT(&t);
	}
	if (m->sl.freq) {	/* kept by training and export alike */
		ids_tensor(&t, "shortlist.frequent", m->sl.freq,
			   m->sl.nfreq, 0);
		PUT(&t);
		ids_tensor(&t, "shortlist.translations", m->sl.trans,
			   m->src_vocab, m->sl.k);
		PUT(&t);
	}
	if (training) {
		memset(&t, 0, sizeof t);
		strcpy(t.name, "optim.rng");
		t.dtype = DT_I64;
		t.rank = 1;
		t.dim[0] = 4;
		t.data = (void *)m->rng.s;
		t.nbytes = sizeof m->rng.s;
		PUT(&t);
		for (i = 0; i < nextra; i++)
			PUT(&extra[i]);
	}
#undef PUT
	free(cfg);
	free(buf);
	free(qbuf);
	return tsr_writer_commit(w);
fail:
	free(cfg);
	free(buf);
	free(qbuf);
	if (w)
		tsr_writer_abort(w);
	return -1;
}

int model_save(const struct model *m, const char *path,
	       const struct tensor *extra, int nextra)
{
	return write_model(m, path, DT_F32, extra, nextra);
}

int model_save_shortlist(const struct model *m, const char *path)
{
	struct tsr_map *map = tsr_map_open(path);	/* all checked */
	struct tsr_writer *w = NULL;
	struct tensor t;
	int i;

	if (!map)
		return -1;
	if (!(w = tsr_writer_atomic(path, 0)))
		goto fail;
	for (i = 0; i < map->f.n; i++)
		if (strncmp(map->f.rec[i].name, "shortlist.", 10) != 0 &&
		    tsr_write(w, &map->f.rec[i], 0, 0) < 0)
			goto fail;
	ids_tensor(&t, "shortlist.frequent", m->sl.freq, m->sl.nfreq, 0);
	if (tsr_write(w, &t, 0, 0) < 0)
		goto fail;
	ids_tensor(&t, "shortlist.translations", m->sl.trans, m->src_vocab,
		   m->sl.k);
	if (tsr_write(w, &t, 0, 1) < 0)
		goto fail;
	tsr_map_close(map);
	return tsr_writer_commit(w);
fail:
	if (w)
		tsr_writer_abort(w);
	tsr_map_close(map);
	return -1;
}

int model_export(const struct model *m, const char *path, int dtype)
{
	if (dtype != DT_F16 && dtype != DT_BF16 && dtype != DT_I8) {
		err_set("%s: a model is exported as f16, bf16 or i8, not %s",
			path, dtype_name(dtype));
		return -1;
	}
	return write_model(m, path, dtype, NULL, 0);
}

int model_check_ids(const struct frame *f, const char *name, int vocab,
		    const char *stage)
{
	const struct tensor *t = frame_need(f, name, DT_I32, 1, stage);
	const int32_t *id;
	uint64_t i;

	if (!t)
		return -1;
	if (t->dim[0] == 0) {
		err_set("frame %llu: record '%s' is empty (it ends with "
			"</s>)", (unsigned long long)f->number, name);
		return -1;
	}
	id = t->data;
	for (i = 0; i < t->dim[0]; i++)
		if (id[i] < 0 || id[i] >= vocab) {
			err_set("frame %llu: record '%s' holds id %d at "
				"position %llu, outside the model's vocabulary "
				"of %d", (unsigned long long)f->number, name,
				id[i], (unsigned long long)i, vocab);
			return -1;
		}
	return 0;
}

int model_size_key(const struct model *m, const char *key, int *out)
{
	long v, max = MODEL_SIZE_MAX;
	int i;

	for (i = 0; i < NSETTABLE; i++)
		if (strcmp(settable[i].name, key) == 0)
			max = (long)settable[i].hi;
	if (config_int(&m->cfg, key, &v) < 0)
		return -1;
	if (v < 1 || v > max) {
		err_set("config: %s=%ld is out of range (1 .. %ld)", key, v,
			max);
		return -1;
	}
	*out = (int)v;
	return 0;
}

void *model_scratch(struct model *m, size_t bytes)
{
	if (bytes > m->scratch_size) {
		/* a multiple of the alignment, as aligned_alloc wants */
		size_t size = bytes < SIZE_MAX - 63 ? (bytes + 63) / 64 * 64 : 0;
		free(m->scratch);
		m->scratch_size = 0;
		if (!size || !(m->scratch = aligned_alloc(64, size))) {
			m->scratch = NULL;
			err_set("out of memory (%zu bytes of scratch)", bytes);
			return NULL;
		}
		m->scratch_size = size;
	}
	return m->scratch;
}

void model_free(struct model *m)
{
	if (!m)
		return;
	for (int i = 0; m->i8packs && i < m->nparam; i++) {
		if (m->param[i].q)	/* (a no-op where not registered) */
			linear_int8_remove(m->param[i].w);
		wpack_free(&m->i8packs[i]);
	}
	free(m->i8packs);
	free(m->scratch);
	config_free(&m->cfg);
	free(m->vocab_src);
	free(m->vocab_tgt);
	free(m->sl.freq);
	free(m->sl.trans);
	free(m->param);
	free(m->param_slot);
	free(m->w);
	free(m->g);
	free(m->qbuf);
	free(m->net);
	tsr_map_close(m->map);
	free(m);
}
