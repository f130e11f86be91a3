/*
 * tokenize: text lines to subword ids (one frame per line, or per
 * sentence of a line: sentsplit.h, linejoin.h) and back, and learning the
 * byte-pair-encoding vocabulary (bpe.h) from a corpus.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "text/bpe.h"
#include "text/spm.h"
#include "text/vocab.h"
#include "common/filter.h"
#include "common/textin.h"
#include "common/keepopt.h"
#include "common/linejoin.h"
#include "common/modelid.h"
#include "common/opt.h"
#include "common/prog.h"
#include "common/vocab.h"
#include "text/attn_align.h"
#include "text/sentsplit.h"
#include "stream/stream.h"

enum format { STREAM, UNITS, IDS };
enum { OPT_DROPOUT = 0x4400, OPT_SEED, OPT_LINKS, OPT_MAX_LINE, OPT_LANG,
       OPT_NO_SPLIT, OPT_SPLIT, OPT_CLAUSE_WORDS };	/* past filter.h's and prog.h's */

/* --max-line's default: the longest line read (its newline aside) */
#define MAX_LINE_DEFAULT (1 << 20)

static struct {
	int learn;              /* vocabulary size; 0: not learning */
	double coverage;
	const char *model, *vocab, *tgt_vocab;
	int target, pairs, detok;
	enum format format;
	const char *name;       /* --detok: the record to read */
	double dropout;         /* BPE-dropout's rate; 0: none */
	long long seed;
	const char *links;      /* --links: word alignments beside pairs */
	uint64_t max_line;      /* --max-line: the longest line read */
	int split;              /* a source line's sentences, a frame each */
	enum sent_lang lang;    /* --lang: the splitter's rules */
	int clause_words;       /* longer sentences cut into clauses */
	int split_opts;         /* --split, --lang or --clause-words given */
} opt = { .coverage = 0.9999, .seed = 1, .max_line = MAX_LINE_DEFAULT,
	  .split = -1, .clause_words = 40 };

static struct rng dropout_rng;

static void usage(void)
{
	printf("usage: %s -m MODEL | -v VOCAB [-Tp] [-f FORMAT] [FILE ...]\n"
	       "       %s -d -m MODEL | -v VOCAB [-T] [-n NAME] [-f FORMAT] "
	       "[FILE ...]\n"
	       "       %s -l N [-c COVERAGE] [FILE ...]\n"
	       "Turns text lines into subword ids, one frame per sentence "
	       "of a line (src.ids,\nsrc.text; line.part), and back; or "
	       "learns a vocabulary.\n\n"
	       "  -m, --model=MODEL     the vocabularies of a model file "
	       "(vocab.src, vocab.tgt)\n"
	       "  -v, --vocab=VOCAB     a vocabulary file (both sides): attn-bpe "
	       "text or a\n"
	       "                        SentencePiece model (.model)\n"
	       "      --tgt-vocab=VOCAB the target side's vocabulary file\n"
	       "  -T, --target          the target side: tgt.ids, tgt.text, "
	       "the target vocabulary\n"
	       "  -p, --pairs           read SOURCE<TAB>TARGET lines; write "
	       "both sides\n"
	       "  -f, --format=FORMAT   stream (default), or text: units or "
	       "ids, one line each\n"
	       "  -d, --detok           ids back to text: read a stream "
	       "(hyp.ids, tgt.ids or\n"
	       "                        src.ids), or with -f units/ids, text\n"
	       "  -n, --name=NAME       with -d: the record to read\n"
	       "      --dropout=P       BPE-dropout, for training data: "
	       "skip each merge with\n"
	       "                        probability P (0 <= P < 1), so "
	       "words are cut in\n"
	       "                        ways that vary line by line\n"
	       "      --seed=N          the draws of --dropout (default 1)\n"
	       "      --links=FILE      with -p: word alignments of the "
	       "pairs (Pharaoh i-j,\n"
	       "                        one line a pair, as align writes "
	       "them) as the units'\n"
	       "                        align.links, for guided alignment "
	       "(train-step(1))\n"
	       "  -l, --learn=N         learn a vocabulary of about N units "
	       "(at least %d)\n"
	       "                        from the FILEs together; print it\n"
	       "  -c, --coverage=F      with -l: characters that are units "
	       "cover this share of\n"
	       "                        the text (default 0.9999); the rest "
	       "are bytes\n"
	       "      --limit=BYTES     with -d: the largest record accepted "
	       "(default 4G)\n"
	       "      --lang=LANG       abbreviations of %s (default)\n"
	       "      --clause-words=N  longer sentences cut at ; and : "
	       "(default 40; 0: none)\n      --split, --no-split  a frame "
	       "per sentence (default with attn's\n"
	       "                        vocabularies) or per line (with "
	       "a SentencePiece model's)\n"
	       KEEPOPT_HELP
	       "      --max-line=BYTES  refuse a longer line of text (default "
	       "1M): memory is\n"
	       "                        up to about 50 bytes a byte of the "
	       "longest line\n"
	       "      --force           write a stream even to a terminal\n"
	       "      --unterminated    with -d: take a stream without its "
	       "end mark (older files)\n"
	       "      --threads=N       threads of the kernels (no effect "
	       "here)\n"
	       "  -h, --help            this help\n"
	       "  -V, --version         the version\n" KEEPOPT_NOTE,
	       progname, progname, progname, BPE_FIRST_UNIT, sentsplit_langs);
	prog_help_exit();
}

