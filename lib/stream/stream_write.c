/*
 * stream_write.c: the streaming writer of doc/FORMAT.md over write(2).
 *
 * Records collect in one buffer that goes out in large writes; a payload
 * too big for the buffer goes out directly after it.  The writer counts
 * what it has written, so each payload starts at a multiple of 64 bytes
 * from the start of its output.  A failed write is remembered: every later
 * call fails the same way, so a program may check only at the end.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include "base/outfile.h"
#include "stream.h"
#include "tsr_record.h"

#define BUF_SIZE ((size_t)256 << 10)
#define ZCHUNK ((size_t)1 << 30)

struct tsr_writer {
	int fd, own_fd;
	char *label;
	int level;                      /* zlib level, 0: plain */
	unsigned char *buf;
	size_t len;                     /* bytes in buf, BUF_SIZE at most */
	uint64_t pos;                   /* bytes written, buffered included */
	int failed;                     /* 0, -1 or TSR_EPIPE, sticky */
	char *path, *tmp;               /* an atomic writer's file names */
	unsigned char *zbuf;            /* compressed payload */
	size_t zcap;
	/* Frames written, as a reader counts them (doc/FORMAT.md, Frames),
	 * for the end mark: the last record's frame and whether it left
	 * that frame open. */
	uint64_t frames, frame;
	int open;
};

static struct tsr_writer *writer_new(int fd, const char *label, int level)
{
	struct tsr_writer *w = calloc(1, sizeof *w);

	if (!w || !(w->label = strdup(label)) || !(w->buf = malloc(BUF_SIZE))) {
		if (w)
			free(w->label);
		free(w);
		err_set("%s: out of memory", label);
		return NULL;
	}
	w->fd = fd;
	tsr_writer_set_level(w, level);
	return w;
}

struct tsr_writer *tsr_writer_fd(int fd, const char *label, int zlib_level)
{
	/* A reader that stops early must not kill us: EPIPE instead. */
	signal(SIGPIPE, SIG_IGN);
	return writer_new(fd, label, zlib_level);
}

struct tsr_writer *tsr_writer_atomic(const char *path, int zlib_level)
{
	struct tsr_writer *w;
	char *tmp;
	mode_t mask;
	int fd;

	if (outfile_check(path) < 0)
		return NULL;
	if (asprintf(&tmp, "%s.tmpXXXXXX", path) < 0) {
		err_set("%s: out of memory", path);
		return NULL;
	}
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		err_set("%s: cannot create a temporary file: %s", tmp,
			strerror(errno));
		free(tmp);
		return NULL;
	}
	mask = umask(0);
	umask(mask);
	fchmod(fd, 0666 & ~mask);
	w = writer_new(fd, path, zlib_level);
	if (!w) {
		unlink(tmp);
		close(fd);
		free(tmp);
		return NULL;
	}
	w->own_fd = 1;
	w->tmp = tmp;
	w->path = w->label;
	return w;
}

static int write_all(struct tsr_writer *w, const unsigned char *p, size_t n)
{
	while (n) {
		ssize_t k = write(w->fd, p, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0 && errno == EPIPE) {
			err_set("%s: the reader has gone (broken pipe)",
				w->label);
			return w->failed = TSR_EPIPE;
		}
		if (k < 0) {
			err_set("%s: write error: %s", w->label,
				strerror(errno));
			return w->failed = -1;
		}
		p += k;
		n -= k;
	}
	return 0;
}

int tsr_flush(struct tsr_writer *w)
{
	if (w->failed)
		return w->failed;
	if (w->len && write_all(w, w->buf, w->len) < 0)
		return w->failed;
	w->len = 0;
	return 0;
}

static int put(struct tsr_writer *w, const void *p, size_t n)
{
	if (w->len + n > BUF_SIZE) {
		if (tsr_flush(w) < 0)
			return w->failed;
		if (n >= BUF_SIZE / 2) {
			w->pos += n;
			return write_all(w, p, n);
		}
	}
	memcpy(w->buf + w->len, p, n);
	w->len += n;
	w->pos += n;
	return 0;
}

