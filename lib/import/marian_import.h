/*
 * marian_import.h: a Marian Transformer as an attn model (doc/MODELS.md,
 * Transformer: Marian's variants; man train-step, --import marian).
 */
#ifndef ATTN_MARIAN_IMPORT_H
#define ATTN_MARIAN_IMPORT_H

#include <stddef.h>
#include "models/model.h"

struct marian_import_in {
	const void *model;		/* the .npz or .bin file's bytes */
	size_t model_len;
	const void *vsrc, *vtgt;	/* the vocabularies' bytes: .spm, or
					   Marian's vocab.yml */
	size_t vsrc_len, vtgt_len;	/* (vtgt may be vsrc) */
	/* For a vocab.yml (OPUS-MT's: ids of a joint vocabulary), the
	 * SentencePiece models that cut each side into its pieces (stgt
	 * may be ssrc), or NULL: the model then takes ids only. */
	const void *ssrc, *stgt;
	size_t ssrc_len, stgt_len;
	const char *decoder;		/* decoder.yml's text, or NULL */
	size_t decoder_len;
	/* the files' names, for messages (NULL: a side's name) */
	const char *vsrc_name, *vtgt_name, *decoder_name;
};

/*
 * The attn Transformer that computes what the Marian model does: its
 * special:model.yml read (a type or setting attn does not implement is
 * refused, naming the key and its value), every parameter mapped to
 * attn's name and shape (Marian's matrices [in, out] transposed to
 * attn's [out, in]; float16 ones widened), and every array of the file
 * used (one left over is refused by name: it would be a feature
 * silently dropped).  Special ids from the vocabularies (</s>, the
 * unknown piece; bos_id -1: Marian's zero start vector; pad_id
 * = eos_id), the vocabularies kept as they are (model_set_vocab), and
 * a vocab.yml with the .spm that segments it kept as text/vocab.h's
 * third kind (vocab_map_make), so that tokenize cuts text with the .spm
 * and gives the yml's ids;
 * decoder.yml's beam-size, normalize and max-length-factor as the
 * config's dec_beam_size, dec_normalize and dec_max_length_factor.
 * NULL with err_msg() set otherwise.
 */
struct model *marian_import(const struct marian_import_in *in);

#endif
