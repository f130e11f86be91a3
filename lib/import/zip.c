/*
 * zip.c: the central directory of a zip archive and its members (zip.h),
 * from the layout of PKWARE's APPNOTE: the end of central directory
 * record (22 bytes and a comment, within the last 64 KiB), its ZIP64
 * locator and record when a count, size or offset does not fit its
 * 16- or 32-bit field, then one central header per member (46 bytes,
 * name, extra fields, comment), whose ZIP64 extra field (id 1) holds the
 * 64-bit values of the fields that are all ones, in the order
 * uncompressed size, compressed size, local header offset.  The sizes
 * and CRC of the central header are the ones used: a local header may
 * leave them to a data descriptor (flag bit 3) or to its own ZIP64
 * field; only its signature and the lengths of its name and extra field
 * are read from it.
 */
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "base/errmsg.h"
#include "stream/crc32.h"
#include "zip.h"

#define SIG_LOCAL	0x04034b50u
#define SIG_CENTRAL	0x02014b50u
#define SIG_END		0x06054b50u
#define SIG_END64	0x06064b50u
#define SIG_LOC64	0x07064b50u

static uint16_t rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static uint64_t rd64(const uint8_t *p)
{
	return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32;
}

void zip_close(struct zip *z)
{
	int i;

	for (i = 0; i < z->count; i++)
		free(z->m[i].name);
	free(z->m);
	memset(z, 0, sizeof(*z));
}

/* The end of central directory record: the last signature that leaves
 * room for its 22 bytes and its comment exactly; -1 if none. */
static long find_end(const uint8_t *p, size_t n)
{
	size_t i, lo;

	if (n < 22)
		return -1;
	lo = n - 22 > 65535 ? n - 22 - 65535 : 0;
	for (i = n - 22 + 1; i-- > lo;)
		if (rd32(p + i) == SIG_END && i + 22 + rd16(p + i + 20) == n)
			return (long)i;
	return -1;
}

/* The ZIP64 end record that the locator just before the end record at
 * e points to: its member count, directory size and offset. */
static int read_end64(const uint8_t *p, size_t n, size_t e, uint64_t *count,
		      uint64_t *cdsize, uint64_t *cdoff)
{
	uint64_t off;

	if (e < 20 || rd32(p + e - 20) != SIG_LOC64) {
		err_set("zip: a field of the end record is all ones but there "
			"is no ZIP64 locator before it");
		return -1;
	}
	if (rd32(p + e - 16) != 0 || rd32(p + e - 4) > 1) {
		err_set("zip: multi-disk archives are not supported");
		return -1;
	}
	off = rd64(p + e - 12);
	if (off > n || n - off < 56 || off + 56 > e - 20) {
		err_set("zip: the ZIP64 end record's offset %llu is outside "
			"the archive", (unsigned long long)off);
		return -1;
	}
	if (rd32(p + off) != SIG_END64) {
		err_set("zip: no ZIP64 end record at offset %llu",
			(unsigned long long)off);
		return -1;
	}
	if (rd32(p + off + 16) != 0 || rd32(p + off + 20) != 0 ||
	    rd64(p + off + 24) != rd64(p + off + 32)) {
		err_set("zip: multi-disk archives are not supported");
		return -1;
	}
	*count = rd64(p + off + 32);
	*cdsize = rd64(p + off + 40);
	*cdoff = rd64(p + off + 48);
	return 0;
}

/* The ZIP64 extra field of central header member i (extra fields at x,
 * xn bytes): the 64-bit values of the fields that were all ones. */
static int read_zip64_extra(struct zip_member *m, int i, const uint8_t *x,
			    size_t xn, int need_u, int need_c, int need_o)
{
	while (xn >= 4) {
		unsigned id = rd16(x), len = rd16(x + 2);
		const uint8_t *v = x + 4;
		size_t want = 8 * (size_t)(need_u + need_c + need_o);

		if (len > xn - 4)
			break;
		if (id == 1) {
			if (len < want) {
				err_set("zip: member %d (%s): its ZIP64 field "
					"has %u bytes, not the %zu its header "
					"needs", i, m->name, len, want);
				return -1;
			}
			if (need_u) {
				m->usize = rd64(v);
				v += 8;
			}
			if (need_c) {
				m->csize = rd64(v);
				v += 8;
			}
			if (need_o)
				m->local = rd64(v);
			return 0;
		}
		x += 4 + len;
		xn -= 4 + len;
	}
	err_set("zip: member %d (%s): a size or offset is all ones but it has "
		"no ZIP64 field", i, m->name);
	return -1;
}

