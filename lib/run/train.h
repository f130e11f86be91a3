/*
 * train.h: training a model on sentence pairs (doc/MODELS.md, Training): the
 * corpus in memory, batches by token count from length-sorted windows in
 * an order drawn from the model's generator, the loop (arch->train_batch,
 * clipping, the optimiser and its schedule), periodic atomic saves that
 * let a stopped run resume bit for bit, and checkpoint averaging.
 *
 * Where a run stands is kept in the model's config: step (updates done),
 * epoch (passes completed), batch_in_epoch (batches of the current pass
 * done) and epoch_seed (the draw from the generator that ordered the
 * current pass).  A pass's order is a function of epoch_seed and the
 * corpus alone, so a resumed run continues exactly where it stopped.
 */
#ifndef ATTN_TRAIN_H
#define ATTN_TRAIN_H

#include <stdint.h>
#include "models/model.h"

/* Sentence pairs: ids of pair i at src + soff[i] (slen[i] of them). */
struct corpus {
	int n;
	int32_t *src, *tgt;
	size_t *soff, *toff;
	int *slen, *tlen;
	uint32_t crc;		/* of every id, to notice a changed corpus */
	/* guided alignment's links (align.links), when the pairs have them:
	 * pair i's are (source unit, target unit) pairs links[2 * loff[i]
	 * .. 2 * loff[i + 1]) */
	int has_links;
	int32_t *links;
	size_t *loff;
};

/*
 * Reads a pairs stream (frames with src.ids and tgt.ids, as tokenize
 * --pairs writes them) to its end from r, checking the ids against m's
 * vocabularies (m NULL: only that they are ids), and each frame by check
 * (NULL: none; ctx is its argument), whose -1 stops the reading with its
 * err_msg(); and guided alignment's align.links (i32 [links, 2] of source
 * and target unit positions), which every frame has or none does.
 * Messages name r's stream.
 */
int corpus_read(struct corpus *c, struct tsr_reader *r, const struct model *m,
		int (*check)(struct frame *f, void *ctx), void *ctx);
/* The mean source length over the mean target length of c's pairs (ids,
 * </s> included), 0 for no pairs: rnnsearch's diag_ratio. */
double corpus_length_ratio(const struct corpus *c);
void corpus_free(struct corpus *c);

/* One pass's batches: batch b is pairs idx[start[b] .. start[b+1]). */
struct epoch_plan {
	int nbatch;
	int *idx;		/* [corpus n] */
	int *start;		/* [nbatch + 1] */
};

/*
 * The order of a pass: the pairs shuffled from seed, sorted by length in
 * windows, cut into batches of at most batch_tokens padded target tokens
 * (at least one pair each), and the batches shuffled.
 */
int epoch_plan_make(struct epoch_plan *p, const struct corpus *c,
		    uint64_t seed, int batch_tokens);
void epoch_plan_free(struct epoch_plan *p);

/* What train_run reports through train_opts.report. */
enum train_event {
	TRAIN_PROGRESS,		/* where the run stands, the loss since the
				 * last report */
	TRAIN_DEV,		/* an evaluation on the dev pairs */
	TRAIN_SKIPPED,		/* a batch skipped: its loss or gradient is
				 * not finite (nonfinite_loss says which) */
	TRAIN_REORDERED,	/* the corpus differs from the one the pass
				 * began with: it goes on in another order */
	TRAIN_STOPPING,		/* a signal arrived (signal): saving */
	TRAIN_PATIENCE,		/* stopping: since_best evaluations without
				 * a better one (the best at best_step) */
	TRAIN_SAVED,		/* the model saved at the end */
};

