/*
 * vocab.h: the programs' one way to load a vocabulary (text/bpe.h), from
 * a file (what tokenize --learn writes) or from a model file's vocab.src
 * or vocab.tgt.  An error ends the program (exit 1) with a message naming
 * the file (and the record).
 */
#ifndef ATTN_VOCAB_H
#define ATTN_VOCAB_H

struct bpe;
struct tensor;

/* The vocabulary in the file at path; with text, its text too (NUL-
 * terminated, no NUL inside; the caller frees it). */
struct bpe *vocab_file(const char *path, char **text);

/*
 * Side target (0: vocab.src, 1: vocab.tgt) of the model file at path (the
 * same path at every call), loaded on first use and kept.  The model is
 * mapped lazily: only the record's checksum is verified, not the
 * parameters'.
 */
struct bpe *vocab_model(const char *path, int target);
/* Its record (u8 text, checksum verified), kept while the program runs. */
const struct tensor *vocab_model_record(const char *path, int target);

#endif
