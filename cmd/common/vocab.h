/*
 * vocab.h: the programs' one way to load a vocabulary (text/vocab.h:
 * attn-bpe text or a SentencePiece model), from a file (what tokenize
 * --learn or spm_train writes) or from a model file's vocab.src or
 * vocab.tgt.  An error ends the program (exit 1) with a message naming
 * the file (and the record).
 */
#ifndef ATTN_CMD_VOCAB_H
#define ATTN_CMD_VOCAB_H

#include <stddef.h>

struct vocab;
struct tensor;

/* The largest vocabulary file read (64 MiB: a SentencePiece model of
 * a million pieces is about 20 MB, attn-bpe text of a million units
 * less); a larger file, or a pipe or device that gives more, is refused,
 * so that -v /dev/zero does not read until memory runs out. */
#define VOCAB_FILE_MAX (64 << 20)

/* The vocabulary in the file at path (at most VOCAB_FILE_MAX bytes);
 * with bytes, the file's bytes too (*len of them; the caller frees
 * them). */
struct vocab *vocab_file(const char *path, char **bytes, size_t *len);

/*
 * Side target (0: vocab.src, 1: vocab.tgt) of the model file at path (the
 * same path at every call), loaded on first use and kept.  The model is
 * mapped lazily: only the record's checksum is verified, not the
 * parameters'.
 */
struct vocab *vocab_model(const char *path, int target);
/* Its record (u8 bytes, checksum verified), kept while the program runs. */
const struct tensor *vocab_model_record(const char *path, int target);

#endif
