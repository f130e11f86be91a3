/*
 * test_search.c: greedy decoding and beam search (doc/MODELS.md, Decoding) on
 * a scripted architecture whose log-probabilities are a fixed function of
 * the source and the prefix, with coarse logits so that ties are common.
 * The search is held against a plain one-sentence implementation of the
 * definition written here, and against hand-worked cases: ties, maximum
 * length, k = 1 as greedy, batches of any size, attention read-back, and
 * forced decoding.
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "base/errmsg.h"
#include "models/model.h"
#include "run_suite.h"
#include "kernels/kernels.h"
#include "run/search.h"

/* The model's <s> and </s> (model_v's): doc/MODELS.md's 1 and 2, or
 * Marian's kind (matches_definition runs both). */
static int bos = 1, eos = 2;

/* ---- the scripted architecture --------------------------------------- */

/* 0: hashed logits; 1: uniform; 2: no </s>; 3: whatever the prefix,
 * p = 1/8, 1/8, 1/2, 1/4 for ids 0 .. 3 (V 4), </s> first */
static int script_mode;

static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/* log p(. | src, prefix) into lp [V] (double arithmetic, float out). */
static void script_logp(const int32_t *src, int S, const int32_t *pre,
			int len, int V, float *lp)
{
	double z[64], max = -1e30, sum = 0;
	uint64_t h = 77;
	int i, y;

	for (i = 0; i < S; i++)
		h = mix(h ^ (uint64_t)src[i]);
	h = mix(h ^ 0xabc);
	for (i = 0; i < len; i++)
		h = mix(h ^ (uint64_t)pre[i]);
	for (y = 0; y < V; y++) {
		if (script_mode == 1)
			z[y] = 0;
		else if (script_mode == 3)
			z[y] = y == eos ? log(4) : y == 3 ? log(2) : 0;
		else
			z[y] = ((int)(mix(h ^ y) % 9) - 4) * 0.5;
		if (y == eos && (script_mode == 0 || script_mode == 2))
			z[y] = script_mode == 2 ? -50 : z[y] + 0.5 * len - 2;
		if (z[y] > max)
			max = z[y];
	}
	for (y = 0; y < V; y++)
		sum += exp(z[y] - max);
	for (y = 0; y < V; y++)
		lp[y] = z[y] - max - log(sum);
}

#define MAXT 64

struct decoder {
	int V, n, S[16];
	const int32_t *src[16];
	int cap, *sent, *len, *tsent, *tlen;
	int32_t (*pre)[MAXT], (*tpre)[MAXT];
	int steps;
};

static struct decoder *sc_new(const struct model *m,
			      const struct dec_opts *o, struct frame **f,
			      int n, int width)
{
	struct decoder *d = calloc(1, sizeof *d);
	int i;

	ck_assert_int_le(n, 16);
	d->V = m->tgt_vocab;
	d->n = n;
	d->cap = n * width;
	d->sent = calloc(d->cap, sizeof(int));
	d->len = calloc(d->cap, sizeof(int));
	d->tsent = calloc(d->cap, sizeof(int));
	d->tlen = calloc(d->cap, sizeof(int));
	d->pre = calloc(d->cap, sizeof *d->pre);
	d->tpre = calloc(d->cap, sizeof *d->tpre);
	for (i = 0; i < n; i++) {
		struct tensor *t = frame_need(f[i], "src.ids", DT_I32, 1, "x");

		ck_assert_ptr_nonnull(t);
		d->src[i] = t->data;
		d->S[i] = t->dim[0];
		d->sent[i] = i;
	}
	return d;
}

static int sc_step(struct decoder *d, int nh, const int32_t *prev,
		   float *logp, float *attw)
{
	int i, smax = 0, s;

	ck_assert_int_le(nh, d->cap);
	for (s = 0; s < d->n; s++)
		if (d->S[s] > smax)
			smax = d->S[s];
	for (i = 0; i < nh; i++) {
		s = d->sent[i];
		if (d->steps > 0)
			d->pre[i][d->len[i]++] = prev[i];
		else
			ck_assert_int_eq(prev[i], bos);	/* <s> first */
		ck_assert_int_lt(d->len[i], MAXT);
		script_logp(d->src[s], d->S[s], d->pre[i], d->len[i], d->V,
			    logp + (size_t)i * d->V);
		if (attw) {	/* one-hot at the prefix length mod S */
			memset(attw + (size_t)i * smax, 0, smax * sizeof(float));
			attw[(size_t)i * smax + d->len[i] % d->S[s]] = 1;
		}
	}
	d->steps++;
	return 0;
}

