/*
 * bleu.h: BLEU and chrF as sacreBLEU 2.x computes them, on detokenised
 * text, with its tokenisers (13a, intl, char, none), its smoothing methods,
 * its signatures and output formats, and its paired significance tests.
 *
 * Lines and words are UTF-8 (struct bleu_text), checked when read: a word
 * is equal to another when its bytes are, and most text is ASCII, a byte a
 * character.  Where Unicode matters (lowercasing, chrF's characters, the
 * passes that define the tokenisers) text is decoded to code points
 * (struct bleu_str), as Python's str holds them.
 *
 * A metric turns one hypothesis and its references into a fixed number
 * of integer statistics (metric_segment); the statistics of a corpus are
 * their sums, and the score is a function of the sums (metric_score).  The significance tests only resample statistics.
 */
#ifndef ATTN_BLEU_H
#define ATTN_BLEU_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "base/unicode_cat.h"
#include "base/utf8.h"

/* ---- text (bleu_text.c) ---- */

/* UTF-8 text: a line, or a word in one. */
struct bleu_text {
	const char *s;
	size_t n;
};

/* A growable UTF-8 buffer. */
struct bleu_bytes {
	char *s;
	size_t n, cap;
};

/* Code points. */
struct bleu_str {
	const uint32_t *c;
	size_t n;
};

/* A growable code-point buffer. */
struct bleu_buf {
	uint32_t *c;
	size_t n, cap;
};

/*
 * The array p (cap elements of size, n in use) with room for `more` after
 * the n: p itself, or p reallocated (*cap updated); NULL (message naming
 * `what`) when out of memory.  The reserve functions are this for a type.
 */
void *bleu_grow(void *p, size_t *cap, size_t n, size_t more, size_t size, const char *what);
int bleu_buf_reserve(struct bleu_buf *b, size_t more);
void bleu_buf_free(struct bleu_buf *b);
int bleu_bytes_reserve(struct bleu_bytes *b, size_t more);
void bleu_bytes_free(struct bleu_bytes *b);

/*
 * Decodes strict UTF-8 (no overlong forms, surrogates or values past
 * U+10FFFF) into out (appending).  Returns 1 for invalid UTF-8, with *bad
 * the offset of the first bad byte (and no message); -1 out of memory.
 */
int bleu_utf8_decode(const char *s, size_t len, struct bleu_buf *out, size_t *bad);
/* The same check alone: 0 for valid UTF-8, else 1 and *bad. */
int bleu_utf8_check(const char *s, size_t len, size_t *bad);
/* Appends the UTF-8 of n code points (Unicode scalar values) to out. */
int bleu_utf8_encode(const uint32_t *c, size_t n, struct bleu_bytes *out);
/*
 * The character at s[i] (i < n) in *cp; returns its length in bytes (an
 * invalid byte is a character of its own).
 */
static inline size_t bleu_utf8_next(const char *s, size_t n, size_t i, uint32_t *cp)
{
	const unsigned char *u = (const unsigned char *)s + i;
	int k;

	if (*u < 0x80) {
		*cp = *u;
		return 1;
	}
	k = utf8_decode(u, n - i, cp);
	return k ? (size_t)k : 1;
}
/* The eight bytes at s, s[0] the lowest. */
static inline uint64_t bleu_load8(const void *s)
{
	uint64_t v;

	memcpy(&v, s, 8);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap64(v);
#endif
	return v;
}
/* The bytes of v in [lo, hi], of those below 0x80: their top bits. */
static inline uint64_t bleu_bytes_in(uint64_t v, unsigned lo, unsigned hi)
{
	const uint64_t ones = 0x0101010101010101ULL, x = v & 0x7f * ones;

	return (x + (0x80 - lo) * ones) & ~(x + (0x7f - hi) * ones) & ~v & 0x80 * ones;
}
/* Python's str.isspace(). */
static inline int bleu_isspace(uint32_t c)
{
	if (c < 0x80)
		return c == ' ' || (c >= '\t' && c <= '\r') || (c >= 0x1c && c <= 0x1f);
	return ucat_flags(c) & UCAT_SPACE;
}
/* Length of s without its trailing whitespace (Python's rstrip()). */
size_t bleu_rstrip(struct bleu_text s);
/* Appends Python's s.lower() to out. */
int bleu_lower(struct bleu_str s, struct bleu_buf *out);
/* Replaces out by the UTF-8 s lowercased (cps, low: scratch). */
int bleu_lower_utf8(struct bleu_text s, struct bleu_buf *cps, struct bleu_buf *low,
		    struct bleu_bytes *out);

