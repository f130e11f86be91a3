/*
 * fuzz_stream.c: libFuzzer target for the stream reader, the mapped loader
 * and the text form (make fuzz).  Any input must be read without a crash,
 * a leak or undefined behaviour, as a stream and as text; what reads as
 * records must write back and read again to the same records, in the
 * stream and in the text form (so every float prints exactly).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "stream/stream.h"
#include "stream/tsr_text.h"

static int mem_file(const void *p, size_t n)
{
	int fd = memfd_create("fuzz", MFD_CLOEXEC);

	if (fd < 0 || (n && write(fd, p, n) != (ssize_t)n)) {
		perror("memfd");
		abort();
	}
	lseek(fd, 0, SEEK_SET);
	return fd;
}

static void same(const struct tensor *a, const struct tensor *b)
{
	if (strcmp(a->name, b->name) || a->dtype != b->dtype ||
	    a->rank != b->rank || a->frame != b->frame ||
	    a->nbytes != b->nbytes ||
	    memcmp(a->dim, b->dim, a->rank * sizeof a->dim[0]) ||
	    (a->nbytes && memcmp(a->data, b->data, a->nbytes)))
		abort();
}

/* t printed as text reads back the same. */
static void text_roundtrip(const struct tensor *t)
{
	struct tsr_text_attr a = { .frame = t->frame, .pad = -1 }, b;
	struct tsr_text_reader *r;
	struct tensor u;
	char *text;
	size_t n;
	FILE *f = open_memstream(&text, &n);

	if (!f || tsr_text_print(f, t, &a) < 0)
		abort();
	fclose(f);
	f = fmemopen(text, n, "r");
	r = tsr_text_open(f, "text");
	if (!f || !r || tsr_text_read(r, &u, &b) != 1)
		abort();
	u.frame = b.frame;
	same(t, &u);
	tensor_free(&u);
	if (tsr_text_read(r, &u, &b) != 0)
		abort();
	tsr_text_close(r);
	fclose(f);
	free(text);
}

/* Any input read as text: no crash, and what parses prints and parses
 * back the same. */
static void text_input(const uint8_t *data, size_t size)
{
	FILE *f = fmemopen((void *)data, size, "r");
	struct tsr_text_reader *r;
	struct tsr_text_attr a;
	struct tensor t;

	if (!size || !f)
		return;
	r = tsr_text_open(f, "fuzz");
	while (tsr_text_read(r, &t, &a) == 1) {
		t.frame = a.frame;
		text_roundtrip(&t);
		tensor_free(&t);
	}
	tsr_text_close(r);
	fclose(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int in = mem_file(data, size), out = mem_file(NULL, 0);
	struct tsr_reader *r = tsr_reader_fd(in, "fuzz");
	struct tsr_writer *w = tsr_writer_fd(out, "out", size % 2 ? 1 : 0);
	struct frame f = { 0 }, g = { 0 };
	struct tsr_map *m;
	char path[64];
	int n = 0;

	tsr_reader_set_limit(r, 1 << 22);
	while (tsr_read_frame(r, &f) == 1) {
		if (tsr_write_frame(w, &f) < 0)
			abort();
		n++;
	}
	frame_clear(&f);
	if (tsr_writer_close(w) < 0)
		abort();
	tsr_reader_free(r);

	/* What was read writes back and reads again the same, frame by
	 * frame (so go over the input again). */
	lseek(in, 0, SEEK_SET);
	lseek(out, 0, SEEK_SET);
	r = tsr_reader_fd(in, "fuzz");
	tsr_reader_set_limit(r, 1 << 22);
	{
		struct tsr_reader *back = tsr_reader_fd(out, "back");
		for (int k = 0; k < n; k++) {
			if (tsr_read_frame(r, &f) != 1 ||
			    tsr_read_frame(back, &g) != 1 || f.n != g.n ||
			    f.number != g.number)
				abort();
			for (int i = 0; i < f.n; i++) {
				same(&f.rec[i], &g.rec[i]);
				text_roundtrip(&f.rec[i]);
			}
		}
		if (tsr_read_frame(back, &g) != 0)
			abort();
		tsr_reader_free(back);
	}
	tsr_reader_free(r);
	frame_free(&f);
	frame_free(&g);

	snprintf(path, sizeof path, "/proc/self/fd/%d", in);
	m = tsr_map_open(path);
	tsr_map_close(m);
	text_input(data, size);
	close(in);
	close(out);
	return 0;
}
