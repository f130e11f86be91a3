/*
 * spm.h: SentencePiece models (Kudo and Richardson 2018), read from the
 * protobuf file that spm_train writes (MODEL.model), encoding and
 * decoding as SentencePiece 0.1.97's spm_encode and spm_decode do: the
 * same ids, the same pieces, the same text (doc/sentencepiece.md).
 *
 * What a model holds and how it is used:
 *   - its pieces (id = position), each with a score and a type: normal,
 *     unknown (one, <unk>), control (<s>, </s>: never produced from
 *     text), user-defined (matched whole, before segmentation, never
 *     normalised), byte (<0x00>..<0xFF>, for byte fallback) or unused;
 *   - the normaliser: a precompiled charsmap (a darts-clone double-array
 *     trie of source strings whose values index NUL-terminated normalised
 *     strings), add_dummy_prefix, remove_extra_whitespaces and
 *     escape_whitespaces (a space becomes U+2581 "▁");
 *   - the model type: unigram (the best-scoring segmentation, Viterbi
 *     over the lattice of pieces; a character no piece covers is <unk>
 *     with the lowest score less 10), BPE (merges the adjacent pair that
 *     makes the piece of highest score, leftmost first), or word and char
 *     (whole words, single characters);
 *   - byte fallback: an unknown piece becomes the pieces of its bytes;
 *   - the special ids, found by the pieces the trainer spec names
 *     (unk_piece, bos_piece, eos_piece, pad_piece: by default <unk> <s>
 *     </s> <pad>), each -1 when the model has none: by default unk 0, bos
 *     1, eos 2 and no pad; Marian's models have eos 0 and unk 1.
 *
 * Errors set err_msg() and return -1 or NULL.  A struct spm keeps scratch
 * space for encoding: one serves one thread.
 */
#ifndef ATTN_SPM_H
#define ATTN_SPM_H

#include <stddef.h>
#include <stdint.h>
#include "bpe.h"        /* struct bpe_ids, struct bpe_text */

enum spm_special { SPM_UNK, SPM_BOS, SPM_EOS, SPM_PAD };

struct spm;

/*
 * The model in the len bytes at data (a serialized ModelProto; no NUL
 * terminator needed, NULs allowed).  NULL with a message naming what is
 * wrong and where (byte offset) on malformed input: a truncated varint, a
 * field past the end, a wrong wire type, no pieces, no unknown piece, an
 * empty or repeated piece, a broken charsmap, byte pieces without
 * byte_fallback, ...
 */
struct spm *spm_load(const void *data, size_t len);
void spm_free(struct spm *m);

int spm_size(const struct spm *m);      /* pieces, specials included */
/* The id of a special piece, or -1 if the model has none. */
int32_t spm_special(const struct spm *m, enum spm_special which);

/* Appends piece id as the model stores it (▁ for a space). */
int spm_piece_show(const struct spm *m, int32_t id, struct bpe_text *out);
/* The id of the piece whose text is s [len], or -1. */
int32_t spm_piece_find(const struct spm *m, const char *s, size_t len);

/*
 * Appends the ids of one line of len bytes (no newline, no </s>), as
 * spm_encode --output_format=id prints them; with pieces not NULL, also
 * appends the pieces as --output_format=piece prints them (separated by
 * one space; an unknown piece shows its normalised text, a byte piece
 * <0xNN>).
 */
int spm_encode(struct spm *m, const char *text, size_t len,
	       struct bpe_ids *ids, struct bpe_text *pieces);
/*
 * spm_encode, and for each id appended, two values appended to spans
 * (when not NULL): the start and end (byte offsets in text) of the bytes
 * it stands for, through the normaliser (the dummy prefix stands for
 * none; a run of spaces made one ▁, for the run).
 */
int spm_encode_spans(struct spm *m, const char *text, size_t len,
		     struct bpe_ids *ids, struct bpe_text *pieces,
		     struct bpe_ids *spans);

/*
 * Appends the text of n ids as spm_decode --input_format=id prints it:
 * control pieces are nothing, <unk> is the unk surface (" ⁇ "), runs of
 * byte pieces are their bytes (U+FFFD for each byte that does not make a
 * valid character), ▁ is a space, and the first piece's leading ▁ is
 * dropped (the dummy prefix).  -1 on an id outside the model.
 */
int spm_decode(const struct spm *m, const int32_t *ids, size_t n,
	       struct bpe_text *out);

/*
 * Appends the text of a line of pieces separated by spaces, as
 * spm_decode --input_format=piece prints it: a piece that is not in the
 * model counts as <unk> and is written as it is.
 */
int spm_decode_pieces(const struct spm *m, const char *line, size_t len,
		      struct bpe_text *out);

/*
 * The text of each id on its own (▁ a space, nothing dropped; a byte
 * piece its byte, <unk> its surface, a control piece nothing), appended:
 * for a caller that needs each unit's share of the text.
 */
int spm_decode_units(const struct spm *m, const int32_t *ids, size_t n,
		     struct bpe_text *out);

#endif