/* Whitespace-separated words of a string, as Python's str.split(). */
struct bleu_words {
	struct bleu_text *w;
	size_t n, cap;
};

/* Replaces the contents of words by the words of s (pointing into s). */
int bleu_split(struct bleu_text s, struct bleu_words *words);
int bleu_words_push(struct bleu_words *words, struct bleu_text w);
/* Makes room for `more` words after the n in use. */
int bleu_words_reserve(struct bleu_words *words, size_t more);
void bleu_words_free(struct bleu_words *words);

/* ---- tokenisers (bleu_tok.c) ---- */

enum bleu_tokenizer { BLEU_TOK_13A, BLEU_TOK_INTL, BLEU_TOK_CHAR, BLEU_TOK_NONE };

/* "13a", "intl", "char", "none"; bleu_tok_parse returns -1 for others. */
const char *bleu_tok_name(enum bleu_tokenizer t);
int bleu_tok_parse(const char *name);
/*
 * Replaces out by the tokenised s, to be split into words (tmp: scratch):
 * the tokeniser's regular expressions, pass after pass, as its definition.
 */
int bleu_tokenize(enum bleu_tokenizer t, struct bleu_str s,
		  struct bleu_buf *out, struct bleu_buf *tmp);
/*
 * Replaces words by the words of the tokenised UTF-8 s (those bleu_split
 * finds in what bleu_tokenize gives, encoded) in one pass; they point into
 * s, or into tmp (cps: scratch).
 */
int bleu_tokenize_words(enum bleu_tokenizer t, struct bleu_text s, struct bleu_words *words,
			struct bleu_buf *cps, struct bleu_bytes *tmp);

/* ---- n-gram matching (bleu_ngram.c) ---- */

#define NGRAM_MAX_ORDER 16

/*
 * Counts the n-grams (orders 1..max_order) of a hypothesis, a sequence of
 * symbols (code points, or word ids), and matches references against them.
 */
struct ngram_table;

struct ngram_table *ngram_new(void);
void ngram_free(struct ngram_table *t);
/*
 * Loads the hypothesis; total[n-1] gets its number of n-grams.  nsym > 0
 * says that its symbols are 0..nsym-1 (word ids), 0 that they may be any.
 */
int ngram_load(struct ngram_table *t, const uint32_t *hyp, size_t len,
	       uint32_t nsym, int max_order, int64_t *total);
/*
 * Matches one reference: match[n-1] gets the sum over the hypothesis'
 * n-grams of min(count in hypothesis, count in this reference), and
 * ref_total[n-1] the reference's number of n-grams.  Each n-gram also keeps
 * its largest count over the references matched since ngram_load.
 */
void ngram_match(struct ngram_table *t, const uint32_t *ref, size_t len,
		 int64_t *match, int64_t *ref_total);
/* Sum of min(count in hypothesis, largest count in a reference) by order. */
void ngram_clipped(const struct ngram_table *t, int64_t *correct);

/*
 * Gives each distinct word of a hypothesis a small integer id, and a
 * reference's words the same ids (WORD_UNKNOWN for words the hypothesis
 * lacks: no n-gram holding one can match).
 */
#define WORD_UNKNOWN UINT32_MAX

struct word_ids;

struct word_ids *word_ids_new(void);
void word_ids_free(struct word_ids *w);
/* Forgets the previous hypothesis; replaces ids by the ids of its words. */
int word_ids_load(struct word_ids *w, const struct bleu_words *hyp, struct bleu_buf *ids);
/* Replaces ids by the ids of a reference's words. */
int word_ids_lookup(const struct word_ids *w, const struct bleu_words *ref, struct bleu_buf *ids);
/* The number of distinct words of the hypothesis: its ids are below it. */
uint32_t word_ids_count(const struct word_ids *w);

