/*
 * stream_read.c: the streaming reader of doc/FORMAT.md over read(2).
 *
 * The reader keeps its own buffer and asks read(2) only for what the
 * current record still needs, so on an interactive pipe it returns a record
 * as soon as its last byte arrives.  Large payloads are read straight into
 * the tensor, past the buffer.  Short reads and EINTR are retried.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "stream.h"
#include "tsr_record.h"

#define BUF_SIZE ((size_t)256 << 10)

struct tsr_reader {
	int fd, own_fd;
	char *label;
	uint64_t limit;
	int raw;                        /* tsr_reader_set_raw */
	unsigned char *buf;
	size_t cap, start, end;         /* buffered bytes are buf[start, end) */
	uint64_t pos;                   /* stream offset of buf[start] */
	int eof;
	int failed;
	char failure[1024];             /* the error that stopped the stream */
	unsigned char *scratch;         /* compressed payloads */
	size_t scratch_cap;
	struct tsr_recinfo info;        /* of the record returned last */
	/* One record read ahead by tsr_read_frame (frame.c). */
	int has_pending, pending_end;
	struct tensor pending;
	struct tsr_recinfo pending_info;
	/* The names of the frame being read, hashed (open addressing, at
	 * most half full): a frame holds each name once. */
	struct {
		char **slot;
		size_t cap, n;
		uint64_t frame;
		int open;	/* the last record did not end its frame */
		int fresh;	/* the last record started a frame */
	} names;
	/* End marks (doc/FORMAT.md, The end mark): the frames since the
	 * start or the last mark, the last frame number read, what the
	 * last one counted, whether one was last, and whether input may
	 * end without one (tsr_reader_set_unterminated). */
	uint64_t seg_frames, last_frame, marks, mark_count;
	int after_mark, unterminated;
};

/* FNV-1a of a record's name. */
static size_t name_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325u;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3u;
	return (size_t)(h ^ h >> 32);
}

static void names_clear(struct tsr_reader *r)
{
	for (size_t i = 0; i < r->names.cap; i++) {
		free(r->names.slot[i]);
		r->names.slot[i] = NULL;
	}
	r->names.n = 0;
}

/* Puts s in the table of r's current frame: 1 if new, 0 if there, -1
 * when out of memory. */
static int names_put(struct tsr_reader *r, const char *s)
{
	size_t mask, j;

	if (2 * (r->names.n + 1) > r->names.cap) {
		size_t cap = r->names.cap ? 2 * r->names.cap : 32;
		char **slot = calloc(cap, sizeof *slot);

		if (!slot)
			return -1;
		for (size_t i = 0; i < r->names.cap; i++) {
			char *o = r->names.slot[i];

			if (!o)
				continue;
			for (j = name_hash(o) & (cap - 1); slot[j];
			     j = (j + 1) & (cap - 1))
				;
			slot[j] = o;
		}
		free(r->names.slot);
		r->names.slot = slot;
		r->names.cap = cap;
	}
	mask = r->names.cap - 1;
	for (j = name_hash(s) & mask; r->names.slot[j]; j = (j + 1) & mask)
		if (strcmp(r->names.slot[j], s) == 0)
			return 0;
	if (!(r->names.slot[j] = strdup(s)))
		return -1;
	r->names.n++;
	return 1;
}

/*
 * Record h in its frame: a new frame after a record that ended one, or
 * where the frame number changes (doc/FORMAT.md, Frames); refused when
 * the frame already holds a record of its name, which a later stage or
 * tool might read instead of the first.
 */
static int frame_name(struct tsr_reader *r, const struct tsr_rec *h)
{
	int rc;

	r->names.fresh = !r->names.open || h->frame != r->names.frame;
	if (r->names.fresh)
		names_clear(r);
	r->names.frame = h->frame;
	r->names.open = !(h->flags & TSR_FLAG_END_FRAME);
	rc = names_put(r, h->name);
	if (rc < 0)
		tsr_rec_fail(h, "out of memory");
	else if (rc == 0)
		tsr_rec_fail(h, "a second record of this name in the frame "
			     "(each name is once in a frame)");
	return rc > 0 ? 0 : -1;
}

