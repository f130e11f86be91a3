/*
 * model_save.c: writing a model file atomically: the whole model for
 * training, or an export for translation (f16, bf16, or int8 matrices
 * with their row scales); see model.h.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/errmsg.h"
#include "base/f16.h"
#include "kernels/gemm_packed.h"
#include "model_parts.h"

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
	if (!floats_finite(p->w, p->n))
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

	if (!floats_finite(p->w, p->n)) {
		err_set("%s: not saved: parameter '%s' holds a value that is "
			"not finite", path, p->name);
		return -1;
	}
	if (!(q = realloc(*buf, qb + sizeof(float) * p->dim[0]))) {
		err_set("out of memory");
		return -1;
	}
	*buf = q;
	if (p->q) {	/* an int8 model's own (an import's: Marian's) */
		memcpy(q, p->q, p->n);
		memcpy(q + qb, p->qs, sizeof(float) * p->dim[0]);
	} else
		quant_rows_i8(q, (float *)(q + qb), p->w, p->dim[0],
			      p->dim[1], p->dim[1]);
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
 * the int8 ones so and the rest f32) atomically, then the extra
 * records; with f32, also the generator's state.
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
	int i, n = 0, total = 3 + m->nparam + (training ? 1 : 0) + nextra;

	for (i = 0; dt == DT_I8 && i < m->nparam; i++)
		total += model_param_int8(&m->param[i]);	/* scales */
	total += m->nannex;

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
	for (i = 0; i < m->nannex; i++)	/* kept by training and export */
		PUT(&m->annex[i]);
	if (training) {
		memset(&t, 0, sizeof t);
		strcpy(t.name, "optim.rng");
		t.dtype = DT_I64;
		t.rank = 1;
		t.dim[0] = 4;
		t.data = (void *)m->rng.s;
		t.nbytes = sizeof m->rng.s;
		PUT(&t);
	}
	for (i = 0; i < nextra; i++)
		PUT(&extra[i]);
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
	/* an int8 model (one imported from Marian's intgemm8) is saved as
	 * the int8 export it is: its matrices as they are */
	if (m->int8)
		return write_model(m, path, DT_I8, extra, nextra);
	return write_model(m, path, DT_F32, extra, nextra);
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
