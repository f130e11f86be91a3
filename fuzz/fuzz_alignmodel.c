/*
 * fuzz_alignmodel.c: libFuzzer target for the word aligner's model
 * loader, wa_model_load (make fuzz), fed mutated model files (the seeds:
 * tiny models that make fuzz writes with align).  Any file must load or
 * be refused with a message naming it, without a crash, a leak,
 * undefined behaviour or a long stall; a model that loads aligns a few
 * small pairs, with every heuristic, to links inside the pairs.
 *
 * Mutations of a stream mostly break a checksum, which is refused before
 * any record is read; so an input that does not start with the stream's
 * magic is taken as edits of a tiny model trained at start-up, written
 * out again with good checksums: that reaches the loader's own checks.
 * The edits, one after another until the input ends:
 *
 *	byte   record: its index in the tiny model's file (modulo its
 *	       records); bit 7 set drops the record instead
 *	byte   the new type (low 3 bits + 1: f32 ... i64) and rank (bit 3:
 *	       a scalar, else one dimension)
 *	u16    n, little-endian, then n bytes: the payload (cut to whole
 *	       elements; for a scalar, the first element)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "align/bitext.h"
#include "align/em.h"
#include "align/symmetrize.h"
#include "align/wamodel.h"
#include "base/errmsg.h"
#include "fuzz_util.h"

#define NREC 12		/* the records of a model of align */

static struct tsr_map *tiny;	/* the records that edits replace */

/* Trains a tiny model on a few pairs and maps its file. */
static void tiny_model(void)
{
	static const char *const pairs[][2] = {
		{ "la casa", "the house" }, { "la casa verde", "the green house" },
		{ "casa", "house" }, { "el libro", "the book" },
	};
	struct wa_em_opts o = { .iterations = 2, .diagonal = 1, .optimize = 1,
				.tension = 4, .p0 = 0.08, .alpha = 0.01 };
	struct wa_model m = { 0 };
	struct wa_bitext b = { 0 };
	struct wa_vocab *v[2] = { &m.vocab[0], &m.vocab[1] };
	char path[] = "/tmp/fuzz_alignmodel.XXXXXX";
	int fd = mkstemp(path);

	if (fd < 0)
		abort();
	close(fd);
	for (size_t p = 0; p < sizeof pairs / sizeof pairs[0]; p++) {
		size_t len[2] = { strlen(pairs[p][0]), strlen(pairs[p][1]) };

		if (wa_bitext_add(&b, v, pairs[p], len, 0, 1) < 0)
			abort();
	}
	for (int k = 0; k < 2; k++)
		if (wa_em_train(&m.dir[k], &b, k, m.vocab[k].n,
				m.vocab[!k].n, &o, NULL, NULL) < 0)
			abort();
	if (wa_model_save(&m, path) < 0 || !(tiny = tsr_map_open(path)) ||
	    tiny->f.n != NREC)
		abort();
	unlink(path);
	wa_model_free(&m);
	wa_bitext_free(&b);
}

/* The tiny model's file with the edits of data [size], in a memory file. */
static int edited(const uint8_t *data, size_t size)
{
	struct tensor rec[NREC];
	int drop[NREC] = { 0 }, fd;
	struct tsr_writer *w;
	size_t at = 0;
	int last = -1;

	for (int i = 0; i < NREC; i++)
		rec[i] = tiny->f.rec[i];	/* not owned: freed by none */
	for (int i = 0; i < NREC; i++)
		rec[i].owned = 0;
	while (at + 4 <= size) {
		int i = data[at] % NREC, dt = (data[at + 1] & 7) + 1;
		int rank = !(data[at + 1] & 8);
		size_t n = data[at + 2] | (size_t)data[at + 3] << 8, es;

		if (data[at] & 0x80) {
			drop[i] = 1;
			at += 4;
			continue;
		}
		at += 4;
		if (n > size - at)
			n = size - at;
		es = dtype_size(dt);
		rec[i].dtype = dt;
		rec[i].rank = rank;
		rec[i].dim[0] = rank ? n / es : 1;
		rec[i].data = (void *)(data + at);
		rec[i].nbytes = rank ? n / es * es : es;
		if (!rank && n < es)
			rec[i].data = "\0\0\0\0\0\0\0\0";
		drop[i] = 0;
		at += n;
	}
	for (int i = 0; i < NREC; i++)
		if (!drop[i])
			last = i;
	fd = fuzz_mem_file(NULL, 0);
	if (!(w = tsr_writer_fd(fd, "edited", 0)))
		abort();
	for (int i = 0; i < NREC; i++)
		if (!drop[i] && tsr_write(w, &rec[i], 0, i == last) < 0)
			abort();
	if (tsr_writer_close(w) < 0)
		abort();
	lseek(fd, 0, SEEK_SET);
	return fd;
}

/* Aligns a few pairs with m: every link inside its pair. */
static void align_some(const struct wa_model *m)
{
	static const char *const pairs[][2] = {
		{ "la casa verde", "the green house" }, { "", "house" },
		{ "el libro x y z", "the book" }, { "casa", "" },
		{ "La Casa!", "the House ." },
	};
	struct wa_vocab *v[2] = { (struct wa_vocab *)&m->vocab[0],
				  (struct wa_vocab *)&m->vocab[1] };
	struct wa_bitext b = { 0 };
	struct wa_links l;

	for (size_t p = 0; p < sizeof pairs / sizeof pairs[0]; p++) {
		size_t len[2] = { strlen(pairs[p][0]), strlen(pairs[p][1]) };

		if (wa_bitext_add(&b, v, pairs[p], len, m->fold, 0) < 0)
			abort();
	}
	for (int sym = WA_SYM_FORWARD; sym <= WA_SYM_POSTERIOR; sym++) {
		if (wa_align_bitext(m, &b, sym, 0.5, &l) < 0)
			abort();
		for (int p = 0; p < b.n; p++) {
			const int32_t *ij = l.ij + 2 * l.off[p];

			if (l.count[p] < 0 ||
			    l.count[p] > l.off[p + 1] - l.off[p])
				abort();
			for (int k = 0; k < l.count[p]; k++)
				if (ij[2 * k] < 0 ||
				    ij[2 * k] >= wa_len(&b, 0, p) ||
				    ij[2 * k + 1] < 0 ||
				    ij[2 * k + 1] >= wa_len(&b, 1, p))
					abort();
		}
		wa_links_free(&l);
	}
	wa_bitext_free(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct wa_model m;
	char path[64];
	int fd;

	if (!tiny)
		tiny_model();
	if (size >= 4 && memcmp(data, "TNSR", 4) == 0)
		fd = fuzz_mem_file(data, size);
	else
		fd = edited(data, size);
	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	err_clear();
	if (wa_model_load(&m, path) == 0) {
		align_some(&m);
		wa_model_free(&m);
	} else if (!strstr(err_msg(), path)) {
		abort();	/* the message must name the file */
	}
	close(fd);
	return 0;
}
