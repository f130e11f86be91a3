/* translate.c: the programs decode, beam and score; see translate.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "text/attn_align.h"
#include "text/vocab.h"
#include "base/errmsg.h"
#include "filter.h"
#include "keepopt.h"
#include "linejoin.h"
#include "opt.h"
#include "kernels/gemm_packed.h"
#include "models/shortlist.h"
#include "modelid.h"
#include "prog.h"
#include "translate.h"

struct tctx {
	const struct translate_opts *o;
	const struct model *m;
	struct search_opts search;	/* o's, with the decoder's options */
	struct sl_table *shortlist;	/* --shortlist's table */
	struct model_id id;
	struct vocab *sv, *tv;
	struct tsr_writer *w;		/* --tensors */
	int scoring;
	struct search_result *res;	/* [window] decode, beam */
	struct hyp *forced;		/* [window] score */
	struct search_result *tmp;	/* [window] */
	struct hyp *tmph;		/* [window] */
	unsigned long long line;	/* sentences written */
	double t0, shown;		/* the start, the last progress shown */
	int show, tty;			/* progress shown; on one line, redrawn */
	struct align_opts al;		/* o's, or the guided head's */
	struct bpe_text text;
	struct linejoin join;		/* a line's sentences put back */
	struct bpe_text links, room;	/* keepopt_restore's -A and room */
	/* a decoder kept for the whole run, so that what an architecture
	 * makes once for all the decoders of a model (the Transformer's
	 * packed weights) lasts from batch to batch */
	struct decoder *keep;
};

/*
 * A model trained with guided alignment (guided_weight > 0): -A reads
 * its guided head alone (guided_layer, guided_head), whose mass on the
 * source's </s> means no link (attn_align.h's null).
 */
static int guided_head(const struct model *m, struct align_opts *al)
{
	double w = 0;
	long l = 0, h = 0, s = 0;

	if (!config_get(&m->cfg, "guided_weight"))
		return 0;
	if (config_double(&m->cfg, "guided_weight", &w) < 0)
		return -1;
	if (!(w > 0))
		return 0;
	/* without them, training's defaults: the last layer, head 0 */
	if (config_int(&m->cfg, config_get(&m->cfg, "guided_layer") ?
		       "guided_layer" : "dec_layers", &l) < 0 ||
	    (config_get(&m->cfg, "guided_head") &&
	     config_int(&m->cfg, "guided_head", &h) < 0))
		return -1;
	if (!config_get(&m->cfg, "guided_layer"))
		l--;
	if (config_get(&m->cfg, "guided_shift") &&
	    config_int(&m->cfg, "guided_shift", &s) < 0)
		return -1;
	if (l < 0 || l > 63 || h < 0 || h > 63) {
		err_set("guided_layer=%ld, guided_head=%ld: not a plane -A "
			"reads", l, h);
		return -1;
	}
	al->layers = 1ULL << l;
	al->heads = 1ULL << h;
	al->null = 1;
	al->shift = s == 1;
	return 0;
}

static int want_attw(const struct translate_opts *o)
{
	return o->tensors || o->align;
}

/* What --scores prints: the sum of the log-probabilities (nats), or with
 * --normalize that per target id (</s> included), as score -n. */
static double line_score(const struct translate_opts *o, const struct hyp *h)
{
	if (!o->normalize)
		return h->score;
	return h->len ? h->score / h->len : 0;
}

static int process(void *arg, struct frame **f, const int *slot,
		   const int *start, int nb)
{
	struct tctx *c = arg;
	int i, n = start[nb];

	for (i = 0; i < n; i++)
		if (model_id_frame(f[i], &c->id) < 0)
			return -1;
	if (!c->keep)	/* on failure, the search says why */
		c->keep = c->m->arch->dec_new(c->m, &c->search.dec, f, 1, 1);
	if (c->scoring) {
		if (search_force_batches(c->m, &c->search.dec, f, start, nb,
					 "tgt.ids", want_attw(c->o),
					 c->tmph) < 0)
			return -1;
		for (i = 0; i < n; i++)
			c->forced[slot[i]] = c->tmph[i];
		return 0;
	}
	if (search_batches(c->m, f, start, nb, &c->search, c->tmp) < 0)
		return -1;
	for (i = 0; i < n; i++)
		c->res[slot[i]] = c->tmp[i];
	return 0;
}

/* The text of a hypothesis on one line (vocab_decode_line). */
static int detok(struct tctx *c, const struct hyp *h)
{
	return vocab_decode_line(c->tv, h->ids, h->len, &c->text);
}

