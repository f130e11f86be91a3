/*
 * vocab.h: a vocabulary of either kind, so that callers need not care
 * which: attn's own byte-pair encoding (bpe.h: text that begins
 * "attn-bpe") or a SentencePiece model (spm.h: the protobuf file that
 * spm_train writes).  Each keeps its own rules; this only dispatches.
 *
 * A third kind is a SentencePiece model with ids of its own (Marian's
 * vocab.yml, as OPUS-MT's models have: pieces to ids of a joint
 * vocabulary, not the model's), used as OPUS-MT's pipeline uses it: the
 * model cuts the text into pieces as spm_encode prints them, and the
 * table gives each piece's id by its text, a piece the model does not
 * know (spm_encode prints its text) included; a piece the table lacks is
 * <unk>.  Back to text, the table's pieces are joined as Marian prints
 * them and OPUS-MT's postprocessing reads them (sed 's/ //g;s/▁/ /g',
 * then spaces trimmed at both ends): no spm_decode, so a piece of the
 * joint table that the target's model lacks is written as it is.  Its
 * bytes (vocab_map_make) are "attn-spm-map 1 B N\n", the B bytes of the
 * model, then the N pieces, id 0 first, each ended by a newline.
 *
 * Special ids (pad, bos, eos, unk; -1 when the vocabulary has none):
 * attn-bpe's are 0 1 2 3; a SentencePiece model's are those it names
 * (by default unk 0, bos 1, eos 2 and no pad; Marian's eos 0, unk 1); a
 * table's those of its pieces <pad>, <s>, </s> and <unk>.
 *
 * One struct vocab serves one thread (both kinds keep scratch space).
 */
#ifndef ATTN_TEXT_VOCAB_H
#define ATTN_TEXT_VOCAB_H

#include <stddef.h>
#include <stdint.h>
#include "base/rng.h"
#include "bpe.h"
#include "strmap.h"

enum vocab_kind { VOCAB_BPE, VOCAB_SPM };
enum vocab_special { VOCAB_PAD, VOCAB_BOS, VOCAB_EOS, VOCAB_UNK };

struct bpe;
struct spm;

struct vocab {
	enum vocab_kind kind;
	struct bpe *bpe;        /* one of the two */
	struct spm *spm;
	int32_t special[4];     /* enum vocab_special */
	/* a table of ids over spm (the third kind), else n 0 and NULLs */
	struct vocab_map {
		int n;                  /* ids 0 .. n-1 */
		char **piece;           /* [n] */
		struct strmap ids;      /* piece -> its id */
		struct bpe_text units;  /* scratch: a line's pieces */
		int32_t *from_spm;      /* [spm_size] the table's, -1 */
	} map;
};

/*
 * The vocabulary in the len bytes at data (not NUL-terminated; NULs
 * allowed in a SentencePiece model): attn-bpe text if it begins
 * "attn-bpe", else a SentencePiece model.  NULL with a message on
 * anything else (an attn-bpe text with a NUL byte in it, a malformed
 * model).
 */
struct vocab *vocab_load(const void *data, size_t len);
void vocab_free(struct vocab *v);
/*
 * Appends to out the bytes of a vocabulary of the third kind: the
 * SentencePiece model spm [spm_len] and the n pieces (ids 0 .. n-1), none
 * empty or holding a newline.  0, or -1 with err_msg().
 */
int vocab_map_make(const void *spm, size_t spm_len, const char *const *piece,
		   int n, struct bpe_text *out);

int vocab_size(const struct vocab *v);          /* ids are 0..size-1 */
static inline int32_t vocab_special(const struct vocab *v,
				    enum vocab_special which)
{
	return v->special[which];
}

/*
 * Appends the ids of one line (no newline; no </s> added); with units
 * not NULL, also appends the units as text, separated by one space:
 * attn-bpe's units as vocab_unit_show writes them, a SentencePiece
 * model's pieces as spm_encode --output_format=piece prints them.
 */
int vocab_encode(struct vocab *v, const char *text, size_t len,
		 struct bpe_ids *ids, struct bpe_text *units);
/* vocab_encode with BPE-dropout (bpe.h); attn-bpe only: -1 otherwise. */
int vocab_encode_dropout(struct vocab *v, const char *text, size_t len,
			 struct bpe_ids *ids, double p, struct rng *r);
/*
 * vocab_encode (p 0) or vocab_encode_dropout (p > 0, draws from r), and
 * for each id appended, two values appended to spans: the start and the
 * end (byte offsets in text) of the bytes it stands for: attn-bpe's
 * unit its bytes; a SentencePiece piece the bytes its normalised text
 * comes from (<unk> too, whatever its surface; a space the normaliser
 * adds stands for none).  What guided alignment maps the input's words
 * by (align_unit_links).
 */
int vocab_encode_spans(struct vocab *v, const char *text, size_t len,
		       struct bpe_ids *ids, struct bpe_ids *spans, double p,
		       struct rng *r);

/*
 * Appends the text of n ids, as the vocabulary's own decoder writes it:
 * bpe_decode (stops at </s>) or spm_decode (spm_decode's text exactly:
 * control pieces, </s> among them, are nothing).  -1 on an id outside
 * the vocabulary.
 */
int vocab_decode(const struct vocab *v, const int32_t *ids, size_t n,
		 struct bpe_text *out);
/*
 * out = the text of the ids up to the first </s>, as one valid UTF-8
 * line (a newline or carriage return made a space, bytes that make no
 * character U+FFFD): what decode, beam, score and dev BLEU print.
 */
int vocab_decode_line(const struct vocab *v, const int32_t *ids, size_t n,
		      struct bpe_text *out);
/* Each unit's text on its own, appended (bpe_decode_units,
 * spm_decode_units): for the alignments. */
int vocab_decode_units(const struct vocab *v, const int32_t *ids, size_t n,
		       struct bpe_text *out);

/* Appends the unit as the vocabulary writes it (<0x41>, ▁de). */
int vocab_unit_show(const struct vocab *v, int32_t id, struct bpe_text *out);
/* The id of a unit written so, or -1. */
int32_t vocab_unit_find(const struct vocab *v, const char *s, size_t len);

#endif
