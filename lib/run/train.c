/*
 * train.c: the training loop, its saves, signals and progress; see
 * train.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "base/errmsg.h"
#include "base/outfile.h"
#include "optim.h"
#include "search.h"
#include "train.h"

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

/* Seconds on o's clock: the wall clock, or the CPU time of the process
 * (all its threads) when o->cpu_time, the same budget on a busy machine. */
static double now(const struct train_opts *o)
{
	struct timespec ts;

	clock_gettime(o->cpu_time ? CLOCK_PROCESS_CPUTIME_ID : CLOCK_MONOTONIC,
		      &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Pads pairs idx[0 .. n) of one side into b (ids [B, S], len [B]). */
static int make_batch(struct batch_ids *b, const struct corpus *c,
		      const int *idx, int n, int target)
{
	const int32_t *ids = target ? c->tgt : c->src;
	const size_t *off = target ? c->toff : c->soff;
	const int *len = target ? c->tlen : c->slen;
	int i, S = 0;

	for (i = 0; i < n; i++)
		if (len[idx[i]] > S)
			S = len[idx[i]];
	b->B = n;
	b->S = S;
	b->ids = calloc((size_t)n * S, sizeof *b->ids);
	b->len = malloc(n * sizeof *b->len);
	if (!b->ids || !b->len) {
		err_set("out of memory for a batch");
		return -1;
	}
	for (i = 0; i < n; i++) {
		b->len[i] = len[idx[i]];
		memcpy(b->ids + (size_t)i * S, ids + off[idx[i]],
		       b->len[i] * sizeof *b->ids);
	}
	return 0;
}

/*
 * Guided alignment's reference of the batch of pairs idx[0 .. n): t's
 * guide [B, T, S] (S the source batch's), 1 where the pairs link the
 * target unit to the source unit.
 */
static int make_guide(struct batch_ids *t, const struct batch_ids *s,
		      const struct corpus *c, const int *idx)
{
	float *g = calloc((size_t)t->B * t->S * s->S, sizeof *g);
	size_t k;
	int i;

	if (!g) {
		err_set("out of memory for a batch's alignments");
		return -1;
	}
	for (i = 0; i < t->B; i++)
		for (k = c->loff[idx[i]]; k < c->loff[idx[i] + 1]; k++) {
			int su = c->links[2 * k], tu = c->links[2 * k + 1];

			g[((size_t)i * t->S + tu) * s->S + su] = 1;
		}
	t->guide = g;
	return 0;
}

static void batch_free(struct batch_ids *b)
{
	free(b->ids);
	free(b->len);
	free((void *)b->guide);
}

/* Where the run stands, mirrored in the config's keys. */
struct position {
	long epoch, batch;
	uint64_t seed;
};

static int config_setf(struct config *c, const char *key, const char *fmt,
		       ...) ATTN_PRINTF(3, 4);

static int config_setf(struct config *c, const char *key, const char *fmt,
		       ...)
{
	char buf[64];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	return config_set(c, key, buf);
}

/* Sends r (its event set) to o's callback with the time and place. */
static void report(const struct train_opts *o, struct train_report *r,
		   long step, const struct position *pos, long nbatch,
		   double t0)
{
	if (!o->report)
		return;
	r->step = step;
	r->epoch = pos->epoch + 1;
	r->epoch_done = nbatch > 0 ? (double)pos->batch / nbatch : 0;
	r->elapsed = now(o) - t0;
	o->report(r, o->ctx);
}

/* The position stored in m, and whether the pass it is in began on
 * another corpus (*reordered). */
static int read_position(const struct model *m, struct position *pos,
			 const struct corpus *c, int *reordered)
{
	const char *s;
	long crc;

	memset(pos, 0, sizeof *pos);
	*reordered = 0;
	if (!config_get(&m->cfg, "epoch"))
		return 0;	/* a fresh model */
	if (config_int(&m->cfg, "epoch", &pos->epoch) < 0 ||
	    config_int(&m->cfg, "batch_in_epoch", &pos->batch) < 0 ||
	    !(s = config_get(&m->cfg, "epoch_seed")) ||
	    config_int(&m->cfg, "corpus_crc", &crc) < 0) {
		err_set("config: epoch, batch_in_epoch, epoch_seed and "
			"corpus_crc go together");
		return -1;
	}
	pos->seed = strtoull(s, NULL, 10);
	*reordered = pos->batch > 0 && (uint32_t)crc != c->crc;
	return 0;
}

static int write_position(struct model *m, const struct position *pos,
			  long step, const struct corpus *c)
{
	struct config *cfg = &m->cfg;

	return config_setf(cfg, "step", "%ld", step) < 0 ||
	       config_setf(cfg, "epoch", "%ld", pos->epoch) < 0 ||
	       config_setf(cfg, "batch_in_epoch", "%ld", pos->batch) < 0 ||
	       config_setf(cfg, "epoch_seed", "%" PRIu64, pos->seed) < 0 ||
	       config_setf(cfg, "corpus_crc", "%" PRIu32, c->crc) < 0 ? -1 : 0;
}

/*
 * The best evaluation on the dev pairs so far, kept in the config (keys
 * dev_*) so that a resumed run goes on comparing with it, as long as the
 * dev pairs and the way they are scored (key) are the same.
 */
struct best {
	uint32_t key;
	int have;
	double bleu, nll;	/* bleu < 0: not scored */
	long step, since;	/* since: evaluations since the best */
};

static uint32_t dev_key(const struct corpus *dev, const struct train_opts *o)
{
	uint32_t lines = o->dev_lines > 0 && o->dev_lines < dev->n ?
			 (uint32_t)o->dev_lines : (uint32_t)dev->n;

	return dev->crc ^ lines * 2654435761u ^ (o->dev_bleu ? 1u : 0u);
}

static void read_best(const struct model *m, struct best *b,
		      uint32_t key)
{
	const struct config *c = &m->cfg;
	long k;

	memset(b, 0, sizeof *b);
	b->key = key;
	if (config_get(c, "dev_key") && config_int(c, "dev_key", &k) == 0 &&
	    (uint32_t)k == key &&
	    config_double(c, "dev_best_bleu", &b->bleu) == 0 &&
	    config_double(c, "dev_best_loss", &b->nll) == 0 &&
	    config_int(c, "dev_best_step", &b->step) == 0 &&
	    config_int(c, "dev_since_best", &b->since) == 0)
		b->have = 1;
}

static int write_best(struct model *m, const struct best *b)
{
	struct config *c = &m->cfg;

	if (!b->have)
		return 0;
	return config_setf(c, "dev_key", "%" PRIu32, b->key) < 0 ||
	       config_setf(c, "dev_best_bleu", "%.17g", b->bleu) < 0 ||
	       config_setf(c, "dev_best_loss", "%.17g", b->nll) < 0 ||
	       config_setf(c, "dev_best_step", "%ld", b->step) < 0 ||
	       config_setf(c, "dev_since_best", "%ld", b->since) < 0 ? -1 : 0;
}

/* Whether an evaluation beats b: a higher BLEU, or the same BLEU (or
 * none) and a lower loss. */
static int better(const struct best *b, double bleu, double nll)
{
	return !b->have || bleu > b->bleu || (bleu == b->bleu && nll < b->nll);
}

/* Removes checkpoints beyond the last k. */
static void prune_checkpoints(const char *path, int k)
{
	int n, i;
	char **all = checkpoints_last(path, 1 << 30, &n);

	for (i = 0; all && i < n; i++) {
		if (i < n - k)
			unlink(all[i]);
		free(all[i]);
	}
	free(all);
}

static int save(struct model *m, const char *path, const struct optim *o,
		const struct position *pos, const struct corpus *c,
		const struct best *best, int keep)
{
	struct tensor *rec;
	int n, rc;

	if (write_position(m, pos, o->step, c) < 0 || write_best(m, best) < 0)
		return -1;
	rec = optim_records(o, m, &n);
	if (!rec)
		return -1;
	rc = model_save(m, path, rec, n);
	free(rec);
	if (rc == 0 && keep > 0) {
		char ck[4096];

		snprintf(ck, sizeof ck, "%s.ckpt.%ld", path, o->step);
		if (outfile_check(ck) < 0)	/* a link, a device: kept */
			return -1;
		unlink(ck);
		if (link(path, ck) < 0) {
			err_set("%s: %s", ck, strerror(errno));
			return -1;
		}
		prune_checkpoints(path, keep);
	}
	return rc;
}

/* Running sums between progress lines. */
struct meter {
	double t0, tlast, loss, nll, guide;
	int guided;		/* the pairs have links */
	long tok, steps, tok_all, steps_all;
	int skipped;
};

static void progress(struct meter *mt, const struct optim *o,
		     const struct position *pos, double lr,
		     const struct train_opts *opt, long nbatch)
{
	struct train_report r = { .event = TRAIN_PROGRESS };
	double t = now(opt), el = t - mt->t0, left = -1, per_step;

	per_step = mt->steps_all ? el / mt->steps_all : 0;
	if (opt->steps)
		left = (opt->steps - mt->steps_all) * per_step;
	if (opt->epochs) {
		double l = ((opt->epochs - 1) * nbatch + nbatch - pos->batch) *
			   per_step;

		left = left < 0 || l < left ? l : left;
	}
	if (opt->seconds && (left < 0 || opt->seconds - el < left))
		left = opt->seconds - el;
	r.left = left < 0 ? -1 : left;
	r.loss = mt->tok ? mt->loss / mt->tok : 0;
	r.ppl = mt->tok ? exp(mt->nll / mt->tok) : 0;
	r.guide = !mt->guided ? -1 : mt->tok ? mt->guide / mt->tok : 0;
	r.lr = lr;
	r.tok_per_s = t > mt->tlast ? mt->tok / (t - mt->tlast) : 0;
	r.skipped = mt->skipped;
	report(opt, &r, o->step, pos, nbatch, mt->t0);
	mt->tlast = t;
	mt->loss = mt->nll = mt->guide = 0;
	mt->tok = mt->steps = 0;
	mt->skipped = 0;
}

/* One batch: forward, backward, checks, clipping, update.  Returns 1 if
 * it was applied, 0 if skipped, -1 on error. */
static int train_one(struct model *m, struct optim *o,
		     const struct corpus *c, const struct epoch_plan *plan,
		     const struct position *pos, struct meter *mt, double *lr,
		     const struct train_opts *opt)
{
	long b = pos->batch;
	const int *idx = plan->idx + plan->start[b];
	int n = plan->start[b + 1] - plan->start[b], ntok = 0, i;
	struct batch_ids src = { 0 }, tgt = { 0 };
	double loss, nll, norm, guide = 0;
	int count = 0, rc = -1;

	for (i = 0; i < n; i++)
		ntok += c->tlen[idx[i]];
	if (make_batch(&src, c, idx, n, 0) < 0 ||
	    make_batch(&tgt, c, idx, n, 1) < 0 ||
	    (c->has_links && make_guide(&tgt, &src, c, idx) < 0))
		goto out;
	tgt.guide_loss = &guide;
	memset(m->g, 0, m->nw * sizeof *m->g);
	loss = m->arch->train_batch(m, &src, &tgt, 1.0f / ntok, 1, &nll,
				    &count);
	if (loss < 0)		/* an error (a loss is never negative) */
		goto out;
	norm = grad_norm(m->g, m->nw);
	if (!isfinite(loss) || !isfinite(norm)) {
		struct train_report r = { .event = TRAIN_SKIPPED };

		r.pairs = n;
		r.nonfinite_loss = !isfinite(loss);
		report(opt, &r, o->step, pos, plan->nbatch, mt->t0);
		mt->skipped++;
		rc = 0;
		goto out;
	}
	*lr = optim_update(o, m, clip_factor(o, norm));
	mt->loss += loss;
	mt->nll += nll;
	mt->guide += guide;
	mt->tok += count;
	mt->tok_all += count;
	mt->steps++;
	mt->steps_all++;
	rc = 1;
out:
	batch_free(&src);
	batch_free(&tgt);
	return rc;
}

int train_lock(const char *path)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	char lock[4096], pid[32];
	struct stat a, b;
	int fd, n;

	if (snprintf(lock, sizeof lock, "%s.lock", path) >= (int)sizeof lock) {
		err_set("%s: name too long", path);
		return -1;
	}
again:
	fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0) {
		err_set("%s: %s", lock, strerror(errno));
		return -1;
	}
	if (fcntl(fd, F_SETLK, &fl) < 0) {
		int e = errno;

		fl.l_type = F_WRLCK;
		if ((e == EACCES || e == EAGAIN) &&
		    fcntl(fd, F_GETLK, &fl) == 0 && fl.l_type != F_UNLCK)
			err_set("%s is in use: process %ld holds %s", path,
				(long)fl.l_pid, lock);
		else
			err_set("%s: cannot lock: %s", lock, strerror(e));
		close(fd);
		return -1;
	}
	/* a holder that unlocked has removed the file (train_unlock): one
	 * opened before that is no lock of the name's any more */
	if (fstat(fd, &a) < 0 || stat(lock, &b) < 0 || a.st_ino != b.st_ino ||
	    a.st_dev != b.st_dev) {
		close(fd);
		goto again;
	}
	/* the holder's pid, for people (fcntl's F_GETLK is the authority) */
	n = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
	if (ftruncate(fd, 0) < 0 || pwrite(fd, pid, n, 0) != n) {
		err_set("%s: %s", lock, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

void train_unlock(const char *path, int fd)
{
	char lock[4096];

	if (fd < 0)
		return;
	/* removed while still held, so that no one locks it meanwhile */
	if (snprintf(lock, sizeof lock, "%s.lock", path) < (int)sizeof lock)
		unlink(lock);
	close(fd);
}

/*
 * Fails unless a file can be made beside path, as saves make theirs: a
 * directory that cannot be written is found before any training.
 */
static int check_writable(const char *path)
{
	char tmp[4096];
	int fd;

	if (outfile_check(path) < 0)	/* a link, a device: refused now */
		return -1;
	if (snprintf(tmp, sizeof tmp, "%s.tmpXXXXXX", path) >=
	    (int)sizeof tmp) {
		err_set("%s: name too long", path);
		return -1;
	}
	fd = mkstemp(tmp);
	if (fd < 0) {
		err_set("%s: cannot write beside it, where saves go: %s", path,
			strerror(errno));
		return -1;
	}
	close(fd);
	unlink(tmp);
	return 0;
}

/* A training run: the model, its optimiser, where it stands. */
struct run {
	const char *path;
	const struct train_opts *opt;
	const struct corpus *train, *dev;
	struct model *m;
	struct optim o;
	struct position pos;
	struct epoch_plan plan;
	struct meter mt;
	struct best best;
};

static void run_report(struct run *r, struct train_report *rep)
{
	report(r->opt, rep, r->o.step, &r->pos, r->plan.nbatch, r->mt.t0);
}

/*
 * Evaluates on the dev pairs, reports, keeps a better model as
 * PATH.best; *stop set when opt->patience evaluations in a row did not
 * improve.
 */
static int evaluate(struct run *r, int *stop)
{
	const struct train_opts *opt = r->opt;
	struct train_report rep = { .event = TRAIN_DEV };
	int batch = opt->batch > 0 ? opt->batch : 32;
	int lines = opt->dev_lines > 0 && opt->dev_lines < r->dev->n ?
		    opt->dev_lines : r->dev->n;
	struct corpus part = *r->dev;
	double nll, bleu = -1;
	char best[4096];

	part.n = lines;
	if (dev_loss(r->m, &part, batch, &nll) < 0) {
		err_prefix("the dev loss");
		return -1;
	}
	if (opt->dev_bleu && dev_bleu(r->m, &part, batch, &bleu) < 0) {
		err_prefix("the dev BLEU");
		return -1;
	}
	rep.dev_nll = nll;
	rep.dev_ppl = exp(nll);
	rep.dev_bleu = bleu;
	rep.dev_lines = lines;
	if (better(&r->best, bleu, nll)) {
		r->best.have = 1;
		r->best.bleu = bleu;
		r->best.nll = nll;
		r->best.step = r->o.step;
		r->best.since = 0;
		rep.best = 1;
		if (snprintf(best, sizeof best, "%s.best", r->path) >=
		    (int)sizeof best) {
			err_set("%s: name too long", r->path);
			return -1;
		}
		if (save(r->m, best, &r->o, &r->pos, r->train, &r->best,
			 0) < 0)
			return -1;
	} else {
		r->best.since++;
	}
	rep.best_step = r->best.step;
	rep.since_best = r->best.since;
	run_report(r, &rep);
	*stop = opt->patience && r->best.since >= opt->patience;
	return 0;
}

/* Whether a progress report is due after an update. */
static int progress_due(const struct run *r, long start_step)
{
	const struct train_opts *opt = r->opt;

	return r->o.step == start_step + 1 ||
	       (opt->log_every && r->o.step % opt->log_every == 0) ||
	       (opt->log_seconds > 0 &&
		now(opt) - r->mt.tlast >= opt->log_seconds);
}

/* Guided alignment's links and keys going together. */
static int guided_check(struct run *r)
{
	double w = 0;

	if (config_get(&r->m->cfg, "guided_weight") &&
	    config_double(&r->m->cfg, "guided_weight", &w) < 0)
		return -1;
	if (w > 0 && !r->train->has_links) {
		err_set("guided_weight=%g, but the pairs have no align.links "
			"(tokenize --pairs --links)", w);
		return -1;
	}
	if (!(w > 0) && r->train->has_links) {
		err_set("the pairs have align.links, but the model has no "
			"guided_weight (train-step --set guided_weight=W)");
		return -1;
	}
	return 0;
}

/* Loads the model at path with its optimiser and position. */
static int run_open(struct run *r, const char *path, long *batch_tokens)
{
	struct tsr_map *map;
	int reordered;

	r->path = path;
	/* the run's settings (train_opts.set) before the network is built
	 * from the config (a key such as pre_kv set after it was saved but
	 * not run), and before the optimiser reads lr, warmup, clip ... */
	r->m = model_load_set(path, 1, &map, r->opt->set, r->opt->nset);
	if (!r->m)
		return -1;
	if (optim_init(&r->o, r->m) < 0 || optim_load(&r->o, r->m, map) < 0 ||
	    config_int(&r->m->cfg, "batch_tokens", batch_tokens) < 0 ||
	    read_position(r->m, &r->pos, r->train, &reordered) < 0) {
		err_prefix("%s", path);
		tsr_map_close(map);
		return -1;
	}
	tsr_map_close(map);
	if (r->opt->batch_tokens && r->opt->batch_tokens != *batch_tokens) {
		*batch_tokens = r->opt->batch_tokens;
		if (config_setf(&r->m->cfg, "batch_tokens", "%ld",
				*batch_tokens) < 0)
			return -1;
	}
	if (guided_check(r) < 0) {
		err_prefix("%s", path);
		return -1;
	}
	if (r->dev)
		read_best(r->m, &r->best, dev_key(r->dev, r->opt));
	r->mt.guided = r->train->has_links;
	r->mt.t0 = r->mt.tlast = now(r->opt);
	if (reordered) {
		struct train_report rep = { .event = TRAIN_REORDERED };

		run_report(r, &rep);
	}
	return 0;
}

int train_run(const char *path, const struct corpus *train,
	      const struct corpus *dev, const struct train_opts *opt)
{
	struct run r = { .opt = opt, .train = train, .dev = dev };
	struct train_report rep = { 0 };
	struct sigaction sa, old_int, old_term;
	long batch_tokens, done_epochs = 0, start_step;
	double lr = 0, el;
	int rc = -1, planned = 0, stop = 0, k, lock;

	if (train->n == 0) {
		err_set("no training pairs");
		return -1;
	}
	if ((lock = train_lock(path)) < 0)
		return -1;
	if (check_writable(path) < 0 || run_open(&r, path, &batch_tokens) < 0)
		goto out;
	if (dev) {		/* PATH.best, saved on the way: checked now */
		char best[4096];

		snprintf(best, sizeof best, "%s.best", path);
		if (outfile_check(best) < 0)
			goto out;
	}
	start_step = r.o.step;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	stop_signal = 0;
	while (!stop) {
		if (stop_signal ||
		    (opt->steps && r.o.step - start_step >= opt->steps) ||
		    (opt->epochs && done_epochs >= opt->epochs) ||
		    (opt->seconds && now(opt) - r.mt.t0 >= opt->seconds))
			break;
		if (r.pos.batch == 0) {	/* a new pass, ordered by the rng */
			r.pos.seed = rng_next(&r.m->rng);
			epoch_plan_free(&r.plan);
			planned = 0;
		}
		if (!planned) {
			if (epoch_plan_make(&r.plan, train, r.pos.seed,
					    batch_tokens) < 0)
				goto restore;
			planned = 1;
		}
		k = r.pos.batch < r.plan.nbatch ?
		    train_one(r.m, &r.o, train, &r.plan, &r.pos, &r.mt, &lr,
			      opt) : 0;
		if (k < 0)
			goto restore;
		if (++r.pos.batch >= r.plan.nbatch) {
			r.pos.epoch++;
			r.pos.batch = 0;
			done_epochs++;
		}
		if (k == 0)
			continue;
		if (progress_due(&r, start_step))
			progress(&r.mt, &r.o, &r.pos, lr, opt, r.plan.nbatch);
		if (dev && opt->dev_every && r.o.step % opt->dev_every == 0 &&
		    evaluate(&r, &stop) < 0)
			goto restore;
		if (opt->save_every && r.o.step % opt->save_every == 0 &&
		    save(r.m, path, &r.o, &r.pos, train, &r.best,
			 opt->keep) < 0)
			goto restore;
	}
	if (stop) {
		rep.event = TRAIN_PATIENCE;
		rep.since_best = r.best.since;
		rep.best_step = r.best.step;
		run_report(&r, &rep);
	} else if (stop_signal) {
		rep.event = TRAIN_STOPPING;
		rep.signal = stop_signal;
		run_report(&r, &rep);
	}
	if (save(r.m, path, &r.o, &r.pos, train, &r.best, opt->keep) < 0)
		goto restore;
	memset(&rep, 0, sizeof rep);
	rep.event = TRAIN_SAVED;
	el = now(opt) - r.mt.t0;
	rep.tok_per_s = el > 0 ? r.mt.tok_all / el : 0;
	run_report(&r, &rep);
	rc = 0;
restore:
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
out:
	epoch_plan_free(&r.plan);
	optim_free(&r.o);
	model_free(r.m);
	train_unlock(path, lock);
	return rc;
}