static int put_tensors(struct tctx *c, struct frame *f, const struct hyp *h,
		       double score)
{
	struct tensor t;
	uint64_t d[4];
	float s = score;

	d[0] = h->len;
	if (!c->scoring && (tensor_init_copy(&t, "hyp.ids", DT_I32, 1, d,
					     h->ids) < 0 || !frame_put(f, &t)))
		return -1;
	if (h->L * h->H == 1) {
		d[0] = h->len, d[1] = h->S;
		if (tensor_init_copy(&t, "att.weights", DT_F32, 2, d,
				     h->attw) < 0)
			return -1;
	} else {
		d[0] = h->L, d[1] = h->H, d[2] = h->len, d[3] = h->S;
		if (tensor_init_copy(&t, "att.weights", DT_F32, 4, d,
				     h->attw) < 0)
			return -1;
	}
	if (!frame_put(f, &t) ||
	    tensor_init_copy(&t, "hyp.score", DT_F32, 0, d, &s) < 0 ||
	    !frame_put(f, &t))
		return -1;
	return tsr_write_frame(c->w, f);
}

static int emit_alignment(struct tctx *c, const struct frame *f,
			  const struct hyp *h, struct bpe_text *out)
{
	const struct tensor *src = frame_need(f, "src.ids", DT_I32, 1,
					      "tokenize");

	if (!src)
		return -1;
	if ((int)src->dim[0] != h->S) {
		err_set("frame %llu: src.ids has %llu ids, the memory %d",
			(unsigned long long)f->number,
			(unsigned long long)src->dim[0], h->S);
		return -1;
	}
	out->n = 0;
	if (align_words(c->sv, src->data, h->S, c->tv, h->ids, h->len,
			h->attw, h->L, h->H, &c->al, out) < 0) {
		err_prefix("frame %llu", (unsigned long long)f->number);
		return -1;
	}
	return 0;
}

/*
 * A sentence of a line (linejoin.h) with -A: its alignment, its words
 * moved past those of the line's sentences before it.
 */
static int join_alignment(struct tctx *c, const struct frame *f,
			  const struct hyp *h)
{
	const struct tensor *src = frame_find(f, "src.ids");
	long sw, tw;

	if (emit_alignment(c, f, h, &c->text) < 0)
		return -1;
	if ((sw = linejoin_words(c->sv, src->data, h->S)) < 0 ||
	    (tw = linejoin_words(c->tv, h->ids, h->len)) < 0)
		return -1;
	return linejoin_align(&c->join, c->text.s, c->text.n, sw, tw);
}

/*
 * The translation's text into c->text, with the spans tokenize kept put
 * back (keepopt_restore) unless --no-keep: with -A through the word
 * links, made into c->links.
 */
static int text_of(struct tctx *c, const struct frame *f, const struct hyp *h)
{
	if (detok(c, h) < 0)
		return -1;
	if (c->o->no_keep || !frame_head(f, "src.keep.pos"))
		return 0;
	if (c->o->align && emit_alignment(c, f, h, &c->links) < 0)
		return -1;
	return keepopt_restore(f, &c->text, &c->room, c->o->align ?
			       c->links.s : NULL, c->links.n, 0);
}

/*
 * One line of text: the translation (or, when scoring, the alignment or
 * the score), then the alignment and the score asked for, each after
 * " ||| ".  A line's sentences are put back (linejoin.h) and printed at
 * its last: their texts, alignments, scores summed (with --normalize,
 * over their lengths summed).  score takes whole lines only.
 */
static int print_line(struct tctx *c, const struct frame *f,
		      const struct hyp *h)
{
	const struct translate_opts *o = c->o;
	struct linejoin *j = &c->join;
	int last = linejoin_frame(j, f);

	if (last < 0)
		return -1;
	if (c->scoring && j->part) {
		err_set("frame %llu: a sentence of a line (line.part): score "
			"takes whole lines (tokenize --no-split)",
			(unsigned long long)f->number);
		return -1;
	}
	if (c->scoring && !o->align) {
		printf("%.6f\n", line_score(o, h));
		return 0;
	}
	if (c->scoring ? emit_alignment(c, f, h, &c->text) < 0 :
	    text_of(c, f, h) < 0)
		return -1;
	/* here a frame's text is final: what changes it goes before */
	if (linejoin_text(j, f, c->text.s, c->text.n) < 0 ||
	    (o->align && !c->scoring && join_alignment(c, f, h) < 0))
		return -1;
	j->score += h->score;
	j->len += h->len;
	if (!last)
		return 0;
	printf("%.*s", (int)j->text.n, j->text.s);
	if (o->align && !c->scoring)
		printf(" ||| %.*s", (int)j->align.n, j->align.s);
	if (o->scores)
		printf(" ||| %.6f", !o->normalize ? j->score :
		       j->len ? j->score / j->len : 0);
	putchar('\n');
	return 0;
}

