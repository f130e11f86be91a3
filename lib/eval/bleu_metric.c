/*
 * bleu_metric.c: BLEU and chrF behind one interface: the statistics of a
 * segment, the score of summed statistics, the name and the signature.
 *
 * BLEU's statistics: hypothesis length, the reference length closest to it,
 * then by order the matches clipped by the largest count in any reference,
 * and the hypothesis' n-grams.  chrF's: by order (characters, then words)
 * the hypothesis', the reference's and the matched n-grams, taken from the
 * reference that gives the best F-score.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bleu.h"
#include "base/errmsg.h"

/* The processed form of one side (hypothesis or reference). */
struct side {
	struct bleu_buf cps, low, chars, ids;	/* code points, lowercased */
	struct bleu_buf char_ids;
	struct bleu_bytes text, tok;		/* lowercased; 13a's unescaped */
	struct bleu_words words, split;
};

struct metric_work {
	struct side hyp, ref;
	struct word_ids *ids;
	struct char_ids *char_ids;
	struct ngram_table *chars, *words;
	int64_t *ref_lens;
	int64_t *cand;		/* chrF: statistics against one reference */
	int nref_lens;
};

static void side_free(struct side *s)
{
	bleu_buf_free(&s->cps);
	bleu_buf_free(&s->low);
	bleu_buf_free(&s->chars);
	bleu_buf_free(&s->ids);
	bleu_buf_free(&s->char_ids);
	bleu_bytes_free(&s->text);
	bleu_bytes_free(&s->tok);
	bleu_words_free(&s->words);
	bleu_words_free(&s->split);
}

int metric_init(struct metric *m, enum metric_kind kind,
		const struct bleu_cfg *bleu, const struct chrf_cfg *chrf)
{
	struct metric_work *w;

	memset(m, 0, sizeof *m);
	m->kind = kind;
	if (kind == METRIC_BLEU) {
		m->bleu = *bleu;
		m->nstats = BLEU_NSTATS;
	} else {
		m->chrf = *chrf;
		if (chrf->char_order < 0 || chrf->word_order < 0 ||
		    chrf->char_order + chrf->word_order < 1 ||
		    chrf->char_order > NGRAM_MAX_ORDER ||
		    chrf->word_order > NGRAM_MAX_ORDER) {
			err_set("chrF orders must be 0 to %d, not both 0", NGRAM_MAX_ORDER);
			return -1;
		}
		m->nstats = 3 * (chrf->char_order + chrf->word_order);
	}
	w = m->work = calloc(1, sizeof *w);
	if (!w || !(w->ids = word_ids_new()) ||
	    (kind == METRIC_CHRF && !(w->char_ids = char_ids_new())) ||
	    !(w->chars = ngram_new()) ||
	    !(w->words = ngram_new()) ||
	    !(w->cand = malloc(m->nstats * sizeof *w->cand))) {
		metric_free(m);
		err_set("out of memory");
		return -1;
	}
	return 0;
}

void metric_free(struct metric *m)
{
	struct metric_work *w = m->work;

	if (!w)
		return;
	side_free(&w->hyp);
	side_free(&w->ref);
	word_ids_free(w->ids);
	char_ids_free(w->char_ids);
	ngram_free(w->chars);
	ngram_free(w->words);
	free(w->ref_lens);
	free(w->cand);
	free(w);
	m->work = NULL;
}

/* BLEU: lowercase, right-strip, tokenise, split into words. */
static int bleu_words_of(struct metric *m, struct bleu_text line, struct side *s)
{
	if (m->bleu.lowercase) {
		if (bleu_lower_utf8(line, &s->cps, &s->low, &s->text) < 0)
			return -1;
		line = (struct bleu_text){ s->text.s, s->text.n };
	}
	line.n = bleu_rstrip(line);
	return bleu_tokenize_words(m->bleu.tok, line, &s->words, &s->cps, &s->tok);
}

