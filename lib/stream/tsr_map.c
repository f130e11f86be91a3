/*
 * tsr_map.c: a model file, mapped.  The records are checked exactly as the
 * streaming reader checks them (tsr_record.c); an uncompressed payload that
 * sits on a 64-byte boundary of the file is used where it lies, others are
 * copied (concatenated files lose the alignment) or inflated.
 *
 * Opened lazily, the map keeps each uncompressed record's decoded header
 * (for the message) until tsr_map_verify has checked its payload, so that
 * start-up costs what a program uses, not the size of the file.
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

struct tsr_map_lazy {
	char *path;             /* the label of the records' messages */
	struct tsr_rec *rec;    /* parallel to f.rec */
	unsigned char *checked; /* 1: verified (or compressed: at open) */
};

/*
 * Decodes the record at offset off into t and its header into h; returns
 * its length or -1.  lazy: an uncompressed payload's CRC is left unchecked.
 */
static int64_t map_record(struct tsr_map *m, const char *path, uint64_t off,
			  struct tensor *t, struct tsr_rec *hp, int lazy)
{
	const unsigned char *p = (const unsigned char *)m->base + off;
	uint64_t left = m->size - off;
	struct tsr_rec h = { .label = path, .offset = off };
	size_t head;
	int rc;

	if (left < TSR_FIXED)
		return tsr_rec_short(&h, p, left);
	if (tsr_rec_fixed(&h, p) < 0)
		return -1;
	head = TSR_FIXED + tsr_rec_var_len(&h);
	if (left < head)
		return tsr_rec_truncated(&h, "file", "record header",
					 left, head);
	if (tsr_rec_var(&h, p + TSR_FIXED, TSR_DEFAULT_LIMIT) < 0)
		return -1;
	if (left < head + h.pad)
		return tsr_rec_truncated(&h, "file", "record header",
					 left, head + h.pad);
	if (tsr_rec_pad(&h, p + head) < 0)
		return -1;
	head += h.pad;
	if (left - head < h.stored)
		return tsr_rec_truncated(&h, "file", "payload",
					 left - head, h.stored);

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
	if (lazy && !(h.flags & TSR_FLAG_ZLIB)) {
		if (t->data != p && h.nbytes)
			memcpy(t->data, p, h.nbytes);
		rc = 0;
	} else {
		rc = tsr_rec_payload(&h, p, t->data);
	}
	if (rc < 0) {
		tensor_free(t);
		return -1;
	}
	*hp = h;
	return head + h.stored;
}

/* Room for record i's header in m->lazy. */
static int lazy_grow(struct tsr_map_lazy *z, int i)
{
	if ((i & (i - 1)) == 0) {       /* 0, 1, 2, 4, ...: double */
		size_t cap = i ? 2 * (size_t)i : 1;
		struct tsr_rec *rec = realloc(z->rec, cap * sizeof *rec);
		unsigned char *checked;

		if (rec)
			z->rec = rec;
		checked = rec ? realloc(z->checked, cap) : NULL;
		if (!checked)
			return -1;
		z->checked = checked;
	}
	return 0;
}

/*
 * A file's last record, an end mark (one that tensordump -r, or any
 * writer finished as a stream, put after the records): checked as the
 * reader checks it, against the frames before it, and left out (m->f is
 * the model's records).  Anywhere else it is refused.  0 or -1; takes t.
 */
static int end_mark(const struct tsr_map *m, struct tensor *t,
		    const struct tsr_rec *h, uint64_t end, int fresh,
		    uint64_t frames)
{
	int rc;

	if (end != m->size) {
		tsr_rec_fail(h, "an end mark before the end of the file");
		rc = -1;
	} else {
		rc = tsr_rec_mark_head(h, fresh) < 0 ||
		     tsr_rec_check(h, t->data) < 0 ||
		     tsr_rec_mark_count(h, t->data, frames,
					"the file's start") < 0 ? -1 : 0;
	}
	tensor_free(t);
	return rc;
}

static struct tsr_map *map_open(const char *path, int lazy)
{
	struct tsr_map *m = calloc(1, sizeof *m);
	struct stat st;
	uint64_t off = 0, frames = 0, last = 0;
	int fd = -1, ended = 1, fresh;

	if (!m || (lazy && (!(m->lazy = calloc(1, sizeof *m->lazy)) ||
			    !(m->lazy->path = strdup(path))))) {
		err_set("%s: out of memory", path);
		goto fail;
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
		struct tsr_rec h;
		int64_t len = map_record(m, path, off, &t, &h, lazy);

		if (len < 0)
			goto fail;
		/* a frame starts as the reader's do (frame_name) */
		fresh = ended || t.frame != last;
		if (!strcmp(t.name, TSR_END_NAME)) {
			if (end_mark(m, &t, &h, off + len, fresh, frames) < 0)
				goto fail;
			break;
		}
		frames += fresh;
		ended = !!(h.flags & TSR_FLAG_END_FRAME);
		last = t.frame;
		if (lazy && lazy_grow(m->lazy, m->f.n) < 0) {
			err_set("%s: out of memory", path);
			tensor_free(&t);
			goto fail;
		}
		if (lazy) {
			h.label = m->lazy->path;
			m->lazy->rec[m->f.n] = h;
			m->lazy->checked[m->f.n] = !!(h.flags & TSR_FLAG_ZLIB);
		}
		if (frame_head(&m->f, t.name)) {
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

struct tsr_map *tsr_map_open(const char *path)
{
	return map_open(path, 0);
}

struct tsr_map *tsr_map_open_lazy(const char *path)
{
	return map_open(path, 1);
}

int tsr_map_verify(struct tsr_map *m, const struct tensor *t)
{
	struct tsr_map_lazy *z = m->lazy;
	uintptr_t at = (uintptr_t)t - (uintptr_t)m->f.rec;
	size_t i = at / sizeof *t;

	if (at % sizeof *t || i >= (size_t)m->f.n) {
		err_set("tsr_map_verify: record \"%s\" is not of this map",
			t->name);
		return -1;
	}
	if (!z || z->checked[i])
		return 0;
	if (tsr_rec_check(&z->rec[i], t->data) < 0)
		return -1;
	z->checked[i] = 1;
	return 0;
}

void tsr_map_close(struct tsr_map *m)
{
	if (!m)
		return;
	if (m->lazy) {
		free(m->lazy->path);
		free(m->lazy->rec);
		free(m->lazy->checked);
		free(m->lazy);
	}
	frame_free(&m->f);
	if (m->base)
		munmap(m->base, m->size);
	free(m);
}
