/*
 * marian_int8.h: a Marian intgemm8 model's matrices as attn's int8
 * parameters (doc/MODELS.md, "Marian's int8"); marian_import.c's
 * fill_params calls these for each parameter.
 *
 * The int8 values are kept bit for bit (p->q; Marian's [out, in] order
 * is attn's), the row scales p->qs all 1 / qm (qm Marian's multiplier
 * of the whole matrix) and p->w = q qs; m->int8 is set, so that
 * model_save writes the model as an int8 export.  What Marian's
 * product needs beyond that goes with the model: the config key
 * marian_int8 (Marian's --gemm-precision that the decoding follows:
 * int8shiftAlphaAll when the file has its activations' multipliers,
 * int8shiftAll otherwise) and, for each int8 parameter NAME, the annex
 * marian.NAME, f32 [2]: qm and the alpha (NAME's A multiplier,
 * Marian's ..._QuantMultA; 0 when there is none); for a tied output
 * layer, marian.tgt.emb, {0, alpha}: the embedding is quantised as
 * Marian quantises it, from its floats, when the model is loaded.
 */
#ifndef ATTN_MARIAN_INT8_H
#define ATTN_MARIAN_INT8_H

#include "marian_items.h"
#include "models/model.h"

/* Room for the int8 parameters when mi holds an intgemm8 item. */
int marian_i8_begin(struct model *m, const struct marian_items *mi);
/*
 * The alpha of the product by Marian's matrix mn: item mn_QuantMultA
 * (float32 [1] or [1, 1], or intgemm8 [1, 1] as marian-conv makes
 * Wemb_QuantMultA), marked in used, loaded (marian_item_load) and read
 * into *qa; 0 when absent.  With qa NULL, its type and shape alone are
 * checked, and it is marked.
 */
int marian_i8_alpha(struct marian_items *mi, const char *mn,
		    char *used, float *qa);
/* 0 when the intgemm8 item it has the type and shape that parameter p
 * takes (tr: Marian's [in, out] matrix), -1 with err_msg() otherwise:
 * by its header, before anything is allocated. */
int marian_i8_fits(const struct param *p, const struct marian_item *it,
		   int tr);
/* The intgemm8 item it (loaded) into p (tr: Marian's [in, out] matrix),
 * with its alpha qa. */
int marian_i8_param(struct model *m, struct param *p,
		    const struct marian_item *it, int tr, float qa);
/* After every parameter: the config key; none_QuantMultA (the output's
 * alpha under a shortlist, a copy) marked in used. */
int marian_i8_end(struct model *m, const struct marian_items *mi,
		  char *used);

#endif
