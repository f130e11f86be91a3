/* optim.c: Adam, Adadelta, schedules and clipping; see optim.h. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/errmsg.h"
#include "kernels/kernels.h"
#include "optim.h"
#include "kernels/vec4.h"

static const char *const slot_names[2][2] = {
	[OPTIM_ADAM] = { "m", "v" },
	[OPTIM_ADADELTA] = { "g2", "dx2" },
};

/* Elements per chunk: the unit of threading, and of the norm's partial
 * sums, whose fixed boundaries keep the norm independent of threads. */
#define CHUNK 16384

int optim_init(struct optim *o, const struct model *m)
{
	const struct config *c = &m->cfg;
	const char *kind = config_get(c, "optim");
	const char *sched = config_get(c, "schedule");
	double d;
	long step, dim;
	int i;

	memset(o, 0, sizeof *o);
	if (!kind || !sched) {
		err_set("config: no key '%s'", kind ? "schedule" : "optim");
		return -1;
	}
	if (strcmp(kind, "adam") == 0)
		o->kind = OPTIM_ADAM;
	else if (strcmp(kind, "adadelta") == 0)
		o->kind = OPTIM_ADADELTA;
	else {
		err_set("config: optim=%s is not adam or adadelta", kind);
		return -1;
	}
	if (strcmp(sched, "constant") == 0)
		o->schedule = SCHED_CONSTANT;
	else if (strcmp(sched, "noam") == 0)
		o->schedule = SCHED_NOAM;
	else {
		err_set("config: schedule=%s is not constant or noam", sched);
		return -1;
	}
	if (config_int(c, "step", &step) < 0 ||
	    config_double(c, "lr", &o->lr) < 0 ||
	    config_double(c, "warmup", &o->warmup) < 0 ||
	    config_double(c, "beta1", &o->beta1) < 0 ||
	    config_double(c, "beta2", &o->beta2) < 0 ||
	    config_double(c, "adam_eps", &o->adam_eps) < 0 ||
	    config_double(c, "rho", &o->rho) < 0 ||
	    config_double(c, "adadelta_eps", &o->adadelta_eps) < 0 ||
	    config_double(c, "clip", &o->clip) < 0)
		return -1;
	if (step < 0 || o->lr < 0 || o->clip < 0 || o->warmup <= 0 ||
	    o->beta1 < 0 || o->beta1 >= 1 || o->beta2 < 0 || o->beta2 >= 1 ||
	    o->rho < 0 || o->rho >= 1 || o->adam_eps <= 0 ||
	    o->adadelta_eps <= 0) {
		err_set("config: a training setting is out of range (step, "
			"lr, clip >= 0; warmup, adam_eps, adadelta_eps > 0; "
			"beta1, beta2, rho in [0, 1))");
		return -1;
	}
	o->step = step;
	/* noam's model size: the Transformer's d_model, else hidden */
	if (config_int(c, "d_model", &dim) < 0 &&
	    config_int(c, "hidden", &dim) < 0)
		dim = 1;
	d = dim > 0 ? dim : 1;
	o->d = d;
	err_clear();
	o->n = m->nw;
	for (i = 0; i < 2; i++) {
		if (posix_memalign((void **)&o->s[i], 64,
				   (o->n ? o->n : 1) * sizeof(float))) {
			o->s[i] = NULL;
			optim_free(o);
			err_set("out of memory for the optimiser's state");
			return -1;
		}
		memset(o->s[i], 0, o->n * sizeof(float));
	}
	return 0;
}

void optim_free(struct optim *o)
{
	free(o->s[0]);
	free(o->s[1]);
	o->s[0] = o->s[1] = NULL;
}

static void slot_record_name(char *buf, size_t size, const struct optim *o,
			     int slot, const char *param)
{
	snprintf(buf, size, "optim.%s.%s", slot_names[o->kind][slot], param);
}

int optim_load(struct optim *o, const struct model *m,
	       const struct tsr_map *map)
{
	char name[TENSOR_NAME_MAX + 1];
	int i, slot, found = 0, total = 2 * m->nparam;

	for (slot = 0; slot < 2; slot++)
		for (i = 0; i < m->nparam; i++) {
			const struct param *p = &m->param[i];
			const struct tensor *t;

			slot_record_name(name, sizeof name, o, slot, p->name);
			t = frame_find(&map->f, name);
			if (!t)
				continue;
			if (t->dtype != DT_F32 || t->rank != p->rank ||
			    t->dim[0] != (uint64_t)p->dim[0] ||
			    (p->rank == 2 &&
			     t->dim[1] != (uint64_t)p->dim[1])) {
				err_set("optimiser state '%s' is not f32 of "
					"the shape of '%s'", name, p->name);
				return -1;
			}
			memcpy(o->s[slot] + (p->w - m->w), t->data,
			       p->n * sizeof(float));
			found++;
		}
	if (found != 0 && found != total) {
		err_set("the optimiser's state is incomplete: %d of %d "
			"optim.%s/%s records", found, total,
			slot_names[o->kind][0], slot_names[o->kind][1]);
		return -1;
	}
	return 0;
}

