/*
 * model_keys.c: a model's config keys: the defaults of a new model, the
 * keys a user may set and their ranges, and the sizes read by them; see
 * model.h.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/errmsg.h"
#include "model_parts.h"

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
	{ "tie", 'w', 0, 0, 0, "none|tgt|all|src", NULL },
	{ "ln_eps", 'r', 0, 1, 'b', NULL, NULL },
	{ "pos", 'w', 0, 0, 0, "sinusoidal|rope|learned|marian",
	  "transformer" },
	{ "ffn_act", 'w', 0, 0, 0, "relu|swish", "transformer" },
	{ "dec_self", 'w', 0, 0, 0, "attention|ssru", "transformer" },
	{ "pre_kv", 'w', 0, 0, 0, "norm|input", "transformer" },
	{ "max_pos", 'i', 1, 1 << 20, 0, NULL, "transformer" },
	/* guided alignment (doc/MODELS.md): off when absent */
	{ "guided_weight", 'r', 0, 1e6, 0, NULL, "transformer" },
	{ "guided_layer", 'i', 0, 1 << 10, 0, NULL, "transformer" },
	{ "guided_head", 'i', 0, 1 << 10, 0, NULL, "transformer" },
	{ "guided_shift", 'i', 0, 1, 0, NULL, "transformer" },
};

#define NSETTABLE (int)(sizeof settable / sizeof settable[0])

static int set_all(struct config *c, const char *const *kv)
{
	for (; kv && *kv; kv++)
		if (config_set_kv(c, *kv) < 0)
			return -1;
	return 0;
}

int model_config_defaults(struct config *c, const struct arch *a)
{
	return config_set(c, "arch", a->name) < 0 ||
	       set_all(c, train_defaults) < 0 ||
	       set_all(c, a->defaults) < 0 ? -1 : 0;
}

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
