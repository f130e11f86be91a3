/*
 * params.c: a model's parameter table: named parameters declared by the
 * architecture, found by hashed name, and placed in one allocation (or
 * where they lie in a mapped file); see model.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/errmsg.h"
#include "kernels/gemm_packed.h"
#include "kernels/kernels.h"
#include "kernels/marian_i8.h"
#include "model_parts.h"

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

/* Marian's --gemm-precision, the config's marian_int8, as WPACK_MARIAN_*
 * flags (and *alpha 1 for an Alpha one); -1 when there is none.
 * (float32: the intgemm8 matrices' products int8, signed, as int8's.) */
static int marian_mode(const struct model *m, int *alpha)
{
	const char *g = config_get(&m->cfg, "marian_int8");

	if (!g)
		return -1;
	*alpha = strstr(g, "Alpha") != NULL;
	return (strstr(g, "shift") ? WPACK_MARIAN_SHIFT : 0) |
	       (strstr(g, "All") ? WPACK_MARIAN_SHIFT_ALL : 0);
}

int model_marian_float_out(const struct model *m)
{
	const char *g = config_get(&m->cfg, "marian_int8");

	return g && strcmp(g, "float32") == 0;
}

int model_marian_pack(const struct model *m, const struct param *p,
		      struct wpack *w)
{
	return model_marian_pack_qb(m, p, w, 0);
}

int model_marian_pack_qb(const struct model *m, const struct param *p,
			 struct wpack *w, float qb)
{
	char name[PARAM_NAME_MAX + 8];
	const struct tensor *t;
	const float *v;
	int alpha, mode = marian_mode(m, &alpha);

	snprintf(name, sizeof name, "marian.%s", p->name);
	if (mode < 0 || !(t = model_annex(m, name)))
		return 0;
	if (t->dtype != DT_F32 || t->rank != 1 || t->dim[0] != 2) {
		err_set("record '%s' is not f32 [2]", name);
		return -1;
	}
	v = t->data;
	/* qa 0 (no alpha in the file): 127 / max |x| per call */
	return wpack_marian(w, alpha ? v[1] : 0, v[0] > 0 ? v[0] : qb, mode);
}

float model_marian_out_qb(const struct model *m)
{
	const struct param *p = model_param(m, "tgt.emb");

	if (m->marian_out_qb > 0)
		return m->marian_out_qb;
	if (!p || p->q || !config_get(&m->cfg, "marian_int8") ||
	    model_marian_float_out(m) || !model_annex(m, "marian.tgt.emb"))
		return 0;
	return 127.0f / marian_max_abs(p->w, p->n);
}

/* The tied output layer of a Marian intgemm8 model (annex marian.NAME
 * with qb 0): Marian quantises the float embedding W [N, K] with one
 * multiplier, 127 / max |w| (intgemm_interface.h PrepareBNodeOp),
 * rounded as A's (marian_quant).  The values are those model_load
 * made once (m->marian_out_q); only a model not loaded so quantises
 * here. */
static int marian_float_pack(const struct model *m, const struct param *p,
			     struct wpack *w, const float *W, int N, int K)
{
	const int8_t *made = p == model_param(m, "tgt.emb") ?
			     m->marian_out_q : NULL;
	size_t n = (size_t)N * K, qb = made ? 0 : (n + 3) / 4 * 4;
	int8_t *own = malloc(qb + sizeof(float) * (N ? N : 1));
	const int8_t *q = made ? made : own;
	float qm = model_marian_out_qb(m);
	char name[PARAM_NAME_MAX + 8];
	const float *v;
	int alpha, mode = marian_mode(m, &alpha);

	snprintf(name, sizeof name, "marian.%s", p->name);
	v = model_annex(m, name)->data;
	if (!own) {
		err_set("out of memory for an int8 [%d, %d] matrix", N, K);
		return -1;
	}
	for (size_t k = 0; !made && k < n; k++)
		own[k] = marian_quant(W[k] * qm);
	for (int j = 0; j < N; j++)
		((float *)(own + qb))[j] = 1 / qm;
	if (wpack_init_i8(w, q, (float *)(own + qb), N, K) < 0) {
		free(own);
		return -1;
	}
	w->own = own;
	if (wpack_marian(w, alpha ? v[1] : 0, qm, mode) < 0) {
		wpack_free(w);
		return -1;
	}
	return 0;
}

