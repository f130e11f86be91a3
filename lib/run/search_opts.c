/*
 * search_opts.c: the decoding settings: doc/MODELS.md's defaults, the
 * maximum length, and those a model file names (search.h).
 */
#include <math.h>
#include <string.h>
#include "base/errmsg.h"
#include "search.h"

void search_opts_default(struct search_opts *o)
{
	memset(o, 0, sizeof *o);
	o->k = 1;
	o->alpha = 0;
	o->len_a = 2;
	o->len_b = 10;
	o->nbest = 1;
	o->min_len = 1;
}

int search_max_len(const struct search_opts *o, int S)
{
	double x = o->len_a * S + o->len_b;
	double n = o->len_ceil ? ceil(x) : floor(x);

	if (!(n >= 1))
		return 1;
	return n > 100000 ? 100000 : (int)n;
}

/* Config key of m as a number in [lo, hi] into *v: 1, 0 when absent,
 * -1 with err_msg() when not such a number. */
static int model_number(const struct model *m, const char *key, double lo,
			double hi, double *v)
{
	if (!config_get(&m->cfg, key))
		return 0;
	if (config_double(&m->cfg, key, v) < 0)
		return -1;
	if (!(*v >= lo && *v <= hi)) {
		err_set("model.config: %s=%g is not from %g to %g", key, *v,
			lo, hi);
		return -1;
	}
	return 1;
}

int search_opts_model(struct search_opts *o, const struct model *m,
		      unsigned given, int beam)
{
	double k, norm, factor, allow, wp, minl, empty;
	int rk, rn, rf, ru, rw, rm, re;

	if ((rk = model_number(m, "dec_beam_size", 1, 1000, &k)) < 0 ||
	    (rn = model_number(m, "dec_normalize", 0, 100, &norm)) < 0 ||
	    (rf = model_number(m, "dec_max_length_factor", 0, 1000,
			       &factor)) < 0 ||
	    (ru = model_number(m, "dec_allow_unk", 0, 1, &allow)) < 0 ||
	    (rw = model_number(m, "dec_word_penalty", -1e6, 1e6, &wp)) < 0 ||
	    (rm = model_number(m, "dec_min_len", 0, SEARCH_MIN_LEN_MAX,
			       &minl)) < 0 ||
	    (re = model_number(m, "dec_empty_source", 0, 1, &empty)) < 0)
		return -1;
	if ((rm && minl != floor(minl)) || (re && empty != floor(empty))) {
		err_set("model.config: dec_min_len=%g, dec_empty_source=%g: "
			"integers", minl, empty);
		return -1;
	}
	if (rm && !(given & SEARCH_GIVEN_MIN_LEN))
		o->min_len = (int)minl;
	if (re)
		o->empty_source = empty == 1;
	if (beam && rw && !(given & SEARCH_GIVEN_ALPHA))
		o->word_penalty = wp;
	if (ru && allow == 0 && m->unk_id >= 0)
		o->no_unk = 1;
	if (rk && k != floor(k)) {
		err_set("model.config: dec_beam_size=%g is not an integer", k);
		return -1;
	}
	if (beam && rk && !(given & SEARCH_GIVEN_K))
		o->k = (int)k;
	if (beam && rn && !(given & SEARCH_GIVEN_ALPHA)) {
		o->alpha = norm;
		o->lp_power = 1;
	}
	if (rf && !(given & SEARCH_GIVEN_LEN)) {
		o->len_a = factor;
		o->len_b = 0;
		o->len_ceil = 1;
	}
	return 0;
}
