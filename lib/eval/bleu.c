/*
 * bleu.c: the BLEU score from its sufficient statistics (Papineni et al.
 * 2002), with sacreBLEU's smoothing methods (Chen and Cherry 2014):
 *
 *   exp    mteval-v13a: the k-th order with no match counts 1/2^k matches
 *   floor  an order with no match counts smooth_value (0.1) matches
 *   add-k  orders 2..4 add smooth_value (1) to matches and totals
 *   none   an order with no match makes the score 0
 *
 * With effective_order (sentence BLEU) the geometric mean stops at the
 * highest order the hypothesis has n-grams of.
 */
#include <math.h>
#include <string.h>
#include "bleu.h"

static const char *const smooth_names[] = {
	[BLEU_SMOOTH_EXP] = "exp", [BLEU_SMOOTH_FLOOR] = "floor",
	[BLEU_SMOOTH_ADD_K] = "add-k", [BLEU_SMOOTH_NONE] = "none",
};

const char *bleu_smooth_name(enum bleu_smooth s)
{
	return smooth_names[s];
}

int bleu_smooth_parse(const char *name)
{
	for (size_t i = 0; i < sizeof smooth_names / sizeof smooth_names[0]; i++)
		if (strcmp(name, smooth_names[i]) == 0)
			return i;
	return -1;
}

double bleu_smooth_value(const struct bleu_cfg *cfg)
{
	if (cfg->smooth_value >= 0)
		return cfg->smooth_value;
	return cfg->smooth == BLEU_SMOOTH_ADD_K ? 1.0 : 0.1;
}

/* sacreBLEU's my_log: the log of 0 is a large negative number, not -inf */
static double floor_log(double x)
{
	return x == 0.0 ? -9999999999.0 : log(x);
}

void bleu_compute(const struct bleu_cfg *cfg, const int64_t *stats, struct bleu_score *out)
{
	const int64_t *correct = stats + 2, *total = stats + 2 + BLEU_ORDER;
	double k = bleu_smooth_value(cfg), smooth = 1.0, logsum = 0.0;
	int n, eff = BLEU_ORDER, any = 0;

	memset(out, 0, sizeof *out);
	out->hyp_len = stats[0];
	out->ref_len = stats[1];
	out->ratio = out->ref_len ? (double)out->hyp_len / out->ref_len : 0.0;
	if (out->hyp_len < out->ref_len)
		out->bp = out->hyp_len > 0 ?
			exp(1.0 - (double)out->ref_len / out->hyp_len) : 0.0;
	else
		out->bp = 1.0;
	for (n = 0; n < BLEU_ORDER; n++)
		any |= correct[n] != 0;
	if (!any)
		return;
	for (n = 0; n < BLEU_ORDER; n++) {
		double c = correct[n], t = total[n];

		if (cfg->smooth == BLEU_SMOOTH_ADD_K && n > 0) {
			c += k;
			t += k;
		}
		if (t == 0)
			break;
		if (cfg->effective_order)
			eff = n + 1;
		if (c == 0) {
			if (cfg->smooth == BLEU_SMOOTH_EXP) {
				smooth *= 2;
				out->prec[n] = 100.0 / (smooth * t);
			} else if (cfg->smooth == BLEU_SMOOTH_FLOOR) {
				out->prec[n] = 100.0 * k / t;
			}
		} else {
			out->prec[n] = 100.0 * c / t;
		}
	}
	for (n = 0; n < eff; n++)
		logsum += floor_log(out->prec[n]);
	out->score = out->bp * exp(logsum / eff);
}

int64_t bleu_closest_ref_len(int64_t hyp_len, const int64_t *ref_lens, int nrefs)
{
	int64_t best = -1, best_diff = -1;

	for (int i = 0; i < nrefs; i++) {
		int64_t d = hyp_len > ref_lens[i] ? hyp_len - ref_lens[i] : ref_lens[i] - hyp_len;

		if (best_diff < 0 || d < best_diff) {
			best_diff = d;
			best = ref_lens[i];
		} else if (d == best_diff && ref_lens[i] < best) {
			best = ref_lens[i];
		}
	}
	return best;
}
