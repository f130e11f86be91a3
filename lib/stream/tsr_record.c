/* tsr_record.c: decoding and checking one record; see tsr_record.h. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "crc32.h"
#include "tsr_record.h"

/* zlib counts in uInt: feed it at most this much at a time. */
#define ZCHUNK ((size_t)1 << 30)

static uint16_t le16(const unsigned char *p)
{
	return p[0] | p[1] << 8;
}

static uint32_t le32(const unsigned char *p)
{
	return (uint32_t)le16(p) | (uint32_t)le16(p + 2) << 16;
}

static uint64_t le64(const unsigned char *p)
{
	return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

static unsigned char *put16(unsigned char *p, uint16_t v)
{
	p[0] = v;
	p[1] = v >> 8;
	return p + 2;
}

static unsigned char *put32(unsigned char *p, uint32_t v)
{
	return put16(put16(p, v), v >> 16);
}

static unsigned char *put64(unsigned char *p, uint64_t v)
{
	return put32(put32(p, v), v >> 32);
}

/* A name as it can be shown: bytes outside the allowed set escaped, at
 * most SHOW_NAME of its bytes and then "...", so that a message naming a
 * record of 255 bytes of garbage still says what is wrong with it (the
 * message has 1023 characters). */
#define SHOW_NAME 48
static void show_name(char *out, size_t cap, const char *name)
{
	size_t n = 0;
	const unsigned char *s = (const unsigned char *)name;

	for (int k = 0; *s && k < SHOW_NAME && n + 5 < cap; s++, k++) {
		if (tensor_name_ok((const char *)s, 1))
			out[n++] = *s;
		else
			n += snprintf(out + n, cap - n, "\\x%02x", *s);
	}
	if (*s && n + 4 < cap)
		n += snprintf(out + n, cap - n, "...");
	out[n] = 0;
}

void tsr_rec_fail(const struct tsr_rec *h, const char *fmt, ...)
{
	char where[1400], msg[600], name[4 * TENSOR_NAME_MAX + 8];
	int n;
	va_list ap;

	n = snprintf(where, sizeof where, "%s: byte %llu", h->label,
		     (unsigned long long)h->offset);
	if (h->name[0]) {
		show_name(name, sizeof name, h->name);
		n += snprintf(where + n, sizeof where - n, ", record \"%s\"",
			      name);
	}
	if (h->have_frame)
		snprintf(where + n, sizeof where - n, ", frame %llu",
			 (unsigned long long)h->frame);
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	err_set("%s: %s", where, msg);
}

int tsr_rec_truncated(const struct tsr_rec *h, const char *source,
		      const char *part, uint64_t got, uint64_t want)
{
	tsr_rec_fail(h, "truncated: end of %s after %llu of the %llu bytes "
		     "of the %s", source, (unsigned long long)got,
		     (unsigned long long)want, part);
	return -1;
}

static int check_magic(struct tsr_rec *h, const unsigned char *p)
{
	char shown[4 * 4 + 1];
	int n = 0;

	if (memcmp(p, TSR_MAGIC, 4) == 0)
		return 0;
	for (int i = 0; i < 4; i++)
		n += snprintf(shown + n, sizeof shown - n,
			      p[i] >= 0x20 && p[i] < 0x7f && p[i] != '"' &&
			      p[i] != '\\' ? "%c" : "\\x%02x", p[i]);
	tsr_rec_fail(h, "bad magic \"%s\" (not a tensor stream, or damaged)",
		     shown);
	return -1;
}

int tsr_rec_short(struct tsr_rec *h, const unsigned char *p, size_t n)
{
	h->have_frame = 0;
	h->name[0] = 0;
	if (n >= 4 && check_magic(h, p) < 0)
		return -1;
	tsr_rec_fail(h, "truncated: end of input after %zu of the %d bytes "
		     "of the record header", n, TSR_FIXED);
	return -1;
}

int tsr_rec_fixed(struct tsr_rec *h, const unsigned char *p)
{
	h->have_frame = 0;
	h->name[0] = 0;
	if (check_magic(h, p) < 0)
		return -1;
	h->dtype = p[5];
	h->rank = p[6];
	h->flags = p[7];
	h->name_len = le16(p + 8);
	h->pad = le16(p + 10);
	h->crc = le32(p + 12);
	h->frame = le64(p + 16);
	h->stored = le64(p + 24);
	if (p[4] != TSR_VERSION) {
		tsr_rec_fail(h, "unknown version %d (this reader knows %d)",
			     p[4], TSR_VERSION);
		return -1;
	}
	h->have_frame = 1;
	if (h->rank > TENSOR_MAX_RANK) {
		tsr_rec_fail(h, "rank %d above %d", h->rank, TENSOR_MAX_RANK);
		return -1;
	}
	if (h->name_len == 0 || h->name_len > TENSOR_NAME_MAX) {
		tsr_rec_fail(h, "name length %u not in 1..%d", h->name_len,
			     TENSOR_NAME_MAX);
		return -1;
	}
	return 0;
}

int tsr_rec_var(struct tsr_rec *h, const unsigned char *p, uint64_t limit)
{
	uint64_t size, declared;
	int i;

	for (i = 0; i < h->rank; i++)
		h->dim[i] = le64(p + 8 * i);
	memcpy(h->name, p + 8 * h->rank, h->name_len);
	h->name[h->name_len] = 0;
	if (!tensor_name_ok(h->name, h->name_len)) {
		tsr_rec_fail(h, "name has a byte outside A-Z a-z 0-9 . _ : - /");
		return -1;
	}
	size = dtype_size(h->dtype);
	if (!size) {
		tsr_rec_fail(h, "unknown dtype %d", h->dtype);
		return -1;
	}
	if (h->flags & ~TSR_FLAGS_KNOWN) {
		tsr_rec_fail(h, "undefined flag bits 0x%02x", h->flags);
		return -1;
	}
	if (h->pad >= TSR_ALIGN) {
		tsr_rec_fail(h, "padding %u above %d", h->pad, TSR_ALIGN - 1);
		return -1;
	}
	/* The product of the non-zero dims, checked step by step against
	 * the limit, which also rules out overflow. */
	declared = size;
	for (i = 0; i < h->rank; i++) {
		if (h->dim[i] == 0)
			continue;
		if (h->dim[i] > limit / declared) {
			tsr_rec_fail(h, "shape exceeds the limit of %llu bytes",
				     (unsigned long long)limit);
			return -1;
		}
		declared *= h->dim[i];
	}
	if (declared > limit) {
		tsr_rec_fail(h, "shape exceeds the limit of %llu bytes",
			     (unsigned long long)limit);
		return -1;
	}
	h->nbytes = declared;
	for (i = 0; i < h->rank; i++)
		if (h->dim[i] == 0)
			h->nbytes = 0;
	if (h->stored > limit) {
		tsr_rec_fail(h, "stored size %llu exceeds the limit of %llu "
			     "bytes", (unsigned long long)h->stored,
			     (unsigned long long)limit);
		return -1;
	}
	/* Deflate shrinks by 1032:1 at most: a larger claim is false, and
	 * refusing it here keeps a few bytes from reserving gigabytes. */
	if ((h->flags & TSR_FLAG_ZLIB) && h->nbytes / 1032 > h->stored) {
		tsr_rec_fail(h, "compressed payload of %llu bytes cannot "
			     "inflate to the declared %llu",
			     (unsigned long long)h->stored,
			     (unsigned long long)h->nbytes);
		return -1;
	}
	if (!(h->flags & TSR_FLAG_ZLIB) && h->stored != h->nbytes) {
		tsr_rec_fail(h, "stored size %llu disagrees with the shape "
			     "(%llu bytes)", (unsigned long long)h->stored,
			     (unsigned long long)h->nbytes);
		return -1;
	}
	return 0;
}

int tsr_rec_pad(const struct tsr_rec *h, const unsigned char *p)
{
	for (unsigned i = 0; i < h->pad; i++)
		if (p[i]) {
			tsr_rec_fail(h, "padding byte %u is 0x%02x, not zero",
				     i, p[i]);
			return -1;
		}
	return 0;
}

uint32_t tsr_crc(const void *p, size_t n)
{
	return crc32_fast(0, p, n);
}

/* Inflated bytes a check without an output buffer keeps at a time. */
#define DISCARD ((size_t)32 << 10)

/*
 * Inflates the h->stored bytes at in, which must be one complete zlib
 * stream of exactly h->nbytes: into out, or (out NULL) a piece at a time
 * through a small buffer, their CRC carried in *crc, so that checking a
 * payload of any size takes DISCARD bytes and zlib's state.
 */
static int inflate_payload(const struct tsr_rec *h, const unsigned char *in,
			   unsigned char *out, uint32_t *crc)
{
	unsigned char piece[DISCARD], spare, *mark;
	z_stream zs;
	size_t in_left = h->stored, out_left = h->nbytes, k;
	int ret, overflow = 0;

	memset(&zs, 0, sizeof zs);
	if (inflateInit(&zs) != Z_OK) {
		tsr_rec_fail(h, "zlib: out of memory");
		return -1;
	}
	do {
		if (zs.avail_in == 0 && in_left) {
			zs.next_in = (unsigned char *)in;
			zs.avail_in = in_left < ZCHUNK ? in_left : ZCHUNK;
			in += zs.avail_in;
			in_left -= zs.avail_in;
		}
		if (zs.avail_out == 0) {
			if (out_left) {
				k = out ? ZCHUNK : DISCARD;
				k = out_left < k ? out_left : k;
				zs.next_out = out ? out : piece;
				zs.avail_out = k;
				if (out)
					out += k;
				out_left -= k;
			} else {
				/* All declared bytes are out: any byte more
				 * lands here and is an error. */
				zs.next_out = &spare;
				zs.avail_out = 1;
				overflow = 1;
			}
		}
		mark = zs.next_out;
		ret = inflate(&zs, Z_NO_FLUSH);
		if (overflow && zs.avail_out == 0) {
			inflateEnd(&zs);
			tsr_rec_fail(h, "compressed payload inflates to more than "
				     "the declared %llu bytes",
				     (unsigned long long)h->nbytes);
			return -1;
		}
		if (!out && !overflow)
			*crc = crc32_fast(*crc, mark, zs.next_out - mark);
	} while (ret == Z_OK);
	inflateEnd(&zs);
	if (ret == Z_BUF_ERROR) {
		tsr_rec_fail(h, "compressed payload is not a complete zlib "
			     "stream");
		return -1;
	}
	if (ret != Z_STREAM_END) {
		tsr_rec_fail(h, "compressed payload is damaged (zlib: %s)",
			     zs.msg ? zs.msg : "error");
		return -1;
	}
	if (zs.avail_in || in_left) {
		tsr_rec_fail(h, "%llu bytes after the end of the zlib stream",
			     (unsigned long long)(zs.avail_in + in_left));
		return -1;
	}
	if (zs.total_out != h->nbytes) {
		tsr_rec_fail(h, "compressed payload inflates to %llu bytes, "
			     "not the declared %llu",
			     (unsigned long long)zs.total_out,
			     (unsigned long long)h->nbytes);
		return -1;
	}
	return 0;
}

static int crc_match(const struct tsr_rec *h, uint32_t crc)
{
	if (crc != h->crc) {
		tsr_rec_fail(h, "checksum mismatch (stored 0x%08x, payload "
			     "0x%08x)", h->crc, crc);
		return -1;
	}
	return 0;
}

int tsr_rec_check(const struct tsr_rec *h, const void *data)
{
	return crc_match(h, tsr_crc(data, h->nbytes));
}

int tsr_rec_payload(const struct tsr_rec *h, const void *stored, void *out)
{
	if (h->flags & TSR_FLAG_ZLIB) {
		if (inflate_payload(h, stored, out, NULL) < 0)
			return -1;
	} else if (out != stored && h->nbytes) {
		memcpy(out, stored, h->nbytes);
	}
	return tsr_rec_check(h, out);
}

int tsr_rec_zcheck(const struct tsr_rec *h, const void *stored)
{
	uint32_t crc = 0;

	if (inflate_payload(h, stored, NULL, &crc) < 0)
		return -1;
	return crc_match(h, crc);
}

int tsr_inflate(struct tensor *t)
{
	/* Named as the reader names it, where a lazy reader said where it
	 * read it (t->origin). */
	struct tsr_rec h = { .label = t->origin ? t->origin : "memory",
			     .offset = t->offset, .have_frame = 1,
			     .flags = TSR_FLAG_ZLIB, .crc = t->crc,
			     .frame = t->frame, .stored = t->stored,
			     .nbytes = t->nbytes };
	void *out;

	if (!t->stored)
		return 0;
	snprintf(h.name, sizeof h.name, "%s", t->name);
	if (!(out = tensor_alloc(t->nbytes))) {
		tsr_rec_fail(&h, "out of memory to inflate %zu bytes",
			     t->nbytes);
		return -1;
	}
	if (tsr_rec_payload(&h, t->data, out) < 0) {
		free(out);
		return -1;
	}
	if (t->owned)
		free(t->data);
	t->data = out;
	t->owned = 1;
	t->stored = 0;
	free(t->origin);
	t->origin = NULL;
	return 0;
}

/* Alone in a frame of its own, so that a reader that knows nothing of
 * marks reads it as a frame that it does not use, and no other. */
int tsr_rec_mark_head(const struct tsr_rec *h, int fresh)
{
	if (h->dtype == DT_I64 && h->rank == 0 && h->frame == TSR_END_FRAME &&
	    (h->flags & TSR_FLAG_END_FRAME) && fresh)
		return 0;
	tsr_rec_fail(h, "a stream's end mark must be i64 [], alone in frame "
		     "%llu with the end flag",
		     (unsigned long long)TSR_END_FRAME);
	return -1;
}

int tsr_rec_mark_count(const struct tsr_rec *h, const void *p,
		       uint64_t frames, const char *since)
{
	uint64_t n = le64(p);

	if (n == frames)
		return 0;
	tsr_rec_fail(h, "the end mark counts %llu frame%s, but %llu %s read "
		     "since %s", (unsigned long long)n, n == 1 ? "" : "s",
		     (unsigned long long)frames, frames == 1 ? "was" : "were",
		     since);
	return -1;
}

void tsr_rec_to_tensor(const struct tsr_rec *h, struct tensor *t)
{
	memset(t, 0, sizeof *t);
	memcpy(t->name, h->name, h->name_len + 1);
	t->dtype = h->dtype;
	t->rank = h->rank;
	memcpy(t->dim, h->dim, sizeof t->dim);
	t->frame = h->frame;
	t->nbytes = h->nbytes;
}

size_t tsr_rec_encode(unsigned char *out, const struct tensor *t,
		      uint64_t frame, int flags, unsigned pad, uint32_t crc,
		      uint64_t stored)
{
	size_t name_len = strlen(t->name);
	unsigned char *p = out;

	memcpy(p, TSR_MAGIC, 4);
	p[4] = TSR_VERSION;
	p[5] = t->dtype;
	p[6] = t->rank;
	p[7] = flags;
	p = put16(p + 8, name_len);
	p = put16(p, pad);
	p = put32(p, crc);
	p = put64(p, frame);
	p = put64(p, stored);
	for (int i = 0; i < t->rank; i++)
		p = put64(p, t->dim[i]);
	memcpy(p, t->name, name_len);
	p += name_len;
	memset(p, 0, pad);
	return p + pad - out;
}