static struct tsr_reader *reader_new(int fd, int own_fd, const char *label,
				     size_t cap)
{
	struct tsr_reader *r = calloc(1, sizeof *r);

	if (!r || !(r->label = strdup(label)) || !(r->buf = malloc(cap ? cap : 1))) {
		if (r)
			free(r->label);
		free(r);
		err_set("%s: out of memory", label);
		return NULL;
	}
	r->fd = fd;
	r->own_fd = own_fd;
	r->cap = cap;
	r->limit = TSR_DEFAULT_LIMIT;
	return r;
}

struct tsr_reader *tsr_reader_fd(int fd, const char *label)
{
	return reader_new(fd, 0, label, BUF_SIZE);
}

struct tsr_reader *tsr_reader_path(const char *path)
{
	struct tsr_reader *r;
	int fd;

	if (strcmp(path, "-") == 0)
		return tsr_reader_fd(0, "<stdin>");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err_set("%s: %s", path, strerror(errno));
		return NULL;
	}
	r = reader_new(fd, 1, path, BUF_SIZE);
	if (!r)
		close(fd);
	return r;
}

struct tsr_reader *tsr_reader_mem(const void *data, size_t n,
				  const char *label)
{
	struct tsr_reader *r = reader_new(-1, 0, label, n);

	if (r) {
		if (n)
			memcpy(r->buf, data, n);
		r->end = n;
		r->eof = 1;
	}
	return r;
}

void tsr_reader_set_limit(struct tsr_reader *r, uint64_t max_payload_bytes)
{
	r->limit = max_payload_bytes;
}

void tsr_reader_set_raw(struct tsr_reader *r, int raw)
{
	r->raw = raw;
}

void tsr_reader_set_unterminated(struct tsr_reader *r, int accept)
{
	r->unterminated = accept;
}

uint64_t tsr_reader_marks(const struct tsr_reader *r, uint64_t *frames)
{
	if (frames)
		*frames = r->mark_count;
	return r->marks;
}

void tsr_reader_free(struct tsr_reader *r)
{
	if (!r)
		return;
	if (r->own_fd)
		close(r->fd);
	tensor_free(&r->pending);
	names_clear(r);
	free(r->names.slot);
	free(r->scratch);
	free(r->buf);
	free(r->label);
	free(r);
}

const char *tsr_reader_label(const struct tsr_reader *r)
{
	return r->label;
}

/* read(2) until n bytes or the end of input; returns the count or -1. */
static ssize_t read_some(struct tsr_reader *r, unsigned char *p, size_t n,
			 size_t want)
{
	size_t got = 0;

	while (got < want) {
		ssize_t k = read(r->fd, p + got, n - got);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			err_set("%s: byte %llu: read error: %s", r->label,
				(unsigned long long)(r->pos + (r->end - r->start) + got),
				strerror(errno));
			return -1;
		}
		if (k == 0) {
			r->eof = 1;
			break;
		}
		got += k;
	}
	return got;
}

/*
 * Makes at least need (<= cap) bytes available at buf[start]; fewer only
 * at the end of input.  Returns the bytes available, or -1 on a read error.
 */
static ssize_t fill(struct tsr_reader *r, size_t need)
{
	ssize_t k;

	if (r->end - r->start >= need || r->eof)
		return r->end - r->start;
	if (r->cap - r->start < need) {
		memmove(r->buf, r->buf + r->start, r->end - r->start);
		r->end -= r->start;
		r->start = 0;
	}
	k = read_some(r, r->buf + r->end, r->cap - r->end,
		      need - (r->end - r->start));
	if (k < 0)
		return -1;
	r->end += k;
	return r->end - r->start;
}

