/* wamodel.c: the word aligner's model file and bitext alignment; see
 * wamodel.h. */
#include <stdlib.h>
#include <string.h>
#include "wamodel.h"
#include "symmetrize.h"
#include "base/errmsg.h"
#include "kernels/kernels.h"
#include "stream/stream.h"

/* 2: a direction may be the HMM's (align.D.jumps); 1 has none. */
#define WA_FORMAT_VERSION 2

static const char *const side_name[2] = { "src", "tgt" };
static const char *const dir_name[2] = { "fwd", "rev" };

/* ---- saving ---------------------------------------------------------- */

static int put(struct tsr_writer *w, const char *name, int dtype, int rank,
	       uint64_t n, const void *data, int last)
{
	struct tensor t;
	uint64_t dim[1] = { n };
	int rc;

	if (tensor_init_copy(&t, name, dtype, rank, dim, data) < 0)
		return -1;
	rc = tsr_write(w, &t, 0, last);
	tensor_free(&t);
	return rc;
}

static int put_words(struct tsr_writer *w, const struct wa_vocab *v,
		     const char *name)
{
	/* buf holds the words '\0'-ended: the same bytes, '\n'-ended */
	char *s = malloc(v->len ? v->len : 1);
	int rc;

	if (!s) {
		err_set("out of memory");
		return -1;
	}
	for (size_t k = 0; k < v->len; k++)
		s[k] = v->buf[k] ? v->buf[k] : '\n';
	rc = put(w, name, DT_U8, 1, v->len, s, 0);
	free(s);
	return rc;
}

int wa_model_save(const struct wa_model *m, const char *path)
{
	struct tsr_writer *w = tsr_writer_atomic(path, 0);
	int32_t version = m->dir[0].hmm || m->dir[1].hmm ? 2 : 1;
	int32_t fold = m->fold;
	char name[64];

	if (!w)
		return -1;
	if (put(w, "align.version", DT_I32, 0, 1, &version, 0) < 0 ||
	    put(w, "align.fold", DT_I32, 0, 1, &fold, 0) < 0)
		goto fail;
	for (int s = 0; s < 2; s++) {
		snprintf(name, sizeof name, "align.%s.words", side_name[s]);
		if (put_words(w, &m->vocab[s], name) < 0)
			goto fail;
	}
	for (int k = 0; k < 2; k++) {
		const struct wa_dir *d = &m->dir[k];
		double params[3] = { d->diagonal, d->tension, d->p0 };

		snprintf(name, sizeof name, "align.%s.params", dir_name[k]);
		if (put(w, name, DT_F64, 1, 3, params, 0) < 0)
			goto fail;
		snprintf(name, sizeof name, "align.%s.rows", dir_name[k]);
		if (put(w, name, DT_I64, 1, d->ne + 2, d->row, 0) < 0)
			goto fail;
		snprintf(name, sizeof name, "align.%s.cols", dir_name[k]);
		if (put(w, name, DT_I32, 1, d->nnz, d->col, 0) < 0)
			goto fail;
		snprintf(name, sizeof name, "align.%s.probs", dir_name[k]);
		if (put(w, name, DT_F32, 1, d->nnz, d->prob,
			k == 1 && !d->hmm) < 0)
			goto fail;
		snprintf(name, sizeof name, "align.%s.jumps", dir_name[k]);
		if (d->hmm && put(w, name, DT_F64, 1, WA_HMM_JUMPS, d->jump,
				  k == 1) < 0)
			goto fail;
	}
	return tsr_writer_commit(w);
fail:
	tsr_writer_abort(w);
	err_prefix("%s", path);
	return -1;
}

/* ---- loading --------------------------------------------------------- */

/* The record name of map, of that dtype and rank, its payload checked. */
static const struct tensor *need(struct tsr_map *map, const char *name,
				 int dtype, int rank)
{
	const struct tensor *t = frame_find(&map->f, name);

	if (!t) {
		err_set("no record %s: not a model of align", name);
		return NULL;
	}
	if ((int)t->dtype != dtype || t->rank != rank) {
		err_set("record %s: %s of rank %d, want %s of rank %d", name,
			dtype_name(t->dtype), t->rank, dtype_name(dtype), rank);
		return NULL;
	}
	return t;
}