/* The same for code points (any Unicode scalar value): chrF's characters. */
struct char_ids;

struct char_ids *char_ids_new(void);
void char_ids_free(struct char_ids *c);
int char_ids_load(struct char_ids *c, const uint32_t *cps, size_t n, struct bleu_buf *ids);
int char_ids_lookup(const struct char_ids *c, const uint32_t *cps, size_t n, struct bleu_buf *ids);
uint32_t char_ids_count(const struct char_ids *c);

/* ---- metrics (bleu.c, chrf.c, bleu_metric.c) ---- */

#define BLEU_ORDER 4
/* hyp_len, ref_len, correct[4], total[4] */
#define BLEU_NSTATS (2 + 2 * BLEU_ORDER)

enum bleu_smooth { BLEU_SMOOTH_EXP, BLEU_SMOOTH_FLOOR, BLEU_SMOOTH_ADD_K, BLEU_SMOOTH_NONE };

struct bleu_cfg {
	enum bleu_tokenizer tok;
	int lowercase;
	enum bleu_smooth smooth;
	double smooth_value;	/* < 0: the method's default (floor 0.1, add-k 1) */
	int effective_order;
};

struct bleu_score {
	double score, bp, ratio, prec[BLEU_ORDER];
	int64_t hyp_len, ref_len;
};

const char *bleu_smooth_name(enum bleu_smooth s);
int bleu_smooth_parse(const char *name);
/* The smoothing value in use: cfg's, or the method's default. */
double bleu_smooth_value(const struct bleu_cfg *cfg);
/* The score from summed statistics, as sacreBLEU's compute_bleu. */
void bleu_compute(const struct bleu_cfg *cfg, const int64_t *stats, struct bleu_score *out);
/* Of several reference lengths, the closest to hyp_len (ties: the shorter). */
int64_t bleu_closest_ref_len(int64_t hyp_len, const int64_t *ref_lens, int nrefs);

struct chrf_cfg {
	int char_order, word_order, beta;
	int lowercase, whitespace, eps_smoothing;
};

/* The chrF score (0..100) of summed statistics: 3 per order (hyp, ref, match). */
double chrf_compute(const struct chrf_cfg *cfg, const int64_t *stats);
/* Splits ASCII punctuation off one end of each word, as chrF++ does. */
int chrf_split_punct(const struct bleu_words *in, struct bleu_words *out);

enum metric_kind { METRIC_BLEU, METRIC_CHRF };

struct metric_work;

struct metric {
	enum metric_kind kind;
	int nstats;
	struct bleu_cfg bleu;
	struct chrf_cfg chrf;
	struct metric_work *work;	/* scratch buffers of metric_segment */
};

/* Sets m up for kind with its configuration taken from bleu or chrf. */
int metric_init(struct metric *m, enum metric_kind kind,
		const struct bleu_cfg *bleu, const struct chrf_cfg *chrf);
void metric_free(struct metric *m);
/* Statistics of one segment (nrefs >= 1 non-empty references). */
int metric_segment(struct metric *m, struct bleu_text hyp,
		   const struct bleu_text *refs, int nrefs, int64_t *stats);
double metric_score(const struct metric *m, const int64_t *stats);
/* "BLEU", "chrF2", "chrF2++" */
void metric_name(const struct metric *m, char *buf, size_t size);
/* BLEU's "82.4/50.0/45.5/37.5 (BP = ...)"; "" for chrF. */
void metric_verbose(const struct metric *m, const int64_t *stats, char *buf, size_t size);

/* What a signature reports beyond the metric's own settings. */
struct sig_info {
	int nrefs;		/* -1: a varying number ("var") */
	const char *test;	/* "bs" or "ar", or NULL */
	int test_n;
	const char *seed;	/* or NULL */
	const char *version;
};

/* "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:..." (short: "#:1|c:mixed|...") */
void metric_signature(const struct metric *m, const struct sig_info *si,
		      int short_form, char *buf, size_t size);

/* ---- significance (significance.c) ---- */

struct sig_result {
	double score;
	double p_value;		/* < 0: none (the baseline) */
	double mean, ci;	/* ci < 0: none (approximate randomisation) */
};

