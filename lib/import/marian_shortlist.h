/*
 * marian_shortlist.h: Marian's lexical shortlists (the lex.*.s2t text
 * table, gzipped or not, and the binary lex.*.bin that marian-conv
 * --shortlist writes) read into attn's shortlist table (models/
 * shortlist.h), so that an imported Marian model decodes over the units
 * Marian's decoder would score.  Read from marian-dev 2781d735,
 * src/data/shortlist.cpp and shortlist.h; man train-step, --lex.
 *
 * Marian's rule, for one batch (attn: for one sentence, as Marian with
 * --mini-batch 1): the target ids 0 .. first-1, every source unit's
 * list, and with a shared vocabulary (the config names the same file
 * for both sides) the source ids themselves; then filled up to a
 * multiple of 8 with the smallest ids from first on that it lacks.
 *
 * A text table's lines are "TARGET SOURCE PROB" (whitespace-separated
 * triples; NULL on either side skipped; a word the vocabulary lacks is
 * its <unk>, as Marian's vocabularies answer); a pair given twice keeps
 * its last probability; each source unit keeps its `best` likeliest
 * targets with PROB > threshold, ties to the higher id (Marian's
 * LexicalShortlistGenerator: load, prune).  A binary one holds its
 * lists as marian-conv made them, `first` in its header.  (marian-conv's
 * own conversion differs from the text reader's: its threshold is
 * compared with the target's id, not its probability, and a pair given
 * twice keeps its larger probability, shortlist.cpp:332, 344; the two
 * agree at threshold 0 with positive probabilities given once.)
 *
 * Stricter than Marian, which stops reading at the first field that is
 * not a number: a probability that is not a whole finite number, or a
 * last triple cut short, is refused.  A binary file's offsets must rise
 * to its ids' count; Marian checks instead that each is below that
 * count (shortlist.cpp:148-149), refusing its own files whose last
 * source units have no list unless told not to check (Firefox's
 * configs say false).
 */
#ifndef ATTN_MARIAN_SHORTLIST_H
#define ATTN_MARIAN_SHORTLIST_H

#include <stddef.h>
#include <stdint.h>
#include "models/model.h"
#include "models/shortlist.h"
#include "text/vocab.h"

/* Marian's shortlist: first, and each source unit's targets. */
struct marian_lex {
	int src_vocab, tgt_vocab;
	uint64_t first, best;	/* best: the binary header's, or given */
	uint64_t *off;		/* [src_vocab + 1]: unit s has ids
				   [off[s], off[s + 1]) */
	int32_t *ids;
};

/* The text table's numbers: --shortlist FILE FIRST BEST THRESHOLD. */
struct marian_lex_opts {
	int first, best;	/* Marian's defaults: 100 100 */
	float threshold;	/* 0 */
	int given;		/* numbers were given (a binary refuses) */
};

/* "FIRST[,BEST[,THRESHOLD]]" (NULL: the defaults) into o.  0, or -1. */
int marian_lex_opts_parse(struct marian_lex_opts *o, const char *s);
/* 1 when data begins with the binary format's magic. */
int marian_lex_is_binary(const void *data, size_t len);
/*
 * The binary file data [len] for vocabularies of src_vocab and
 * tgt_vocab units: header (magic, checksum, first, best, the arrays'
 * lengths), the offsets and the ids, all checked (length, checksum,
 * offsets in order, ids in the target vocabulary).  0, or -1 with
 * err_msg().
 */
int marian_lex_read_bin(struct marian_lex *l, const void *data, size_t len,
			int src_vocab, int tgt_vocab);
/*
 * The text table data [len] (gzip or plain), its words looked up in vs
 * and vt, pruned by o.  0, or -1 with err_msg() naming the line.
 */
int marian_lex_read_text(struct marian_lex *l, const void *data, size_t len,
			 const struct vocab *vs, const struct vocab *vt,
			 const struct marian_lex_opts *o);
/* l as a table for m (its vocabularies' sizes), with the source ids
 * themselves when shared.  NULL with err_msg(). */
struct sl_table *marian_lex_table(const struct marian_lex *l,
				  const struct model *m, int shared);
void marian_lex_free(struct marian_lex *l);

/*
 * The whole import: the file data [len] (either kind; o NULL for
 * Marian's defaults) read with m's vocabularies (shared when they are
 * the same bytes), as m's table; m's config gets dec_shortlist=1, so
 * that decode and beam use it as Marian's config does.  NULL with
 * err_msg().
 */
struct sl_table *marian_shortlist_import(struct model *m, const void *data,
					 size_t len,
					 const struct marian_lex_opts *o);

#endif