/* ---- vocabularies ------------------------------------------------------- */

/* The identity of the vocabularies (modelid.h), made once. */
static const struct model_id *vocab_id(void)
{
	static struct model_id id;
	static int made;
	const struct tensor *t[2];
	char *bytes[2];
	size_t len[2];
	int i;

	if (made)
		return &id;
	if (opt.model) {
		for (i = 0; i < 2; i++)
			t[i] = vocab_model_record(opt.model, i);
		model_id_vocab(&id, t[0]->data, t[0]->nbytes, t[1]->data,
			       t[1]->nbytes, opt.model);
	} else {
		vocab_free(vocab_file(opt.vocab, &bytes[0], &len[0]));
		vocab_free(vocab_file(opt.tgt_vocab ? opt.tgt_vocab : opt.vocab,
				      &bytes[1], &len[1]));
		model_id_vocab(&id, bytes[0], len[0], bytes[1], len[1],
			       opt.vocab);
		free(bytes[0]);
		free(bytes[1]);
	}
	made = 1;
	return &id;
}

/* The vocabulary of one side (0 source, 1 target), loaded once. */
static struct vocab *vocab(int target)
{
	static struct vocab *side[2];
	const char *path = target && opt.tgt_vocab ? opt.tgt_vocab : opt.vocab;

	if (!path)
		return vocab_model(opt.model, target);
	if (!side[target])
		side[target] = vocab_file(path, NULL, NULL);
	return side[target];
}

/* ---- learning ----------------------------------------------------------- */

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void learn(char **files, int nfiles)
{
	struct bpe_counter *c = bpe_counter_new();
	struct bpe_text out = { 0 };
	unsigned long lines = 0;
	struct input in = { 0 };
	double start = now();
	struct bpe *v;
	char *line;
	size_t len;
	int i;

	if (!c)
		die_err();
	for (i = 0; i < nfiles; i++) {
		input_open(&in, files[i], opt.max_line);
		while ((line = input_line(&in, &len))) {
			if (bpe_counter_add(c, line, len) < 0)
				die_err();
			lines++;
		}
	}
	if (!(v = bpe_learn(c, opt.learn, opt.coverage)) ||
	    bpe_save(v, &out) < 0)
		die_err();
	if (fwrite(out.s, 1, out.n, stdout) != out.n)
		die_stdout();
	check_write(prog_flush_stdout());
	warnx_("%d units (%d characters, %d merges) from %lu lines in %.2f s",
	       bpe_size(v), bpe_size(v) - BPE_FIRST_UNIT - bpe_merges(v),
	       bpe_merges(v), lines, now() - start);
	bpe_text_free(&out);
	bpe_free(v);
	bpe_counter_free(c);
	free(in.line);
}

/* ---- tokenizing --------------------------------------------------------- */

static void put_record(struct tsr_writer *w, const char *name, int dtype,
		       const void *data, size_t n, uint64_t frame, int end)
{
	check_write(filter_write_vec(w, name, dtype, data, n, frame, end));
}

