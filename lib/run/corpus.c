/*
 * corpus.c: the training pairs in memory and the order of a pass over
 * them; see train.h.
 */
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "base/errmsg.h"
#include "base/rng.h"
#include "train.h"

/* Pairs per length-sorted window: large enough that a batch's sentences
 * have nearly one length, small enough that batches still mix. */
#define WINDOW 4096

static int grow(void **p, size_t *cap, size_t need, size_t size)
{
	size_t c = *cap ? *cap : 1024;
	void *q;

	if (need <= *cap)
		return 0;
	while (c < need)
		c *= 2;
	q = realloc(*p, c * size);
	if (!q) {
		err_set("out of memory for the corpus");
		return -1;
	}
	*p = q;
	*cap = c;
	return 0;
}

/* Who writes pairs, for messages. */
#define TOKENIZE "tokenize --pairs"

/*
 * Frame f's align.links (pair n of the corpus, slen and tlen ids), if
 * the corpus has them: every frame or none, each i32 [L, 2] of (source
 * unit, target unit) within the pair.  Appends them to c->links.
 */
static int read_links(struct corpus *c, const struct frame *f, size_t *nl,
		      size_t *lcap, size_t *ocap, int slen, int tlen)
{
	const struct tensor *t = frame_find(f, "align.links");
	const int32_t *v;
	size_t i, L;

	if (c->n == 0)
		c->has_links = t != NULL;
	if (!t != !c->has_links) {
		err_set("frame %llu: %s align.links, frame 0 %s: the links "
			"go with every pair or none",
			(unsigned long long)f->number, t ? "has" : "has no",
			t ? "had none" : "had them");
		return -1;
	}
	if (!t)
		return 0;
	if (t->dtype != DT_I32 || t->rank != 2 || t->dim[1] != 2) {
		err_set("frame %llu: align.links is not i32 [links, 2] (as "
			"tokenize --links writes it)",
			(unsigned long long)f->number);
		return -1;
	}
	L = t->dim[0];
	v = t->data;
	for (i = 0; i < L; i++)
		if (v[2 * i] < 0 || v[2 * i] >= slen || v[2 * i + 1] < 0 ||
		    v[2 * i + 1] >= tlen) {
			err_set("frame %llu: align.links: link %zu (%d-%d) is "
				"outside the pair's %d source and %d target "
				"ids", (unsigned long long)f->number, i,
				(int)v[2 * i], (int)v[2 * i + 1], slen, tlen);
			return -1;
		}
	if (grow((void **)&c->links, lcap, 2 * (*nl + L), 4) < 0 ||
	    grow((void **)&c->loff, ocap, c->n + 2, sizeof(size_t)) < 0)
		return -1;
	memcpy(c->links + 2 * *nl, v, L * 2 * sizeof *v);
	c->loff[c->n] = *nl;
	*nl += L;
	c->loff[c->n + 1] = *nl;
	return 0;
}

int corpus_read(struct corpus *c, struct tsr_reader *r, const struct model *m,
		int (*check)(struct frame *f, void *ctx), void *ctx)
{
	int sv = m ? m->src_vocab : INT32_MAX, tv = m ? m->tgt_vocab : INT32_MAX;
	struct frame f = { 0 };
	size_t ns = 0, nt = 0, scap = 0, tcap = 0, pcap = 0, pcap2 = 0;
	size_t pcap3 = 0, pcap4 = 0, nl = 0, lcap = 0, ocap = 0;
	int rc;

	memset(c, 0, sizeof *c);
	while ((rc = tsr_read_frame(r, &f)) == 1) {
		const struct tensor *s, *t;

		if ((check && check(&f, ctx) < 0) ||
		    model_check_ids(&f, "src.ids", sv, TOKENIZE) < 0 ||
		    model_check_ids(&f, "tgt.ids", tv, TOKENIZE) < 0) {
			err_prefix("%s", tsr_reader_label(r));
			rc = -1;
			break;
		}
		s = frame_find(&f, "src.ids");
		t = frame_find(&f, "tgt.ids");
		if (read_links(c, &f, &nl, &lcap, &ocap, (int)s->dim[0],
			       (int)t->dim[0]) < 0) {
			err_prefix("%s", tsr_reader_label(r));
			rc = -1;
			break;
		}
		if (grow((void **)&c->src, &scap, ns + s->dim[0], 4) < 0 ||
		    grow((void **)&c->tgt, &tcap, nt + t->dim[0], 4) < 0 ||
		    grow((void **)&c->soff, &pcap, c->n + 1, sizeof(size_t)) ||
		    grow((void **)&c->toff, &pcap2, c->n + 1,
			 sizeof(size_t)) ||
		    grow((void **)&c->slen, &pcap3, c->n + 1, sizeof(int)) ||
		    grow((void **)&c->tlen, &pcap4, c->n + 1, sizeof(int))) {
			rc = -1;
			break;
		}
		memcpy(c->src + ns, s->data, s->nbytes);
		memcpy(c->tgt + nt, t->data, t->nbytes);
		c->soff[c->n] = ns;
		c->toff[c->n] = nt;
		c->slen[c->n] = s->dim[0];
		c->tlen[c->n] = t->dim[0];
		ns += s->dim[0];
		nt += t->dim[0];
		c->n++;
	}
	frame_free(&f);
	if (rc < 0) {
		corpus_free(c);
		return -1;
	}
	c->crc = crc32(0, (const void *)c->src, ns * 4);
	c->crc = crc32(c->crc, (const void *)c->tgt, nt * 4);
	return 0;
}

