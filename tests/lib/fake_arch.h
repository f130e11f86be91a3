/*
 * fake_arch.h: "fake", a tiny trainable architecture for the tests of the
 * architecture-neutral code (models, optimisers, search, training).  Target
 * step i reads source position min(i, S-1) and the previous token:
 *
 *	h_i = src.emb[x_min(i, S-1)] + tgt.emb[y_{i-1}]        (dim)
 *	p(y_i) = softmax(out.W h_i + out.b)
 *
 * so it can learn to copy; its attention is the one-hot of that source
 * position.  Config keys: dim, and poison (a target id that makes the
 * loss of its batch NaN, for the tests of skipping).  Records: encode writes enc.out = src.emb
 * rows, attend att.keys = enc.out.
 */
#ifndef ATTN_FAKE_ARCH_H
#define ATTN_FAKE_ARCH_H

#include "models/model.h"

extern const struct arch arch_fake;
/* Registers arch_fake with arch_find (once). */
void fake_arch_register(void);

#endif