/*
 * The n best in Moses' layout: i ||| text ||| F0= raw ||| score, raw the
 * sum of the log-probabilities and score the beam's ranking (raw over
 * the length penalty), and with --align a fifth field, the alignment.
 */
static int print_nbest(struct tctx *c, const struct frame *f,
		       const struct search_result *res)
{
	int i;

	if (frame_head(f, "line.part")) {
		err_set("frame %llu: a sentence of a line (line.part): "
			"--nbest takes whole lines (tokenize --no-split)",
			(unsigned long long)f->number);
		return -1;
	}
	for (i = 0; i < res->n; i++) {
		const struct hyp *h = &res->hyp[i];

		if (text_of(c, f, h) < 0)
			return -1;
		printf("%llu ||| %.*s ||| F0= %.6f ||| %.6f", c->line,
		       (int)c->text.n, c->text.s, h->score, h->norm);
		if (c->o->align) {
			if (emit_alignment(c, f, h, &c->text) < 0)
				return -1;
			printf(" ||| %.*s", (int)c->text.n, c->text.s);
		}
		putchar('\n');
	}
	return 0;
}

static int emit(void *arg, struct frame *f, int slot)
{
	struct tctx *c = arg;
	const struct translate_opts *o = c->o;
	struct hyp *h = c->scoring ? &c->forced[slot] : c->res[slot].hyp;
	double score = c->scoring && !o->normalize ? h->score : h->norm;
	int rc;

	if (o->tensors)
		rc = put_tensors(c, f, h, score);
	else if (o->moses)
		rc = print_nbest(c, f, &c->res[slot]);
	else
		rc = print_line(c, f, h);
	c->line++;
	if (c->scoring)
		hyp_free(&c->forced[slot]);
	else
		search_result_free(&c->res[slot]);
	return rc;
}

/* The window's lines or frames on their way. */
/* Seconds on the monotonic clock. */
static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Lines done and their rate on stderr (--progress): every 10 s, or every
 * second on one line of a terminal; at the end (last) always. */
static void progress(struct tctx *c, int last)
{
	double t = now();

	if (!c->show || (!last && t - c->shown < (c->tty ? 1 : 10)))
		return;
	c->shown = t;
	fprintf(stderr, "%s%s: %llu lines, %.1f a second%s", c->tty ? "\r" : "",
		progname, c->line, t > c->t0 ? c->line / (t - c->t0) : 0.0,
		c->tty && !last ? "" : "\n");
}

static int flush(void *arg)
{
	struct tctx *c = arg;

	progress(c, 0);
	if (c->w)
		return tsr_flush(c->w);
	return prog_flush_stdout();
}

