/*
 * bpe.h: subword units by byte-pair encoding (Sennrich, Haddow and Birch
 * 2016), with SentencePiece's visible space and byte fallback, so that any
 * byte string becomes ids and comes back byte for byte.
 *
 * Pieces.  A line is cut into pieces before merging, and merges never cross
 * a piece boundary.  Characters are valid UTF-8 sequences; a byte that is
 * not part of one is a character of its own.  Each character has a class:
 * space (the byte 0x20), control (below 0x20, 0x7f, U+0080..U+009F),
 * punctuation (ASCII punctuation, U+00A1, U+00AB, U+00BB, U+00BF,
 * U+2010..U+205E, U+3000..U+303F), digit (0-9) or letter (everything else,
 * invalid bytes included).  A piece is a run of characters of one class,
 * led by the space before it if there is one; a control character, and a
 * space not followed by a run, are pieces of their own.  "a  b\tc" is the
 * pieces "a", " ", " b", "\t", "c".
 *
 * Units.  Ids 0-3 are <pad> <s> </s> <unk> (doc/MODELS.md); ids 4-259 are the
 * byte units <0x00>..<0xFF>; then the characters of the training text (the
 * most frequent ones, up to a coverage), then one unit per learned merge, in
 * the order learned.  A character that is not a unit, a control character,
 * U+2581 and an invalid byte are always byte units, and byte units never
 * merge.  <unk> is never produced.
 *
 * Learning counts the pieces of the text, starts from the characters and
 * repeatedly merges the most frequent adjacent pair of units (frequency at
 * least 2; of equal ones, the pair whose left unit's bytes, then right
 * unit's bytes, come first in byte order).  A pair whose merged bytes are
 * already a unit is never merged, so every unit has one recipe.  Pieces
 * longer than BPE_LEARN_MAX_PIECE bytes are not used for merges.
 *
 * Applying merges the pair of lowest rank first (leftmost of equal ones),
 * which gives every piece of the training text the units learning gave it.
 *
 * The dummy prefix (SentencePiece's).  A vocabulary of format version 2,
 * as every one learned is, reads a line that is not empty as if it began
 * with a space, in learning and in applying: a line's first word is then
 * the piece " word", cut into the units it has in the middle of a line
 * ("Pablo dijo" is ▁Pablo ▁dijo, not P ablo ▁dijo).  Decoding removes that
 * one space: the first byte of the text, when it is a space.  So a line
 * comes back byte for byte whatever it begins with ("" is no units, " a"
 * is ▁ ▁a).  A vocabulary of version 1 has no prefix.
 *
 * The vocabulary as text (what --learn prints and vocab.src/vocab.tgt
 * hold), UTF-8, one line each, fields separated by a tab:
 *
 *	attn-bpe 2 N            header: format version 2, N units
 *	0	<pad>	special     then N lines: id, unit, kind
 *	...
 *	4	<0x00>	byte
 *	...
 *	260	▁	char        a character
 *	...
 *	300	▁d	merge	▁ d     a merge, with its left and right units
 *
 * Ids count from 0 in order.  In a unit, U+2581 (▁) stands for a space;
 * units hold no other escape, since tabs, newlines and control characters
 * are only ever byte units.  Merge lines, in id order, are the merge ranks.
 * Version 1 is the same text without the dummy prefix; it loads, and
 * saves, as version 1.
 */
#ifndef ATTN_BPE_H
#define ATTN_BPE_H

#include <stddef.h>
#include <stdint.h>
#include "base/rng.h"

enum { BPE_PAD = 0, BPE_BOS = 1, BPE_EOS = 2, BPE_UNK = 3, BPE_BYTE0 = 4 };
#define BPE_FIRST_UNIT (BPE_BYTE0 + 256)        /* the first character id */
#define BPE_LEARN_MAX_PIECE 256

