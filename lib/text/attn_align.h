/*
 * attn_align.h: hard word alignments from attention weights, in the Pharaoh
 * format: "i-j" pairs of source and target word positions, from 0,
 * separated by spaces, sorted by i then j, each once (attn_align.c); and
 * the other way, guided alignment's unit links from such word links
 * (links.c).  The word aligner of align(1), which reads no model, is
 * lib/align/.
 *
 * Words are the text's space-separated words, not subword units: a unit
 * belongs to the word of its first non-space byte (a unit that starts
 * with U+2581 starts a new word), and units that have no such byte (</s>,
 * <s>, <pad>, a lone space) belong to none.
 *
 * What is computed.  attw [L, H, T, S] holds the attention weights of L
 * layers of H heads each (the planes; an RNNsearch has one) of the T target
 * units over the S source units.  The caller chooses the layers and the
 * heads; the planes used are P = { (l, h) : l chosen, h chosen }, every
 * chosen head of every chosen layer.  For target word w and source word v,
 *
 *	A(w, v) = 1/|P| sum over (l, h) in P, units t of w, units s of v
 *		  of attw[l, h, t, s],
 *
 * the mean over the planes of the attention mass that w's units put on
 * v's units (unit t's attention is row t of attw, the step that predicts
 * it; with shift, row t + 1, the step that reads it as its input, as
 * Chen et al. 2020's Shift-Att: the last unit, </s>, then has none) (a word of several units adds its units' masses; the mass on
 * units of no word, such as the source's </s>, counts for no word).  Each
 * target word w is linked to the source word v of greatest A(w, v), the
 * first (leftmost) of equal ones, and with min_share > 0 also to every
 * other source word v with A(w, v) >= min_share * sum over v' of A(w, v').
 * A target word that puts no mass on any source word gets no link, nor
 * (with null) one that puts more on the units of no word (the source's
 * </s>: guided alignment's "no link", align_unit_links) than on its
 * best source word, nor one of the caller's unlinked words (function words, say): the
 * target word compared without the ASCII punctuation and the quotes
 * U+2018..U+201F around it, ASCII letters in either case alike ("The,"
 * is "the").  With cover, each source word v that none of these links
 * reaches is then linked to the target word w of greatest A(w, v) > 0,
 * the first of equal ones, that is not one of the unlinked words: every
 * source word that the attention reaches keeps a place in the target,
 * which projecting markup needs (examples/translate-markup.sh).
 */
#ifndef ATTN_ATTN_ALIGN_H
#define ATTN_ATTN_ALIGN_H

#include <stdint.h>
#include "bpe.h"
#include "vocab.h"

struct align_opts {
	uint64_t layers;	/* bit l: layer l used; 0: every layer */
	uint64_t heads;		/* bit h: head h of each; 0: every head */
	double min_share;	/* 0: one link per target word; see above */
	int null;		/* the units of no word stand for no link */
	int shift;		/* unit t's weights are row t + 1's (below) */
	int cover;		/* a link for every source word reached */
	const char *const *unlinked;	/* [n_unlinked] target words */
	int n_unlinked;
};

/* word[i] (>= 0, or -1: no word) for each of the n ids. */
int align_unit_words(const struct vocab *v, const int32_t *ids, int n,
		     int *word);

/*
 * Appends the alignment of target ids tgt [T] (vocabulary tv) to source
 * ids src [S] (vocabulary sv) under attw [L, H, T, S], as above.  -1
 * (err_msg()) on an id outside a vocabulary, a chosen layer >= L or head
 * >= H, or no memory.
 */
int align_words(const struct vocab *sv, const int32_t *src, int S,
		const struct vocab *tv, const int32_t *tgt, int T,
		const float *attw, int L, int H, const struct align_opts *o,
		struct bpe_text *out);

/*
 * Guided alignment's reference (tokenize --links): the links of the
 * target units [T] to the source units [S] that the word links of a
 * Pharaoh line (len bytes: "i-j" pairs, source word i, target word j,
 * from 0, as align writes them; spaces, tabs and a CR between them) make.
 * Words here are the input's own: the runs of the pair's text src
 * [src_len] (tgt [tgt_len]) between spaces, tabs, CRs and newlines, as
 * align(1) reads them, not the units' decoded text (where <unk>'s
 * " ⁇ " would split a word).  sspan [2 S] (tspan [2 T]) gives each
 * unit's bytes in the text, start and end (vocab_encode_spans); a unit
 * belongs to the word of its first byte that is not a space, and one
 * of none (</s>, a span of spaces or empty) to no word.  A link i-j
 * links every unit of source word i to every unit of target word j; a
 * target unit that no link reaches (one of a word the line leaves
 * unlinked, and </s>) is linked to the source's last unit (its </s>),
 * which the guided head so learns as "no link" (align_opts.null).  *out
 * (realloc'd; *cap its pairs) gets the (source unit, target unit)
 * pairs, sorted by target unit then source unit, *n of them.  -1
 * (err_msg()): a line that is not such pairs, a word past the pair's
 * words (naming the link), a span outside its text, no memory.
 */
int align_unit_links(const char *src, size_t src_len, const int32_t *sspan,
		     int S, const char *tgt, size_t tgt_len,
		     const int32_t *tspan, int T, const char *line, size_t len,
		     int32_t **out, size_t *cap, size_t *n);

#endif
