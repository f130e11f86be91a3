/*
 * fuzz_util.c: what the fuzz targets share; see fuzz_util.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "fuzz_util.h"
#include "stream/tsr_text.h"

int fuzz_mem_file(const void *p, size_t n)
{
	int fd = memfd_create("fuzz", MFD_CLOEXEC);

	if (fd < 0 || (n && write(fd, p, n) != (ssize_t)n)) {
		perror("memfd");
		abort();
	}
	lseek(fd, 0, SEEK_SET);
	return fd;
}

void fuzz_same(const struct tensor *a, const struct tensor *b)
{
	if (strcmp(a->name, b->name) || a->dtype != b->dtype ||
	    a->rank != b->rank || a->frame != b->frame ||
	    a->nbytes != b->nbytes ||
	    memcmp(a->dim, b->dim, a->rank * sizeof a->dim[0]) ||
	    (a->nbytes && memcmp(a->data, b->data, a->nbytes)))
		abort();
}

/* t printed as text reads back the same. */
void fuzz_text_roundtrip(const struct tensor *t)
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
	fuzz_same(t, &u);
	tensor_free(&u);
	if (tsr_text_read(r, &u, &b) != 0)
		abort();
	tsr_text_close(r);
	fclose(f);
	free(text);
}

/* Any input read as text: no crash, and what parses prints and parses
 * back the same. */
void fuzz_text_input(const uint8_t *data, size_t size)
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
		fuzz_text_roundtrip(&t);
		tensor_free(&t);
	}
	tsr_text_close(r);
	fclose(f);
}