static int sc_select(struct decoder *d, int nh, const int *parent)
{
	int i;

	for (i = 0; i < nh; i++) {
		d->tsent[i] = d->sent[parent[i]];
		d->tlen[i] = d->len[parent[i]];
		memcpy(d->tpre[i], d->pre[parent[i]], sizeof d->pre[0]);
	}
	memcpy(d->sent, d->tsent, nh * sizeof(int));
	memcpy(d->len, d->tlen, nh * sizeof(int));
	memcpy(d->pre, d->tpre, nh * sizeof d->pre[0]);
	return 0;
}

static int sc_sentence(const struct decoder *d, int i)
{
	return d->sent[i];
}

static int sc_srclen(const struct decoder *d, int s)
{
	return d->S[s];
}

static void sc_free(struct decoder *d)
{
	free(d->sent);
	free(d->len);
	free(d->tsent);
	free(d->tlen);
	free(d->pre);
	free(d->tpre);
	free(d);
}

static const struct arch arch_script = {
	.name = "script",
	.dec_new = sc_new,
	.dec_step = sc_step,
	.dec_select = sc_select,
	.dec_sentence = sc_sentence,
	.dec_srclen = sc_srclen,
	.dec_free = sc_free,
};

/* ---- the definition, one sentence, plainly ----------------------------- */

struct rhyp {
	int32_t ids[MAXT];
	int len;
	double score, norm;
};

struct rcand {
	double score;
	int h;
	int32_t y;
};

static int rcand_cmp(const void *pa, const void *pb)
{
	const struct rcand *a = pa, *b = pb;

	if (a->score != b->score)
		return a->score > b->score ? -1 : 1;
	if (a->h != b->h)
		return a->h - b->h;
	return a->y - b->y;
}

/* Whether ids [len] end with a phrase of 1 .. N ids three times over. */
static int ends_in_repeat(const int32_t *ids, int len, int N)
{
	int k;

	for (k = 1; k <= N && 3 * k <= len; k++) {
		const int32_t *c = ids + len - k;

		if (memcmp(c, c - k, k * 4) == 0 &&
		    memcmp(c, c - 2 * k, k * 4) == 0)
			return 1;
	}
	return 0;
}

/* ref_beam's length penalty: len^alpha (search_opts' lp_power), not
 * GNMT's. */
static int ref_power;

static int ref_beam(const int32_t *src, int S, int V, int k, double alpha,
		    int block, int minlen, int maxlen, struct rhyp *fin)
{
	struct rhyp live[16], nlive[16];
	struct rcand *c = malloc(16 * V * sizeof *c);
	float lp[64];
	int nlive_n = 1, nfin = 0, t, i, j, nc;

	memset(live, 0, sizeof live);
	for (t = 1; nlive_n > 0; t++) {
		int n2 = 0, take;

		for (nc = 0, i = 0; i < nlive_n; i++) {
			script_logp(src, S, live[i].ids, live[i].len, V, lp);
			for (j = 0; j < V && block; j++) {
				live[i].ids[live[i].len] = j;
				if (ends_in_repeat(live[i].ids,
						   live[i].len + 1, block))
					lp[j] = -INFINITY;
			}
			/* a non-empty source: no </s> before minlen ids */
			if (S > 1 && live[i].len < minlen)
				lp[eos] = -INFINITY;
			for (j = 0; j < V; j++, nc++) {
				c[nc].score = live[i].score + lp[j];
				c[nc].h = i;
				c[nc].y = j;
			}
		}
		qsort(c, nc, sizeof *c, rcand_cmp);
		take = k - nfin < nc ? k - nfin : nc;
		for (i = 0; i < take; i++) {
			struct rhyp h = live[c[i].h];

			h.ids[h.len++] = c[i].y;
			h.score = c[i].score;
			h.norm = h.score / (ref_power ? pow(h.len, alpha) :
					    pow((5.0 + h.len) / 6.0, alpha));
			if (c[i].y == eos)
				fin[nfin++] = h;
			else
				nlive[n2++] = h;
		}
		if (t >= maxlen) {
			for (i = 0; i < n2; i++)
				fin[nfin++] = nlive[i];
			n2 = 0;
		}
		memcpy(live, nlive, sizeof live);
		nlive_n = n2;
	}
	free(c);
	/* stable: the first finished of equal ones */
	for (i = 1; i < nfin; i++) {
		struct rhyp h = fin[i];

		for (j = i; j > 0 && h.norm > fin[j - 1].norm; j--)
			fin[j] = fin[j - 1];
		fin[j] = h;
	}
	return nfin;
}

