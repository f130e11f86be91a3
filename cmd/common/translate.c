/* translate.c: the programs decode, beam and score; see translate.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "text/align.h"
#include "text/bpe.h"
#include "base/errmsg.h"
#include "filter.h"
#include "opt.h"
#include "kernels/gemm_packed.h"
#include "prog.h"
#include "translate.h"
#include "base/utf8.h"

struct tctx {
	const struct translate_opts *o;
	const struct model *m;
	struct bpe *sv, *tv;
	struct tsr_writer *w;		/* --tensors */
	int scoring;
	struct search_result *res;	/* [window] decode, beam */
	struct hyp *forced;		/* [window] score */
	struct search_result *tmp;	/* [batch] */
	struct hyp *tmph;		/* [batch] */
	unsigned long long line;	/* sentences written */
	struct bpe_text text;
	/* a decoder kept for the whole run, so that what an architecture
	 * makes once for all the decoders of a model (the Transformer's
	 * packed weights) lasts from batch to batch */
	struct decoder *keep;
};

static int want_attw(const struct translate_opts *o)
{
	return o->tensors || o->align;
}

static int process(void *arg, struct frame **f, const int *slot, int n)
{
	struct tctx *c = arg;
	int i;

	if (!c->keep)	/* on failure, the search says why */
		c->keep = c->m->arch->dec_new(c->m, f, 1, 1);
	if (c->scoring) {
		if (search_force(c->m, f, n, "tgt.ids", want_attw(c->o),
				 c->tmph) < 0)
			return -1;
		for (i = 0; i < n; i++)
			c->forced[slot[i]] = c->tmph[i];
		return 0;
	}
	if (search(c->m, f, n, &c->o->search, c->tmp) < 0)
		return -1;
	for (i = 0; i < n; i++)
		c->res[slot[i]] = c->tmp[i];
	return 0;
}

/*
 * The text of ids on one line: a newline inside becomes a space, and byte
 * units that do not make whole characters (a model can emit any sequence)
 * become U+FFFD, so that the output is valid UTF-8 for bleu and for people.
 */
static int detok(struct tctx *c, const struct hyp *h)
{
	size_t k, n;

	c->text.n = 0;
	if (bpe_decode(c->tv, h->ids, h->len, &c->text) < 0)
		return -1;
	n = c->text.n;
	if (n == 0)
		return 0;
	if (bpe_text_add(&c->text, NULL, 3 * n) < 0)
		return -1;
	/* repair into the room after the text, then move it back */
	c->text.n = utf8_repair((unsigned char *)c->text.s + n,
				(unsigned char *)c->text.s, n);
	memmove(c->text.s, c->text.s + n, c->text.n);
	for (k = 0; k < c->text.n; k++)
		if (c->text.s[k] == '\n' || c->text.s[k] == '\r')
			c->text.s[k] = ' ';
	return 0;
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
			  const struct hyp *h)
{
	const struct tensor *src = frame_need(f, "src.ids", DT_I32, 1,
					      "tokenize");
	size_t plane = (size_t)h->len * h->S;

	if (!src)
		return -1;
	if ((int)src->dim[0] != h->S) {
		err_set("frame %llu: src.ids has %llu ids, the memory %d",
			(unsigned long long)f->number,
			(unsigned long long)src->dim[0], h->S);
		return -1;
	}
	c->text.n = 0;
	/* the Transformer's last layer, all its heads */
	return align_pharaoh(c->sv, src->data, h->S, c->tv, h->ids, h->len,
			     h->attw + (size_t)(h->L - 1) * h->H * plane, h->H,
			     &c->text);
}

static int emit(void *arg, struct frame *f, int slot)
{
	struct tctx *c = arg;
	const struct translate_opts *o = c->o;
	struct hyp *h = c->scoring ? &c->forced[slot] : c->res[slot].hyp;
	double score = c->scoring && !o->normalize ? h->score : h->norm;
	int i, rc = 0;

	if (o->tensors) {
		rc = put_tensors(c, f, h, score);
	} else if (c->scoring && !o->align) {
		printf("%.6f\n", score);
	} else if (o->moses) {
		for (i = 0; rc == 0 && i < c->res[slot].n; i++) {
			h = &c->res[slot].hyp[i];
			rc = detok(c, h);
			printf("%llu ||| %.*s ||| %.6f\n", c->line,
			       (int)c->text.n, c->text.s, h->norm);
		}
	} else {
		rc = c->scoring ? emit_alignment(c, f, h) : detok(c, h);
		if (rc == 0)
			printf("%.*s\n", (int)c->text.n, c->text.s);
	}
	c->line++;
	if (c->scoring)
		hyp_free(&c->forced[slot]);
	else
		search_result_free(&c->res[slot]);
	return rc;
}

static int run(const struct translate_opts *o, int scoring)
{
	struct tctx c = { 0 };
	struct filter fl = { o->batch, process, emit, &c };
	struct tsr_reader *r = NULL;
	struct model *m;
	int W = filter_window(o->batch), rc = -1, i;

	c.o = o;
	c.scoring = scoring;
	m = model_load(o->model, MODEL_LOAD_MAPPED, NULL);
	if (!m)
		return -1;
	c.m = m;
	if (o->bf16 && m->arch != &arch_transformer) {
		err_set("%s: --matmul bf16: the %s decoder has f32 products "
			"only", o->model, m->arch->name);
		goto out;
	}
	if (o->bf16 && wpack_bf16_check() < 0) {
		err_prefix("--matmul bf16");
		goto out;
	}
	m->dec_bf16 = o->bf16;
	c.tv = bpe_load(c.m->vocab_tgt, c.m->vocab_tgt_len);
	if (c.tv && o->align)
		c.sv = bpe_load(c.m->vocab_src, c.m->vocab_src_len);
	if (!c.tv || (o->align && !c.sv)) {
		err_prefix("%s: the model's vocabulary", o->model);
		goto out;
	}
	c.res = calloc(W, sizeof *c.res);
	c.forced = calloc(W, sizeof *c.forced);
	c.tmp = calloc(o->batch, sizeof *c.tmp);
	c.tmph = calloc(o->batch, sizeof *c.tmph);
	r = tsr_reader_fd(0, "<stdin>");
	if (o->tensors)
		c.w = tsr_writer_fd(1, "<stdout>", 0);
	if (!c.res || !c.forced || !c.tmp || !c.tmph || !r ||
	    (o->tensors && !c.w))
		goto out;
	rc = filter_run(&fl, r);
	if (rc == 0 && c.w)
		rc = tsr_flush(c.w);
	if (rc == 0 && fflush(stdout) != 0) {
		err_set("<stdout>: write error");
		rc = -1;
	}
out:
	if (c.keep)
		c.m->arch->dec_free(c.keep);
	if (c.w)
		tsr_writer_close(c.w);
	tsr_reader_free(r);
	bpe_free(c.tv);
	bpe_free(c.sv);
	bpe_text_free(&c.text);
	/* a window left unwritten (the reader went away, or an error) */
	for (i = 0; i < W && c.res && c.forced; i++) {
		search_result_free(&c.res[i]);
		hyp_free(&c.forced[i]);
	}
	free(c.res);
	free(c.forced);
	free(c.tmp);
	free(c.tmph);
	model_free(m);
	return rc;
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
			o->search.len_a = opt_number(optarg, "--max-len-a");
			break;
		case 'c':
			o->search.len_b = opt_number(optarg, "--max-len-b");
			break;
		case 't':
			o->tensors = 1;
			o->search.want_attw = 1;
			break;
		default:
			return c;
		}
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