/* Growable buffers that the functions below append to. */
struct bpe_ids {
	int32_t *v;
	size_t n, cap;
};
struct bpe_text {
	char *s;
	size_t n, cap;
};
int bpe_ids_push(struct bpe_ids *b, int32_t id);
/* Appends len bytes of s; with s NULL, len bytes of room (unset). */
int bpe_text_add(struct bpe_text *b, const void *s, size_t len);
void bpe_ids_free(struct bpe_ids *b);
void bpe_text_free(struct bpe_text *b);

struct bpe;

/* ---- learning ----------------------------------------------------------- */

/* Counts the pieces of any amount of text, line by line. */
struct bpe_counter;
struct bpe_counter *bpe_counter_new(void);
int bpe_counter_add(struct bpe_counter *c, const char *line, size_t len);
void bpe_counter_free(struct bpe_counter *c);

/*
 * Learns a vocabulary of at most vocab_size units (>= BPE_FIRST_UNIT; fewer
 * when no pair occurs twice), with the dummy prefix (the counter counts
 * every line with it).  Characters are kept, most frequent first, until
 * they cover `coverage` (0..1) of the character occurrences.
 */
struct bpe *bpe_learn(const struct bpe_counter *c, int vocab_size,
		      double coverage);

/* ---- the vocabulary ----------------------------------------------------- */

/* From the text format; errors name the line.  NULL on error. */
struct bpe *bpe_load(const char *text, size_t len);
/* The text format. */
int bpe_save(const struct bpe *v, struct bpe_text *out);
void bpe_free(struct bpe *v);

int bpe_size(const struct bpe *v);              /* units, specials included */
int bpe_merges(const struct bpe *v);            /* learned merges */

/* Appends the unit as the text format shows it (<0x41>, ▁de). */
int bpe_unit_show(const struct bpe *v, int32_t id, struct bpe_text *out);
/* The id of a unit written as bpe_unit_show writes it, or -1. */
int32_t bpe_unit_find(const struct bpe *v, const char *s, size_t len);

/* ---- applying ----------------------------------------------------------- */

/*
 * Appends the ids of a line of len bytes (no </s>), with the dummy prefix
 * if v has it.  Keeps a cache of pieces and the line in v, so one struct
 * bpe serves one thread.
 */
int bpe_encode(struct bpe *v, const char *text, size_t len,
	       struct bpe_ids *out);

/*
 * bpe_encode with BPE-dropout (Provilkov, Emelianenko and Voita, 2020),
 * for training data: each merge, when its turn comes, is skipped with
 * probability p (a draw of r), and a pair skipped is not tried again in
 * its piece unless a neighbour's merge makes it anew.  So a word is cut
 * in ways that vary from draw to draw, into units of the same vocabulary,
 * and decodes to the same text.  p = 0 gives bpe_encode's ids, p >= 1
 * characters (and bytes) only.  The cache is not used.
 */
int bpe_encode_dropout(struct bpe *v, const char *text, size_t len,
		       struct bpe_ids *out, double p, struct rng *r);

/*
 * Appends the text of the line of ids: stops at </s>, skips <pad> and <s>,
 * writes <unk> as U+FFFD and byte units as their bytes, and removes the
 * dummy prefix (the first byte appended, if it is a space).  -1 on an id
 * outside the vocabulary.
 */
int bpe_decode(const struct bpe *v, const int32_t *ids, size_t n,
	       struct bpe_text *out);

/*
 * bpe_decode with the dummy prefix kept: the bytes of the units as they
 * stand in the middle of a line, for a caller that decodes a line unit by
 * unit (a unit that begins with a space begins a word wherever it is).
 */
int bpe_decode_units(const struct bpe *v, const int32_t *ids, size_t n,
		     struct bpe_text *out);

/*
 * out = the text of ids as one line for people and for BLEU: bpe_decode's
 * text with a newline or carriage return inside made a space, and byte
 * units that do not make whole characters (a model can emit any sequence)
 * made U+FFFD, so that the line is valid UTF-8.  -1 as bpe_decode.
 */
int bpe_decode_line(const struct bpe *v, const int32_t *ids, size_t n,
		    struct bpe_text *out);

/* Makes t's bytes from start on one line as bpe_decode_line does. */
int bpe_text_line(struct bpe_text *t, size_t start);

#endif