/*
 * One side of a frame: NAME.ids (with </s>) and NAME.text; or as text,
 * the ids or units.  An attn-bpe vocabulary's text ends with </s>; a
 * SentencePiece model's is spm_encode's, without it.  The ids stay in
 * ids until the next call.
 */
/* --links: each side's units' bytes in its text (vocab_encode_spans) */
static struct bpe_ids spans[2];

static void put_side(struct tsr_writer *w, struct bpe_text *shown,
		     int target, const char *text, size_t len, uint64_t frame,
		     int end, const struct input *in, struct bpe_ids *keep)
{
	static struct bpe_ids own;
	struct bpe_ids *ids = keep ? keep : &own;
	struct vocab *v = vocab(target);
	int spm_text = v->kind == VOCAB_SPM && opt.format != STREAM;
	int32_t eos = vocab_special(v, VOCAB_EOS);
	size_t i;

	ids->n = 0;
	spans[target].n = 0;
	if (opt.links ?
	    vocab_encode_spans(v, text, len, ids, &spans[target],
			       opt.dropout, &dropout_rng) < 0 :
	    (opt.dropout > 0 ?
	     vocab_encode_dropout(v, text, len, ids, opt.dropout,
				  &dropout_rng) :
	     vocab_encode(v, text, len, ids,
			  spm_text && opt.format == UNITS ? shown : NULL)) < 0)
		die("%s:%lu: %s", in->label, in->lineno, err_msg());
	if (!spm_text && bpe_ids_push(ids, eos) < 0)
		die_err();
	if (opt.links && (bpe_ids_push(&spans[target], (int32_t)len) < 0 ||
			  bpe_ids_push(&spans[target], (int32_t)len) < 0))
		die_err();              /* </s> stands for no bytes */
	if (opt.format == STREAM) {
		put_record(w, target ? "tgt.ids" : "src.ids", DT_I32, ids->v,
			   ids->n, frame, 0);
		put_record(w, target ? "tgt.text" : "src.text", DT_U8, text,
			   len, frame, end);
		return;
	}
	if (spm_text && opt.format == UNITS)
		return;
	for (i = 0; i < ids->n; i++) {
		char num[16];

		if (i && bpe_text_add(shown, " ", 1) < 0)
			die_err();
		if (opt.format == IDS) {
			/* ids are >= 0: the digits, without printf's cost */
			char *d = num + sizeof(num);
			uint32_t x = (uint32_t)ids->v[i];

			do
				*--d = (char)('0' + x % 10);
			while (x /= 10);
			if (bpe_text_add(shown, d, num + sizeof(num) - d) < 0)
				die_err();
		} else if (vocab_unit_show(v, ids->v[i], shown) < 0) {
			die_err();
		}
	}
}

/*
 * The pair's align.links (i32 [links, 2]: source unit, target unit) from
 * the next line of the --links file, which ends the frame.
 */
static void put_links(struct tsr_writer *w, struct input *al,
		      const struct bpe_ids *src, const struct bpe_ids *tgt,
		      const char *stext, size_t slen, const char *ttext,
		      size_t tlen, uint64_t frame, const struct input *in)
{
	static int32_t *v;
	static size_t cap;
	struct tensor t;
	size_t len, n;
	char *line = input_line(al, &len);

	if (!line)
		die("%s: %lu lines, and %s has more pairs", al->label,
		    al->lineno, in->label);
	if (align_unit_links(stext, slen, spans[0].v, (int)src->n, ttext,
			     tlen, spans[1].v, (int)tgt->n, line, len, &v,
			     &cap, &n) < 0)
		die("%s:%lu: %s", al->label, al->lineno, err_msg());
	memset(&t, 0, sizeof(t));
	strcpy(t.name, "align.links");
	t.dtype = DT_I32;
	t.rank = 2;
	t.dim[0] = n;
	t.dim[1] = 2;
	t.data = v;
	t.nbytes = n * 2 * sizeof *v;
	check_write(tsr_write(w, &t, frame, 1));
}

static void put_text(struct bpe_text *t, int interactive)
{
	if (fwrite(t->s, 1, t->n, stdout) != t->n)
		die_stdout();
	if (interactive)
		check_write(prog_flush_stdout());
	t->n = 0;
}