/* Central header i at c (at most avail bytes) into m; its length in *len. */
static int read_central(struct zip_member *m, int i, const uint8_t *c,
			size_t avail, size_t *len)
{
	unsigned flags, nl, xl, cl;
	uint32_t us, cs, lo;

	if (avail < 46 || rd32(c) != SIG_CENTRAL) {
		err_set("zip: central header %d is missing or truncated", i);
		return -1;
	}
	flags = rd16(c + 8);
	m->method = rd16(c + 10);
	m->crc = rd32(c + 16);
	cs = rd32(c + 20);
	us = rd32(c + 24);
	nl = rd16(c + 28);
	xl = rd16(c + 30);
	cl = rd16(c + 32);
	lo = rd32(c + 42);
	if (46 + (size_t)nl + xl + cl > avail) {
		err_set("zip: central header %d runs past the directory", i);
		return -1;
	}
	if (!nl || memchr(c + 46, 0, nl)) {
		err_set("zip: member %d has an empty name or one with a NUL",
			i);
		return -1;
	}
	if (!(m->name = malloc(nl + 1))) {
		err_set("zip: out of memory");
		return -1;
	}
	memcpy(m->name, c + 46, nl);
	m->name[nl] = 0;
	if (flags & 1) {
		err_set("zip: member %d (%s) is encrypted", i, m->name);
		return -1;
	}
	if (m->method != 0 && m->method != 8) {
		err_set("zip: member %d (%s): compression method %d is not "
			"supported (stored 0 and deflated 8 are)", i, m->name,
			m->method);
		return -1;
	}
	if (rd16(c + 34) != 0 && rd16(c + 34) != 0xffff) {
		err_set("zip: member %d (%s) is on another disk", i, m->name);
		return -1;
	}
	m->usize = us;
	m->csize = cs;
	m->local = lo;
	if ((us == 0xffffffffu || cs == 0xffffffffu || lo == 0xffffffffu) &&
	    read_zip64_extra(m, i, c + 46 + nl, xl, us == 0xffffffffu,
			     cs == 0xffffffffu, lo == 0xffffffffu) < 0)
		return -1;
	if (m->method == 0 && m->csize != m->usize) {
		err_set("zip: member %d (%s) is stored but its sizes differ "
			"(%llu, %llu)", i, m->name,
			(unsigned long long)m->csize,
			(unsigned long long)m->usize);
		return -1;
	}
	*len = 46 + (size_t)nl + xl + cl;
	return 0;
}

struct span {
	uint64_t lo, hi;
	int i;
};

