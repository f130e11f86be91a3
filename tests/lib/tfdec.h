/*
 * tfdec.h: what the tests of the Transformer's step decoder share
 * (test_transformer_dec_bf16.c, test_transformer_dec_kv16.c): a small
 * model (sizes off the kernels' widths) and the memory of TFDEC_NS random
 * sentences, as a Check fixture; their search; comparing hypotheses.
 */
#ifndef ATTN_TFDEC_H
#define ATTN_TFDEC_H

#include "models/model.h"
#include "run/search.h"

enum { TFDEC_NS = 12 };

/* The fixture's model and frames (tfdec_fp[i] = &tfdec_fr[i]), with
 * att.{l}.k and .v from attend; the model has 2 decoder layers. */
extern struct model *tfdec_m;
/* The decoder's options for tfdec_run (zeros after tfdec_setup). */
extern struct dec_opts tfdec_opts;
extern struct frame tfdec_fr[TFDEC_NS], *tfdec_fp[TFDEC_NS];
void tfdec_setup(void);
void tfdec_teardown(void);

/* The hypotheses of the TFDEC_NS sentences with beams of k, searched in
 * batches of b sentences, into res [TFDEC_NS]; tfdec_free frees them. */
void tfdec_run(int k, int b, struct search_result *res);
void tfdec_free(struct search_result *res);

/* 1 when a and b have the same ids and the same score, bit for bit. */
int tfdec_same(const struct hyp *a, const struct hyp *b);

#endif