/*
 * Paired bootstrap resampling (Koehn 2004) of a system against a baseline,
 * each given as n rows of m->nstats statistics: n_samples resamples of the
 * n segments drawn from seed.  Fills sys with its score, p-value, and the
 * mean and 95% confidence interval of its resampled scores; and bl (may be
 * NULL) with the baseline's score, mean and interval.
 */
int sig_paired_bs(const struct metric *m, const int64_t *bl, const int64_t *sys,
		  size_t n, int n_samples, uint64_t seed,
		  struct sig_result *bl_res, struct sig_result *sys_res);
/* Paired approximate randomisation (Riezler and Maxwell 2005), n_trials. */
int sig_paired_ar(const struct metric *m, const int64_t *bl, const int64_t *sys,
		  size_t n, int n_trials, uint64_t seed, struct sig_result *sys_res);
/* Mean of scores and half the width of their central 95% (sorts scores). */
void sig_estimate_ci(double *scores, int n, double *mean, double *ci);
/* (count of stats[i] > real + 1) / (n + 1) */
double sig_p_value(const double *stats, int n, double real);

/* ---- corpora (bleu_corpus.c) ---- */

/*
 * The lines of a file, valid UTF-8, each without its trailing whitespace
 * (so "\r\n" ends a line like "\n"; a lone "\r" inside a line is a space).
 */
struct bleu_lines {
	struct bleu_bytes text;
	size_t *end;		/* line i is text.s[i ? end[i-1] : 0 .. end[i]) */
	size_t n, cap;
};

/* Reads f to its end into the empty l; errors name `name` and the line. */
int bleu_lines_read(struct bleu_lines *l, FILE *f, const char *name);
struct bleu_text bleu_line(const struct bleu_lines *l, size_t i);
void bleu_lines_free(struct bleu_lines *l);
/*
 * sacreBLEU's several systems on standard input: splits every line at tabs
 * into *ncols columns (the count of the first line; another count on a
 * later line is an error).  *cols is an array of *ncols line sets.  The
 * lines of l are taken (moved when there is no tab), leaving it empty.
 */
int bleu_lines_columns(struct bleu_lines *l, const char *name,
		       struct bleu_lines **cols, int *ncols);
/*
 * The statistics of every segment of hyp against nref reference sets, in
 * hyp->n rows of m->nstats.  Empty references are left out; a segment whose
 * references are all empty is an error.  *nrefs gets the number of
 * references of every segment, or -1 when it varies.
 */
int bleu_corpus_stats(struct metric *m, const struct bleu_lines *hyp,
		      const struct bleu_lines *refs, int nref,
		      int64_t *stats, int *nrefs);

/* ---- output (bleu_report.c) ---- */

struct bleu_report {
	int width;		/* decimals of scores */
	int score_only;		/* -b */
	int json;		/* else text */
	int short_sig;		/* abbreviated signatures */
	const char *version;	/* in signatures */
};

/* One system's corpus scores, one per metric: text lines or JSON objects. */
void bleu_report_single(FILE *f, const struct bleu_report *o,
			const struct metric *ms, int nm, int64_t *const *sums,
			const struct sig_info *si);
/*
 * One segment's score (sentence level): always a text line, after head,
 * what bleu_sentence_head gives for the segment (the same for every
 * segment with as many references: made once, not once a line).
 */
void bleu_sentence_head(const struct bleu_report *o, const struct metric *m,
			const struct sig_info *si, char *buf, size_t size);
void bleu_report_sentence(FILE *f, const struct bleu_report *o,
			  const struct metric *m, const int64_t *stats, const char *head);

/* Several systems: res[s * nm + k] is system s's result for metric k. */
struct bleu_systems {
	int nsys, nm;
	const char *const *names;
	const struct metric *ms;
	const struct sig_result *res;
	const struct sig_info *si;	/* per metric */
	char test;			/* 0, 'b' (bootstrap) or 'a' (randomisation) */
	int test_n;
};

/* A table (text) or a JSON array of the systems' scores. */
void bleu_report_systems(FILE *f, const struct bleu_report *o,
			 const struct bleu_systems *s);
/* Python's repr() of a float, as json.dumps writes it. */
void bleu_json_float(FILE *f, double x);

#endif