struct tensor *optim_records(const struct optim *o, const struct model *m,
			     int *n)
{
	struct tensor *t = calloc(2 * m->nparam + 1, sizeof *t);
	int i, slot, k = 0;

	if (!t) {
		err_set("out of memory");
		return NULL;
	}
	for (slot = 0; slot < 2; slot++)
		for (i = 0; i < m->nparam; i++, k++) {
			const struct param *p = &m->param[i];

			slot_record_name(t[k].name, sizeof t[k].name, o, slot,
					 p->name);
			t[k].dtype = DT_F32;
			t[k].rank = p->rank;
			t[k].dim[0] = p->dim[0];
			t[k].dim[1] = p->dim[1];
			t[k].data = o->s[slot] + (p->w - m->w);
			t[k].nbytes = p->n * sizeof(float);
		}
	*n = k;
	return t;
}

double optim_lr(const struct optim *o, long t)
{
	double a, b;

	if (o->schedule == SCHED_CONSTANT)
		return o->lr;
	if (t < 1)
		t = 1;
	a = 1.0 / sqrt((double)t);
	b = t * pow(o->warmup, -1.5);
	return o->lr / sqrt(o->d) * (a < b ? a : b);
}

typedef double f64x4 __attribute__((vector_size(32)));
typedef double f64x2 __attribute__((vector_size(16)));

/* *lo += the squares of x [0, 1], *hi of x [2, 3], in double (exact:
 * 48 bits of product).  Split into pairs by hand: gcc keeps vectors of
 * four doubles in memory when the instruction set has none. */
static void add_squares(f64x2 *lo, f64x2 *hi, const float *x)
{
	f64x4 d = __builtin_convertvector(ld4(x), f64x4);
	f64x2 l = __builtin_shufflevector(d, d, 0, 1);
	f64x2 h = __builtin_shufflevector(d, d, 2, 3);

	*lo += l * l;
	*hi += h * h;
}

/* The sum of squares of chunk k of g [n], in 8 interleaved partial sums
 * (no chain of CHUNK dependent additions): p01 holds those of elements 0
 * and 1 of every eight, and so on, in the compiler's portable vectors of
 * two doubles, named (gcc keeps an array of them in memory). */
static double chunk_sumsq(const float *g, size_t n, int64_t k)
{
	size_t i = (size_t)k * CHUNK, end = i + CHUNK;
	f64x2 p01 = { 0, 0 }, p23 = { 0, 0 }, p45 = { 0, 0 }, p67 = { 0, 0 };
	double s = 0;

	if (end > n)
		end = n;
	for (; i + 8 <= end; i += 8) {
		add_squares(&p01, &p23, g + i);
		add_squares(&p45, &p67, g + i + 4);
	}
	for (; i < end; i++)
		s += (double)g[i] * g[i];
	return s + p01[0] + p01[1] + p23[0] + p23[1] + p45[0] + p45[1] +
	       p67[0] + p67[1];
}

struct norm_ctx {
	const float *g;
	size_t n;
	double *part;
};

static void norm_chunks(void *arg, int64_t lo, int64_t hi)
{
	struct norm_ctx *c = arg;

	for (; lo < hi; lo++)
		c->part[lo] = chunk_sumsq(c->g, c->n, lo);
}

double grad_norm(const float *g, size_t n)
{
	int64_t nchunk = (n + CHUNK - 1) / CHUNK, k;
	struct norm_ctx c = { g, n, NULL };
	double s = 0;

	c.part = malloc((nchunk ? nchunk : 1) * sizeof *c.part);
	if (c.part)
		kern_parallel_for(nchunk, 1, norm_chunks, &c);
	for (k = 0; k < nchunk; k++)	/* in chunk order, whatever the threads */
		s += c.part ? c.part[k] : chunk_sumsq(g, n, k);
	free(c.part);
	return sqrt(s);
}

double clip_factor(const struct optim *o, double norm)
{
	if (o->clip <= 0 || !(norm > o->clip))
		return 1.0;
	return o->clip / norm;
}

struct update_ctx {
	const struct optim *o;
	float *w;
	const float *g;
	float gscale, lr;
};

static void adadelta_chunks(void *arg, int64_t lo, int64_t hi)
{
	const struct update_ctx *c = arg;
	const struct optim *o = c->o;
	float rho = o->rho, eps = o->adadelta_eps;
	float *g2 = o->s[0], *dx2 = o->s[1];
	size_t i = (size_t)lo * CHUNK, end = (size_t)hi * CHUNK;

	if (end > o->n)
		end = o->n;
	for (; i < end; i++) {
		float g = c->g[i] * c->gscale, dx;

		g2[i] = rho * g2[i] + (1 - rho) * g * g;
		dx = -sqrtf(dx2[i] + eps) / sqrtf(g2[i] + eps) * g;
		dx2[i] = rho * dx2[i] + (1 - rho) * dx * dx;
		c->w[i] += c->lr * dx;
	}
}

double optim_update(struct optim *o, struct model *m, double gscale)
{
	long t = o->step + 1;
	double lr = optim_lr(o, t);
	struct update_ctx c = {
		.o = o, .w = m->w, .g = m->g, .gscale = gscale, .lr = lr,
	};

	if (o->kind == OPTIM_ADAM) {
		struct adam_args a = {
			.lr = lr, .b1 = o->beta1, .b2 = o->beta2,
			.eps = o->adam_eps, .gscale = gscale,
			.c1 = 1.0 / (1.0 - pow(o->beta1, t)),
			.c2 = 1.0 / (1.0 - pow(o->beta2, t)),
		};

		adam_update(m->w, o->s[0], o->s[1], m->g, o->n, &a);
	} else {
		kern_parallel_for((o->n + CHUNK - 1) / CHUNK, 1,
				  adadelta_chunks, &c);
	}
	o->step = t;
	return lr;
}