static int get_words(struct tsr_map *map, struct wa_vocab *v, int s)
{
	char name[64];
	const struct tensor *t;
	const char *p, *end, *nl;

	snprintf(name, sizeof name, "align.%s.words", side_name[s]);
	if (!(t = need(map, name, DT_U8, 1)))
		return -1;
	p = t->data;
	end = p + t->nbytes;
	if (t->nbytes && end[-1] != '\n') {
		err_set("record %s: the last word is not ended by a newline",
			name);
		return -1;
	}
	for (int32_t id = 1; p < end; id++, p = nl + 1) {
		nl = memchr(p, '\n', end - p);
		if (nl == p || memchr(p, ' ', nl - p) || memchr(p, '\t', nl - p) ||
		    memchr(p, '\r', nl - p) || memchr(p, '\0', nl - p)) {
			err_set("record %s: word %d is empty or holds a space",
				name, (int)id);
			return -1;
		}
		int32_t got = wa_vocab_id(v, p, nl - p, 1);

		if (got < 0)
			return -1;
		if (got != id) {
			err_set("record %s: word %d is word %d again", name,
				(int)id, (int)got);
			return -1;
		}
	}
	return 0;
}

static int get_dir(struct tsr_map *map, struct wa_dir *d, int k,
		   int32_t ne, int32_t nf, int version)
{
	const struct tensor *params, *rows, *cols, *probs, *jumps = NULL;
	char name[5][64];
	const double *pa;

	snprintf(name[0], 64, "align.%s.params", dir_name[k]);
	snprintf(name[1], 64, "align.%s.rows", dir_name[k]);
	snprintf(name[2], 64, "align.%s.cols", dir_name[k]);
	snprintf(name[3], 64, "align.%s.probs", dir_name[k]);
	snprintf(name[4], 64, "align.%s.jumps", dir_name[k]);
	if (version >= 2 && (jumps = frame_find(&map->f, name[4])) &&
	    !(jumps = need(map, name[4], DT_F64, 1)))
		return -1;
	if (jumps && jumps->dim[0] != WA_HMM_JUMPS) {
		err_set("record %s: %llu jump widths, want %d", name[4],
			(unsigned long long)jumps->dim[0], WA_HMM_JUMPS);
		return -1;
	}
	if (!(params = need(map, name[0], DT_F64, 1)) ||
	    !(rows = need(map, name[1], DT_I64, 1)) ||
	    !(cols = need(map, name[2], DT_I32, 1)) ||
	    !(probs = need(map, name[3], DT_F32, 1)))
		return -1;
	if (params->dim[0] != 3 || rows->dim[0] != (uint64_t)ne + 2 ||
	    cols->dim[0] != probs->dim[0]) {
		err_set("records align.%s.*: shapes [%llu] [%llu] [%llu] "
			"[%llu], want [3] [%lld] [N] [N]", dir_name[k],
			(unsigned long long)params->dim[0],
			(unsigned long long)rows->dim[0],
			(unsigned long long)cols->dim[0],
			(unsigned long long)probs->dim[0], (long long)ne + 2);
		return -1;
	}
	pa = params->data;
	if (pa[0] != 0 && pa[0] != 1) {
		err_set("record %s: diagonal %g is not 0 or 1", name[0], pa[0]);
		return -1;
	}
	/* checked where they lie, before anything is allocated for them */
	struct wa_dir view = {
		.ne = ne, .nf = nf, .nnz = (int64_t)cols->dim[0],
		.row = rows->data, .col = cols->data, .prob = probs->data,
		.diagonal = pa[0] == 1, .tension = pa[1], .p0 = pa[2],
		.hmm = jumps != NULL,
	};
	const char *const names[5] = { name[0], name[1], name[2], name[3],
				       name[4] };

	if (jumps)
		memcpy(view.jump, jumps->data, sizeof view.jump);
	if (wa_dir_check(&view, names) < 0)
		return -1;
	*d = view;
	d->row = malloc(rows->nbytes);
	d->col = malloc(cols->nbytes ? cols->nbytes : 1);
	d->prob = malloc(probs->nbytes ? probs->nbytes : 1);
	if (!d->row || !d->col || !d->prob) {
		err_set("out of memory");
		return -1;
	}
	memcpy(d->row, rows->data, rows->nbytes);
	memcpy(d->col, cols->data, cols->nbytes);
	memcpy(d->prob, probs->data, probs->nbytes);
	return 0;
}

int wa_model_load(struct wa_model *m, const char *path)
{
	struct tsr_map *map;
	const struct tensor *t;
	int32_t version;

	memset(m, 0, sizeof *m);
	if (!(map = tsr_map_open(path)))
		return -1;
	if (!(t = need(map, "align.version", DT_I32, 0)))
		goto fail;
	version = *(const int32_t *)t->data;
	if (version < 1 || version > WA_FORMAT_VERSION) {
		err_set("record align.version: version %d, this align reads 1 "
			"to %d", (int)version, WA_FORMAT_VERSION);
		goto fail;
	}
	if (!(t = need(map, "align.fold", DT_I32, 0)))
		goto fail;
	m->fold = *(const int32_t *)t->data != 0;
	if (get_words(map, &m->vocab[0], 0) < 0 ||
	    get_words(map, &m->vocab[1], 1) < 0 ||
	    get_dir(map, &m->dir[0], 0, m->vocab[0].n, m->vocab[1].n,
		    version) < 0 ||
	    get_dir(map, &m->dir[1], 1, m->vocab[1].n, m->vocab[0].n,
		    version) < 0)
		goto fail;
	tsr_map_close(map);
	return 0;
fail:
	err_prefix("%s", path);
	tsr_map_close(map);
	wa_model_free(m);
	return -1;
}