/* ---- helpers ------------------------------------------------------------ */

static struct frame frames[16];
static struct frame *fp[16];

static void make_frames(int n, uint64_t seed)
{
	int i, j;

	for (i = 0; i < n; i++) {
		struct tensor t;
		uint64_t S = 1 + mix(seed + i) % 6;

		frame_clear(&frames[i]);
		ck_assert_int_eq(tensor_init(&t, "src.ids", DT_I32, 1, &S), 0);
		for (j = 0; j < (int)S - 1; j++)
			((int32_t *)t.data)[j] = 4 + mix(seed * 31 + i * 7 + j) %
						 5;
		((int32_t *)t.data)[S - 1] = eos;
		frames[i].number = i;
		ck_assert_ptr_nonnull(frame_put(&frames[i], &t));
		fp[i] = &frames[i];
	}
}

static void free_frames(void)
{
	int i;

	for (i = 0; i < 16; i++)
		frame_free(&frames[i]);
}

static struct model model_v(int V)
{
	struct model m;

	memset(&m, 0, sizeof m);
	m.arch = &arch_script;
	m.tgt_vocab = V;
	m.bos_id = bos;
	m.eos_id = eos;
	return m;
}

static const struct tensor *src_of(int i)
{
	return frame_find(&frames[i], "src.ids");
}

/* ---- tests --------------------------------------------------------------- */

/* The search matches the plain definition on many random sentences, for
 * k 1..5, alpha 0 and 0.6, phrases of up to 0, 1, 2 and 4 ids blocked
 * from a third saying in a row, and a non-empty source's translation of
 * at least 0, 1 or 2 ids before </s>, with the n-best lists in order;
 * with the special ids of doc/MODELS.md and with a model's own (</s> 0,
 * <s> 5).  Vocabularies of 7 and of 45 (rows longer than the sixteen
 * units that the selection skips at a time, with ties in every run of
 * them). */
START_TEST(matches_definition)
{
	static const int vocab[] = { 7, 45 };
	int V, v, trial, k, i, j, a, b, ml;
	double alphas[2] = { 0, 0.6 };
	int blocks[4] = { 0, 1, 2, 4 };

	script_mode = 0;
	bos = _i & 1 ? 5 : 1;
	eos = _i & 1 ? 0 : 2;
	ref_power = _i >> 1;
	for (v = 0; v < 2 && (V = vocab[v]); v++)
	for (trial = 0; trial < 6; trial++)
		for (k = 1; k <= 5; k++)
			for (a = 0; a < 2; a++)
			for (b = 0; b < 4; b++)
			for (ml = 0; ml <= 2; ml++) {
				struct model m = model_v(V);
				struct search_opts o;
				struct search_result res[12];
				struct rhyp fin[16];

				search_opts_default(&o);
				o.k = k;
				o.nbest = k;
				o.lp_power = ref_power;
				o.alpha = alphas[a];
				o.block_repeats = blocks[b];
				o.min_len = ml;
				make_frames(12, trial * 100 + k);
				ck_assert_int_eq(search(&m, fp, 12, &o, res), 0);
				for (i = 0; i < 12; i++) {
					const struct tensor *t = src_of(i);
					int S = t->dim[0];
					int nf = ref_beam(t->data, S, V, k,
							  o.alpha, blocks[b],
							  ml, 2 * S + 10, fin);

					ck_assert_int_eq(res[i].n, nf < k ? nf : k);
					for (j = 0; j < res[i].n; j++) {
						struct hyp *h = &res[i].hyp[j];

						ck_assert_int_eq(h->len, fin[j].len);
						ck_assert_int_eq(memcmp(h->ids,
							fin[j].ids, h->len * 4), 0);
						ck_assert(h->score == fin[j].score);
						ck_assert(h->norm == fin[j].norm);
					}
					search_result_free(&res[i]);
				}
			}
	free_frames();
	bos = 1;
	eos = 2;
	ref_power = 0;
}
END_TEST

/* k = 1 is greedy: the most probable token, the lowest id of equal ones,
 * </s> not first for a non-empty source (the default min_len 1), computed
 * here directly; and the result does not depend on the batch.  With 1
 * thread, and with 3, which deal the 16 sentences out 6, 5 and 5 (a
 * search each). */
