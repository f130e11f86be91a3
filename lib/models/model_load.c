/*
 * model_load.c: reading a model file: its config, vocabularies and
 * parameters (f32 in place or copied, f16/bf16 converted, int8 kept with
 * their scales); see model.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/errmsg.h"
#include "kernels/gemm_packed.h"
#include "kernels/kernels.h"
#include "kernels/marian_i8.h"
#include "model_parts.h"
#include "nn/layers.h"

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
				"(train the f32 model it was exported from, "
				"or its f32 copy: the average of it alone)",
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
		    model_is_annex(name) ||
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
		/* row by row, no division: the loop vectorises */
		for (size_t r = 0, c = p->n / p->dim[0]; r < (size_t)p->dim[0]; r++)
			for (size_t k = r * c; k < (r + 1) * c; k++)
				p->w[k] = q[k] * qs[r];
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
				  p->dim[1]) < 0 ||
		    model_marian_pack(m, p, &m->i8packs[i]) < 0)
			return -1;
		if (linear_int8_add(p->w, &m->i8packs[i]) < 0)
			return -1;
	}
	/* over its 8 M floats (a 32,000-piece student's), once, not for
	 * every batch's shortlist: the multiplier and the values */
	if ((m->marian_out_qb = model_marian_out_qb(m)) > 0) {
		const struct param *e = model_param(m, "tgt.emb");

		if (!(m->marian_out_q = malloc(e->n))) {
			err_set("out of memory for the output layer's int8");
			return -1;
		}
		for (size_t k = 0; k < e->n; k++)
			m->marian_out_q[k] = marian_quant(e->w[k] *
							  m->marian_out_qb);
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
	if (load_int8(m, rec, scale) < 0)
		goto out;
	/* every value, as the checksums are, once: a NaN or an infinity
	 * (an int8 scale's too, in its dequantised values) would come out
	 * of the first stage as states that the next one refuses */
	for (i = 0; i < m->nparam; i++)
		if (!floats_finite(m->param[i].w, m->param[i].n)) {
			err_set("%s: parameter '%s' holds a value that is not "
				"finite", path, m->param[i].name);
			goto out;
		}
	rc = 0;
out:
	free(rec);
	free(scale);
	free(in);
	return rc;
}

/* The annexes (model_is_annex), copied with their checksums verified. */
static int load_annexes(struct model *m, struct tsr_map *map)
{
	for (int i = 0; i < map->f.n; i++)
		if (model_is_annex(map->f.rec[i].name) &&
		    (tsr_map_verify(map, &map->f.rec[i]) < 0 ||
		     model_annex_add(m, &map->f.rec[i]) < 0))
			return -1;
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
	return model_load_set(path, mode, mapp, NULL, 0);
}

struct model *model_load_set(const char *path, int mode,
			     struct tsr_map **mapp, const char *const *set,
			     int nset)
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
	for (i = 0; i < nset; i++)
		if (model_check_setting(m->arch, set[i]) < 0 ||
		    config_set_kv(&m->cfg, set[i]) < 0) {
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
	/* the annexes first: an import's int8 packs read theirs */
	if (load_annexes(m, map) < 0 ||
	    load_params(m, map, mode, path) < 0 ||
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
