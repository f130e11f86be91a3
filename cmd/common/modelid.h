/*
 * modelid.h: a model's identity in the streams made with it, so that a
 * stage refuses frames made with another model (tsr(5), "model.id").
 *
 * The record model.id, u8 text "vocab=V params=P model=FILE" in every
 * frame: V the hash of the two vocabularies (tokenize writes it, with
 * FILE the model or vocabulary file), P the hash of the architecture,
 * the vocabularies and every parameter's name, shape and values (the
 * first stage that uses the parameters adds it, FILE then the model).
 * Hashes are 16 hex digits (FNV-1a 64, the values through the crc32 of
 * zlib's polynomial, by crc32_fast of lib/stream/crc32.h).
 */
#ifndef ATTN_MODELID_H
#define ATTN_MODELID_H

#include <stdint.h>
#include "models/model.h"

#define MODEL_ID_FILE 200	/* bytes of the file name kept, at most */
#define MODEL_ID_TEXT (64 + MODEL_ID_FILE + 1)	/* the record's, and a NUL */

struct model_id {
	uint64_t vocab, params;
	int has_params;
	char file[MODEL_ID_FILE + 1];
};

/* The identity of vocabularies given as their texts, from file. */
void model_id_vocab(struct model_id *id, const char *src, size_t nsrc,
		    const char *tgt, size_t ntgt, const char *file);
/* The identity of a loaded model, parameters included, from file. */
void model_id_model(struct model_id *id, const struct model *m,
		    const char *file);

/* The record's text for id into text [MODEL_ID_TEXT]; its length. */
size_t model_id_text(const struct model_id *id, char *text);

/*
 * Checks f's model.id, if it has one, against id: a vocabulary that
 * differs, or parameters that differ where both have them, is an error
 * naming the frame and both files and hashes.  Then puts id's record in
 * f when f has none, or one without the parameters that id has (in the
 * old one's place).
 * Returns 0 or -1 (err_msg()).
 */
int model_id_frame(struct frame *f, const struct model_id *id);

#endif
