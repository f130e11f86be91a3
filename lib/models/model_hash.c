/*
 * model_hash.c: a model's identity as a number: its architecture, its
 * vocabularies and every parameter's name, shape and values; see
 * model.h.  The values go through the crc32 of zlib's polynomial
 * (crc32_fast of stream/crc32.h), taken on the threads in pieces and
 * combined, so that hashing a model costs about what reading it does.
 */
#include <string.h>
#include <zlib.h>
#include "kernels/kernels.h"
#include "stream/crc32.h"
#include "model.h"

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

uint64_t model_vocab_hash(const char *src, size_t nsrc, const char *tgt,
			  size_t ntgt)
{
	return fnv_text(fnv_text(FNV_OFFSET, src, nsrc), tgt, ntgt);
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

uint64_t model_hash(const struct model *m)
{
	struct piece pc[PIECES];
	struct crc_job j = { m, pc };
	uint64_t h, vocab;
	uint32_t crc = 0;
	size_t off = 0;
	int i = 0, np, k;

	vocab = model_vocab_hash(m->vocab_src, m->vocab_src_len,
				 m->vocab_tgt, m->vocab_tgt_len);
	h = fnv(fnv_text(FNV_OFFSET, m->arch->name, strlen(m->arch->name)),
		&vocab, sizeof vocab);
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
	return h;
}