static int span_cmp(const void *a, const void *b)
{
	const struct span *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Members whose bytes (local header, name, extra field, data) share
 * bytes with another's are refused: no real archive has them, and they
 * let a small archive inflate without bound (the same deflated data
 * named a thousand times, a "zip bomb").  With none shared, the members
 * of n bytes inflate to at most 1032 n.  A member whose local header is
 * not there is left to zip_extract to refuse. */
static int no_overlaps(const struct zip *z)
{
	struct span *s;
	int i, k = 0;

	if (z->count < 2)
		return 0;
	if (!(s = malloc((size_t)z->count * sizeof(*s)))) {
		err_set("zip: out of memory");
		return -1;
	}
	for (i = 0; i < z->count; i++) {
		const struct zip_member *m = &z->m[i];
		const uint8_t *l = z->p + m->local;

		if (m->local > z->n || z->n - m->local < 30 ||
		    rd32(l) != SIG_LOCAL || m->csize > z->n)
			continue;
		s[k].lo = m->local;
		s[k].hi = m->local + 30 + rd16(l + 26) + rd16(l + 28) +
			  m->csize;
		s[k++].i = i;
	}
	qsort(s, (size_t)k, sizeof(*s), span_cmp);
	for (i = 1; i < k; i++)
		if (s[i].lo < s[i - 1].hi) {
			int a = s[i - 1].i < s[i].i ? s[i - 1].i : s[i].i;
			int b = s[i - 1].i < s[i].i ? s[i].i : s[i - 1].i;

			err_set("zip: members %d (%s) and %d (%s) share bytes "
				"at offset %llu (no archive does; refused as "
				"a zip bomb)", a, z->m[a].name, b,
				z->m[b].name, (unsigned long long)s[i].lo);
			free(s);
			return -1;
		}
	free(s);
	return 0;
}

int zip_open(struct zip *z, const void *data, size_t n)
{
	const uint8_t *p = data;
	uint64_t count, cdsize, cdoff, pos;
	long e;
	int i;

	memset(z, 0, sizeof(*z));
	if ((e = find_end(p, n)) < 0) {
		err_set("zip: no end of central directory record (not a zip "
			"archive, or truncated)");
		return -1;
	}
	if (rd16(p + e + 4) != 0 || rd16(p + e + 6) != 0 ||
	    rd16(p + e + 8) != rd16(p + e + 10)) {
		err_set("zip: multi-disk archives are not supported");
		return -1;
	}
	count = rd16(p + e + 10);
	cdsize = rd32(p + e + 12);
	cdoff = rd32(p + e + 16);
	if ((count == 0xffff || cdsize == 0xffffffffu ||
	     cdoff == 0xffffffffu) &&
	    read_end64(p, n, (size_t)e, &count, &cdsize, &cdoff) < 0)
		return -1;
	if (cdoff > (uint64_t)e || cdsize > (uint64_t)e - cdoff) {
		err_set("zip: the central directory (offset %llu, %llu bytes) "
			"is outside the archive's %zu bytes",
			(unsigned long long)cdoff, (unsigned long long)cdsize,
			n);
		return -1;
	}
	if (count > ZIP_MAX_MEMBERS || count > cdsize / 46) {
		err_set("zip: %llu members do not fit a central directory of "
			"%llu bytes (or exceed %d)", (unsigned long long)count,
			(unsigned long long)cdsize, ZIP_MAX_MEMBERS);
		return -1;
	}
	z->p = p;
	z->n = n;
	if (count && !(z->m = calloc((size_t)count, sizeof(*z->m)))) {
		err_set("zip: out of memory");
		return -1;
	}
	pos = cdoff;
	for (i = 0; i < (int)count; i++) {
		size_t len;

		z->count = i + 1;
		if (read_central(&z->m[i], i, p + pos,
				 (size_t)(cdoff + cdsize - pos), &len) < 0) {
			zip_close(z);
			return -1;
		}
		pos += len;
	}
	if (no_overlaps(z) < 0) {
		zip_close(z);
		return -1;
	}
	return 0;
}

int zip_find(const struct zip *z, const char *name)
{
	int i;

	for (i = 0; i < z->count; i++)
		if (!strcmp(z->m[i].name, name))
			return i;
	return -1;
}

/* Raw deflate of cn bytes at c into exactly un bytes at u (fed to zlib
 * in slices, as its counts are 32-bit); a stream that ends early, needs
 * more input or would write more is refused. */
static int inflate_raw(const uint8_t *c, uint64_t cn, uint8_t *u, uint64_t un,
		       const char *name)
{
	uint64_t in = 0, out = 0;
	uint8_t extra;
	z_stream s;
	int rc, over = 0;

	memset(&s, 0, sizeof(s));
	if (inflateInit2(&s, -MAX_WBITS) != Z_OK) {
		err_set("zip: %s: zlib's inflateInit2 failed", name);
		return -1;
	}
	for (;;) {
		if (!s.avail_in && in < cn) {
			uint64_t k = cn - in > 1u << 30 ? 1u << 30 : cn - in;

			s.next_in = (Bytef *)(c + in);
			s.avail_in = (uInt)k;
			in += k;
		}
		if (!s.avail_out) {
			if (over)
				break;	/* wrote a byte beyond un */
			if (out < un) {
				uint64_t k = un - out > 1u << 30 ? 1u << 30
								: un - out;

				s.next_out = u + out;
				s.avail_out = (uInt)k;
				out += k;
			} else {
				s.next_out = &extra;
				s.avail_out = 1;
				over = 1;
			}
		}
		rc = inflate(&s, Z_NO_FLUSH);
		if (rc != Z_OK)
			break;
	}
	if (over && !s.avail_out)
		rc = Z_DATA_ERROR;
	inflateEnd(&s);
	if (rc != Z_STREAM_END || (uint64_t)s.total_out != un) {
		err_set("zip: %s: the deflated data is corrupt or does not "
			"inflate to its %llu bytes", name,
			(unsigned long long)un);
		return -1;
	}
	return 0;
}

/* Where member i's stored or deflated bytes are, in *data, after its
 * local header, every one inside the archive; its sizes checked. */
static int member_data(const struct zip *z, int i, uint64_t *data)
{
	const struct zip_member *m;
	const uint8_t *l;

	if (i < 0 || i >= z->count) {
		err_set("zip: no member %d", i);
		return -1;
	}
	m = &z->m[i];
	if (m->local > z->n || z->n - m->local < 30 ||
	    rd32(z->p + m->local) != SIG_LOCAL) {
		err_set("zip: member %d (%s): no local header at offset %llu",
			i, m->name, (unsigned long long)m->local);
		return -1;
	}
	l = z->p + m->local;
	*data = m->local + 30 + rd16(l + 26) + rd16(l + 28);
	if (*data > z->n || m->csize > z->n - *data) {
		err_set("zip: member %d (%s): its %llu bytes at offset %llu "
			"run past the archive's %zu", i, m->name,
			(unsigned long long)m->csize,
			(unsigned long long)*data, z->n);
		return -1;
	}
	/* deflate expands at most 1032 times: more is no real member */
	if (m->method == 8 && m->usize / 1032 > m->csize + 1) {
		err_set("zip: member %d (%s): %llu bytes cannot inflate to "
			"%llu", i, m->name, (unsigned long long)m->csize,
			(unsigned long long)m->usize);
		return -1;
	}
	return 0;
}

/* The first want bytes that cn bytes of raw deflate at c inflate to,
 * into u: a stream that ends before them or is corrupt is refused. */
static int inflate_head(const uint8_t *c, uint64_t cn, uint8_t *u,
			size_t want, const char *name)
{
	uint64_t in = 0;
	z_stream s;
	int rc = Z_OK;

	memset(&s, 0, sizeof(s));
	if (inflateInit2(&s, -MAX_WBITS) != Z_OK) {
		err_set("zip: %s: zlib's inflateInit2 failed", name);
		return -1;
	}
	s.next_out = u;
	s.avail_out = (uInt)want;
	while (s.avail_out && rc == Z_OK) {
		if (!s.avail_in && in < cn) {
			uint64_t k = cn - in > 1u << 30 ? 1u << 30 : cn - in;

			s.next_in = (Bytef *)(c + in);
			s.avail_in = (uInt)k;
			in += k;
		}
		rc = inflate(&s, Z_NO_FLUSH);
	}
	inflateEnd(&s);
	if (s.avail_out) {
		err_set("zip: %s: the deflated data is corrupt or ends before "
			"its first %zu bytes", name, want);
		return -1;
	}
	return 0;
}

const void *zip_peek(const struct zip *z, int i, void *buf, size_t want,
		     size_t *got)
{
	const struct zip_member *m;
	uint64_t data;

	if (member_data(z, i, &data) < 0)
		return NULL;
	m = &z->m[i];
	if (want > m->usize)
		want = (size_t)m->usize;
	*got = want;
	if (m->method == 0)
		return z->p + data;
	if (inflate_head(z->p + data, m->csize, buf, want, m->name) < 0)
		return NULL;
	return buf;
}

const void *zip_data(const struct zip *z, int i, void **own, size_t *len)
{
	const struct zip_member *m;
	uint64_t data;

	*own = NULL;
	if (member_data(z, i, &data) < 0)
		return NULL;
	m = &z->m[i];
	if (m->method != 0)
		return *own = zip_extract(z, i, len);
	if (crc32_fast(0, z->p + data, (size_t)m->usize) != m->crc) {
		err_set("zip: member %d (%s): CRC-32 mismatch (the data is "
			"corrupt)", i, m->name);
		return NULL;
	}
	*len = (size_t)m->usize;
	return z->p + data;
}

void *zip_extract(const struct zip *z, int i, size_t *len)
{
	const struct zip_member *m;
	uint64_t data;
	uint8_t *u;

	if (member_data(z, i, &data) < 0)
		return NULL;
	m = &z->m[i];
	if (m->usize >= SIZE_MAX || !(u = malloc((size_t)m->usize + 1))) {
		err_set("zip: member %d (%s): out of memory for %llu bytes",
			i, m->name, (unsigned long long)m->usize);
		return NULL;
	}
	if (m->method == 0)
		memcpy(u, z->p + data, (size_t)m->usize);
	else if (inflate_raw(z->p + data, m->csize, u, m->usize, m->name) < 0) {
		free(u);
		return NULL;
	}
	if (crc32_fast(0, u, (size_t)m->usize) != m->crc) {
		err_set("zip: member %d (%s): CRC-32 mismatch (the data is "
			"corrupt)", i, m->name);
		free(u);
		return NULL;
	}
	u[m->usize] = 0;
	*len = (size_t)m->usize;
	return u;
}