/* One frame's side, a source's spans kept as written first (keepopt.h). */
static void put_masked(struct tsr_writer *w, struct bpe_text *shown,
		       const char *text, size_t len, uint64_t frame,
		       const struct input *in)
{
	size_t n = len;

	if (w && !opt.target)
		text = keepopt_mask(w, text, len, &n, frame);
	put_side(w, shown, opt.target, text, n, frame, 1, in, NULL);
}

/* A source line: one frame; or, of n >= 2 sentences, n frames of its
 * number, each model.id (id), line.* records, src.ids and src.text. */
static void put_source(struct tsr_writer *w, struct bpe_text *shown,
		       const char *line, size_t len, uint64_t frame,
		       const struct input *in, const char *id, size_t idlen)
{
	static struct sent_span *sp;
	static size_t cap;
	long n = 0, k;

	if (opt.split && w && !opt.target &&
	    (n = sentsplit(line, len, opt.lang, opt.clause_words, &sp,
			   &cap)) < 0)
		die_err();
	if (n < 2) {
		put_masked(w, shown, line, len, frame, in);
		return;
	}
	sp[0].start = 0;        /* the line's own spaces, as a whole line's */
	sp[n - 1].end = len;
	for (k = 0; k < n; k++) {
		if (k)
			put_record(w, "model.id", DT_U8, id, idlen, frame, 0);
		check_write(linejoin_put(w, frame, line, sp, k, n));
		put_masked(w, shown, line + sp[k].start,
			   sp[k].end - sp[k].start, frame, in);
	}
}

static void tokenize(char **files, int nfiles)
{
	struct tsr_writer *w = NULL;
	struct bpe_text shown = { 0 };
	struct input in = { 0 }, al = { 0 };
	static struct bpe_ids src;
	uint64_t frame = 0;
	char *line, *tab, idtext[MODEL_ID_TEXT];
	size_t len, idlen = 0;
	int i;

	vocab(opt.target);              /* a bad vocabulary fails at once */
	if (opt.pairs)
		vocab(1);
	if (opt.dropout > 0 && (vocab(opt.target)->kind != VOCAB_BPE ||
				(opt.pairs && vocab(1)->kind != VOCAB_BPE)))
		die("--dropout: BPE-dropout needs an attn-bpe vocabulary, "
		    "not a SentencePiece model");
	for (i = 0; i < 2; i++)         /* frames end with </s> */
		if ((i == opt.target || opt.pairs) &&
		    (opt.format == STREAM || vocab(i)->kind == VOCAB_BPE) &&
		    vocab_special(vocab(i), VOCAB_EOS) < 0)
			die("%s: the vocabulary has no </s> to end a line with",
			    i && opt.tgt_vocab ? opt.tgt_vocab :
			    opt.vocab ? opt.vocab : opt.model);
	if (opt.format == STREAM && !keepopt_print && !(w = filter_writer()))
		die_err();
	if (w)
		idlen = model_id_text(vocab_id(), idtext);
	/* kept as written: by default with attn's own vocabularies (the
	 * shipped model's BLEU the same, doc/results.md), with a
	 * SentencePiece model's (Marian's: native Marian's translations)
	 * when asked */
	if (vocab(0)->kind != VOCAB_BPE && !keepopt_given)
		keepopt_off(NULL);
	/* sentences cut: likewise (a line is one sentence to Marian) */
	if (opt.split < 0)
		opt.split = vocab(0)->kind == VOCAB_BPE || opt.split_opts;
	if (opt.links)
		input_open(&al, opt.links, opt.max_line);
	for (i = 0; i < nfiles; i++) {
		input_open(&in, files[i], opt.max_line);
		while ((line = input_line(&in, &len))) {
			if (w)
				put_record(w, "model.id", DT_U8, idtext, idlen,
					   frame, 0);
			if (keepopt_print) {
				keepopt_spans(line, len, &shown);
			} else if (!opt.pairs) {
				put_source(w, &shown, line, len, frame, &in,
					   idtext, idlen);
			} else if (!(tab = memchr(line, '\t', len))) {
				die("%s:%lu: no tab between source and target",
				    in.label, in.lineno);
			} else {
				struct bpe_ids tgt = { 0 };

				put_side(w, &shown, 0, line, tab - line, frame,
					 0, &in, &src);
				if (opt.format != STREAM &&
				    bpe_text_add(&shown, "\t", 1) < 0)
					die_err();
				put_side(w, &shown, 1, tab + 1,
					 len - (tab + 1 - line), frame,
					 !opt.links, &in, opt.links ? &tgt : NULL);
				if (opt.links)
					put_links(w, &al, &src, &tgt, line,
						  tab - line, tab + 1,
						  len - (tab + 1 - line),
						  frame, &in);
				free(tgt.v);
			}
			frame++;
			if (w && in.interactive)
				check_write(tsr_flush(w));
			if (!w) {
				if (bpe_text_add(&shown, "\n", 1) < 0)
					die_err();
				put_text(&shown, in.interactive);
			}
		}
	}
	if (opt.links && input_line(&al, &len))
		die("%s: more lines than the %llu pairs", al.label,
		    (unsigned long long)frame);
	if (w)
		check_write(tsr_writer_finish(w));
	else
		check_write(prog_flush_stdout());
	bpe_text_free(&shown);
	free(in.line);
	free(al.line);
	free(src.v);
	bpe_ids_free(&spans[0]);
	bpe_ids_free(&spans[1]);
}

