/*
 * tsr_map.c: a model file, mapped.  The records are checked exactly as the
 * streaming reader checks them (tsr_record.c); an uncompressed payload that
 * sits on a 64-byte boundary of the file is used where it lies, others are
 * copied (concatenated files lose the alignment) or inflated.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "stream.h"
#include "tsr_record.h"

static int truncated(struct tsr_rec *h, const char *part, uint64_t got,
		     uint64_t want)
{
	tsr_rec_fail(h, "truncated: end of file after %llu of the %llu "
		     "bytes of the %s", (unsigned long long)got,
		     (unsigned long long)want, part);
	return -1;
}

/* Decodes the record at offset off into t; returns its length or -1. */
static int64_t map_record(struct tsr_map *m, const char *path, uint64_t off,
			  struct tensor *t)
{
	const unsigned char *p = (const unsigned char *)m->base + off;
	uint64_t left = m->size - off;
	struct tsr_rec h = { .label = path, .offset = off };
	size_t head;

	if (left < TSR_FIXED)
		return tsr_rec_short(&h, p, left);
	if (tsr_rec_fixed(&h, p) < 0)
		return -1;
	head = TSR_FIXED + tsr_rec_var_len(&h);
	if (left < head)
		return truncated(&h, "record header", left, head);
	if (tsr_rec_var(&h, p + TSR_FIXED, TSR_DEFAULT_LIMIT) < 0)
		return -1;
	if (left < head + h.pad)
		return truncated(&h, "record header", left, head + h.pad);
	if (tsr_rec_pad(&h, p + head) < 0)
		return -1;
	head += h.pad;
	if (left - head < h.stored)
		return truncated(&h, "payload", left - head, h.stored);

	tsr_rec_to_tensor(&h, t);
	p += head;
	if (!(h.flags & TSR_FLAG_ZLIB) && (uintptr_t)p % TSR_ALIGN == 0) {
		t->data = (void *)p;            /* in place, read-only */
	} else {
		t->data = tensor_alloc(h.nbytes);
		if (!t->data) {
			tsr_rec_fail(&h, "out of memory for %llu bytes",
				     (unsigned long long)h.nbytes);
			return -1;
		}
		t->owned = 1;
	}
	if (tsr_rec_payload(&h, p, t->data) < 0) {
		tensor_free(t);
		return -1;
	}
	return head + h.stored;
}

struct tsr_map *tsr_map_open(const char *path)
{
	struct tsr_map *m = calloc(1, sizeof *m);
	struct stat st;
	uint64_t off = 0;
	int fd;

	if (!m) {
		err_set("%s: out of memory", path);
		return NULL;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		err_set("%s: %s", path, strerror(errno));
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		err_set("%s: not a regular file (a model file is mapped)",
			path);
		goto fail;
	}
	m->size = st.st_size;
	if (m->size) {
		m->base = mmap(NULL, m->size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (m->base == MAP_FAILED) {
			m->base = NULL;
			err_set("%s: mmap: %s", path, strerror(errno));
			goto fail;
		}
	}
	close(fd);
	fd = -1;
	while (off < m->size) {
		struct tensor t;
		int64_t len = map_record(m, path, off, &t);
		if (len < 0)
			goto fail;
		if (frame_find(&m->f, t.name)) {
			err_set("%s: byte %llu, record \"%s\", frame %llu: a "
				"second record of that name", path,
				(unsigned long long)off, t.name,
				(unsigned long long)t.frame);
			tensor_free(&t);
			goto fail;
		}
		if (m->f.n == 0)
			m->f.number = t.frame;
		if (!frame_push(&m->f, &t)) {
			tensor_free(&t);
			goto fail;
		}
		off += len;
	}
	return m;
fail:
	if (fd >= 0)
		close(fd);
	tsr_map_close(m);
	return NULL;
}

void tsr_map_close(struct tsr_map *m)
{
	if (!m)
		return;
	frame_free(&m->f);
	if (m->base)
		munmap(m->base, m->size);
	free(m);
}