void wa_model_free(struct wa_model *m)
{
	for (int k = 0; k < 2; k++) {
		wa_vocab_free(&m->vocab[k]);
		wa_dir_free(&m->dir[k]);
	}
}

/* ---- aligning -------------------------------------------------------- */

struct job {
	const struct wa_model *m;
	const struct wa_bitext *b;
	int sym;
	double threshold;
	struct wa_links *out;
	int oom;
};

static void align_pairs(void *ctx, int64_t lo, int64_t hi)
{
	struct job *jb = ctx;
	const struct wa_bitext *b = jb->b;
	size_t cap = WA_MAX_WORDS + 1;
	int32_t *fwd = malloc(2 * cap * sizeof *fwd), *rev = fwd + cap;
	struct wa_hmm_work w = { 0 };
	unsigned char *grid = NULL;
	size_t gcap = 0;
	float *post = NULL;
	size_t pcap = 0;

	if (!fwd)
		goto oom;
	for (int p = (int)lo; p < hi; p++) {
		int n = wa_len(b, 0, p), m = wa_len(b, 1, p);
		const int32_t *src = wa_words(b, 0, p), *tgt = wa_words(b, 1, p);
		size_t g = (size_t)(n + 1) * (m + 1);

		jb->out->count[p] = 0;
		if (!n || !m)
			continue;
		if (jb->sym == WA_SYM_POSTERIOR) {
			size_t need = (size_t)m * (n + 1) + (size_t)n * (m + 1);

			if (need > pcap) {
				free(post);
				pcap = need;
				if (!(post = malloc(pcap * sizeof *post)))
					goto oom;
			}
			float *pr = post + (size_t)m * (n + 1);

			if (wa_dir_posteriors(&jb->m->dir[0], src, n, tgt, m,
					      post, &w) < 0 ||
			    wa_dir_posteriors(&jb->m->dir[1], tgt, m, src, n,
					      pr, &w) < 0)
				goto oom;
			jb->out->count[p] = wa_symmetrize_posterior(post, m, pr,
				n, jb->threshold,
				jb->out->ij + 2 * jb->out->off[p]);
			continue;
		}
		if (g > gcap) {
			free(grid);
			gcap = g;
			if (!(grid = malloc(gcap)))
				goto oom;
		}
		for (int j = 0; j < m; j++)
			fwd[j] = -1;
		for (int i = 0; i < n; i++)
			rev[i] = -1;
		if ((jb->sym != WA_SYM_REVERSE &&
		     wa_dir_align(&jb->m->dir[0], src, n, tgt, m, fwd, &w) < 0) ||
		    (jb->sym != WA_SYM_FORWARD &&
		     wa_dir_align(&jb->m->dir[1], tgt, m, src, n, rev, &w) < 0))
			goto oom;
		jb->out->count[p] = wa_symmetrize(jb->sym, fwd, m, rev, n, grid,
			jb->out->ij + 2 * jb->out->off[p]);
	}
	free(fwd);
	wa_hmm_work_free(&w);
	free(grid);
	free(post);
	return;
oom:
	__atomic_store_n(&jb->oom, 1, __ATOMIC_RELAXED);
	free(fwd);
	wa_hmm_work_free(&w);
	free(grid);
	free(post);
}

int wa_align_bitext(const struct wa_model *m, const struct wa_bitext *b,
		    int sym, double threshold, struct wa_links *out)
{
	struct job jb = { m, b, sym, threshold, out, 0 };

	memset(out, 0, sizeof *out);
	out->off = malloc((b->n + 1) * sizeof *out->off);
	out->count = malloc((b->n ? b->n : 1) * sizeof *out->count);
	if (!out->off || !out->count)
		goto oom;
	out->off[0] = 0;
	for (int p = 0; p < b->n; p++)
		out->off[p + 1] = out->off[p] + wa_len(b, 0, p) + wa_len(b, 1, p);
	if (!(out->ij = malloc((out->off[b->n] ? 2 * out->off[b->n] : 1) *
			       sizeof *out->ij)))
		goto oom;
	kern_parallel_for(b->n, 16, align_pairs, &jb);
	if (!jb.oom)
		return 0;
oom:
	wa_links_free(out);
	err_set("word aligner: out of memory");
	return -1;
}

void wa_links_free(struct wa_links *l)
{
	free(l->off);
	free(l->count);
	free(l->ij);
	memset(l, 0, sizeof *l);
}