/* Compresses t's payload into w->zbuf; returns its length, 0 on error. */
static size_t deflate_payload(struct tsr_writer *w, const struct tensor *t,
			      int level)
{
	const unsigned char *in = t->data;
	size_t in_left = t->nbytes, bound;
	z_stream zs;
	int ret = Z_OK;

	memset(&zs, 0, sizeof zs);
	if (deflateInit(&zs, level) != Z_OK)
		goto nomem;
	bound = deflateBound(&zs, t->nbytes);
	if (bound > w->zcap) {
		free(w->zbuf);
		w->zcap = 0;
		if (!(w->zbuf = malloc(bound))) {
			deflateEnd(&zs);
			goto nomem;
		}
		w->zcap = bound;
	}
	zs.next_out = w->zbuf;
	do {
		if (zs.avail_in == 0 && in_left) {
			zs.next_in = (unsigned char *)in;
			zs.avail_in = in_left < ZCHUNK ? in_left : ZCHUNK;
			in += zs.avail_in;
			in_left -= zs.avail_in;
		}
		if (zs.avail_out == 0) {
			size_t room = bound - zs.total_out;
			if (!room)
				break;
			zs.avail_out = room < ZCHUNK ? room : ZCHUNK;
		}
		ret = deflate(&zs, in_left ? Z_NO_FLUSH : Z_FINISH);
	} while (ret == Z_OK || (ret == Z_BUF_ERROR && zs.avail_out == 0));
	deflateEnd(&zs);
	if (ret != Z_STREAM_END) {
		err_set("%s: record \"%s\": zlib error %d", w->label, t->name,
			ret);
		w->failed = -1;
		return 0;
	}
	return zs.total_out;
nomem:
	err_set("%s: record \"%s\": out of memory to compress %zu bytes",
		w->label, t->name, t->nbytes);
	w->failed = -1;
	return 0;
}

static int check_tensor(struct tsr_writer *w, const struct tensor *t)
{
	size_t size = dtype_size(t->dtype);
	uint64_t n = size;

	if (!tensor_name_ok(t->name, strnlen(t->name, sizeof t->name))) {
		err_set("%s: cannot write a record named \"%.64s\": want 1 to "
			"%d of A-Z a-z 0-9 . _ : - /", w->label, t->name,
			TENSOR_NAME_MAX);
		return -1;
	}
	if (strcmp(t->name, TSR_END_NAME) == 0) {
		err_set("%s: cannot write a record named \"%s\": the end "
			"mark is the writer's own", w->label, t->name);
		return -1;
	}
	if (!size || t->rank < 0 || t->rank > TENSOR_MAX_RANK) {
		err_set("%s: record \"%s\": bad dtype %d or rank %d", w->label,
			t->name, t->dtype, t->rank);
		return -1;
	}
	for (int i = 0; i < t->rank; i++) {
		if (t->dim[i] && n > UINT64_MAX / t->dim[i]) {
			n = 0;
			break;
		}
		n *= t->dim[i];
	}
	if (n != t->nbytes || (n && !t->data)) {
		err_set("%s: record \"%s\": %zu payload bytes for a shape of "
			"%llu", w->label, t->name, t->nbytes,
			(unsigned long long)n);
		return -1;
	}
	return 0;
}

/* Writes t, checked by check_tensor or the end mark. */
static int write_record(struct tsr_writer *w, const struct tensor *t,
			uint64_t frame, int flags, int pad)
{
	unsigned char head[TSR_HEAD_MAX];
	const void *payload = t->data;
	uint64_t stored = t->nbytes;
	uint32_t crc;
	size_t n;

	if (flags & ~TSR_FLAGS_KNOWN || pad >= TSR_ALIGN) {
		err_set("%s: record \"%s\": bad flags 0x%x or padding %d",
			w->label, t->name, flags, pad);
		return -1;
	}
	if (!t->nbytes)
		flags &= ~TSR_FLAG_ZLIB;        /* never an empty zlib stream */
	if (t->stored) {                        /* as it was read */
		flags |= TSR_FLAG_ZLIB;
		stored = t->stored;
	} else if (flags & TSR_FLAG_ZLIB) {
		stored = deflate_payload(w, t, w->level ? w->level :
					 Z_DEFAULT_COMPRESSION);
		if (!stored)
			return -1;
		payload = w->zbuf;
	}
	crc = t->stored ? t->crc : tsr_crc(t->data, t->nbytes);
	if (pad < 0) {
		size_t head_len = TSR_FIXED + 8 * t->rank + strlen(t->name);
		pad = (TSR_ALIGN - (w->pos + head_len) % TSR_ALIGN) % TSR_ALIGN;
	}
	n = tsr_rec_encode(head, t, frame, flags, pad, crc, stored);
	if (put(w, head, n) < 0 || put(w, payload, stored) < 0)
		return w->failed;
	w->frames += !w->open || frame != w->frame;
	w->frame = frame;
	w->open = !(flags & TSR_FLAG_END_FRAME);
	return 0;
}