static void consume(struct tsr_reader *r, size_t n)
{
	r->start += n;
	r->pos += n;
	if (r->start == r->end)
		r->start = r->end = 0;
}

/* Copies n stream bytes to dst: from the buffer, then straight from fd. */
static int read_bytes(struct tsr_reader *r, struct tsr_rec *h,
		      unsigned char *dst, uint64_t n)
{
	uint64_t got = 0;

	while (got < n) {
		size_t have = r->end - r->start;
		if (have) {
			size_t k = have < n - got ? have : n - got;
			memcpy(dst + got, r->buf + r->start, k);
			consume(r, k);
			got += k;
			continue;
		}
		if (r->eof)
			return tsr_rec_truncated(h, "input", "payload", got, n);
		if (n - got >= r->cap / 2) {
			/* Big: straight into dst, no copy. */
			ssize_t k = read_some(r, dst + got, n - got, n - got);
			if (k < 0)
				return -1;
			r->pos += k;
			got += k;
		} else if (fill(r, n - got) < 0) {
			return -1;
		}
	}
	return 0;
}

/* Checks the count of the end mark t (taking it) against the frames read
 * since the last one: 2, or -1 on a mismatch. */
static int mark_count(struct tsr_reader *r, const struct tsr_rec *h,
		      struct tensor *t)
{
	int rc = tsr_inflate(t) < 0 ? -1 :
		 tsr_rec_mark_count(h, t->data, r->seg_frames, r->marks ?
				    "the previous end mark" :
				    "the stream's start");

	if (rc == 0) {
		r->marks++;
		r->mark_count = r->seg_frames;
		r->seg_frames = 0;
		r->after_mark = 1;
	}
	tensor_free(t);
	return rc < 0 ? -1 : 2;
}

/* Reads one record from the stream itself (not the read-ahead): 1, 2 for
 * an end mark (checked and freed), 0 at the end of input, or -1. */
static int read_record(struct tsr_reader *r, struct tensor *t, int *end_frame)
{
	struct tsr_rec h = { .label = r->label, .offset = r->pos };
	unsigned char *stored;
	ssize_t have;
	size_t n, size;
	int mark;

	have = fill(r, TSR_FIXED);
	if (have <= 0)
		return have;            /* the normal end, or an error */
	if (have < TSR_FIXED)
		return tsr_rec_short(&h, r->buf + r->start, have);
	if (tsr_rec_fixed(&h, r->buf + r->start) < 0)
		return -1;
	n = TSR_FIXED + tsr_rec_var_len(&h);
	if ((have = fill(r, n)) < 0)
		return -1;
	if ((size_t)have < n)
		return tsr_rec_truncated(&h, "input", "record header", have, n);
	if (tsr_rec_var(&h, r->buf + r->start + TSR_FIXED, r->limit) < 0)
		return -1;
	if ((have = fill(r, n + h.pad)) < 0)
		return -1;
	if ((size_t)have < n + h.pad)
		return tsr_rec_truncated(&h, "input", "record header",
					 have, n + h.pad);
	if (tsr_rec_pad(&h, r->buf + r->start + n) < 0 ||
	    frame_name(r, &h) < 0)
		return -1;
	mark = strcmp(h.name, TSR_END_NAME) == 0;
	if (mark && tsr_rec_mark_head(&h, r->names.fresh) < 0)
		return -1;
	consume(r, n + h.pad);

	tsr_rec_to_tensor(&h, t);
	if (r->raw && (h.flags & TSR_FLAG_ZLIB)) {      /* kept as stored */
		t->stored = h.stored;
		t->crc = h.crc;
	}
	/* Left unchecked (TSR_RAW_LAZY), with what a refusal names kept
	 * for tsr_inflate.  (A compressed record of no stored bytes, which
	 * t->stored 0 cannot mark as kept, is checked and refused now: no
	 * zlib stream is empty.) */
	if (r->raw == TSR_RAW_LAZY && t->stored) {
		t->offset = h.offset;
		if (!(t->origin = strdup(r->label))) {
			tsr_rec_fail(&h, "out of memory");
			return -1;
		}
	}
	size = t->stored ? t->stored : h.nbytes;
	t->data = tensor_alloc(size);
	if (!t->data) {
		tsr_rec_fail(&h, "out of memory for %llu bytes",
			     (unsigned long long)size);
		goto fail;
	}
	t->owned = 1;
	stored = t->data;
	if ((h.flags & TSR_FLAG_ZLIB) && !t->stored) {
		if (h.stored > r->scratch_cap) {
			free(r->scratch);
			r->scratch_cap = 0;
			r->scratch = malloc(h.stored);
			if (!r->scratch) {
				tsr_rec_fail(&h, "out of memory for %llu bytes",
					     (unsigned long long)h.stored);
				goto fail;
			}
			r->scratch_cap = h.stored;
		}
		stored = r->scratch;
	}
	if (read_bytes(r, &h, stored, h.stored) < 0 ||
	    (t->origin ? 0 : t->stored ? tsr_rec_zcheck(&h, stored) :
	     tsr_rec_payload(&h, stored, t->data)) < 0)
		goto fail;
	r->info.offset = h.offset;
	r->info.stored = h.stored;
	r->info.flags = h.flags;
	r->info.pad = h.pad;
	r->info.stored_bytes = stored;
	if (mark)
		return mark_count(r, &h, t);
	r->seg_frames += r->names.fresh;
	r->last_frame = h.frame;
	r->after_mark = 0;
	if (end_frame)
		*end_frame = !!(h.flags & TSR_FLAG_END_FRAME);
	return 1;
fail:
	tensor_free(t);
	return -1;
}

