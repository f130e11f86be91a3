/*
 * zip_write.c: stored members and the central directory (zip_write.h;
 * the layout is PKWARE's APPNOTE 4.3.7, 4.3.12 and 4.3.16).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "base/errmsg.h"
#include "stream/crc32.h"
#include "zip_write.h"

/* Members at most: the end record counts them in 16 bits. */
#define ZW_MAX_MEMBERS 65535
#define ZW_MAX_BYTES 0xffffffffull

static void le16(uint8_t *p, unsigned v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void le32(uint8_t *p, uint32_t v)
{
	le16(p, v & 0xffff);
	le16(p + 2, v >> 16);
}

static int put(struct zip_writer *z, const void *p, size_t n)
{
	const uint8_t *b = p;

	while (n) {
		ssize_t k = write(z->fd, b, n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			err_set("%s: write error: %s", z->label,
				strerror(errno));
			return -1;
		}
		b += k;
		n -= (size_t)k;
		z->off += (uint64_t)k;
	}
	return 0;
}

void zip_writer_init(struct zip_writer *z, int fd, const char *label)
{
	memset(z, 0, sizeof *z);
	z->fd = fd;
	z->label = label;
}

void zip_writer_free(struct zip_writer *z)
{
	for (int i = 0; i < z->count; i++)
		free(z->m[i].name);
	free(z->m);
	z->m = NULL;
	z->count = z->cap = 0;
}

/* The 26 bytes after a header's signature (and version made by, in the
 * central one) that both headers share: version needed (2.0), flags 0
 * (no data descriptor, no UTF-8 bit: the names are ASCII), stored, time
 * and date 0, CRC, sizes, the name's length, no extra field. */
static void common(uint8_t *p, const struct zip_written *w)
{
	memset(p, 0, 26);
	le16(p, 20);
	le32(p + 10, w->crc);
	le32(p + 14, w->size);
	le32(p + 18, w->size);
	le16(p + 22, (unsigned)strlen(w->name));
}

int zip_writer_add(struct zip_writer *z, const char *name,
		   const void *const *part, const size_t *len, int n)
{
	struct zip_written w;
	uint8_t h[30];
	uint64_t size = 0;
	size_t nl = strlen(name);
	uint32_t crc = 0;
	int i;

	for (i = 0; i < n; i++)
		size += len[i];
	if (z->count >= ZW_MAX_MEMBERS || nl == 0 || nl > 0xffff ||
	    size > ZW_MAX_BYTES || z->off + 30 + nl + size > ZW_MAX_BYTES) {
		err_set("%s: %s: the archive would pass 4 GiB or 65535 "
			"members, which an .npz without ZIP64 (as Marian "
			"reads them) cannot hold", z->label, name);
		return -1;
	}
	if (z->count == z->cap) {
		int cap = z->cap ? 2 * z->cap : 64;
		struct zip_written *m = realloc(z->m, cap * sizeof *m);

		if (!m) {
			err_set("%s: out of memory", z->label);
			return -1;
		}
		z->m = m;
		z->cap = cap;
	}
	for (i = 0; i < n; i++)
		crc = crc32_fast(crc, part[i], len[i]);
	w.crc = crc;
	w.size = (uint32_t)size;
	w.local = (uint32_t)z->off;
	if (!(w.name = strdup(name))) {
		err_set("%s: out of memory", z->label);
		return -1;
	}
	z->m[z->count++] = w;
	le32(h, 0x04034b50);
	common(h + 4, &w);
	if (put(z, h, 30) < 0 || put(z, name, nl) < 0)
		goto bad;
	for (i = 0; i < n; i++)
		if (put(z, part[i], len[i]) < 0)
			goto bad;
	return 0;
bad:
	err_prefix("%s", name);
	return -1;
}

int zip_writer_finish(struct zip_writer *z)
{
	uint64_t start = z->off;
	uint8_t h[46], e[22];
	int i;

	for (i = 0; i < z->count; i++) {
		const struct zip_written *w = &z->m[i];

		le32(h, 0x02014b50);
		le16(h + 4, 20);		/* made by: MS-DOS, 2.0 */
		common(h + 6, w);
		/* comment, disk, attributes 0; the local header's offset */
		memset(h + 32, 0, 10);
		le32(h + 42, w->local);
		if (put(z, h, 46) < 0 || put(z, w->name, strlen(w->name)) < 0)
			return -1;
	}
	if (z->off > ZW_MAX_BYTES) {
		err_set("%s: the central directory passes 4 GiB", z->label);
		return -1;
	}
	memset(e, 0, sizeof e);
	le32(e, 0x06054b50);
	le16(e + 8, (unsigned)z->count);
	le16(e + 10, (unsigned)z->count);
	le32(e + 12, (uint32_t)(z->off - start));
	le32(e + 16, (uint32_t)start);
	return put(z, e, sizeof e);
}