int tsr_write_ex(struct tsr_writer *w, const struct tensor *t,
		 uint64_t frame, int flags, int pad)
{
	if (w->failed)
		return w->failed;
	if (check_tensor(w, t) < 0)
		return -1;      /* the caller's mistake: the stream stays good */
	return write_record(w, t, frame, flags, pad);
}

int tsr_write(struct tsr_writer *w, const struct tensor *t, uint64_t frame,
	      int end_frame)
{
	int flags = end_frame ? TSR_FLAG_END_FRAME : 0;

	if (w->level && t->nbytes)
		flags |= TSR_FLAG_ZLIB;
	return tsr_write_ex(w, t, frame, flags, -1);
}

void tsr_writer_set_level(struct tsr_writer *w, int zlib_level)
{
	w->level = zlib_level < 0 ? 0 : zlib_level > 9 ? 9 : zlib_level;
}

static void writer_free(struct tsr_writer *w)
{
	if (w->own_fd)
		close(w->fd);
	if (w->tmp)
		unlink(w->tmp);         /* after a rename, a no-op */
	free(w->tmp);
	free(w->zbuf);
	free(w->buf);
	free(w->label);
	free(w);
}

/* fsyncs the directory of path, so a rename in it survives a crash. */
static int sync_dir(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *dir = slash ? strndup(path, slash == path ? 1 : slash - path)
			  : strdup(".");
	int fd, rc = 0;

	if (!dir)
		return 0;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		if (fsync(fd) < 0 && errno != EINVAL)
			rc = -1;
		close(fd);
	}
	free(dir);
	return rc;
}

int tsr_writer_commit(struct tsr_writer *w)
{
	int rc;

	if (!w->tmp)
		return tsr_writer_close(w);
	rc = tsr_flush(w) < 0 ? -1 : 0;
	if (rc == 0 && fsync(w->fd) < 0) {
		err_set("%s: fsync: %s", w->tmp, strerror(errno));
		rc = -1;
	}
	if (close(w->fd) < 0 && rc == 0) {
		err_set("%s: close: %s", w->tmp, strerror(errno));
		rc = -1;
	}
	w->own_fd = 0;
	/* what is there now, not only what was there at the start */
	if (rc == 0 && outfile_check(w->path) < 0)
		rc = -1;
	if (rc == 0 && rename(w->tmp, w->path) < 0) {
		err_set("cannot rename %s to %s: %s", w->tmp, w->path,
			strerror(errno));
		rc = -1;
	}
	if (rc == 0 && sync_dir(w->path) < 0) {
		err_set("%s: fsync of its directory: %s", w->path,
			strerror(errno));
		rc = -1;
	}
	writer_free(w);
	return rc;
}

void tsr_writer_abort(struct tsr_writer *w)
{
	if (w)
		writer_free(w);
}

int tsr_writer_close(struct tsr_writer *w)
{
	int rc;

	if (!w)
		return 0;
	if (w->tmp)
		return tsr_writer_commit(w);
	rc = tsr_flush(w);
	writer_free(w);
	return rc;
}

int tsr_writer_finish(struct tsr_writer *w)
{
	unsigned char count[8];
	struct tensor mark = { .name = TSR_END_NAME, .dtype = DT_I64,
			       .data = count, .nbytes = sizeof count };
	int rc;

	for (int i = 0; i < 8; i++)
		count[i] = w->frames >> 8 * i;
	rc = w->failed ? w->failed :
	     write_record(w, &mark, TSR_END_FRAME, TSR_FLAG_END_FRAME, -1);
	if (rc < 0) {
		tsr_writer_abort(w);
		return rc;
	}
	return tsr_writer_close(w);
}