static int run(const struct translate_opts *o, int scoring)
{
	struct tctx c = { 0 };
	struct filter fl = { o->batch, process, emit, flush, &c, 0 };
	struct tsr_reader *r = NULL;
	struct model *m;
	int W = filter_window(o->batch), rc = -1, i, kv_f16, sl;
	const char *dsl;

	c.o = o;
	c.scoring = scoring;
	c.al = o->al;
	m = model_load(o->model, MODEL_LOAD_MAPPED, NULL);
	if (!m)
		return -1;
	c.m = m;
	if (o->align && !o->planes_given && guided_head(m, &c.al) < 0) {
		err_prefix("%s", o->model);
		goto out;
	}
	model_id_model(&c.id, m, o->model);
	if (o->bf16 && !(m->arch->dec_caps & DEC_BF16)) {
		err_set("%s: --matmul bf16: the %s decoder has f32 products "
			"only", o->model, m->arch->name);
		goto out;
	}
	if (o->bf16 && wpack_bf16_check() < 0) {
		err_prefix("--matmul bf16");
		goto out;
	}
	/* An int8 export's decoder keeps f16 keys and values unless told:
	 * on the Bible dev set its BLEU moved by 0.03 (greedy up, beam
	 * down), and its steps ran 1.07-1.21x faster (doc/results.md).
	 * Not one imported from Marian's int8, which keeps f32 ones. */
	kv_f16 = o->kv_given ? o->kv_f16 :
		 !scoring && m->int8 && (m->arch->dec_caps & DEC_KV_F16) &&
		 !config_get(&m->cfg, "marian_int8");
	if (kv_f16 && !(m->arch->dec_caps & DEC_KV_F16)) {
		err_set("%s: --kv f16: the %s decoder keeps f32 states only",
			o->model, m->arch->name);
		goto out;
	}
	/* the model's own default (dec_shortlist=1: an imported Marian
	 * model with its lexical shortlist), unless --no-shortlist */
	dsl = config_get(&m->cfg, "dec_shortlist");
	sl = o->shortlist > 0 || (!o->shortlist && !scoring && dsl &&
				  !strcmp(dsl, "1"));
	if (sl && shortlist_table_load(m, &c.shortlist) < 0) {
		err_prefix("%s: --shortlist", o->model);
		goto out;
	}
	if (sl && !c.shortlist) {
		err_set("%s: --shortlist: the model has no shortlist; make "
			"one from its training pairs (tokenize -p) with "
			"'train-step --shortlist -m %s PAIRS'", o->model,
			o->model);
		goto out;
	}
	c.search = o->search;
	/* an imported model's decoder.yml, unless the user said otherwise */
	if (search_opts_model(&c.search, m, o->given, o->beam) < 0) {
		err_prefix("%s", o->model);
		goto out;
	}
	if (c.search.nbest > c.search.k) {
		err_set("%s: --nbest %d is more than the model's beam of %d "
			"(dec_beam_size; -k sets another)", o->model,
			c.search.nbest, c.search.k);
		goto out;
	}
	c.search.dec.bf16 = o->bf16;
	c.search.dec.kv_f16 = kv_f16;
	c.search.dec.shortlist = c.shortlist;
	/* --tensors writes ids, no text: no vocabulary needed */
	if (!o->tensors)
		c.tv = vocab_load(c.m->vocab_tgt, c.m->vocab_tgt_len);
	if (c.tv && o->align)
		c.sv = vocab_load(c.m->vocab_src, c.m->vocab_src_len);
	if ((!o->tensors && !c.tv) || (o->align && !c.sv)) {
		err_prefix("%s: the model's vocabulary", o->model);
		goto out;
	}
	c.res = calloc(W, sizeof *c.res);
	c.forced = calloc(W, sizeof *c.forced);
	c.tmp = calloc(W, sizeof *c.tmp);
	c.tmph = calloc(W, sizeof *c.tmph);
	if (!c.res || !c.forced || !c.tmp || !c.tmph) {
		err_set("out of memory for a window of %d frames", W);
		goto out;
	}
	r = filter_reader("-");
	if (r && o->tensors)
		c.w = filter_writer();
	if (!r || (o->tensors && !c.w))
		goto out;
	c.tty = isatty(2);
	c.show = o->progress || c.tty;
	c.t0 = c.shown = now();
	rc = filter_run(&fl, r);
	if (rc == 0 && !o->tensors && !o->moses)
		rc = linejoin_end(&c.join);
	if (rc == 0)
		progress(&c, 1);
out:
	if (c.keep)
		c.m->arch->dec_free(c.keep);
	if (c.w)
		rc = filter_writer_end(c.w, rc);
	tsr_reader_free(r);
	vocab_free(c.tv);
	vocab_free(c.sv);
	bpe_text_free(&c.text);
	bpe_text_free(&c.links);
	bpe_text_free(&c.room);
	linejoin_free(&c.join);
	/* a window left unwritten (the reader went away, or an error) */
	for (i = 0; i < W && c.res && c.forced; i++) {
		search_result_free(&c.res[i]);
		hyp_free(&c.forced[i]);
	}
	free(c.res);
	free(c.forced);
	free(c.tmp);
	free(c.tmph);
	shortlist_table_free(c.shortlist);
	model_free(m);
	return rc;
}

/* --layers, --heads: "all" (0) or numbers from 0 to 63 joined by commas,
 * as a mask. */
static uint64_t opt_mask(const char *arg, const char *option)
{
	uint64_t mask = 0;
	const char *p = arg;
	char *end;
	long v;

	if (strcmp(arg, "all") == 0)
		return 0;
	for (;;) {
		errno = 0;
		v = strtol(p, &end, 10);
		if (end == p || errno || v < 0 || v > 63 || *p == '-' ||
		    *p == '+' || (*end && *end != ','))
			usage_error("option %s: '%s' is neither 'all' nor "
				    "numbers from 0 to 63 joined by commas",
				    option, arg);
		mask |= 1ull << v;
		if (!*end)
			return mask;
		p = end + 1;
	}
}