/* The end of input: normal after an end mark, or when told to take a
 * stream without one. */
static int at_end(const struct tsr_reader *r)
{
	return r->unterminated ? 0 : tsr_reader_ended(r);
}

int tsr_reader_ended(const struct tsr_reader *r)
{
	if (r->after_mark)
		return 0;
	if (r->seg_frames)
		err_set("%s: input ends after frame %llu (%llu frame%s since "
			"%s) without the stream's end mark: the program that "
			"wrote it stopped early (a stream saved before end "
			"marks: --unterminated takes it)", r->label,
			(unsigned long long)r->last_frame,
			(unsigned long long)r->seg_frames,
			r->seg_frames == 1 ? "" : "s",
			r->marks ? "the last end mark" : "its start");
	else
		err_set("%s: no input, not even the stream's end mark: the "
			"program that should have written it stopped before "
			"it began", r->label);
	return -1;
}

int tsr_read(struct tsr_reader *r, struct tensor *t, int *end_frame)
{
	int rc;

	memset(t, 0, sizeof *t);
	if (r->has_pending) {
		*t = r->pending;
		memset(&r->pending, 0, sizeof r->pending);
		r->info = r->pending_info;
		if (end_frame)
			*end_frame = r->pending_end;
		r->has_pending = 0;
		return 1;
	}
	if (r->failed) {
		err_set("%s", r->failure);
		return -1;
	}
	while ((rc = read_record(r, t, end_frame)) == 2)
		;	/* an end mark: what follows is a stream of its own */
	if (rc == 0) {
		memset(t, 0, sizeof *t);
		rc = at_end(r);
	}
	if (rc < 0) {   /* nothing after an error is trusted */
		r->failed = 1;
		snprintf(r->failure, sizeof r->failure, "%s", err_msg());
	}
	return rc;
}

void tsr_read_info(const struct tsr_reader *r, struct tsr_recinfo *info)
{
	*info = r->info;
}

void tsr_unread(struct tsr_reader *r, struct tensor *t, int end_frame)
{
	r->pending = *t;
	r->pending_end = end_frame;
	r->pending_info = r->info;
	r->has_pending = 1;
	memset(t, 0, sizeof *t);
}

int tsr_frame_started(const struct tsr_reader *r)
{
	return r->names.fresh;
}
