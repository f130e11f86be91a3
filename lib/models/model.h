/*
 * model.h: a translation model: its config, vocabularies and parameters,
 * and the operations of its architecture (rnnsearch, rnnencdec,
 * seq2seq, transformer) behind one table, so that the programs, greedy and beam
 * search, scoring and training are written once for all three.
 *
 * Parameters are named pointers into one allocation (m->w); their
 * gradients, when training, into another of the same layout (m->g).  The
 * names and shapes are those of doc/MODELS.md.
 */
#ifndef ATTN_MODEL_H
#define ATTN_MODEL_H

#include <stddef.h>
#include <stdint.h>
#include "base/config.h"
#include "base/rng.h"
#include "stream/stream.h"

#define PARAM_NAME_MAX 64

struct param {
	char name[PARAM_NAME_MAX];
	int rank;		/* 1 or 2 */
	int dim[2];
	size_t n;		/* elements */
	float *w;		/* into model.w, or a mapped file (read-only) */
	float *g;		/* into model.g, NULL when not training */
	/* From an int8 export: the matrix as int8 and its row scales
	 * (into model.qbuf), w_jk = q_jk qs_j, as w holds it; else NULL. */
	const int8_t *q;
	const float *qs;
};

struct arch;

struct model {
	struct config cfg;
	const struct arch *arch;
	char *vocab_src, *vocab_tgt;	/* the tokenizer's text, NUL-terminated */
	size_t vocab_src_len, vocab_tgt_len;
	int src_vocab, tgt_vocab;	/* sizes, from the config */
	int nparam, param_cap;
	struct param *param;
	int *param_slot;		/* names hashed: index + 1, 0 empty */
	size_t param_mask;		/* slots - 1 */
	size_t param_bytes;		/* declared, at 1 byte an element */
	size_t param_budget;		/* which param_bytes may not pass:
					   model_load's the bytes of the
					   file's records, else SIZE_MAX */
	float *w, *g;			/* one allocation each; g may be NULL */
	size_t nw;			/* floats in w (and g) */
	struct tsr_map *map;		/* MODEL_LOAD_MAPPED: the file, whose
					   f32 parameters are used in place */
	void *net;			/* the architecture's named pointers */
	int training;			/* dropout on */
	int dec_bf16;			/* translation: the decoder's matrix
					   products in bf16 (gemm_packed.h),
					   where m->arch == &arch_transformer */
	int int8;			/* an int8 export: the decoder's
					   products in int8 (gemm_packed.h) */
	int kv_f16;			/* translation: the Transformer
					   decoder's attention keys and values
					   kept in f16 (attn_step.h) */
	void *qbuf;			/* the params' q and qs */
	struct wpack *i8packs;		/* [nparam]: the int8 ones packed,
					   registered for linear_forward */
	/* train-step --shortlist's table (shortlist.h), nfreq = k = 0 and
	 * NULLs when the model has none */
	struct sl_table {
		int nfreq, k;
		int32_t *freq;		/* [nfreq] frequent units */
		int32_t *trans;		/* [src_vocab, k], -1 past the
					   last */
	} sl;
	int shortlist;			/* translation: the output layer
					   over each sentence's shortlist
					   (arch's dec_shortlist) */
	struct rng rng;			/* the run's one generator */
	void *scratch;			/* model_scratch()'s block */
	size_t scratch_size;
};

/* ---- batches -------------------------------------------------------------- */

/*
 * B sentences padded with <pad> (0) to the longest: ids [B, S] row-major,
 * len [B] the true lengths (</s> included).
 */
struct batch_ids {
	int B, S;
	int32_t *ids;
	int *len;
};

/* ---- decoding, one step at a time, for greedy, beam and score ----------- */

struct decoder;

/* ---- the architecture's operations ---------------------------------------- */