double corpus_length_ratio(const struct corpus *c)
{
	double s = 0, t = 0;

	for (int i = 0; i < c->n; i++) {
		s += c->slen[i];
		t += c->tlen[i];
	}
	return t > 0 ? s / t : 0;
}

void corpus_free(struct corpus *c)
{
	free(c->src);
	free(c->tgt);
	free(c->soff);
	free(c->toff);
	free(c->slen);
	free(c->tlen);
	free(c->links);
	free(c->loff);
	memset(c, 0, sizeof *c);
}

struct sortkey {
	int tlen, slen, pos, idx;
};

static int key_cmp(const void *pa, const void *pb)
{
	const struct sortkey *a = pa, *b = pb;

	if (a->tlen != b->tlen)
		return a->tlen - b->tlen;
	if (a->slen != b->slen)
		return a->slen - b->slen;
	return a->pos - b->pos;
}

static void shuffle(int *v, int n, struct rng *r)
{
	int i, j, t;

	for (i = n - 1; i > 0; i--) {
		j = rng_below(r, i + 1);
		t = v[i];
		v[i] = v[j];
		v[j] = t;
	}
}

int epoch_plan_make(struct epoch_plan *p, const struct corpus *c,
		    uint64_t seed, int batch_tokens)
{
	struct sortkey *key = malloc((c->n ? c->n : 1) * sizeof *key);
	int *order, *start, i, w, b, nb = 0;
	struct rng r;

	memset(p, 0, sizeof *p);
	p->idx = malloc((c->n ? c->n : 1) * sizeof *p->idx);
	p->start = malloc((c->n + 1) * sizeof *p->start);
	order = malloc((c->n + 1) * sizeof *order);
	start = malloc((c->n + 1) * sizeof *start);
	if (!key || !p->idx || !p->start || !order || !start) {
		free(key);
		free(order);
		free(start);
		epoch_plan_free(p);
		err_set("out of memory for a pass over the corpus");
		return -1;
	}
	rng_seed(&r, seed);
	for (i = 0; i < c->n; i++)
		order[i] = i;
	shuffle(order, c->n, &r);
	/* sort each window by length; cut it into batches */
	for (w = 0; w < c->n; w += WINDOW) {
		int end = w + WINDOW < c->n ? w + WINDOW : c->n, tmax = 0;

		for (i = w; i < end; i++) {
			key[i].tlen = c->tlen[order[i]];
			key[i].slen = c->slen[order[i]];
			key[i].pos = i;
			key[i].idx = order[i];
		}
		qsort(key + w, end - w, sizeof *key, key_cmp);
		for (i = w; i < end; i++) {
			int t = key[i].tlen > tmax ? key[i].tlen : tmax;

			if (i == w || (long)(i - start[nb - 1] + 1) * t >
			    batch_tokens) {
				start[nb++] = i;
				t = key[i].tlen;
			}
			tmax = t;
		}
	}
	start[nb] = c->n;
	/* the batches in a shuffled order */
	for (b = 0; b < nb; b++)
		order[b] = b;
	shuffle(order, nb, &r);
	p->nbatch = nb;
	for (i = 0, b = 0; b < nb; b++) {
		int k;

		p->start[b] = i;
		for (k = start[order[b]]; k < start[order[b] + 1]; k++)
			p->idx[i++] = key[k].idx;
	}
	p->start[nb] = i;
	free(key);
	free(order);
	free(start);
	return 0;
}

void epoch_plan_free(struct epoch_plan *p)
{
	free(p->idx);
	free(p->start);
	memset(p, 0, sizeof *p);
}