/* ---- detokenizing ------------------------------------------------------- */

/* The ids of a line of units or ids (per --format), into ids. */
static void parse_tokens(char *line, size_t len, const struct input *in,
			 struct vocab *v, struct bpe_ids *ids)
{
	char *s = line, *end = line + len, *tok, *num_end;
	long id;

	ids->n = 0;
	while (s < end) {
		if (*s == ' ' || *s == '\t') {
			s++;
			continue;
		}
		for (tok = s; s < end && *s != ' ' && *s != '\t'; s++)
			;
		if (opt.format == UNITS) {
			id = vocab_unit_find(v, tok, s - tok);
		} else {
			errno = 0;
			id = *tok >= '0' && *tok <= '9'
			     ? strtol(tok, &num_end, 10) : -1;
			if (num_end != s || errno || id >= vocab_size(v))
				id = -1;
		}
		if (id < 0)
			die("%s:%lu: '%.*s' is not %s of the vocabulary",
			    in->label, in->lineno, (int)(s - tok), tok,
			    opt.format == UNITS ? "a unit" : "an id");
		if (bpe_ids_push(ids, id) < 0)
			die_err();
	}
}

static void detok_text(char **files, int nfiles, struct bpe_text *out)
{
	struct bpe_ids ids = { 0 };
	struct input in = { 0 };
	char *line;
	size_t len;
	int i;

	vocab(opt.target);
	for (i = 0; i < nfiles; i++) {
		input_open(&in, files[i], opt.max_line);
		while ((line = input_line(&in, &len))) {
			struct vocab *v = vocab(opt.target);

			/* a SentencePiece model's pieces as spm_decode
			 * --input_format=piece reads them, unknown ones too */
			if (opt.format == UNITS && v->kind == VOCAB_SPM) {
				if (spm_decode_pieces(v->spm, line, len, out) < 0)
					die("%s:%lu: %s", in.label, in.lineno,
					    err_msg());
			} else {
				parse_tokens(line, len, &in, v, &ids);
				if (vocab_decode(v, ids.v, ids.n, out) < 0)
					die("%s:%lu: %s", in.label, in.lineno,
					    err_msg());
			}
			if (bpe_text_add(out, "\n", 1) < 0)
				die_err();
			put_text(out, in.interactive);
		}
	}
	bpe_ids_free(&ids);
	free(in.line);
}

/* The record of ids to turn back into text: --name, or the first of
 * hyp.ids, tgt.ids, src.ids. */
static const struct tensor *ids_record(const struct frame *f)
{
	static const char *const names[] = { "hyp.ids", "tgt.ids", "src.ids" };
	const char *name = opt.name;
	size_t i;

	for (i = 0; !name && i < 3; i++)
		if (frame_head(f, names[i]))
			name = names[i];
	if (!name) {
		err_set("frame %llu has no hyp.ids, tgt.ids or src.ids",
			(unsigned long long)f->number);
		return NULL;
	}
	return frame_need(f, name, DT_I32, 1,
			  strncmp(name, "hyp.", 4) ? "tokenize" : "decode");
}