START_TEST(k1_is_greedy_and_batch_independent)
{
	int V = 9, i, t;
	struct model m = model_v(V);
	struct search_opts o;
	struct search_result all[16], bat[16], one;
	const int start[] = { 0, 1, 6, 9, 16 };
	float lp[64];

	kern_set_threads(1 + 2 * _i);
	script_mode = 0;
	search_opts_default(&o);
	make_frames(16, 5);
	ck_assert_int_eq(search(&m, fp, 16, &o, all), 0);
	for (i = 0; i < 16; i++) {
		const struct tensor *s = src_of(i);
		int32_t ids[MAXT];
		double score = 0;
		int len = 0, S = s->dim[0];

		for (t = 0; t < 2 * S + 10; t++) {
			int y, best = 0;

			script_logp(s->data, S, ids, len, V, lp);
			if (len == 0 && S > 1)
				lp[eos] = -INFINITY;
			for (y = 1; y < V; y++)
				if (lp[y] > lp[best])
					best = y;
			ids[len++] = best;
			score += lp[best];
			if (best == eos)
				break;
		}
		ck_assert_int_eq(all[i].n, 1);
		ck_assert_int_eq(all[i].hyp[0].len, len);
		ck_assert_int_eq(memcmp(all[i].hyp[0].ids, ids, len * 4), 0);
		ck_assert(all[i].hyp[0].score == score);
		/* alone in its batch: the same */
		ck_assert_int_eq(search(&m, &fp[i], 1, &o, &one), 0);
		ck_assert_int_eq(one.hyp[0].len, len);
		ck_assert_int_eq(memcmp(one.hyp[0].ids, ids, len * 4), 0);
		ck_assert(one.hyp[0].score == score);
		search_result_free(&one);
		search_result_free(&all[i]);
	}
	/* beams too: 16 at once, and in 4 batches (which the threads take
	 * whole), against one at a time */
	o.k = 4;
	o.nbest = 4;
	o.alpha = 0.6;
	ck_assert_int_eq(search(&m, fp, 16, &o, all), 0);
	ck_assert_int_eq(search_batches(&m, fp, start, 4, &o, bat), 0);
	for (i = 0; i < 16; i++) {
		int j;

		ck_assert_int_eq(search(&m, &fp[i], 1, &o, &one), 0);
		ck_assert_int_eq(one.n, all[i].n);
		ck_assert_int_eq(one.n, bat[i].n);
		for (j = 0; j < one.n; j++) {
			ck_assert_int_eq(one.hyp[j].len, all[i].hyp[j].len);
			ck_assert(one.hyp[j].score == all[i].hyp[j].score);
			ck_assert_int_eq(one.hyp[j].len, bat[i].hyp[j].len);
			ck_assert_int_eq(memcmp(one.hyp[j].ids, bat[i].hyp[j].ids,
						one.hyp[j].len * 4), 0);
			ck_assert(one.hyp[j].score == bat[i].hyp[j].score);
		}
		search_result_free(&one);
		search_result_free(&all[i]);
		search_result_free(&bat[i]);
	}
	free_frames();
	kern_set_threads(1);
}
END_TEST

/* All tokens equally likely: greedy takes id 0 every time, up to the
 * maximum length 2 S + 10; a beam of 3 keeps ids 0, 1, 2 at the first
 * step, and </s> (id 2) finishes at once with the best normalised score
 * under alpha 1 (min_len 0: the contract's search). */
