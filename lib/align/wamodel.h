/*
 * wamodel.h: the word aligner's model: the two vocabularies and the two
 * directions (ibm2.h), forward p(target | source) and reverse
 * p(source | target), in one file of the tensor stream format, and the
 * alignment of a bitext with it.
 *
 * The file's records, one frame (doc/alignment.md, "The model file"):
 *
 *	align.version   i32 []       1, or 2 with a direction of the HMM
 *	align.fold      i32 []       1: words folded (wordvocab.h), 0 not
 *	align.src.words u8 [bytes]   the source words, ids 1, 2, ... in
 *	align.tgt.words u8 [bytes]   order, each ended by '\n'
 *	align.D.params  f64 [3]      diagonal (1 or 0), tension, p0
 *	align.D.rows    i64 [ne + 2] the table of ibm2.h: row, col, prob
 *	align.D.cols    i32 [nnz]
 *	align.D.probs   f32 [nnz]
 *	align.D.jumps   f64 [15]     the HMM's jump widths (hmm.h), -7 to
 *	                             7; none: IBM Model 2 (only these in 1)
 *
 * D is fwd (source words e, target words f) or rev (the other way round).
 */
#ifndef ATTN_WAMODEL_H
#define ATTN_WAMODEL_H

#include "bitext.h"
#include "ibm2.h"
#include "wordvocab.h"

struct wa_model {
	struct wa_vocab vocab[2];	/* source, target */
	struct wa_dir dir[2];		/* forward, reverse */
	int fold;
};

/* Writes m to path atomically (a temporary file, fsync, rename): the old
 * file stays whole if anything fails.  0, or -1 (err_msg()). */
int wa_model_save(const struct wa_model *m, const char *path);
/* Reads a file of wa_model_save into m, every record checked.  0, or -1
 * (err_msg() names the file and the record). */
int wa_model_load(struct wa_model *m, const char *path);
void wa_model_free(struct wa_model *m);

/* Links of a bitext: pair p's count[p] links are ij[2 off[p] ...] (i, j
 * pairs, as wa_symmetrize gives them); off[p + 1] - off[p] is the room,
 * n + m. */
struct wa_links {
	int64_t *off;
	int32_t *count;
	int32_t *ij;
};

/*
 * Aligns every pair of b (words of m's vocabularies, -1 unknown) with
 * m's directions, symmetrised by sym (symmetrize.h; threshold, in
 * [0.5, 1], is the posterior heuristic's), on the kernels' thread pool;
 * a pair with an empty side has no links.  0, or -1 (err_msg()) when out
 * of memory.
 */
int wa_align_bitext(const struct wa_model *m, const struct wa_bitext *b,
		    int sym, double threshold, struct wa_links *out);
void wa_links_free(struct wa_links *l);

#endif
