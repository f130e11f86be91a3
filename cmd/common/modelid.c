/* modelid.c: a model's identity in its streams; see modelid.h. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "base/errmsg.h"
#include "kernels/kernels.h"
#include "stream/crc32.h"
#include "modelid.h"

#define FNV_OFFSET 0xcbf29ce484222325ULL
#define FNV_PRIME 0x100000001b3ULL

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;

	while (n--)
		h = (h ^ *b++) * FNV_PRIME;
	return h;
}

/* A length, then the bytes: no two sequences of texts hash alike by
 * shifting a boundary. */
static uint64_t fnv_text(uint64_t h, const void *p, size_t n)
{
	uint64_t len = n;

	return fnv(fnv(h, &len, sizeof len), p, n);
}

static void set_file(struct model_id *id, const char *file)
{
	snprintf(id->file, sizeof id->file, "%s", file);
}

void model_id_vocab(struct model_id *id, const char *src, size_t nsrc,
		    const char *tgt, size_t ntgt, const char *file)
{
	memset(id, 0, sizeof *id);
	id->vocab = fnv_text(fnv_text(FNV_OFFSET, src, nsrc), tgt, ntgt);
	set_file(id, file);
}

/*
 * The parameters' bytes in pieces of at most PIECE, PIECES at a time: the
 * pieces' crc32s are taken on the threads, then each parameter's is
 * folded from its pieces' with crc32_combine (the crc32 of the whole).
 * An empty parameter is one empty piece.
 */
enum { PIECE = 1 << 20, PIECES = 64 };

struct piece {
	int param;
	size_t off, n;
	uint32_t crc;
};

struct crc_job {
	const struct model *m;
	struct piece *pc;
};

static void crc_pieces(void *ctx, int64_t lo, int64_t hi)
{
	const struct crc_job *j = ctx;

	for (int64_t i = lo; i < hi; i++) {
		struct piece *p = &j->pc[i];

		p->crc = crc32_fast(0, (const unsigned char *)
				    j->m->param[p->param].w + p->off, p->n);
	}
}

/* h with parameter p, its name, shape and crc32 of its values. */
static uint64_t hash_param(uint64_t h, const struct param *p, uint32_t crc)
{
	int32_t dim[3] = { p->rank, p->dim[0], p->dim[1] };

	h = fnv_text(h, p->name, strlen(p->name));
	return fnv(fnv(h, dim, sizeof dim), &crc, sizeof crc);
}

void model_id_model(struct model_id *id, const struct model *m,
		    const char *file)
{
	struct piece pc[PIECES];
	struct crc_job j = { m, pc };
	uint64_t h;
	uint32_t crc = 0;
	size_t off = 0;
	int i = 0, np, k;

	model_id_vocab(id, m->vocab_src, m->vocab_src_len, m->vocab_tgt,
		       m->vocab_tgt_len, file);
	h = fnv(fnv_text(FNV_OFFSET, m->arch->name, strlen(m->arch->name)),
		&id->vocab, sizeof id->vocab);
	while (i < m->nparam) {
		for (np = 0; np < PIECES && i < m->nparam; np++) {
			size_t size = m->param[i].n * sizeof(float);
			size_t n = size - off < PIECE ? size - off : PIECE;

			pc[np] = (struct piece){ i, off, n, 0 };
			off += n;
			if (off == size) {
				i++;
				off = 0;
			}
		}
		kern_parallel_for(np, 1, crc_pieces, &j);
		for (k = 0; k < np; k++) {
			const struct param *p = &m->param[pc[k].param];

			crc = pc[k].off ? (uint32_t)crc32_combine(crc,
					pc[k].crc, (z_off_t)pc[k].n) :
			      pc[k].crc;
			if (pc[k].off + pc[k].n == p->n * sizeof(float))
				h = hash_param(h, p, crc);
		}
	}
	id->params = h;
	id->has_params = 1;
}

size_t model_id_text(const struct model_id *id, char *text)
{
	if (id->has_params)
		return snprintf(text, MODEL_ID_TEXT, "vocab=%016" PRIx64
				" params=%016" PRIx64 " model=%s", id->vocab,
				id->params, id->file);
	return snprintf(text, MODEL_ID_TEXT, "vocab=%016" PRIx64 " model=%s",
			id->vocab, id->file);
}

/* Parses "vocab=V[ params=P] model=FILE"; 0 or -1. */
static int parse(const struct tensor *t, struct model_id *id)
{
	char buf[MODEL_ID_TEXT], *p;
	size_t n = t->nbytes;

	memset(id, 0, sizeof *id);
	if (t->dtype != DT_U8 || t->rank != 1 || n >= sizeof buf)
		return -1;
	memcpy(buf, t->data, n);
	buf[n] = 0;
	if (sscanf(buf, "vocab=%16" SCNx64, &id->vocab) != 1)
		return -1;
	p = strstr(buf, " params=");
	if (p && sscanf(p, " params=%16" SCNx64, &id->params) == 1)
		id->has_params = 1;
	if (!(p = strstr(buf, " model=")))
		return -1;
	set_file(id, p + 7);
	return 0;
}

int model_id_frame(struct frame *f, const struct model_id *id)
{
	struct tensor *t = frame_head(f, "model.id");
	char text[MODEL_ID_TEXT];
	struct model_id old;
	struct tensor rec;
	uint64_t len;

	if (t && tsr_inflate(t) < 0)
		return -1;
	if (t && parse(t, &old) < 0) {
		err_set("frame %llu: model.id is not 'vocab=HEX [params=HEX] "
			"model=FILE'", (unsigned long long)f->number);
		return -1;
	}
	if (t && old.vocab != id->vocab) {
		err_set("frame %llu: made with the vocabulary of %s "
			"(vocab=%016" PRIx64 "), not that of %s (vocab=%016"
			PRIx64 ")", (unsigned long long)f->number, old.file,
			old.vocab, id->file, id->vocab);
		return -1;
	}
	if (t && old.has_params && id->has_params &&
	    old.params != id->params) {
		err_set("frame %llu: made with the model %s (params=%016"
			PRIx64 "), not %s (params=%016" PRIx64 ")",
			(unsigned long long)f->number, old.file, old.params,
			id->file, id->params);
		return -1;
	}
	if (t && (old.has_params || !id->has_params))
		return 0;	/* as complete already */
	len = model_id_text(id, text);
	if (tensor_init_copy(&rec, "model.id", DT_U8, 1, &len, text) < 0 ||
	    !frame_put(f, &rec))
		return -1;
	return 0;
}
