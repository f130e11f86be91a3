/*
 * frames.h: between the pipeline's frames and the padded batches that
 * every model's stages compute on.  A stage reads record name, f32
 * [S_i, width], of each of nf frames into one matrix x [nf, S, width]
 * (S the longest S_i, zeros after each frame's rows), computes on all
 * rows at once, and puts each frame's S_i rows of its result back.
 */
#ifndef ATTN_FRAMES_H
#define ATTN_FRAMES_H

#include "stream/stream.h"

/* The most rows (positions) of a record that a model takes: bounds
 * nf * S * width products in the models' int arithmetic. */
#define FRAME_ROWS_MAX (1 << 20)

/*
 * Checks record t of frame f, which a stage or a decoder reads: every
 * value finite, and, if of rank 2 and the frame holds src.ids, a row for
 * each source token.  -1 with err_msg() naming the frame, the record and
 * the first bad value or the row counts: no model writes NaN or Inf (fed
 * them, a Transformer's decoder ends every hypothesis at once), and rows
 * that disagree with the tokens misplace the attention.
 */
int frame_check_input(const struct frame *f, const struct tensor *t);

/*
 * Record name of frame f, f32 [S, width] with 1 <= S <= FRAME_ROWS_MAX,
 * as the program stage writes it, checked by frame_check_input: its
 * payload, and S in *S.  NULL with err_msg() naming the frame, the record
 * and the shape wanted or what is wrong.
 */
const float *frame_rows(const struct frame *f, const char *name, int width,
			const char *stage, int *S);

/*
 * Record name (frame_rows') of each of nf frames, gathered: *x [nf, S,
 * width] zero-padded, *len [nf] the frames' S_i (both malloc'ed).
 * Returns S, the longest S_i (0 when nf is 0), or -1 with err_msg() set
 * and *x, *len NULL.
 */
int frames_gather(struct frame **f, int nf, const char *name, int width,
		  const char *stage, float **x, int **len);

/*
 * Puts a new f32 record name [rows, width] (width 0: a vector [rows])
 * into frame f, copied from x (NULL: zeros).  Returns its payload in the
 * frame (valid until the frame grows), or NULL with err_msg() set.
 */
float *frame_put_rows(struct frame *f, const char *name, int rows, int width,
		      const float *x);
/*
 * frames_gather's inverse for a result x [nf, S, width]: frame i gets
 * record name with its first len[i] rows.  0, or -1 with err_msg() set.
 */
int frames_put(struct frame **f, int nf, const char *name, int width,
	       const float *x, int S, const int *len);

#endif