/* The numbers of a report; each event sets the fields it names. */
struct train_report {
	enum train_event event;
	long step;		/* updates done, in all runs */
	long epoch;		/* the pass under way, from 1 */
	double epoch_done;	/* the share of its batches done, 0 .. 1 */
	double elapsed;		/* seconds since train_run began */
	double left;		/* PROGRESS: seconds to the nearest limit,
				 * < 0 without one */
	double loss, ppl;	/* PROGRESS: per target token since the last
				 * progress report (loss with smoothing) */
	double guide;		/* PROGRESS: guided alignment's loss
				 * (weighted) per target token, < 0 without */
	double lr;		/* PROGRESS: the last update's rate */
	double tok_per_s;	/* PROGRESS: target tokens a second since the
				 * last; SAVED: over the whole run */
	int skipped;		/* PROGRESS: batches skipped since the last */
	double dev_nll, dev_ppl;	/* DEV: loss per target token, exp */
	double dev_bleu;	/* DEV: BLEU of greedy translations, < 0 if
				 * not scored */
	int dev_lines;		/* DEV: pairs evaluated */
	int best;		/* DEV: the best so far, saved as PATH.best */
	long best_step;		/* DEV, PATIENCE: the step of the best */
	long since_best;	/* DEV, PATIENCE: evaluations since */
	int pairs;		/* SKIPPED: pairs of the batch */
	int nonfinite_loss;	/* SKIPPED: 1 the loss, 0 the gradient */
	int signal;		/* STOPPING */
};

struct train_opts {
	long steps;		/* stop after this many updates (0: no limit) */
	long epochs;		/* ... after this many passes end */
	double seconds;		/* ... after this much time */
	int cpu_time;		/* time (limit, reports) is the process's CPU
				 * time, not the wall clock's */
	long save_every;	/* updates between saves (0: at the end only) */
	int keep;		/* keep the last K saves as MODEL.ckpt.STEP */
	long log_every;		/* updates between progress reports ... */
	double log_seconds;	/* ... or seconds (0: no limit); and after
				 * the first update */
	long dev_every;		/* updates between evaluations on dev */
	int dev_lines;		/* the first pairs of dev evaluated (0: all) */
	int dev_bleu;		/* with the BLEU of greedy translations */
	long patience;		/* stop after this many evaluations without
				 * a better one (0: never) */
	long batch_tokens;	/* target tokens a batch (0: the model's
				 * batch_tokens; else stored in it) */
	int batch;		/* sentences per batch on dev */
	/* KEY=VALUE settings of the model's config (model.h's
	 * model_check_setting), made before training and saved with it */
	const char *const *set;
	int nset;
	/* called with every report (NULL: none); ctx is its own */
	void (*report)(const struct train_report *r, void *ctx);
	void *ctx;
};

/*
 * Trains the model at path (loaded with its optimiser's state) on train,
 * evaluating on dev (may be NULL), until a limit of o is reached, the
 * patience runs out or SIGINT/SIGTERM arrives; then saves and returns 0.
 * The best evaluation's model is saved as PATH.best (a higher BLEU, or
 * with the same BLEU or none a lower loss).  Progress, dev results
 * and warnings go to o->report, never to a stream.  The model is locked
 * (train_lock) and its directory checked for writing before training.
 * -1 on error (a model with NaN in it is never written).
 */
int train_run(const char *path, const struct corpus *train,
	      const struct corpus *dev, const struct train_opts *o);

/*
 * Locks the model at path for one writer: an fcntl lock on path.lock
 * (made if need be; it holds the holder's pid).  Returns the descriptor
 * for train_unlock, or -1 with a message naming the process that holds
 * it.  train_run takes it for the whole run.  A file left by a holder
 * that was killed is taken over.
 */
int train_lock(const char *path);
/* Unlocks what train_lock(path) gave (fd; -1: nothing) and removes
 * path.lock, so that a clean exit leaves nothing behind. */
void train_unlock(const char *path, int fd);

/*
 * The mean loss per target token of dev under m (no dropout): *nll the
 * mean -log p, the sum over target tokens divided by their number.
 */
int dev_loss(const struct model *m, const struct corpus *dev, int batch,
	     double *nll);

/*
 * The BLEU (sacreBLEU's default: 13a, exp smoothing) of m's greedy
 * translations of dev's sources, detokenised as decode prints them,
 * against their detokenised targets, in batches of `batch` sentences.
 */
int dev_bleu(const struct model *m, const struct corpus *dev, int batch,
	     double *bleu);

/* Averages the parameters of n models of one shape into out (config,
 * vocabularies and generator of the last one; no optimiser state). */
int model_average(const char *out, char *const *paths, int n);
/* The paths of the last k checkpoints path.ckpt.STEP, oldest first;
 * *n their number (free each and the array). */
char **checkpoints_last(const char *path, int k, int *n);

#endif