static void detok_stream(char **files, int nfiles, struct bpe_text *out)
{
	struct bpe_text tmp = { 0 };
	struct linejoin j = { 0 };
	struct frame f = { 0 };
	const struct tensor *t;
	struct tsr_reader *r;
	int i, rc, last;

	for (i = 0; i < nfiles; i++) {
		if (!(r = filter_reader(files[i])))
			die_err();
		while ((rc = tsr_read_frame(r, &f)) > 0) {
			if (model_id_frame(&f, vocab_id()) < 0 ||
			    !(t = ids_record(&f)) ||
			    (last = linejoin_frame(&j, &f)) < 0)
				die("%s: %s", tsr_reader_label(r), err_msg());
			if (vocab_decode(vocab(opt.target ||
					       strncmp(t->name, "src.", 4)),
					 t->data, t->dim[0], out) < 0)
				die("%s: frame %llu: %s: %s",
				    tsr_reader_label(r),
				    (unsigned long long)f.number, t->name,
				    err_msg());
			if (!keepopt_none &&
			    keepopt_restore(&f, out, &tmp, NULL, 0,
					    !strncmp(t->name, "src.", 4)) < 0)
				die("%s: %s", tsr_reader_label(r), err_msg());
			if (linejoin_text(&j, &f, out->s, out->n) < 0 ||
			    (last && bpe_text_add(&j.text, "\n", 1) < 0))
				die_err();
			out->n = 0;
			if (last)
				put_text(&j.text, 1);
		}
		if (rc < 0)
			die_err();
		tsr_reader_free(r);
	}
	if (linejoin_end(&j) < 0)
		die_err();
	linejoin_free(&j);
	frame_free(&f);
	bpe_text_free(&tmp);
}

/* ---- options ------------------------------------------------------------ */

