/*
 * model_parts.h: what the files of a model (model.c, model_keys.c,
 * params.c, model_load.c) share and no one else calls: a new model's
 * config, and its parameters declared and placed.
 */
#ifndef ATTN_MODEL_PARTS_H
#define ATTN_MODEL_PARTS_H

#include "model.h"

/* c = arch=a's name, then the training keys' defaults, then a's. */
int model_config_defaults(struct config *c, const struct arch *a);

/* Reads the vocabulary sizes of m's config and has m's architecture
 * declare its parameters (model_add_param).  0, or -1 (err_msg()). */
int model_declare(struct model *m);

/*
 * Allocates w (and g, when training) and binds the parameters.  A
 * parameter i with in[i] set (in may be NULL) is used where it lies, in a
 * mapped file, and takes no room in w.  0, or -1 (err_msg()).
 */
int model_place(struct model *m, int training, float *const *in);

/* 1 when every one of the n floats at x is finite (no NaN, no Inf). */
int floats_finite(const float *x, size_t n);

/* 1 when a record of this name is an annex (model_annex_prefixes). */
int model_is_annex(const char *name);
/* Keeps a copy of record t among m's annexes.  0, or -1 (err_msg()). */
int model_annex_add(struct model *m, const struct tensor *t);
void model_annex_free(struct model *m);
/*
 * For a model imported from Marian's intgemm8 (config marian_int8,
 * annex marian.NAME: import/marian_int8.h), p's int8 pack w made to
 * compute Marian's product (kernels/marian_i8.h); nothing for any other
 * model or parameter.  0, or -1 (err_msg()).
 */
struct wpack;
int model_marian_pack(const struct model *m, const struct param *p,
		      struct wpack *w);
/* 1 when m is a Marian int8 import decoded with --gemm-precision float32
 * (Marian's default; import/marian_import.c): the products by its
 * intgemm8 matrices are int8 (signed, multipliers per call), those by a
 * float one (a tied output layer) float, where the other precisions
 * quantise it too (src/graph/expression_operators.cpp dot, affine). */
int model_marian_float_out(const struct model *m);
/* For a Marian int8 import whose tied output layer Marian quantises from
 * its floats (annex marian.tgt.emb; not float32's, which keeps them),
 * that multiplier: 127 / max |w| over tgt.emb (m->marian_out_qb once
 * known); 0 for any other model. */
float model_marian_out_qb(const struct model *m);
/* The same with B's multiplier qb where p's annex has none (qb 0: a tied
 * output, whose rows the caller quantised with qb, 127 / max |w| of all
 * of p). */
int model_marian_pack_qb(const struct model *m, const struct param *p,
			 struct wpack *w, float qb);

#endif