START_TEST(ties_and_max_length)
{
	struct model m = model_v(6);
	struct search_opts o;
	struct search_result r;
	int i;

	script_mode = 1;
	search_opts_default(&o);
	make_frames(1, 3);
	ck_assert_int_eq(search(&m, fp, 1, &o, &r), 0);
	ck_assert_int_eq(r.hyp[0].len, 2 * (int)src_of(0)->dim[0] + 10);
	for (i = 0; i < r.hyp[0].len; i++)
		ck_assert_int_eq(r.hyp[0].ids[i], 0);
	ck_assert(fabs(r.hyp[0].score - r.hyp[0].len * log(1 / 6.0)) < 1e-4);
	search_result_free(&r);

	o.len_a = 0;
	o.len_b = 3;
	o.k = 3;
	o.nbest = 3;
	o.alpha = 1;
	o.min_len = 0;
	ck_assert_int_eq(search(&m, fp, 1, &o, &r), 0);
	ck_assert_int_eq(r.n, 3);
	/* </s> alone, finished first; then the two live ones at length 3
	 * (0 0 0 and 0 0 1: the earlier hypothesis, then the lower id) */
	ck_assert_int_eq(r.hyp[0].len, 1);
	ck_assert_int_eq(r.hyp[0].ids[0], eos);
	ck_assert_int_eq(r.hyp[1].len, 3);
	ck_assert_int_eq(r.hyp[1].ids[2], 0);
	ck_assert_int_eq(r.hyp[2].ids[2], 1);
	ck_assert_int_eq(r.hyp[2].ids[0], 0);
	search_result_free(&r);

	/* never </s>: stops at the maximum length without it */
	script_mode = 2;
	o.k = 2;
	o.nbest = 1;
	o.len_b = 5;
	ck_assert_int_eq(search(&m, fp, 1, &o, &r), 0);
	ck_assert_int_eq(r.hyp[0].len, 5);
	for (i = 0; i < 5; i++)
		ck_assert_int_ne(r.hyp[0].ids[i], eos);
	search_result_free(&r);
	free_frames();
}
END_TEST

/* Attention weights are read back along the hypothesis' own history, and
 * forced decoding of the result gives its score exactly. */
START_TEST(attention_and_forced_decoding)
{
	struct model m = model_v(7);
	struct search_opts o;
	struct search_result r[8];
	struct hyp forced[8];
	const int start[] = { 0, 2, 3, 8 };
	double score[8];
	int i, t, j;

	script_mode = 0;
	search_opts_default(&o);
	o.k = 3;
	o.want_attw = 1;
	make_frames(8, 11);
	ck_assert_int_eq(search(&m, fp, 8, &o, r), 0);
	for (i = 0; i < 8; i++) {
		struct hyp *h = &r[i].hyp[0];
		struct tensor t2;
		uint64_t len = h->len;

		ck_assert_int_eq(h->L * h->H, 1);
		ck_assert_int_eq(h->S, (int)src_of(i)->dim[0]);
		for (t = 0; t < h->len; t++)
			for (j = 0; j < h->S; j++)
				ck_assert(h->attw[t * h->S + j] ==
					  (j == t % h->S ? 1.0f : 0.0f));
		ck_assert_int_eq(tensor_init_copy(&t2, "hyp.ids", DT_I32, 1,
						  &len, h->ids), 0);
		ck_assert_ptr_nonnull(frame_put(&frames[i], &t2));
	}
	ck_assert_int_eq(search_force(&m, NULL, fp, 8, "hyp.ids", 1, forced), 0);
	for (i = 0; i < 8; i++) {
		score[i] = forced[i].score;
		ck_assert(forced[i].score == r[i].hyp[0].score);
		ck_assert_int_eq(memcmp(forced[i].attw, r[i].hyp[0].attw,
			forced[i].len * forced[i].S * sizeof(float)), 0);
		hyp_free(&forced[i]);
		search_result_free(&r[i]);
	}
	/* in 3 batches on 2 threads: the same */
	kern_set_threads(2);
	ck_assert_int_eq(search_force_batches(&m, NULL, fp, start, 3,
					      "hyp.ids", 1, forced), 0);
	for (i = 0; i < 8; i++) {
		ck_assert(forced[i].score == score[i]);
		hyp_free(&forced[i]);
	}
	/* an id outside the vocabulary is refused, naming it, alone or in
	 * a batch of several on 2 threads (the others' results freed) */
	((int32_t *)frame_find(&frames[3], "hyp.ids")->data)[0] = 7;
	ck_assert_int_eq(search_force_batches(&m, NULL, fp, start, 3,
					      "hyp.ids", 0, forced), -1);
	ck_assert_ptr_nonnull(strstr(err_msg(), "frame 3"));
	kern_set_threads(1);
	ck_assert_int_eq(search_force(&m, NULL, fp, 8, "hyp.ids", 0, forced), -1);
	ck_assert_ptr_nonnull(strstr(err_msg(), "hyp.ids"));
	ck_assert_ptr_nonnull(strstr(err_msg(), "frame 3"));
	free_frames();
}
END_TEST

/* All tokens equally likely, so greedy search would say id 0 forever.
 * With phrases of one id blocked it says 0 0 1 0 0 1 ... (a third 0 is
 * blocked, and 1 is the lowest id left); with phrases of up to three
 * blocked, after 0 0 1 0 0 1 0 0 both 1 (0 0 1 three times) and 0 (0 0 0)
 * are, and 2, </s>, ends it. */