int model_wpack(const struct model *m, struct wpack *w, const float *W,
		int N, int K, int pack)
{
	char name[PARAM_NAME_MAX + 8];

	for (int i = 0; pack == WPACK_I8 && i < m->nparam; i++) {
		const struct param *p = &m->param[i];
		if (p->w != W || p->dim[0] != N || p->dim[1] != K)
			continue;
		if (p->q) {
			if (wpack_init_i8(w, p->q, p->qs, N, K) < 0)
				return -1;
			if (model_marian_pack(m, p, w) < 0) {
				wpack_free(w);
				return -1;
			}
			return 0;
		}
		snprintf(name, sizeof name, "marian.%s", p->name);
		if (config_get(&m->cfg, "marian_int8") &&
		    model_annex(m, name))
			return model_marian_float_out(m) ?
			       wpack_init(w, W, N, K, WPACK_F32) :
			       marian_float_pack(m, p, w, W, N, K);
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

/*
 * The special units' ids from the config, each in [0, V) (bos_id also
 * -1); 0 1 2 3 for keys that are absent.  <s>, </s> and <unk> differ;
 * <pad> may be one of them (Marian pads with </s>: padding is known by
 * the lengths, never by its id).
 */
static int special_ids(struct model *m, int V)
{
	static const char *const key[] = { "pad_id", "bos_id", "eos_id",
					   "unk_id" };
	int *id[] = { &m->pad_id, &m->bos_id, &m->eos_id, &m->unk_id };
	long v;

	for (int i = 0; i < 4; i++) {
		*id[i] = i;
		if (!config_get(&m->cfg, key[i]))
			continue;
		if (config_int(&m->cfg, key[i], &v) < 0)
			return -1;
		if (v < (i == 1 ? -1 : 0) || v >= V) {
			err_set("config: %s=%ld is not a unit of a vocabulary "
				"of %d%s", key[i], v, V, i == 1 ?
				" (nor -1, a zero vector)" : "");
			return -1;
		}
		*id[i] = (int)v;
	}
	for (int i = 2; i < 4; i++)
		for (int j = 1; j < i; j++)
			if (*id[j] == *id[i]) {
				err_set("config: %s and %s are both %d",
					key[j], key[i], *id[i]);
				return -1;
			}
	return 0;
}

int floats_finite(const float *x, size_t n)
{
	/* x * 0 is NaN exactly for NaN and infinities, and one NaN makes
	 * its sum NaN in any order: eight sums apart, two vectors in
	 * registers (one sum was a chain of dependent adds, 4 cycles a
	 * value, 3% of a decode's time on its input's checks) */
	float a0 = 0, a1 = 0, a2 = 0, a3 = 0, a4 = 0, a5 = 0, a6 = 0, a7 = 0;
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		a0 += x[i] * 0.0f;
		a1 += x[i + 1] * 0.0f;
		a2 += x[i + 2] * 0.0f;
		a3 += x[i + 3] * 0.0f;
		a4 += x[i + 4] * 0.0f;
		a5 += x[i + 5] * 0.0f;
		a6 += x[i + 6] * 0.0f;
		a7 += x[i + 7] * 0.0f;
	}
	for (; i < n; i++)
		a0 += x[i] * 0.0f;
	return (a0 + a1) + (a2 + a3) + (a4 + a5) + (a6 + a7) == 0;
}

int model_declare(struct model *m)
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
	if (special_ids(m, sv < tv ? sv : tv) < 0)
		return -1;
	if (m->bos_id < 0 && !(m->arch->dec_caps & DEC_ZERO_BOS)) {
		err_set("config: bos_id=-1: the %s decoder starts from <s>, "
			"not from a zero vector", m->arch->name);
		return -1;
	}
	m->src_vocab = sv;
	m->tgt_vocab = tv;
	return m->arch->declare(m);
}

int model_place(struct model *m, int training, float *const *in)
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
