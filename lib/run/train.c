/*
 * train.c: the training loop, its saves, signals and progress; see
 * train.h.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "base/errmsg.h"
#include "optim.h"
#include "search.h"
#include "train.h"

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
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

static void batch_free(struct batch_ids *b)
{
	free(b->ids);
	free(b->len);
}

/* Frames of pairs lo .. hi-1 holding src.ids and tgt.ids. */
static int pair_frames(struct frame *f, const struct corpus *c, int lo,
		       int hi)
{
	int i;

	for (i = lo; i < hi; i++) {
		struct frame *fr = &f[i - lo];
		struct tensor t;
		uint64_t d;

		frame_clear(fr);
		fr->number = i;
		d = c->slen[i];
		if (tensor_init_copy(&t, "src.ids", DT_I32, 1, &d,
				     c->src + c->soff[i]) < 0 ||
		    !frame_put(fr, &t))
			return -1;
		d = c->tlen[i];
		if (tensor_init_copy(&t, "tgt.ids", DT_I32, 1, &d,
				     c->tgt + c->toff[i]) < 0 ||
		    !frame_put(fr, &t))
			return -1;
	}
	return 0;
}

int dev_loss(const struct model *m, const struct corpus *dev, int batch,
	     double *nll)
{
	const struct arch *a = m->arch;
	struct frame *f = calloc(batch, sizeof *f);
	struct frame **fp = calloc(batch, sizeof *fp);
	struct hyp *h = calloc(batch, sizeof *h);
	double sum = 0;
	long ntok = 0;
	int lo, i, n, rc = -1;

	if (!f || !fp || !h) {
		err_set("out of memory for the dev loss");
		goto out;
	}
	for (i = 0; i < batch; i++)
		fp[i] = &f[i];
	for (lo = 0; lo < dev->n; lo += batch) {
		n = dev->n - lo < batch ? dev->n - lo : batch;
		if (pair_frames(f, dev, lo, lo + n) < 0 ||
		    a->embed(m, fp, n) < 0 || a->encode(m, fp, n) < 0 ||
		    a->attend(m, fp, n) < 0 ||
		    search_force(m, fp, n, "tgt.ids", 0, h) < 0)
			goto out;
		for (i = 0; i < n; i++) {
			sum -= h[i].score;
			ntok += h[i].len;
			hyp_free(&h[i]);
		}
	}
	*nll = ntok ? sum / ntok : 0;
	rc = 0;
out:
	for (i = 0; f && i < batch; i++)
		frame_free(&f[i]);
	free(f);
	free(fp);
	free(h);
	return rc;
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
	r->elapsed = now() - t0;
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
		const struct position *pos, const struct corpus *c, int keep)
{
	struct tensor *rec;
	int n, rc;

	if (write_position(m, pos, o->step, c) < 0)
		return -1;
	rec = optim_records(o, m, &n);
	if (!rec)
		return -1;
	rc = model_save(m, path, rec, n);
	free(rec);
	if (rc == 0 && keep > 0) {
		char ck[4096];

		snprintf(ck, sizeof ck, "%s.ckpt.%ld", path, o->step);
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
	double t0, tlast, loss, nll;
	long tok, steps, tok_all, steps_all;
	int skipped;
};

static void progress(struct meter *mt, const struct optim *o,
		     const struct position *pos, double lr,
		     const struct train_opts *opt, long nbatch)
{
	struct train_report r = { .event = TRAIN_PROGRESS };
	double t = now(), el = t - mt->t0, left = -1, per_step;

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
	r.lr = lr;
	r.tok_per_s = t > mt->tlast ? mt->tok / (t - mt->tlast) : 0;
	r.skipped = mt->skipped;
	report(opt, &r, o->step, pos, nbatch, mt->t0);
	mt->tlast = t;
	mt->loss = mt->nll = 0;
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
	double loss, nll, norm;
	int count = 0, rc = -1;

	for (i = 0; i < n; i++)
		ntok += c->tlen[idx[i]];
	if (make_batch(&src, c, idx, n, 0) < 0 ||
	    make_batch(&tgt, c, idx, n, 1) < 0)
		goto out;
	memset(m->g, 0, m->nw * sizeof *m->g);
	m->training = 1;
	loss = m->arch->train_batch(m, &src, &tgt, 1.0f / ntok, &nll, &count);
	m->training = 0;
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

static int evaluate(const struct model *m, const struct corpus *dev,
		    const struct train_opts *opt, long step,
		    const struct position *pos, long nbatch, double t0)
{
	struct train_report r = { .event = TRAIN_DEV };
	double nll;

	if (dev_loss(m, dev, opt->batch > 0 ? opt->batch : 32, &nll) < 0) {
		err_prefix("the dev loss");
		return -1;
	}
	r.dev_nll = nll;
	r.dev_ppl = exp(nll);
	report(opt, &r, step, pos, nbatch, t0);
	return 0;
}

int train_run(const char *path, const struct corpus *train,
	      const struct corpus *dev, const struct train_opts *opt)
{
	struct tsr_map *map;
	struct model *m = model_load(path, 1, &map);
	struct epoch_plan plan = { 0 };
	struct position pos;
	struct optim o = { 0 };
	struct meter mt = { 0 };
	struct sigaction sa, old_int, old_term;
	long batch_tokens, done_epochs = 0, start_step;
	double lr = 0;
	int rc = -1, planned = 0, reordered, r;

	if (!m)
		return -1;
	if (optim_init(&o, m) < 0 || optim_load(&o, m, map) < 0 ||
	    config_int(&m->cfg, "batch_tokens", &batch_tokens) < 0 ||
	    read_position(m, &pos, train, &reordered) < 0) {
		err_prefix("%s", path);
		tsr_map_close(map);
		goto out;
	}
	tsr_map_close(map);
	if (train->n == 0) {
		err_set("no training pairs");
		goto out;
	}
	start_step = o.step;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	stop_signal = 0;
	mt.t0 = mt.tlast = now();
	if (reordered) {
		struct train_report rr = { .event = TRAIN_REORDERED };

		report(opt, &rr, o.step, &pos, 0, mt.t0);
	}
	for (;;) {
		if (stop_signal ||
		    (opt->steps && o.step - start_step >= opt->steps) ||
		    (opt->epochs && done_epochs >= opt->epochs) ||
		    (opt->seconds && now() - mt.t0 >= opt->seconds))
			break;
		if (pos.batch == 0) {	/* a new pass, ordered by the rng */
			pos.seed = rng_next(&m->rng);
			epoch_plan_free(&plan);
			planned = 0;
		}
		if (!planned) {
			if (epoch_plan_make(&plan, train, pos.seed,
					    batch_tokens) < 0)
				goto out;
			planned = 1;
		}
		r = pos.batch < plan.nbatch ? train_one(m, &o, train, &plan,
						&pos, &mt, &lr, opt) : 0;
		if (r < 0)
			goto out;
		if (++pos.batch >= plan.nbatch) {
			pos.epoch++;
			pos.batch = 0;
			done_epochs++;
		}
		if (r == 0)
			continue;
		if (opt->log_every && o.step % opt->log_every == 0)
			progress(&mt, &o, &pos, lr, opt, plan.nbatch);
		if (dev && opt->dev_every && o.step % opt->dev_every == 0 &&
		    evaluate(m, dev, opt, o.step, &pos, plan.nbatch,
			     mt.t0) < 0)
			goto out;
		if (opt->save_every && o.step % opt->save_every == 0 &&
		    save(m, path, &o, &pos, train, opt->keep) < 0)
			goto out;
	}
	if (stop_signal) {
		struct train_report rs = { .event = TRAIN_STOPPING };

		rs.signal = stop_signal;
		report(opt, &rs, o.step, &pos, plan.nbatch, mt.t0);
	}
	if (save(m, path, &o, &pos, train, opt->keep) < 0)
		goto out;
	{
		struct train_report rs = { .event = TRAIN_SAVED };
		double el = now() - mt.t0;

		rs.tok_per_s = el > 0 ? mt.tok_all / el : 0;
		report(opt, &rs, o.step, &pos, plan.nbatch, mt.t0);
	}
	rc = 0;
out:
	if (mt.t0) {
		sigaction(SIGINT, &old_int, NULL);
		sigaction(SIGTERM, &old_term, NULL);
	}
	epoch_plan_free(&plan);
	optim_free(&o);
	model_free(m);
	return rc;
}
