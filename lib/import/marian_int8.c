/*
 * marian_int8.c: a Marian intgemm8 model's matrices as attn's int8
 * parameters (marian_int8.h).
 *
 * Which of Marian's items are int8 (marian-conv -g intgemm8,
 * src/tensors/cpu/expression_graph_packable.h l. 190-191): those whose
 * name's first "_W" is its last two or three characters (every
 * encoder_l*_self_W{q,k,v,o}, _ffn_W1, _W2, decoder_l*_context_W*,
 * _rnn_W, _rnn_Wf, decoder_ff_logit_out_W) and every name holding
 * "Wemb" (the embeddings, and Wemb_QuantMultA, an alpha, quantised as a
 * [1, 1] matrix: 127 and 127 / alpha); biases, layer norms and the other
 * alphas stay float32.  attn keeps the embeddings as floats, as Marian
 * does when it loads them (src/common/binary.cpp l. 70-78,
 * integer_common.h unquantizeWemb: q * (1 / qm)); the products'
 * matrices stay int8.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/errmsg.h"
#include "marian_int8.h"
#include "models/model_parts.h"

/* Bytes of p's int8 values (4-aligned) and row scales in m->qbuf. */
static size_t qbytes(const struct param *p)
{
	return model_param_int8(p) ?
		(p->n + 3) / 4 * 4 + sizeof(float) * (size_t)p->dim[0] : 0;
}

int marian_i8_begin(struct model *m, const struct marian_items *mi)
{
	size_t bytes = 0;
	int i;

	for (i = 0; i < mi->n; i++)
		if (mi->it[i].dtype == MARIAN_INTGEMM8)
			break;
	if (i == mi->n)
		return 0;
	for (i = 0; i < m->nparam; i++)
		bytes += qbytes(&m->param[i]);
	if (!(m->qbuf = malloc(bytes ? bytes : 1))) {
		err_set("out of memory for the int8 parameters");
		return -1;
	}
	m->int8 = 1;
	return 0;
}

/* An intgemm8 item's value k as Marian loads a "Wemb" item. */
static float dequant(const struct marian_item *it, uint64_t k)
{
	return (float)(int8_t)it->data[k] * (1 / it->intgemm_mult);
}

int marian_i8_alpha(struct marian_items *mi, const char *mn,
		    char *used, float *qa)
{
	char name[160];
	const struct marian_item *it;

	if (qa)
		*qa = 0;
	snprintf(name, sizeof name, "%s_QuantMultA", mn);
	if (!(it = marian_item(mi, name)))
		return 0;
	if (it->count != 1 || it->rank > 2 ||
	    (it->dtype != NPY_F32 && it->dtype != MARIAN_INTGEMM8)) {
		err_set("%s: one float32 (an activation's multiplier) "
			"expected", name);
		return -1;
	}
	if (!qa) {		/* its header alone */
		used[it - mi->it] = 1;
		return 0;
	}
	if (marian_item_load(mi, it) < 0)
		return -1;
	if (it->dtype == NPY_F32)
		memcpy(qa, it->data, 4);
	else
		*qa = dequant(it, 0);
	if (!(*qa > 0 && *qa < 1e30f)) {
		err_set("%s: the multiplier %g is not a positive finite "
			"number", name, *qa);
		return -1;
	}
	used[it - mi->it] = 1;
	return 0;
}

/* The annex marian.NAME = {qb, qa}. */
static int put_mults(struct model *m, const char *name, float qb, float qa)
{
	float v[2] = { qb, qa };
	struct tensor t;

	memset(&t, 0, sizeof t);
	snprintf(t.name, sizeof t.name, "marian.%s", name);
	t.dtype = DT_F32;
	t.rank = 1;
	t.dim[0] = 2;
	t.data = v;
	t.nbytes = sizeof v;
	return model_annex_add(m, &t);
}

int marian_i8_fits(const struct param *p, const struct marian_item *it,
		   int tr)
{
	int i8 = model_param_int8(p) && tr;
	uint64_t r = (uint64_t)p->dim[0], c = (uint64_t)p->dim[1];

	if (p->rank != 2 || it->rank != 2 ||
	    (!i8 && (tr || !strstr(it->name, "Wemb")))) {
		err_set("%s: an intgemm8 item for %s, which attn keeps as "
			"floats", it->name, p->name);
		return -1;
	}
	if (it->shape[0] != (tr ? c : r) || it->shape[1] != (tr ? r : c)) {
		err_set("%s: shape [%llu, %llu] expected for %s", it->name,
			(unsigned long long)(tr ? c : r),
			(unsigned long long)(tr ? r : c), p->name);
		return -1;
	}
	return 0;
}

int marian_i8_param(struct model *m, struct param *p,
		    const struct marian_item *it, int tr, float qa)
{
	int i8 = model_param_int8(p) && tr;
	uint64_t r = (uint64_t)p->dim[0], k;

	if (marian_i8_fits(p, it, tr) < 0)
		return -1;
	if (!m->qbuf) {
		err_set("%s: an intgemm8 item, and no room for int8 "
			"parameters (marian_i8_begin)", it->name);
		return -1;
	}
	if (!i8) {	/* an embedding: Marian's floats; a tied output's
			   product quantises them when loaded */
		for (k = 0; k < p->n; k++)
			p->w[k] = dequant(it, k);
		return !strcmp(p->name, "tgt.emb") && !model_param(m, "out.W") ?
			put_mults(m, p->name, 0, qa) : 0;
	}
	size_t off = 0;
	for (struct param *o = m->param; o < p; o++)
		off += qbytes(o);
	int8_t *q = (int8_t *)m->qbuf + off;
	float *qs = (float *)(q + (p->n + 3) / 4 * 4);
	float s = 1 / it->intgemm_mult;

	/* stored [out, in]: Marian transposed before quantising */
	memcpy(q, it->data, p->n);
	for (k = 0; k < r; k++)
		qs[k] = s;
	for (k = 0; k < p->n; k++)
		p->w[k] = q[k] * s;
	p->q = q;
	p->qs = qs;
	return put_mults(m, p->name, it->intgemm_mult, qa);
}

int marian_i8_end(struct model *m, const struct marian_items *mi,
		  char *used)
{
	const struct marian_item *it = marian_item(mi, "none_QuantMultA");
	int alphas = 0;

	if (it)
		used[it - mi->it] = 1;
	if (!m->int8)
		return 0;
	for (int i = 0; i < m->nannex; i++)
		if (!strncmp(m->annex[i].name, "marian.", 7))
			alphas += ((const float *)m->annex[i].data)[1] > 0;
	/* Firefox's setting when the model has its alphas */
	return config_set(&m->cfg, "marian_int8", alphas ? "int8shiftAlphaAll"
			  : "int8shiftAll");
}