START_TEST(blocked_repeats)
{
	const int32_t three[] = { 0, 0, 1, 0, 0, 1, 0, 0, eos };
	struct model m = model_v(6);
	struct search_opts o;
	struct search_result r;
	int i;

	script_mode = 1;
	search_opts_default(&o);
	o.block_repeats = 1;
	make_frames(1, 3);
	ck_assert_int_eq(search(&m, fp, 1, &o, &r), 0);
	ck_assert_int_eq(r.hyp[0].len, 2 * (int)src_of(0)->dim[0] + 10);
	for (i = 0; i < r.hyp[0].len; i++)
		ck_assert_int_eq(r.hyp[0].ids[i], i % 3 == 2);
	search_result_free(&r);
	o.block_repeats = 3;
	ck_assert_int_eq(search(&m, fp, 1, &o, &r), 0);
	ck_assert_int_eq(r.hyp[0].len, 9);
	ck_assert_int_eq(memcmp(r.hyp[0].ids, three, sizeof three), 0);
	search_result_free(&r);
	o.block_repeats = SEARCH_BLOCK_MAX + 1;
	ck_assert_int_eq(search(&m, fp, 1, &o, &r), -1);
	ck_assert_ptr_nonnull(strstr(err_msg(), "block_repeats"));
	free_frames();
}
END_TEST

/* frame 0 of a source of S ids: S - 1 of id 4, then </s> */
static void source_of(int S)
{
	struct tensor t;
	uint64_t n = S;
	int j;

	frame_clear(&frames[0]);
	ck_assert_int_eq(tensor_init(&t, "src.ids", DT_I32, 1, &n), 0);
	for (j = 0; j < S - 1; j++)
		((int32_t *)t.data)[j] = 4;
	((int32_t *)t.data)[S - 1] = eos;
	ck_assert_ptr_nonnull(frame_put(&frames[0], &t));
	fp[0] = &frames[0];
}

/* Whether hypothesis h is the ids [n] with log-probability score. */
static void is_hyp(const struct hyp *h, const int32_t *ids, int n,
		   double score)
{
	ck_assert_int_eq(h->len, n);
	ck_assert_int_eq(memcmp(h->ids, ids, n * sizeof *ids), 0);
	ck_assert_msg(fabs(h->score - score) < 1e-6, "score %.9g, not %.9g",
		      h->score, score);
}

/*
 * min_len, worked by hand.  Whatever the prefix, ids 0 .. 3 have p = 1/8,
 * 1/8, 1/2 (</s>) and 1/4.  The contract's greedy search (min_len 0) says
 * </s> at once: an empty line, log p = ln 1/2.  With min_len 1 (the
 * default) a source of one word takes 3 (1/4) and then </s> (1/2),
 * ln 1/8; with min_len 2, 3 3 </s>, ln 1/32; with the maximum length 1,
 * 3 alone, ln 1/4.  An empty source (</s> alone) still gets </s>, ln 1/2.
 * A beam of 2 (alpha 0) under min_len 1: step 1 keeps 3 (ln 1/4) and 0
 * (ln 1/8, the lower id of the tie with 1); step 2's best are 3 </s>
 * (ln 1/8, finished) and 3 3 (ln 1/16, tied with 0 </s> but from the
 * earlier hypothesis); step 3 finishes 3 3 </s> (ln 1/32).
 */
