/*
 * model.c: a model's life: making a fresh one, and freeing it; see
 * model.h.  Its parts are elsewhere: the config's keys (model_keys.c),
 * the parameter table (params.c), reading and writing files
 * (model_load.c, model_save.c).
 */
#include <stdlib.h>
#include <string.h>
#include "base/errmsg.h"
#include "kernels/gemm_packed.h"
#include "model_parts.h"
#include "nn/layers.h"

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

struct model *model_declared(const char *arch, const char *const *settings,
			     int nsettings, const char *vocab_src,
			     const char *vocab_tgt)
{
	const struct arch *a = arch_find(arch);
	struct model *m;
	const char *name;
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
	if (model_config_defaults(&m->cfg, a) < 0)
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
	if (model_declare(m) < 0)
		goto fail;
	return m;
fail:
	model_free(m);
	return NULL;
}

int model_realize(struct model *m)
{
	long seed;

	if (model_place(m, 0, NULL) < 0 ||
	    config_int(&m->cfg, "seed", &seed) < 0)
		return -1;
	rng_seed(&m->rng, (uint64_t)seed);
	m->arch->init(m);
	return 0;
}

struct model *model_create(const char *arch, const char *const *settings,
			   int nsettings, const char *vocab_src,
			   const char *vocab_tgt)
{
	struct model *m = model_declared(arch, settings, nsettings, vocab_src,
					 vocab_tgt);

	if (m && model_realize(m) < 0) {
		model_free(m);
		return NULL;
	}
	return m;
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

int model_set_vocab(struct model *m, int target, const void *v, size_t len)
{
	char *d = malloc(len + 1);

	if (!d) {
		err_set("out of memory for a vocabulary of %zu bytes", len);
		return -1;
	}
	memcpy(d, v, len);
	d[len] = 0;
	free(target ? m->vocab_tgt : m->vocab_src);
	if (target) {
		m->vocab_tgt = d;
		m->vocab_tgt_len = len;
	} else {
		m->vocab_src = d;
		m->vocab_src_len = len;
	}
	return 0;
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
	free(m->marian_out_q);
	scratch_free(&m->scratch);
	config_free(&m->cfg);
	free(m->vocab_src);
	free(m->vocab_tgt);
	model_annex_free(m);
	free(m->param);
	free(m->param_slot);
	free(m->w);
	free(m->g);
	free(m->qbuf);
	free(m->net);
	tsr_map_close(m->map);
	free(m);
}
