/*
 * optim.h: the optimisers of doc/MODELS.md (Adam, Adadelta), the learning-rate
 * schedules (constant, noam) and clipping to a global gradient norm.  The
 * state lives in two float arrays laid out as the model's parameters
 * (m->w) and is saved as optim.<slot>.<parameter> records: Adam's slots m
 * and v, Adadelta's g2 and dx2.
 */
#ifndef ATTN_OPTIM_H
#define ATTN_OPTIM_H

#include <stddef.h>
#include "models/model.h"

enum optim_kind { OPTIM_ADAM, OPTIM_ADADELTA };
enum lr_schedule { SCHED_CONSTANT, SCHED_NOAM };

struct optim {
	int kind, schedule;
	double lr, warmup;
	double d;			/* d_model, or hidden: noam's d^-0.5 */
	double beta1, beta2, adam_eps;
	double rho, adadelta_eps;
	double clip;			/* 0: off */
	long step;			/* updates done */
	size_t n;			/* floats per slot (m->nw) */
	float *s[2];			/* the two slots */
};

/* Reads the training keys of m's config; the slots start at zero. */
int optim_init(struct optim *o, const struct model *m);
/* Restores the slots from a model file's optim.* records, if it has them
 * (all of them, or none: then they stay zero). */
int optim_load(struct optim *o, const struct model *m,
	       const struct tsr_map *map);
/* The slots as records for model_save (pointing into o; free() the array). */
struct tensor *optim_records(const struct optim *o, const struct model *m,
			     int *n);
void optim_free(struct optim *o);

/* The learning rate of update number t (from 1). */
double optim_lr(const struct optim *o, long t);
/* The L2 norm of g [n] (deterministic for any thread count); NaN or
 * infinite when an element is. */
double grad_norm(const float *g, size_t n);
/* The factor min(1, clip / norm) of global-norm clipping. */
double clip_factor(const struct optim *o, double norm);
/*
 * One update of m->w from the gradient m->g times gscale (the clipping
 * factor), with the learning rate of update o->step + 1; o->step then
 * counts it.  Returns that learning rate.
 */
double optim_update(struct optim *o, struct model *m, double gscale);

#endif