START_TEST(min_len_rule)
{
	const int32_t end[] = { eos }, one[] = { 3, eos },
		      two[] = { 3, 3, eos }, cut[] = { 3 };
	struct model m = model_v(4);
	struct search_opts o;
	struct search_result r;

	script_mode = 3;
	search_opts_default(&o);
	ck_assert_int_eq(o.min_len, 1);
	source_of(2);
	ck_assert_int_eq(search(&m, fp, 1, &o, &r), 0);
	is_hyp(&r.hyp[0], one, 2, log(1 / 8.0));
	search_result_free(&r);
	o.min_len = 0;
	ck_assert_int_eq(search(&m, fp, 1, &o, &r), 0);
	is_hyp(&r.hyp[0], end, 1, log(1 / 2.0));
	search_result_free(&r);
	o.min_len = 2;
	ck_assert_int_eq(search(&m, fp, 1, &o, &r), 0);
	is_hyp(&r.hyp[0], two, 3, log(1 / 32.0));
	search_result_free(&r);
	o.len_a = 0;
	o.len_b = 1;
	ck_assert_int_eq(search(&m, fp, 1, &o, &r), 0);
	is_hyp(&r.hyp[0], cut, 1, log(1 / 4.0));
	search_result_free(&r);

	search_opts_default(&o);
	o.k = 2;
	o.nbest = 2;
	ck_assert_int_eq(search(&m, fp, 1, &o, &r), 0);
	ck_assert_int_eq(r.n, 2);
	is_hyp(&r.hyp[0], one, 2, log(1 / 8.0));
	is_hyp(&r.hyp[1], two, 3, log(1 / 32.0));
	search_result_free(&r);

	source_of(1);		/* an empty source: the model's </s> */
	for (o.k = 1; o.k <= 2; o.k++) {
		o.nbest = 1;
		ck_assert_int_eq(search(&m, fp, 1, &o, &r), 0);
		is_hyp(&r.hyp[0], end, 1, log(1 / 2.0));
		search_result_free(&r);
	}

	o.min_len = SEARCH_MIN_LEN_MAX + 1;
	ck_assert_int_eq(search(&m, fp, 1, &o, &r), -1);
	ck_assert_ptr_nonnull(strstr(err_msg(), "min_len"));
	o.min_len = -1;
	ck_assert_int_eq(search(&m, fp, 1, &o, &r), -1);
	free_frames();
}
END_TEST

/*
 * no_unk (Marian's search without allow-unk), on min_len_rule's model:
 * with unk_id 3 (p = 1/4) the greedy search of a one-word source under
 * min_len 1 takes 0 (1/8, the lower id of the tie with 1) then </s>
 * (1/2): ln 1/16; under min_len 0 </s> at once; a beam of 2 keeps 0
 * and 1 at step 1 and never 3.  dec_allow_unk=0 in a model's config
 * sets it, 1 does not; and dec_max_length_factor rounds up: 2.5 * 3
 * ids are at most 8.
 */
START_TEST(no_unk_and_marians_length)
{
	const int32_t zero[] = { 0, eos }, end[] = { eos };
	struct model m = model_v(4);
	struct search_opts o;
	struct search_result r;
	int i, j;

	script_mode = 3;
	m.unk_id = 3;
	source_of(2);
	search_opts_default(&o);
	o.no_unk = 1;
	ck_assert_int_eq(search(&m, fp, 1, &o, &r), 0);
	is_hyp(&r.hyp[0], zero, 2, log(1 / 16.0));
	search_result_free(&r);
	o.min_len = 0;
	ck_assert_int_eq(search(&m, fp, 1, &o, &r), 0);
	is_hyp(&r.hyp[0], end, 1, log(1 / 2.0));
	search_result_free(&r);
	o.min_len = 1;
	o.k = 2;
	o.nbest = 2;
	ck_assert_int_eq(search(&m, fp, 1, &o, &r), 0);
	ck_assert_int_eq(r.n, 2);
	for (i = 0; i < r.n; i++)
		for (j = 0; j < r.hyp[i].len; j++)
			ck_assert_int_ne(r.hyp[i].ids[j], 3);
	search_result_free(&r);

	search_opts_default(&o);
	ck_assert_int_eq(config_set(&m.cfg, "dec_allow_unk", "1"), 0);
	ck_assert_int_eq(search_opts_model(&o, &m, 0, 0), 0);
	ck_assert_int_eq(o.no_unk, 0);
	ck_assert_int_eq(config_set(&m.cfg, "dec_allow_unk", "0"), 0);
	ck_assert_int_eq(search_opts_model(&o, &m, 0, 0), 0);
	ck_assert_int_eq(o.no_unk, 1);
	ck_assert_int_eq(config_set(&m.cfg, "dec_allow_unk", "2"), 0);
	ck_assert_int_eq(search_opts_model(&o, &m, 0, 0), -1);
	ck_assert_ptr_nonnull(strstr(err_msg(), "dec_allow_unk"));
	config_free(&m.cfg);
	m = model_v(4);
	search_opts_default(&o);
	ck_assert_int_eq(search_max_len(&o, 3), 16);
	ck_assert_int_eq(config_set(&m.cfg, "dec_max_length_factor", "2.5"),
			 0);
	ck_assert_int_eq(search_opts_model(&o, &m, 0, 0), 0);
	ck_assert_int_eq(search_max_len(&o, 3), 8);
	ck_assert_int_eq(search_max_len(&o, 4), 10);
	o.len_ceil = 0;
	ck_assert_int_eq(search_max_len(&o, 3), 7);
	config_free(&m.cfg);
	free_frames();
}
END_TEST