/* --unlinked: words joined by commas, kept for the whole run. */
static void opt_words(const char *arg, struct align_opts *al)
{
	static char *copy;
	static const char **word;
	char *p, *q;
	int n = 1;

	for (p = (char *)arg; *p; p++)
		n += *p == ',';
	free(copy);
	free(word);
	copy = strdup(arg);
	word = malloc(n * sizeof *word);
	if (!copy || !word)
		die("out of memory");
	n = 0;
	for (p = copy; p; p = q) {
		if ((q = strchr(p, ',')))
			*q++ = 0;
		if (*p)
			word[n++] = p;
	}
	al->unlinked = word;
	al->n_unlinked = n;
}

int translate_getopt(int argc, char **argv, const char *shortopts,
		     const struct option *longopts, void (*usage)(void),
		     struct translate_opts *o)
{
	int c;

	while ((c = filter_getopt(argc, argv, shortopts, longopts, usage,
				  &o->model, &o->batch, 1)) != -1)
		switch (c) {
		case 'a':
			o->given |= SEARCH_GIVEN_LEN;
			o->search.len_a = opt_number(optarg, "--max-len-a");
			if (o->search.len_a < 0 || o->search.len_a > 1000)
				usage_error("option --max-len-a: '%s' is not from 0 "
					    "to 1000", optarg);
			break;
		case 'c':
			o->given |= SEARCH_GIVEN_LEN;
			o->search.len_b = opt_number(optarg, "--max-len-b");
			if (o->search.len_b < 0 || o->search.len_b > 100000)
				usage_error("option --max-len-b: '%s' is not from 0 "
					    "to 100000", optarg);
			break;
		case 't':
			o->tensors = 1;
			break;
		case 'A':
			o->align = 1;
			break;
		case OPT_SCORES:
			o->scores = 1;
			break;
		case OPT_NORMALIZE:
			o->normalize = 1;
			break;
		case OPT_BLOCK_REPEATS:
			o->search.block_repeats = opt_int(optarg,
				"--block-repeats", 0, SEARCH_BLOCK_MAX);
			break;
		case OPT_MIN_LEN:
			o->search.min_len = opt_int(optarg, "--min-len", 0,
						    SEARCH_MIN_LEN_MAX);
			o->given |= SEARCH_GIVEN_MIN_LEN;
			break;
		case OPT_MATMUL:
			o->bf16 = opt_half(optarg, "--matmul", "bf16");
			break;
		case OPT_KV:
			o->kv_f16 = opt_half(optarg, "--kv", "f16");
			o->kv_given = 1;
			break;
		case OPT_SHORTLIST:
			o->shortlist = 1;
			break;
		case OPT_NO_SHORTLIST:
			o->shortlist = -1;
			break;
		case OPT_PROGRESS:
			o->progress = 1;
			break;
		case OPT_NO_KEEP:
			o->no_keep = 1;
			break;
		case OPT_LAYERS:
			o->al.layers = opt_mask(optarg, "--layers");
			o->al_given = o->planes_given = 1;
			break;
		case OPT_HEADS:
			o->al.heads = opt_mask(optarg, "--heads");
			o->al_given = o->planes_given = 1;
			break;
		case OPT_MIN_SHARE:
			o->al.min_share = opt_number(optarg, "--min-share");
			if (!(o->al.min_share >= 0 && o->al.min_share <= 1))
				usage_error("option --min-share: '%s' is not "
					    "from 0 to 1", optarg);
			o->al_given = 1;
			break;
		case OPT_UNLINKED:
			opt_words(optarg, &o->al);
			o->al_given = 1;
			break;
		case OPT_NULL:
			o->al.null = 1;
			o->al_given = 1;
			break;
		case OPT_SHIFT:
			o->al.shift = 1;
			o->al_given = 1;
			break;
		case OPT_COVER:
			o->al.cover = 1;
			o->al_given = 1;
			break;
		default:
			return c;
		}
	if (o->search.len_a == 0 && o->search.len_b < 1)
		usage_error("--max-len-a 0 and --max-len-b %g: no room for "
			    "a target", o->search.len_b);
	if (o->tensors && (o->align || o->scores))
		usage_error("--tensors goes with neither --align nor "
			    "--scores");
	if (o->al_given && !o->align)
		usage_error("--layers, --heads, --min-share, --unlinked, "
			    "--null, --shift and --cover go with --align");
	o->search.want_attw = want_attw(o);
	return -1;
}

int translate_run(const struct translate_opts *o)
{
	return run(o, 0);
}

int score_run(const struct translate_opts *o)
{
	return run(o, 1);
}
