/*
 * dev.c: how well a model does on dev pairs: the loss of their targets,
 * and the BLEU of its greedy translations; see train.h.
 */
#include <stdlib.h>
#include <string.h>
#include "base/errmsg.h"
#include "eval/bleu.h"
#include "search.h"
#include "text/vocab.h"
#include "train.h"

/* Frames of pairs lo .. hi-1 holding src.ids and tgt.ids. */
static int pair_frames(struct frame *f, const struct corpus *c, int lo,
		       int hi)
{
	int i;

	for (i = lo; i < hi; i++) {
		struct frame *fr = &f[i - lo];
		struct tensor t;
		uint64_t d;

		frame_clear(fr);
		fr->number = i;
		d = c->slen[i];
		if (tensor_init_copy(&t, "src.ids", DT_I32, 1, &d,
				     c->src + c->soff[i]) < 0 ||
		    !frame_put(fr, &t))
			return -1;
		d = c->tlen[i];
		if (tensor_init_copy(&t, "tgt.ids", DT_I32, 1, &d,
				     c->tgt + c->toff[i]) < 0 ||
		    !frame_put(fr, &t))
			return -1;
	}
	return 0;
}

int dev_loss(const struct model *m, const struct corpus *dev, int batch,
	     double *nll)
{
	const struct arch *a = m->arch;
	struct frame *f = calloc(batch, sizeof *f);
	struct frame **fp = calloc(batch, sizeof *fp);
	struct hyp *h = calloc(batch, sizeof *h);
	double sum = 0;
	long ntok = 0;
	int lo, i, n, rc = -1;

	if (!f || !fp || !h) {
		err_set("out of memory for the dev loss");
		goto out;
	}
	for (i = 0; i < batch; i++)
		fp[i] = &f[i];
	for (lo = 0; lo < dev->n; lo += batch) {
		n = dev->n - lo < batch ? dev->n - lo : batch;
		if (pair_frames(f, dev, lo, lo + n) < 0 ||
		    a->embed(m, fp, n) < 0 || a->encode(m, fp, n) < 0 ||
		    a->attend(m, fp, n) < 0 ||
		    search_force(m, NULL, fp, n, "tgt.ids", 0, h) < 0)
			goto out;
		for (i = 0; i < n; i++) {
			sum -= h[i].score;
			ntok += h[i].len;
			hyp_free(&h[i]);
		}
	}
	*nll = ntok ? sum / ntok : 0;
	rc = 0;
out:
	for (i = 0; f && i < batch; i++)
		frame_free(&f[i]);
	free(f);
	free(fp);
	free(h);
	return rc;
}

/* The frames of pairs lo .. lo+n-1 with the decoder's memory. */
static int memory(const struct model *m, struct frame *f, struct frame **fp,
		  const struct corpus *dev, int lo, int n)
{
	const struct arch *a = m->arch;

	return pair_frames(f, dev, lo, lo + n) < 0 ||
	       a->embed(m, fp, n) < 0 || a->encode(m, fp, n) < 0 ||
	       a->attend(m, fp, n) < 0 ? -1 : 0;
}

int dev_bleu(const struct model *m, const struct corpus *dev, int batch,
	     double *bleu)
{
	struct bleu_cfg cfg = { .tok = BLEU_TOK_13A, .smooth = BLEU_SMOOTH_EXP,
				.smooth_value = -1 };
	struct frame *f = calloc(batch, sizeof *f);
	struct frame **fp = calloc(batch, sizeof *fp);
	struct search_result *res = calloc(batch, sizeof *res);
	struct vocab *v = vocab_load(m->vocab_tgt, m->vocab_tgt_len);
	struct bpe_text hyp = { 0 }, ref = { 0 };
	int64_t sum[BLEU_NSTATS] = { 0 }, st[BLEU_NSTATS];
	struct search_opts so;
	struct metric mt;
	int lo, i, k, n, rc = -1, have_metric = 0, lines = dev->n;

	if (!v) {
		err_prefix("vocab.tgt");
		goto out;
	}
	if (!f || !fp || !res) {
		err_set("out of memory for the dev BLEU");
		goto out;
	}
	if (metric_init(&mt, METRIC_BLEU, &cfg, NULL) < 0)
		goto out;
	have_metric = 1;
	search_opts_default(&so);
	for (i = 0; i < batch; i++)
		fp[i] = &f[i];
	for (lo = 0; lo < lines; lo += batch) {
		n = lines - lo < batch ? lines - lo : batch;
		if (memory(m, f, fp, dev, lo, n) < 0 ||
		    search(m, fp, n, &so, res) < 0)
			goto out;
		for (i = 0; i < n; i++) {
			const struct hyp *h = &res[i].hyp[0];
			struct bleu_text ht, rt;
			int p = lo + i;

			if (vocab_decode_line(v, h->ids, h->len, &hyp) < 0 ||
			    vocab_decode_line(v, dev->tgt + dev->toff[p],
					    dev->tlen[p], &ref) < 0)
				goto out;
			ht = (struct bleu_text){ hyp.s, hyp.n };
			rt = (struct bleu_text){ ref.s, ref.n };
			if (metric_segment(&mt, ht, &rt, 1, st) < 0) {
				err_prefix("dev pair %d", p + 1);
				goto out;
			}
			for (k = 0; k < BLEU_NSTATS; k++)
				sum[k] += st[k];
			search_result_free(&res[i]);
		}
	}
	*bleu = metric_score(&mt, sum);
	rc = 0;
out:
	for (i = 0; f && i < batch; i++) {
		frame_free(&f[i]);
		if (res)
			search_result_free(&res[i]);
	}
	if (have_metric)
		metric_free(&mt);
	vocab_free(v);
	bpe_text_free(&hyp);
	bpe_text_free(&ref);
	free(f);
	free(fp);
	free(res);
	return rc;
}