/* A model's decoding settings (an import's decoder.yml) as the search's
 * defaults: beam size and len^normalize for beam, the length factor for
 * both; none of those the user gave; bad values refused by name. */
START_TEST(model_decoding_settings)
{
	struct model m = model_v(7);
	struct search_opts o;

	search_opts_default(&o);
	ck_assert_int_eq(search_opts_model(&o, &m, 0, 1), 0);	/* none */
	ck_assert_int_eq(o.k, 1);
	ck_assert_int_eq(o.lp_power, 0);
	ck_assert(o.len_a == 2 && o.len_b == 10);
	ck_assert_int_eq(config_set(&m.cfg, "dec_beam_size", "4"), 0);
	ck_assert_int_eq(config_set(&m.cfg, "dec_normalize", "0.6"), 0);
	ck_assert_int_eq(config_set(&m.cfg, "dec_max_length_factor", "2.5"),
			 0);
	ck_assert_int_eq(search_opts_model(&o, &m, 0, 1), 0);
	ck_assert_int_eq(o.k, 4);
	ck_assert(o.alpha == 0.6 && o.lp_power == 1);
	ck_assert(o.len_a == 2.5 && o.len_b == 0);
	ck_assert_int_eq(search_max_len(&o, 8), 20);
	/* greedy: only the length */
	search_opts_default(&o);
	ck_assert_int_eq(search_opts_model(&o, &m, 0, 0), 0);
	ck_assert(o.k == 1 && o.alpha == 0 && o.lp_power == 0);
	ck_assert(o.len_a == 2.5);
	/* what the user gave stays */
	search_opts_default(&o);
	o.k = 7;
	o.alpha = 1;
	ck_assert_int_eq(search_opts_model(&o, &m, SEARCH_GIVEN_K |
					   SEARCH_GIVEN_ALPHA |
					   SEARCH_GIVEN_LEN, 1), 0);
	ck_assert(o.k == 7 && o.alpha == 1 && o.lp_power == 0);
	ck_assert(o.len_a == 2 && o.len_b == 10);
	ck_assert_int_eq(config_set(&m.cfg, "dec_beam_size", "2.5"), 0);
	ck_assert_int_eq(search_opts_model(&o, &m, 0, 1), -1);
	ck_assert_ptr_nonnull(strstr(err_msg(), "dec_beam_size=2.5"));
	ck_assert_int_eq(config_set(&m.cfg, "dec_beam_size", "0"), 0);
	ck_assert_int_eq(search_opts_model(&o, &m, 0, 1), -1);
	ck_assert_int_eq(config_set(&m.cfg, "dec_beam_size", "3"), 0);
	ck_assert_int_eq(config_set(&m.cfg, "dec_normalize", "x"), 0);
	ck_assert_int_eq(search_opts_model(&o, &m, 0, 1), -1);
	ck_assert_ptr_nonnull(strstr(err_msg(), "dec_normalize"));
	config_free(&m.cfg);
}
END_TEST

START_TEST(bad_options)
{
	struct model m = model_v(7);
	struct search_opts o;
	struct search_result r;

	search_opts_default(&o);
	o.nbest = 2;
	make_frames(1, 1);
	ck_assert_int_eq(search(&m, fp, 1, &o, &r), -1);
	ck_assert_int_eq(search(&m, fp, 0, &o, &r), -1);
	o.nbest = 1;
	ck_assert_int_eq(search(&m, fp, 0, &o, &r), 0);
	ck_assert_int_eq(search_max_len(&o, 4), 18);
	o.len_a = 1.5;
	o.len_b = -100;
	ck_assert_int_eq(search_max_len(&o, 4), 1);
	free_frames();
}
END_TEST

int main(void)
{
	Suite *s = suite_create("search");
	TCase *tc = tcase_create("search");

	tcase_set_timeout(tc, 30);
	tcase_add_loop_test(tc, matches_definition, 0, 4);
	tcase_add_test(tc, model_decoding_settings);
	tcase_add_loop_test(tc, k1_is_greedy_and_batch_independent, 0, 2);
	tcase_add_test(tc, ties_and_max_length);
	tcase_add_test(tc, attention_and_forced_decoding);
	tcase_add_test(tc, blocked_repeats);
	tcase_add_test(tc, min_len_rule);
	tcase_add_test(tc, no_unk_and_marians_length);
	tcase_add_test(tc, bad_options);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