static int bleu_segment(struct metric *m, struct bleu_text hyp,
			const struct bleu_text *refs, int nrefs, int64_t *stats)
{
	struct metric_work *w = m->work;
	int64_t match[BLEU_ORDER], ref_total[BLEU_ORDER];

	if (nrefs > w->nref_lens) {
		int64_t *p = realloc(w->ref_lens, nrefs * sizeof *p);

		if (!p) {
			err_set("out of memory");
			return -1;
		}
		w->ref_lens = p;
		w->nref_lens = nrefs;
	}
	if (bleu_words_of(m, hyp, &w->hyp) < 0 ||
	    word_ids_load(w->ids, &w->hyp.words, &w->hyp.ids) < 0 ||
	    ngram_load(w->chars, w->hyp.ids.c, w->hyp.ids.n, word_ids_count(w->ids),
		       BLEU_ORDER, stats + 2 + BLEU_ORDER) < 0)
		return -1;
	for (int r = 0; r < nrefs; r++) {
		if (bleu_words_of(m, refs[r], &w->ref) < 0 ||
		    word_ids_lookup(w->ids, &w->ref.words, &w->ref.ids) < 0)
			return -1;
		ngram_match(w->chars, w->ref.ids.c, w->ref.ids.n, match, ref_total);
		w->ref_lens[r] = w->ref.words.n;
	}
	ngram_clipped(w->chars, stats + 2);
	stats[0] = w->hyp.words.n;
	stats[1] = bleu_closest_ref_len(stats[0], w->ref_lens, nrefs);
	return 0;
}

/*
 * chrF: lowercase if asked; the characters without whitespace (unless
 * whitespace is kept); for chrF++ the words with end punctuation split off.
 */
static int chrf_side(struct metric *m, struct bleu_text line, struct side *s)
{
	struct bleu_str t;
	size_t bad;

	s->cps.n = 0;
	if (bleu_utf8_decode(line.s, line.n, &s->cps, &bad) != 0) {
		err_set("invalid UTF-8");
		return -1;
	}
	t = (struct bleu_str){ s->cps.c, s->cps.n };
	if (m->chrf.lowercase) {
		s->low.n = 0;
		if (bleu_lower(t, &s->low) < 0)
			return -1;
		t = (struct bleu_str){ s->low.c, s->low.n };
	}
	s->chars.n = 0;
	if (bleu_buf_reserve(&s->chars, t.n) < 0)
		return -1;
	for (size_t i = 0; i < t.n; i++)
		if (m->chrf.whitespace || !bleu_isspace(t.c[i]))
			s->chars.c[s->chars.n++] = t.c[i];
	if (m->chrf.word_order == 0)
		return 0;
	if (m->chrf.lowercase) {
		s->text.n = 0;
		if (bleu_utf8_encode(t.c, t.n, &s->text) < 0)
			return -1;
		line = (struct bleu_text){ s->text.s, s->text.n };
	}
	if (bleu_split(line, &s->words) < 0)
		return -1;
	return chrf_split_punct(&s->words, &s->split);
}

static int chrf_segment(struct metric *m, struct bleu_text hyp,
			const struct bleu_text *refs, int nrefs, int64_t *stats)
{
	struct metric_work *w = m->work;
	int nc = m->chrf.char_order, nw = m->chrf.word_order, order = nc + nw;
	int64_t hyp_total[2 * NGRAM_MAX_ORDER], ref_total[2 * NGRAM_MAX_ORDER];
	int64_t match[2 * NGRAM_MAX_ORDER];
	double best = -1.0;

	/* characters as small ids: their n-grams are found among children */
	if (chrf_side(m, hyp, &w->hyp) < 0 ||
	    char_ids_load(w->char_ids, w->hyp.chars.c, w->hyp.chars.n, &w->hyp.char_ids) < 0 ||
	    ngram_load(w->chars, w->hyp.char_ids.c, w->hyp.char_ids.n,
		       char_ids_count(w->char_ids), nc, hyp_total) < 0)
		return -1;
	if (nw && (word_ids_load(w->ids, &w->hyp.split, &w->hyp.ids) < 0 ||
		   ngram_load(w->words, w->hyp.ids.c, w->hyp.ids.n,
			      word_ids_count(w->ids), nw, hyp_total + nc) < 0))
		return -1;
	for (int r = 0; r < nrefs; r++) {
		double f;

		if (chrf_side(m, refs[r], &w->ref) < 0)
			return -1;
		if (char_ids_lookup(w->char_ids, w->ref.chars.c, w->ref.chars.n,
				    &w->ref.char_ids) < 0)
			return -1;
		ngram_match(w->chars, w->ref.char_ids.c, w->ref.char_ids.n, match, ref_total);
		if (nw) {
			if (word_ids_lookup(w->ids, &w->ref.split, &w->ref.ids) < 0)
				return -1;
			ngram_match(w->words, w->ref.ids.c, w->ref.ids.n,
				    match + nc, ref_total + nc);
		}
		for (int i = 0; i < order; i++) {
			/* no hypothesis n-grams count where the reference has none */
			w->cand[3 * i] = ref_total[i] ? hyp_total[i] : 0;
			w->cand[3 * i + 1] = ref_total[i];
			w->cand[3 * i + 2] = match[i];
		}
		f = chrf_compute(&m->chrf, w->cand);
		if (f > best) {
			best = f;
			memcpy(stats, w->cand, m->nstats * sizeof *stats);
		}
	}
	return 0;
}