struct arch {
	const char *name;			/* the config's arch= value */
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
	 * sentence (hypothesis i is sentence i, next input <s>).
	 */
	struct decoder *(*dec_new)(const struct model *m, struct frame **f,
				   int n, int width);
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
	 * With m->shortlist, the decoder's shortlists (shortlist.h): dec_step
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
	 */
	double (*train_batch)(struct model *m, const struct batch_ids *src,
			      const struct batch_ids *tgt, float scale,
			      double *nll, int *ntok);
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

/* ---- making, loading and saving models ------------------------------------ */

/*
 * A block of at least bytes (64-byte aligned, contents undefined) that the
 * model keeps from call to call and model_free() frees: a training batch's
 * activations, tens to hundreds of megabytes, which would cost a page
 * fault per 4 KiB if mapped afresh for every batch.  It moves when it
 * grows.  NULL with err_msg() set when out of memory.
 */
void *model_scratch(struct model *m, size_t bytes);

/*
 * Declares a parameter (during arch->declare), in constant time (the
 * table grows by doubling, names are hashed).  When loading, a parameter
 * that takes the declared ones beyond the file's records (at 1 byte an
 * element, as int8) is refused at once, so that a crafted config cannot
 * make the program declare or allocate more than the file could hold.
 */
int model_add_param(struct model *m, const char *name, int rank, int d0,
		    int d1);
struct param *model_param(const struct model *m, const char *name);
/* 1 when an int8 export holds p as int8: a matrix (rank 2) of a product,
 * not an embedding table (NAME.emb), which is looked up. */
int model_param_int8(const struct param *p);
/*
 * W [N, K] of m (a parameter's w) packed for products as pack says
 * (gemm_packed.h's WPACK_*); with WPACK_I8 the parameter's own int8
 * matrix and scales where it has them (an int8 export's), else W
 * quantised by the pack.  0, or -1 (err_msg()).
 */
struct wpack;
int model_wpack(const struct model *m, struct wpack *w, const float *W,
		int N, int K, int pack);
/* Checks that the i32 [S] record `name` of frame f (made by `stage`) is
 * there and holds ids in [0, vocab); the error names record and frame. */
int model_check_ids(const struct frame *f, const char *name, int vocab,
		    const char *stage);
/*
 * A size of m's config (d_model, hidden, ...) into *out: an integer 1 ..
 * MODEL_SIZE_MAX, so that 3n and friends fit an int and a parameter's
 * elements a size_t, and for the size keys of doc/MODELS.md 1 .. their
 * maximum (model.c's size_max: 16384 for d_model, 1024 layers, ...), so
 * that an architecture may allocate by them before its parameters are
 * checked against the file; -1 with err_msg() naming the key otherwise.
 */
#define MODEL_SIZE_MAX (1 << 20)
int model_size_key(const struct model *m, const char *key, int *out);

/*
 * Checks one "key=value" setting of a new model of architecture a: a key
 * a user may set for it, with a value of its kind and range.  -1 with a
 * message naming the key, and for an unknown key listing the keys.
 * (model_create does not check: a model file may hold keys of its own.)
 */
int model_check_setting(const struct arch *a, const char *kv);
/* The keys a user may set for a, separated by spaces, in buf. */
void model_keys(const struct arch *a, char *buf, size_t size);

/*
 * A fresh model: arch, config (defaults, then the "key=value" settings),
 * vocabularies (text), seed; declared, allocated and initialised.
 */
struct model *model_create(const char *arch, const char *const *settings,
			   int nsettings, const char *vocab_src,
			   const char *vocab_tgt);
/*
 * Loads a model file (mapped; f16/bf16 parameters converted to f32, int8
 * ones kept in p->q and p->qs and dequantised into p->w, and all refused
 * when training); every
 * parameter the config declares must be there with its shape, and the
 * program refuses the model otherwise, naming the record.  Only the
 * records used are read and their checksums verified.  mode is one of
 * MODEL_LOAD_* below (0 and 1: training or not).  With MODEL_LOAD_TRAIN,
 * gradients are allocated and optimiser state is left for train.c to read
 * from the returned map (*mapp, may be NULL; every record verified).
 */
struct model *model_load(const char *path, int mode, struct tsr_map **mapp);
/* model_load's modes: how the parameters are held. */
enum {
	MODEL_LOAD_COPY,	/* in m->w, one writable allocation */
	MODEL_LOAD_TRAIN,	/* the same, and gradients in m->g */
	/*
	 * For translation: f32 parameters stay where they lie in the mapped
	 * file (m->map, kept open for the model's life; read-only, a write
	 * faults), only f16/bf16 ones are converted into m->w; mapp must be
	 * NULL.  Start-up costs the payloads' checksums, not a copy.
	 */
	MODEL_LOAD_MAPPED,
};
/* Writes config, vocabularies and parameters (and the extra records, e.g.
 * the optimiser's state) atomically: write, fsync, rename. */
int model_save(const struct model *m, const char *path,
	       const struct tensor *extra, int nextra);
/* The same for translation only: parameters as dtype (DT_F16 or DT_BF16),
 * without the optimiser's or the generator's state.  model_load() reads it;
 * training refuses it.  DT_I8: the matrices of products (model_param_int8)
 * quantised per row (gemm_packed.h's quant_rows_i8) as NAME, i8 [out, in],
 * and NAME.scale, f32 [out]; the other parameters f32. */
int model_export(const struct model *m, const char *path, int dtype);
/*
 * Writes m's shortlist (shortlist.h) into the model file at path, which
 * must be m's: every other record of the file as it is (an export's, the
 * optimiser's state), the shortlist's replaced; atomically, as
 * model_save.  0, or -1 (err_msg()).
 */
int model_save_shortlist(const struct model *m, const char *path);
void model_free(struct model *m);

#endif
