/*
 * chrf.c: chrF (Popović 2015) and chrF++ (Popović 2017) from their
 * statistics, as sacreBLEU 2.x computes them: the F-beta of the precision
 * and recall averaged over the character orders 1..char_order and word
 * orders 1..word_order that both sides have n-grams of ("eff:yes"), or,
 * with eps_smoothing, the mean of the per-order F-scores with 1e-16 for
 * missing orders (chrF++.py, Moses, NLTK).
 */
#include "bleu.h"

double chrf_compute(const struct chrf_cfg *cfg, const int64_t *stats)
{
	const double eps = 1e-16;
	int order = cfg->char_order + cfg->word_order, eff = 0;
	double factor = (double)cfg->beta * cfg->beta;
	double score = 0.0, avg_prec = 0.0, avg_rec = 0.0;

	for (int i = 0; i < order; i++) {
		int64_t n_hyp = stats[3 * i], n_ref = stats[3 * i + 1];
		int64_t n_match = stats[3 * i + 2];
		double prec = n_hyp > 0 ? (double)n_match / n_hyp : eps;
		double rec = n_ref > 0 ? (double)n_match / n_ref : eps;
		double denom = factor * prec + rec;

		score += denom > 0 ? (1 + factor) * prec * rec / denom : eps;
		if (n_hyp > 0 && n_ref > 0) {
			avg_prec += prec;
			avg_rec += rec;
			eff++;
		}
	}
	if (cfg->eps_smoothing)
		return 100 * score / order;
	if (eff == 0)
		return 0.0;
	avg_prec /= eff;
	avg_rec /= eff;
	if (avg_prec + avg_rec == 0)
		return 0.0;
	score = (1 + factor) * avg_prec * avg_rec;
	score /= factor * avg_prec + avg_rec;
	return 100 * score;
}

/* Python's string.punctuation: ASCII's printable characters but letters,
 * digits and the space (a character of one byte) */
static int is_ascii_punct(char c)
{
	unsigned char u = c;

	return u > ' ' && u < 0x7f && !((u | 0x20) >= 'a' && (u | 0x20) <= 'z') &&
	       !(u >= '0' && u <= '9');
}

int chrf_split_punct(const struct bleu_words *in, struct bleu_words *out)
{
	out->n = 0;
	if (bleu_words_reserve(out, 2 * in->n) < 0)
		return -1;
	for (size_t i = 0; i < in->n; i++) {
		struct bleu_text w = in->w[i];
		struct bleu_text head = w, tail = { NULL, 0 };

		/* as the original, "(hi)" gives "(hi" and ")"; a punctuation
		 * byte is a character, and more bytes are more characters */
		if (w.n > 1 && is_ascii_punct(w.s[w.n - 1])) {
			head.n = w.n - 1;
			tail = (struct bleu_text){ w.s + w.n - 1, 1 };
		} else if (w.n > 1 && is_ascii_punct(w.s[0])) {
			head.n = 1;
			tail = (struct bleu_text){ w.s + 1, w.n - 1 };
		}
		out->w[out->n++] = head;
		if (tail.n)
			out->w[out->n++] = tail;
	}
	return 0;
}