static void check_options(void)
{
	if (opt.learn) {
		if (opt.model || opt.vocab || opt.tgt_vocab || opt.target ||
		    opt.pairs || opt.detok || opt.format != STREAM || opt.name ||
		    opt.dropout > 0 || opt.split_opts || !opt.split)
			usage_error("--learn takes only --coverage and files");
		return;
	}
	if (!opt.model == !opt.vocab)
		usage_error("give a vocabulary: -m MODEL or -v VOCAB");
	if (opt.tgt_vocab && !opt.vocab)
		usage_error("--tgt-vocab goes with -v");
	if (opt.pairs && (opt.detok || opt.target))
		usage_error("--pairs cannot go with --detok or --target");
	if (opt.links && (!opt.pairs || opt.format != STREAM))
		usage_error("--links goes with --pairs and a stream");
	if (opt.name && (!opt.detok || opt.format != STREAM))
		usage_error("--name goes with --detok of a stream");
	if (opt.split_opts && (!opt.split || opt.detok || opt.pairs ||
			       opt.target || opt.format != STREAM))
		usage_error("--split, --lang and --clause-words go with "
			    "splitting: not "
			    "--no-split, -d, -p, -T or -f");
	if (opt.dropout > 0 && opt.detok)
		usage_error("--dropout goes with encoding, not --detok");
	if ((keepopt_given && (opt.detok || opt.pairs || opt.target ||
			       opt.format != STREAM)) ||
	    (keepopt_none && opt.format != STREAM && !keepopt_print) ||
	    (keepopt_print && (opt.detok || opt.pairs || opt.target ||
			       opt.format != STREAM || opt.links)))
		usage_error("--keep, --no-keep=KINDS, --keep-as and --spans "
			    "go with a source's stream; --no-keep with a "
			    "stream");
	rng_seed(&dropout_rng, (uint64_t)opt.seed);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "learn", required_argument, NULL, 'l' },
		{ "coverage", required_argument, NULL, 'c' },
		{ "model", required_argument, NULL, 'm' },
		{ "vocab", required_argument, NULL, 'v' },
		{ "tgt-vocab", required_argument, NULL, 'w' },
		{ "target", no_argument, NULL, 'T' },
		{ "pairs", no_argument, NULL, 'p' },
		{ "format", required_argument, NULL, 'f' },
		{ "detok", no_argument, NULL, 'd' },
		{ "name", required_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ "limit", required_argument, NULL, OPT_LIMIT },
		{ "force", no_argument, NULL, OPT_FORCE },
		UNTERMINATED_LONGOPT,
		{ "dropout", required_argument, NULL, OPT_DROPOUT },
		{ "seed", required_argument, NULL, OPT_SEED },
		{ "links", required_argument, NULL, OPT_LINKS },
		{ "max-line", required_argument, NULL, OPT_MAX_LINE },
		KEEPOPT_LONGOPTS,
		{ "lang", required_argument, NULL, OPT_LANG },
		{ "no-split", no_argument, NULL, OPT_NO_SPLIT },
		{ "split", no_argument, NULL, OPT_SPLIT },
		{ "clause-words", required_argument, NULL, OPT_CLAUSE_WORDS },
		PROG_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	static char *stdin_only[] = { "-" };
	struct bpe_text out = { 0 };
	char **files;
	int c, nfiles;

	prog_init(argc, argv);
	while ((c = prog_getopt(argc, argv, "l:c:m:v:Tpf:dn:hV", longopts,
				0)) != -1) {
		switch (c) {
		case 'l':
			opt.learn = opt_int(optarg, "--learn", BPE_FIRST_UNIT,
					    1 << 24);
			break;
		case 'c':
			opt.coverage = opt_number(optarg, "--coverage");
			if (!(opt.coverage > 0 && opt.coverage <= 1))
				usage_error("option --coverage: '%s' is not "
					    "above 0 and at most 1", optarg);
			break;
		case 'm': opt.model = optarg; break;
		case 'v': opt.vocab = optarg; break;
		case 'w': opt.tgt_vocab = optarg; break;
		case 'T': opt.target = 1; break;
		case 'p': opt.pairs = 1; break;
		case 'd': opt.detok = 1; break;
		case 'n': opt.name = optarg; break;
		case 'f':
			if (!strcmp(optarg, "stream"))
				opt.format = STREAM;
			else if (!strcmp(optarg, "units"))
				opt.format = UNITS;
			else if (!strcmp(optarg, "ids"))
				opt.format = IDS;
			else
				usage_error("--format: '%s' is not stream, "
					    "units or ids", optarg);
			break;
		case OPT_LIMIT:
			filter_lim.limit = opt_bytes(optarg, "--limit");
			break;
		case OPT_FORCE: filter_lim.force = 1; break;
		case OPT_UNTERMINATED: filter_lim.unterminated = 1; break;
		case OPT_DROPOUT:
			opt.dropout = opt_number(optarg, "--dropout");
			if (!(opt.dropout >= 0 && opt.dropout < 1))
				usage_error("option --dropout: '%s' is not at "
					    "least 0 and below 1", optarg);
			break;
		case OPT_LINKS: opt.links = optarg; break;
		case KEEPOPT_KEEP: case KEEPOPT_NO_KEEP: case KEEPOPT_AS:
		case KEEPOPT_SPANS:
			keepopt_option(c, optarg);
			break;
		case OPT_MAX_LINE:
			opt.max_line = opt_bytes(optarg, "--max-line");
			break;
		case OPT_LANG:
			if ((c = sentsplit_lang(optarg)) < 0)
				usage_error("--lang: '%s' is not one of %s",
					    optarg, sentsplit_langs);
			opt.lang = c;
			opt.split_opts = 1;
			break;
		case OPT_CLAUSE_WORDS:
			opt.clause_words = opt_int(optarg, "--clause-words", 0,
						   1 << 30);
			opt.split_opts = 1;
			break;
		case OPT_NO_SPLIT: opt.split = 0; break;
		case OPT_SPLIT: opt.split = opt.split_opts = 1; break;
		case OPT_SEED:
			opt.seed = opt_int(optarg, "--seed", 0, INT64_MAX);
			break;
		case 'h': usage(); break;
		case 'V': prog_version(); break;
		}
	}
	files = optind < argc ? argv + optind : stdin_only;
	nfiles = optind < argc ? argc - optind : 1;
	check_options();
	if (opt.learn)
		learn(files, nfiles);
	else if (!opt.detok)
		tokenize(files, nfiles);
	else if (opt.format == STREAM)
		detok_stream(files, nfiles, &out);
	else
		detok_text(files, nfiles, &out);
	check_write(prog_flush_stdout());
	bpe_text_free(&out);
	return 0;
}
