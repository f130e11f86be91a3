/*
 * marian_names.h: attn's Transformer parameter names as Marian's (its
 * src/models/transformer.h), shared by the import (marian_import.c) and
 * the export (marian_export.c), so that the two directions cannot drift
 * apart.
 */
#ifndef ATTN_MARIAN_NAMES_H
#define ATTN_MARIAN_NAMES_H

#include <stddef.h>

/*
 * attn's parameter name a as Marian's, into mn [sz], for a model of
 * norm=pre (pre 1) or post, dec_self=ssru (ssru 1) or attention, and tie
 * as attn spells it (none, tgt, all, src); *tr 1 for a matrix that is
 * transposed between the two (Marian's are [in, out], attn's [out,
 * in]).  0, or -1 for a name this does not know (a bug: every parameter
 * of a Transformer has a Marian name).
 */
int marian_name(const char *a, int pre, int ssru, const char *tie, char *mn,
		size_t sz, int *tr);

#endif
