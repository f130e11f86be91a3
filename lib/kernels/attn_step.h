/*
 * attn_step.h: attention of single query rows, a decoder's step: each
 * hypothesis' one query, per head, over its keys and values as they lie
 * (the cache of earlier positions, or the source's memory), where the
 * blocked kernel of attention_forward, made for many rows, spends its
 * time on transposing keys and on query rows that are not there.
 *
 * The result of a row depends on that row's query, keys and values only
 * (not on the others, their number or the threads).
 */
#ifndef ATTN_ATTN_STEP_H
#define ATTN_ATTN_STEP_H

#include <stddef.h>
#include <stdint.h>

/*
 * For row i < rows and head h < H: out_i,h [dk] = softmax_j(scale q_i,h .
 * k_i,j,h) v_i,j,h over j < n[i] (zeros when n[i] is 0).  q_i,h is at q +
 * i qs + h dk; k_i,j,h at k[i] + j ks + h dk, v likewise from v[i] with
 * vs; out_i,h at out + i os + h dk.  With weights, weights + i ws + h wn
 * [wn] gets the softmax, zero past n[i].
 */
struct attn_step {
	int rows, H, dk;
	float scale;
	const float *q; long qs;
	/* f32 rows, or with f16 the f16 (uint16_t) of kv_to_f16; ks and vs
	 * count elements */
	const void *const *k, *const *v; long ks, vs;
	int f16;
	const int *n;
	float *out; long os;
	float *weights; long ws; int wn;
	int marian;		/* native Marian's arithmetic, to the bit
				   (attn_marian_row below), for f32 keys
				   and values (with f16, attn's own) */
};
void attn_step(const struct attn_step *a);

/*
 * dst [n] = src [n] in f16, to nearest, ties to even (f16.h's f32_to_f16,
 * every kernel the same bits): keys and values kept for attn_step with
 * f16, half the bytes to read at every step.
 */
void kv_to_f16(uint16_t *dst, const float *src, size_t n);

/*
 * One row, all its heads, per instruction set (w may be NULL, else head
 * h's weights at w + h wn).  Keys go by chunks of ATTN_STEP_CHUNK, each
 * key's row and then each value's read once, whole, for every head (the
 * keys and values come from memory, not cache: a step's weight matrices
 * have passed since): scores, their running maximum and sum per head (an
 * online softmax, as FlashAttention's), the weighted values added up in
 * out; w gets the scores and at the end their softmax.
 */
#define ATTN_STEP_CHUNK 64
#define ATTN_STEP_HEADS 16	/* heads of the scratch on the stack */
/*
 * The same row as native Marian computes it (attn_marian.c, where each
 * step is in Marian's source): each head's scores in form (below), times
 * scale; Marian's softmax (marian_softmax); the context one fma chain
 * over the keys in order.  s: ATTN_MARIAN_SCRATCH(n) floats of scratch
 * (eight rows' scores and their softmax).  The weights, with w,
 * at w + h wn.  The forms of a score q . k_j, as OpenBLAS's kernels sum
 * it (marian_score_form picks one):
 *   MARIAN_SCORE_CHAIN  one chain of fma over the dk in order;
 *   MARIAN_SCORE_LANES  16 lanes (lane l: l, l + 16, ...), added as
 *                       adjacent pairs for the keys j < n & ~3, as
 *                       halves (_mm512_reduce_add_ps) for the others;
 *   MARIAN_SCORE_PAIRS  16 lanes, adjacent pairs for every key.
 */
enum { MARIAN_SCORE_CHAIN, MARIAN_SCORE_LANES, MARIAN_SCORE_PAIRS };
#define ATTN_MARIAN_SCRATCH(n) (16 * (size_t)(n))
void attn_marian_row_ref(float *out, float *w, long wn, const float *q,
			 const void *k, long ks, const void *v, long vs,
			 int n, int H, int dk, float scale, int f16, int form,
			 float *s);
void attn_marian_row_avx2(float *out, float *w, long wn, const float *q,
			  const void *k, long ks, const void *v, long vs,
			  int n, int H, int dk, float scale, int f16,
			  int form, float *s);
/*
 * One head of one sentence as Marian computes it: rows query rows (q,
 * rows of qs) over n keys and values (rows of ks, vs), out rows of os;
 * with small (marian_small_tn of Marian's product's nq queries), row t's
 * scores in form t < nq & ~3 ? PAIRS : LANES, else CHAIN; w (may be
 * NULL) rows of ws.  s: ATTN_MARIAN_SCRATCH(n) + dk (n rounded up to
 * 32) floats of scratch.
 */
void attn_marian_head_ref(float *out, long os, float *w, long ws,
			  const float *q, long qs, const float *k, long ks,
			  const float *v, long vs, int rows, int n, int dk,
			  float scale, int small, int nq, float *s);
void attn_marian_head_avx2(float *out, long os, float *w, long ws,
			   const float *q, long qs, const float *k, long ks,
			   const float *v, long vs, int rows, int n, int dk,
			   float scale, int small, int nq, float *s);
/* Whether OpenBLAS sums Marian's nq by n scores of dk with SkylakeX's
 * small TN kernel, where attn runs the set in force (AVX-512: SkylakeX's
 * kernels; else Haswell's, which have none); and the form of query t's
 * scores there. */
int marian_small_tn(int nq, int n, int dk);
int marian_score_form(int nq, int n, int dk, int t);
/* The 16 lanes of a score added: pair 1, adjacent pairs; 0, halves. */
float marian_lanes16(const float l[16], int pair);
/* Cephes' exp as Marian's build computes it, and its softmax of s [n]
 * (n > 0) in place: the lengths that are multiples of 8 or 4 in its
 * lanes with this exp, the others in order with expf. */
float marian_exp(float x);
void marian_softmax(float *s, int n);

void attn_step_row_ref(float *out, float *w, long wn, const float *q,
		       const void *k, long ks, const void *v, long vs, int n,
		       int H, int dk, float scale, int f16);
void attn_step_row_avx2(float *out, float *w, long wn, const float *q,
			const void *k, long ks, const void *v, long vs, int n,
			int H, int dk, float scale, int f16);
void kv_to_f16_ref(uint16_t *dst, const float *src, size_t n);
void kv_to_f16_avx2(uint16_t *dst, const float *src, size_t n);

#endif
