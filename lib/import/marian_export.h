/*
 * marian_export.h: an attn Transformer as a Marian model (the inverse of
 * marian_import.h; man train-step, --export-marian).
 */
#ifndef ATTN_MARIAN_EXPORT_H
#define ATTN_MARIAN_EXPORT_H

#include "models/model.h"

/*
 * Writes m into the directory dir (made when absent) as native Marian
 * (marian-dev 1.9 and later) loads it:
 *
 *   model.npz    every parameter under Marian's name (marian_names.h) and
 *                in its shape (matrices [in, out], vectors [1, n]),
 *                float32, and special:model.yml, the settings Marian
 *                builds the same graph from;
 *   vocab.spm    the SentencePiece model, or source.spm and target.spm
 *                when the two sides differ;
 *   vocab.yml    (a vocabulary of ids over an .spm, text/vocab.h's third
 *                kind, as OPUS-MT's) the table, with the .spm that
 *                segments it; source.vocab.yml and target.vocab.yml
 *                when the sides' tables differ;
 *   decoder.yml  the model and the vocabularies (relative-paths), the
 *                model's dec_* settings as Marian's beam-size,
 *                normalize, max-length-factor and allow-unk.
 *
 * A model Marian cannot compute is refused, naming the setting: another
 * architecture, pos other than marian, bos_id other than -1, ln_eps other
 * than 1e-6, norm=pre without pre_kv=input, an int8 export, an attn-bpe
 * vocabulary, special ids that are not the vocabulary's </s> and <unk>,
 * a config key the export does not know.  The files are written all or
 * none (file_set.h): on failure none is left, nor a directory made for
 * them.  0, or -1 with err_msg() set.
 */
int marian_export(const struct model *m, const char *dir);

#endif