int metric_segment(struct metric *m, struct bleu_text hyp,
		   const struct bleu_text *refs, int nrefs, int64_t *stats)
{
	if (m->kind == METRIC_BLEU)
		return bleu_segment(m, hyp, refs, nrefs, stats);
	return chrf_segment(m, hyp, refs, nrefs, stats);
}

double metric_score(const struct metric *m, const int64_t *stats)
{
	struct bleu_score s;

	if (m->kind == METRIC_CHRF)
		return chrf_compute(&m->chrf, stats);
	bleu_compute(&m->bleu, stats, &s);
	return s.score;
}

void metric_name(const struct metric *m, char *buf, size_t size)
{
	if (m->kind == METRIC_BLEU) {
		snprintf(buf, size, "BLEU");
		return;
	}
	snprintf(buf, size, "chrF%d%.*s", m->chrf.beta, m->chrf.word_order,
		 "++++++++++++++++");
}

void metric_verbose(const struct metric *m, const int64_t *stats, char *buf, size_t size)
{
	struct bleu_score s;

	if (m->kind != METRIC_BLEU) {
		snprintf(buf, size, "%s", "");
		return;
	}
	bleu_compute(&m->bleu, stats, &s);
	snprintf(buf, size, "%.1f/%.1f/%.1f/%.1f (BP = %.3f ratio = %.3f "
		 "hyp_len = %lld ref_len = %lld)", s.prec[0], s.prec[1],
		 s.prec[2], s.prec[3], s.bp, s.ratio, (long long)s.hyp_len,
		 (long long)s.ref_len);
}

/* Appends "key:value" (or its short key) with a '|' between pairs. */
static void add(char *buf, size_t size, int short_form, const char *key,
		const char *abbr, const char *value)
{
	size_t len = strlen(buf);

	if (len < size)
		snprintf(buf + len, size - len, "%s%s:%s", len ? "|" : "",
			 short_form ? abbr : key, value);
}

void metric_signature(const struct metric *m, const struct sig_info *si,
		      int short_form, char *buf, size_t size)
{
	char v[64];
	int lc;

	buf[0] = 0;
	if (si->nrefs < 0)
		snprintf(v, sizeof v, "var");
	else
		snprintf(v, sizeof v, "%d", si->nrefs);
	add(buf, size, short_form, "nrefs", "#", v);
	if (si->test) {
		snprintf(v, sizeof v, "%d", si->test_n);
		add(buf, size, short_form, si->test, si->test, v);
	}
	if (si->seed)
		add(buf, size, short_form, "seed", "rs", si->seed);
	lc = m->kind == METRIC_BLEU ? m->bleu.lowercase : m->chrf.lowercase;
	add(buf, size, short_form, "case", "c", lc ? "lc" : "mixed");
	if (m->kind == METRIC_BLEU) {
		add(buf, size, short_form, "eff", "e", m->bleu.effective_order ? "yes" : "no");
		add(buf, size, short_form, "tok", "tok", bleu_tok_name(m->bleu.tok));
		if (m->bleu.smooth == BLEU_SMOOTH_FLOOR || m->bleu.smooth == BLEU_SMOOTH_ADD_K)
			snprintf(v, sizeof v, "%s[%.2f]", bleu_smooth_name(m->bleu.smooth),
				 bleu_smooth_value(&m->bleu));
		else
			snprintf(v, sizeof v, "%s", bleu_smooth_name(m->bleu.smooth));
		add(buf, size, short_form, "smooth", "s", v);
	} else {
		add(buf, size, short_form, "eff", "e", m->chrf.eps_smoothing ? "no" : "yes");
		snprintf(v, sizeof v, "%d", m->chrf.char_order);
		add(buf, size, short_form, "nc", "nc", v);
		snprintf(v, sizeof v, "%d", m->chrf.word_order);
		add(buf, size, short_form, "nw", "nw", v);
		add(buf, size, short_form, "space", "s", m->chrf.whitespace ? "yes" : "no");
	}
	add(buf, size, short_form, "version", "v", si->version);
}
