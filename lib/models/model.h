/*
 * model.h: a translation model: its config, vocabularies and parameters,
 * and its architecture's operations (arch.h).
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
#include "base/scratch.h"
#include "stream/stream.h"
#include "arch.h"

#define PARAM_NAME_MAX 64

struct param {
	char name[PARAM_NAME_MAX];
	int rank;		/* 1 or 2 */
	int dim[2];
	size_t n;		/* elements */
	float *w;		/* into model.w, or a mapped file (read-only) */
	float *g;		/* into model.g, NULL when not training */
	/* From an int8 export (or Marian's intgemm8 import): the matrix as
	 * int8 and its row scales (into model.qbuf), w_jk = q_jk qs_j, as
	 * w holds it; else NULL. */
	const int8_t *q;
	const float *qs;
};

struct model {
	struct config cfg;
	const struct arch *arch;
	char *vocab_src, *vocab_tgt;	/* the tokenizer's vocabularies: attn's
					   text, or a SentencePiece model's
					   bytes; NUL after the last byte,
					   which a binary one may hold too */
	size_t vocab_src_len, vocab_tgt_len;
	int src_vocab, tgt_vocab;	/* sizes, from the config */
	/* The special units, the same in both vocabularies: the config's
	 * pad_id, bos_id, eos_id and unk_id (0 1 2 3 when absent, as
	 * doc/MODELS.md's own vocabularies have them); bos_id -1: the
	 * decoder's first input is a zero vector (Marian's models). */
	int pad_id, bos_id, eos_id, unk_id;
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
	int int8;			/* an int8 export: the products by
					   its int8 matrices in int8
					   (gemm_packed.h) */
	void *qbuf;			/* the params' q and qs */
	struct wpack *i8packs;		/* [nparam]: the int8 ones packed,
					   registered for linear_forward */
	float marian_out_qb;		/* a Marian int8 import's tied float
					   output layer: Marian's multiplier
					   of it, 127 / max |w|, taken once
					   when loaded (0: not known), */
	int8_t *marian_out_q;		/* and its values quantised so, for
					   the shortlists' rows (NULL: not
					   made) */
	/* Records of the file that are not the model's own but travel
	 * with it (shortlist.*: shortlist.h reads them), copied, and
	 * written back as they are by model_save and model_export. */
	int nannex;
	struct tensor *annex;
	struct rng rng;			/* the run's one generator */
	struct scratch scratch;		/* a training batch's activations
					   (base/scratch.h), kept from batch
					   to batch */
};

/* ---- making, loading and saving models ------------------------------------ */

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
 * maximum (model_keys.c's table: 16384 for d_model, 1024 layers, ...), so
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
 * model_create in two steps, for a caller that checks what it will put
 * into the parameters (m->param's names and shapes) before their room is
 * allocated: model_declared, the parameters declared (p->w NULL); then
 * model_realize, allocated and initialised as model_create's (-1 with
 * err_msg(): the caller frees m).
 */
struct model *model_declared(const char *arch, const char *const *settings,
			     int nsettings, const char *vocab_src,
			     const char *vocab_tgt);
int model_realize(struct model *m);
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
/*
 * model_load with nset settings KEY=VALUE (model_check_setting's) over
 * the file's model.config before the model is built from it (train-step
 * --set on a trained model): the network runs with them and saves them.
 * A setting that changes a parameter's shape fails as the file's records
 * then do.
 */
struct model *model_load_set(const char *path, int mode,
			     struct tsr_map **mapp, const char *const *set,
			     int nset);
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
 * the optimiser's state, or an import's shortlist) atomically: write,
 * fsync, rename.  An int8 model (m->int8: one imported from Marian's
 * intgemm8) is written as model_export's DT_I8 writes it, its int8
 * matrices as they are, with the extra records. */
int model_save(const struct model *m, const char *path,
	       const struct tensor *extra, int nextra);
/* The same for translation only: parameters as dtype (DT_F16 or DT_BF16),
 * without the optimiser's or the generator's state.  model_load() reads it;
 * training refuses it.  DT_I8: the matrices of products (model_param_int8)
 * quantised per row (gemm_packed.h's quant_rows_i8) as NAME, i8 [out, in],
 * and NAME.scale, f32 [out] (an int8 model's own, p->q and p->qs, as they
 * are); the other parameters f32. */
int model_export(const struct model *m, const char *path, int dtype);
/*
 * The names of the annexes a model file may hold: those that begin with
 * one of these prefixes (NULL-ended).
 */
extern const char *const model_annex_prefixes[];
/* m's annex record name, or NULL. */
const struct tensor *model_annex(const struct model *m, const char *name);
/*
 * Replaces the annexes whose names begin with prefix, in the model file
 * at path, by the n records rec: every other record of the file stays as
 * it is (an export's parameters, the optimiser's state); atomically, as
 * model_save.  Each of rec's names must begin with prefix, one of
 * model_annex_prefixes.  0, or -1 (err_msg()).
 */
int model_file_set_annexes(const char *path, const char *prefix,
			   const struct tensor *rec, int n);
/* Replaces m's source (target 0) or target (1) vocabulary by the len
 * bytes at v, copied (any bytes: a SentencePiece model's included).
 * 0, or -1 (err_msg()). */
int model_set_vocab(struct model *m, int target, const void *v, size_t len);
void model_free(struct model *m);

/*
 * Identities, for the streams made with a model (the programs' model.id
 * record): the hash of two vocabularies' bytes, and of a model, its
 * architecture's name, the hash of its vocabularies and every
 * parameter's name, shape and values (the crc32 of zlib's polynomial),
 * in order.  FNV-1a 64, as doc/FORMAT.md gives it.
 */
uint64_t model_vocab_hash(const char *src, size_t nsrc, const char *tgt,
			  size_t ntgt);
uint64_t model_hash(const struct model *m);

#endif
