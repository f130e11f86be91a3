/*
 * arch.h: the operations of an architecture (rnnsearch, rnnencdec,
 * seq2seq, transformer) behind one table, so that the programs, greedy
 * and beam search, scoring and training are written once for all; and
 * the batches and decoders they work on.
 */
#ifndef ATTN_ARCH_H
#define ATTN_ARCH_H

#include <stdint.h>
#include "stream/stream.h"

struct model;

/* ---- batches -------------------------------------------------------------- */

/*
 * B sentences padded with <pad> (0) to the longest: ids [B, S] row-major,
 * len [B] the true lengths (</s> included).
 */
struct batch_ids {
	int B, S;
	int32_t *ids;
	int *len;
	/*
	 * Training, the target's batch only: guided alignment's reference
	 * guide [B, S, S of the source] (a target unit's links to the source
	 * units, 1 or 0; nn/layers.h's guided_forward_backward), or NULL;
	 * an architecture with guided alignment adds the batch's guided loss
	 * (weighted, not scaled) to *guide_loss.
	 */
	const float *guide;
	double *guide_loss;
};

/* ---- decoding, one step at a time, for greedy, beam and score ----------- */

struct decoder;
struct sl_table;

/*
 * How this run decodes: choices of the run, not of the model file, so
 * that a loaded model stays read-only (and could serve several threads).
 * NULL or all zeros: f32 products and states, the whole vocabulary.
 */
struct dec_opts {
	int bf16;		/* the products in bf16 (gemm_packed.h);
				   an architecture with DEC_BF16 */
	int kv_f16;		/* the attention's keys and values kept in
				   f16 (attn_step.h); with DEC_KV_F16 */
	/* the output layer over each sentence's shortlist (shortlist.h) */
	const struct sl_table *shortlist;
};

/* What an architecture's decoder can do besides the defaults: bf16
 * products, f16 keys and values, and bos_id -1 (model.h: a zero vector
 * as the first input, in decoding and in training). */
enum { DEC_BF16 = 1, DEC_KV_F16 = 2, DEC_ZERO_BOS = 4 };

/* ---- the architecture's operations ---------------------------------------- */

struct arch {
	const char *name;			/* the config's arch= value */
	unsigned dec_caps;			/* DEC_* */
	/*
	 * Reads and checks the sizes in m->cfg and declares every parameter
	 * with model_add_param(), in doc/MODELS.md's order.
	 */
	int (*declare)(struct model *m);
	/*
	 * Points m->net's named pointers into m->w (and m->g).  Called once,
	 * after w (and g, when training) are allocated; m->net is one
	 * malloc'ed block that model_free() frees.
	 */
	int (*bind)(struct model *m);
	/* The paper's initialisation of a fresh model, from m->rng. */
	void (*init)(struct model *m);
	/* Default values of the architecture's config keys. */
	const char *const *defaults;		/* "key=value" strings, NULL-ended */

	/*
	 * The pipeline's stages on n frames at once (batched inside; results
	 * independent of n).  Each reads its input record from every frame and
	 * puts its output record(s) in it: embed src.ids -> src.emb; encode
	 * src.emb -> enc.out; attend enc.out -> att.*.
	 */
	int (*embed)(const struct model *m, struct frame **f, int n);
	int (*encode)(const struct model *m, struct frame **f, int n);
	int (*attend)(const struct model *m, struct frame **f, int n);

	/*
	 * A decoder for n sentences whose frames hold the memory (att.*, and
	 * enc.out where the architecture reads it), with room for up to
	 * width hypotheses per sentence.  Hypotheses start as one per
	 * sentence (hypothesis i is sentence i, next input <s>).  o (NULL:
	 * the defaults) asks only for what dec_caps offers.
	 */
	struct decoder *(*dec_new)(const struct model *m,
				   const struct dec_opts *o,
				   struct frame **f, int n, int width);
	/*
	 * One step for the nh live hypotheses: prev [nh] their previous
	 * tokens; writes logp [nh, tgt_vocab] (log-probabilities) and, when
	 * attw is not NULL, attw [nh, P, S_max] (the attention weights over
	 * the hypothesis' source, zero beyond its length; S_max the longest
	 * source of the decoder's sentences; P = L * H planes from
	 * dec_attw_planes, 1 for the recurrent models, whose att.weights is
	 * then [T, S], and [L, H, T, S] for the Transformer).
	 */
	int (*dec_step)(struct decoder *d, int nh, const int32_t *prev,
			float *logp, float *attw);
	/*
	 * Hypothesis i of the next step continues hypothesis parent[i].  The
	 * caller skips it when parent[i] == i for every i < nh: dec_step on
	 * nh hypotheses then continues hypotheses 0 .. nh-1 of the last step
	 * (nh may be smaller than last time: the last ones were dropped).
	 */
	int (*dec_select)(struct decoder *d, int nh, const int *parent);
	/* The sentence that hypothesis i belongs to, and its source length. */
	int (*dec_sentence)(const struct decoder *d, int i);
	int (*dec_srclen)(const struct decoder *d, int sentence);
	/* Attention planes per step: *L layers by *H heads (NULL: 1 x 1). */
	void (*dec_attw_planes)(const struct decoder *d, int *L, int *H);
	void (*dec_free)(struct decoder *d);
	/*
	 * With o->shortlist, the decoder's shortlists (shortlist.h): dec_step
	 * then writes row i's log-probabilities over the units of its
	 * sentence s only, entry j for unit ids[off[s] + j], at the start of
	 * logp's row i (the stride stays tgt_vocab).  NULL without (and the
	 * op NULL for an architecture that has none).
	 */
	const struct shortlist *(*dec_shortlist)(const struct decoder *d);

	/*
	 * Training: forward and backward of a batch of pairs, from src ids to
	 * the loss.  Adds the gradients of (sum of token losses) * scale into
	 * m->g; returns the sum of token losses (label-smoothed) and sets
	 * *nll, *ntok (the sum of -log p(ref) and the tokens counted), or a
	 * negative value with err_msg() set (bad ids, no gradients, memory).
	 * With dropout, a training step's: the `dropout` key's rate, drawn
	 * from m->rng, where the architecture has dropout; without, an
	 * evaluation's (no draws).
	 */
	double (*train_batch)(struct model *m, const struct batch_ids *src,
			      const struct batch_ids *tgt, float scale,
			      int dropout, double *nll, int *ntok);
};

/*
 * For the architectures' dec_step: 0 when 0 <= nh <= live (the hypotheses
 * of the last step) and each of prev[nh] is a unit of a vocabulary of V;
 * else -1 with err_msg() set.  A step for no hypotheses does nothing.
 */
int dec_step_check(int nh, int live, const int32_t *prev, int V);

/*
 * How a dec_step of nh rows goes over the threads: when this returns
 * b > 0, in blocks of b rows, one a thread, each block running the whole
 * step with its kernels serial (the step waits for the threads once, not
 * at every product, and its serial parts split as well); when it returns
 * 0, in one block whose kernels split their own work: one thread, under 16
 * rows a thread (a block streams every weight matrix once, and with few
 * rows the products' split of the weights' panels does better), or a
 * shortlist (whose units are the batch's).  Every part of a step treats
 * each row alone, so the bits are the same either way.
 */
int dec_step_block(int nh, int shortlisted);

/* The architectures, and the one named in a config. */
extern const struct arch arch_rnnsearch, arch_rnnencdec, arch_transformer,
	arch_seq2seq;
const struct arch *arch_find(const char *name);
/* Adds an architecture for arch_find (the tests' fake ones); 0 or -1. */
int arch_register(const struct arch *a);

#endif
