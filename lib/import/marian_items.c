/*
 * marian_items.c: a Marian model file's arrays (marian_items.h).
 *
 * The .bin layout, from Marian's src/common/binary.cpp (all integers
 * little-endian, 8 bytes unless said): the version (1); the number of
 * items n; n headers of four integers: name length (with its NUL), type,
 * rank, data bytes; the n names, NUL-terminated; the n shapes, as 4-byte
 * ints; an offset k, then k bytes of padding (so that the data begins on
 * a 256-byte boundary); then each item's data in turn, its "data bytes"
 * long (which may include padding after the elements).  Types are
 * Marian's Type enum: a class (0x100 signed, 0x200 unsigned, 0x400
 * float) plus the element's size; 0x404 float32, 0x402 float16, 0x101
 * int8 and 0x201 uint8 are read here, and 0x4101 intgemm8 (marian_items.h:
 * int8 values and their multiplier after them); anything else (intgemm16,
 * fbgemm's packed types) is refused by name.
 */
#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/errmsg.h"
#include "marian_items.h"
#include "zip.h"

void marian_items_free(struct marian_items *mi)
{
	int i;

	for (i = 0; i < mi->n; i++) {
		free(mi->it[i].name);
		free(mi->it[i].own);
	}
	free(mi->it);
	zip_close(&mi->z);
	strmap_free(&mi->index);
	memset(mi, 0, sizeof(*mi));
}

const struct marian_item *marian_item(const struct marian_items *mi,
				      const char *name)
{
	const int64_t *v;
	int i;

	if (mi->index.slot) {
		v = strmap_find(&mi->index, name, strlen(name));
		return v ? &mi->it[*v] : NULL;
	}
	for (i = 0; i < mi->n; i++)
		if (!strcmp(mi->it[i].name, name))
			return &mi->it[i];
	return NULL;
}

/* Item i's name into the index: -1 (err_msg() set) when it is there
 * already, or out of memory. */
static int index_add(struct marian_items *mi, int i, const char *what)
{
	const char *name = mi->it[i].name;
	int64_t *v;
	int added;

	if (!(v = strmap_put(&mi->index, name, strlen(name), &added))) {
		err_set("%s: out of memory", what);
		return -1;
	}
	if (!added) {
		err_set(!strcmp(what, "npz") ? "npz: %s.npy is there twice" :
			"bin: item %s is there twice", name);
		return -1;
	}
	*v = i;
	return 0;
}

/* Member i's .npy header into it: read from its first bytes alone. */
static int npz_header(const struct zip *z, int i, struct marian_item *it)
{
	uint8_t buf[12 + NPY_MAX_HEADER], *b = buf;
	size_t want = 12, got, off;
	const void *h;
	struct npy a;
	int rc;

	for (;;) {
		if (!(h = zip_peek(z, i, b, want, &got)))
			return -1;
		rc = npy_parse_header(&a, h, got, z->m[i].usize, &off);
		if (rc <= 0)
			break;
		if (off <= got) {	/* (cannot be: more is asked each time) */
			err_set("npz: %s: its .npy header cannot be read",
				z->m[i].name);
			return -1;
		}
		want = off;	/* the header's length, now known */
	}
	if (rc < 0) {
		err_prefix("npz: %s", z->m[i].name);
		return -1;
	}
	it->dtype = a.dtype;
	it->rank = a.rank;
	memcpy(it->shape, a.shape, sizeof(a.shape));
	it->count = a.count;
	it->member = i;
	it->off = off;
	return 0;
}

static int npz_open(struct marian_items *mi, const void *p, size_t n)
{
	struct zip *z = &mi->z;
	int i;

	memset(mi, 0, sizeof(*mi));
	if (zip_open(z, p, n) < 0)
		return -1;
	if (z->count && !(mi->it = calloc((size_t)z->count, sizeof(*mi->it)))) {
		err_set("npz: out of memory");
		goto bad;
	}
	for (i = 0; i < z->count; i++) {
		struct marian_item *it = &mi->it[mi->n];
		const char *nm = z->m[i].name;
		size_t l = strlen(nm);

		if (l <= 4 || strcmp(nm + l - 4, ".npy")) {
			err_set("npz: member %s is not a .npy array", nm);
			goto bad;
		}
		mi->n++;
		if (!(it->name = strndup(nm, l - 4))) {
			err_set("npz: out of memory");
			goto bad;
		}
		if (index_add(mi, i, "npz") < 0 || npz_header(z, i, it) < 0)
			goto bad;
	}
	return 0;
bad:
	marian_items_free(mi);
	return -1;
}

int marian_item_load(struct marian_items *mi, const struct marian_item *it)
{
	struct marian_item *w = &mi->it[it - mi->it];
	const uint8_t *d;
	size_t len;

	if (w->data)
		return 0;
	if (!(d = zip_data(&mi->z, w->member, &w->own, &len)))
		return -1;
	/* the header read before is the one inflated now: the same
	 * bytes, whose CRC-32 is checked with the rest */
	w->data = d + w->off;
	return 0;
}

void marian_item_unload(struct marian_items *mi, const struct marian_item *it)
{
	struct marian_item *w = &mi->it[it - mi->it];

	if (!mi->z.count || !w->own)	/* a .bin's, or stored */
		return;
	free(w->own);
	w->own = NULL;
	w->data = NULL;
}

/* Every item's data. */
static int load_all(struct marian_items *mi)
{
	int i;

	for (i = 0; i < mi->n; i++)
		if (marian_item_load(mi, &mi->it[i]) < 0) {
			marian_items_free(mi);
			return -1;
		}
	return 0;
}

int marian_items_read_npz(struct marian_items *mi, const void *p, size_t n)
{
	return npz_open(mi, p, n) < 0 ? -1 : load_all(mi);
}

static uint64_t rd64(const uint8_t *p)
{
	uint64_t v = 0;
	int i;

	for (i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* An intgemm8 item's multiplier, after its values: a positive finite
 * float (the values are w * qm rounded: 0, NaN or infinity would make
 * every product 0 or NaN). */
static int intgemm_mult(struct marian_item *it)
{
	float qm;

	memcpy(&qm, it->data + it->count, 4);
	if (!(qm > 0 && qm <= FLT_MAX)) {
		err_set("bin: item %s: its intgemm8 multiplier %g is not a "
			"positive finite number", it->name, qm);
		return -1;
	}
	it->intgemm_mult = qm;
	return 0;
}

/* Caps that keep a crafted header's arithmetic far from overflow. */
#define BIN_MAX_ITEMS	65536
#define BIN_MAX_NAME	4096

int marian_items_read_bin(struct marian_items *mi, const void *data, size_t n)
{
	const uint8_t *p = data, *h;
	uint64_t nh, pos, k;
	int i, j;

	memset(mi, 0, sizeof(*mi));
	if (n < 16 || rd64(p) != 1) {
		err_set("bin: not a Marian binary model (version 1)");
		return -1;
	}
	nh = rd64(p + 8);
	if (nh > BIN_MAX_ITEMS || nh * 32 > n - 16) {
		err_set("bin: %llu item headers do not fit the file's %zu "
			"bytes", (unsigned long long)nh, n);
		return -1;
	}
	h = p + 16;
	pos = 16 + nh * 32;
	if (nh && !(mi->it = calloc((size_t)nh, sizeof(*mi->it)))) {
		err_set("bin: out of memory");
		return -1;
	}
	mi->n = (int)nh;
	for (i = 0; i < (int)nh; i++) {		/* names */
		uint64_t nl = rd64(h + 32 * i);

		if (nl < 2 || nl > BIN_MAX_NAME || nl > n - pos ||
		    p[pos + nl - 1] || memchr(p + pos, 0, nl - 1)) {
			err_set("bin: item %d's name (%llu bytes at offset "
				"%llu) is malformed or outside the file", i,
				(unsigned long long)nl,
				(unsigned long long)pos);
			goto bad;
		}
		if (!(mi->it[i].name = strdup((const char *)p + pos))) {
			err_set("bin: out of memory");
			goto bad;
		}
		pos += nl;
	}
	for (i = 0; i < (int)nh; i++) {		/* types and shapes */
		struct marian_item *it = &mi->it[i];
		uint64_t type = rd64(h + 32 * i + 8);
		uint64_t rank = rd64(h + 32 * i + 16);

		if (type == 0x404) {
			it->dtype = NPY_F32;
		} else if (type == 0x402) {
			it->dtype = NPY_F16;
		} else if (type == 0x101 || type == 0x201) {
			it->dtype = NPY_BYTES;
		} else if (type == 0x4101) {
			it->dtype = MARIAN_INTGEMM8;
		} else {
			err_set("bin: item %s has Marian type 0x%llx: only "
				"float32, float16, bytes and intgemm8 are "
				"supported (intgemm16 and packed matrices are "
				"not: import the float32 or intgemm8 model)",
				it->name, (unsigned long long)type);
			goto bad;
		}
		if (rank > NPY_MAX_RANK || rank * 4 > n - pos) {
			err_set("bin: item %s's shape (rank %llu) is outside "
				"the file or too long", it->name,
				(unsigned long long)rank);
			goto bad;
		}
		it->rank = (int)rank;
		it->count = 1;
		for (j = 0; j < (int)rank; j++) {
			const uint8_t *q = p + pos + 4 * j;
			int32_t d = (int32_t)((uint32_t)q[0] |
					      (uint32_t)q[1] << 8 |
					      (uint32_t)q[2] << 16 |
					      (uint32_t)q[3] << 24);

			if (d < 0) {
				err_set("bin: item %s has a negative "
					"dimension", it->name);
				goto bad;
			}
			it->shape[j] = (uint64_t)d;
			if (d && it->count > n / (uint64_t)d) {
				err_set("bin: item %s's shape holds more "
					"elements than the file has bytes",
					it->name);
				goto bad;
			}
			it->count *= (uint64_t)d;
		}
		pos += rank * 4;
	}
	if (8 > n - pos || rd64(p + pos) > n - pos - 8) {
		err_set("bin: the padding before the data runs past the file");
		goto bad;
	}
	k = rd64(p + pos);
	pos += 8 + k;
	for (i = 0; i < (int)nh; i++) {		/* data */
		struct marian_item *it = &mi->it[i];
		uint64_t len = rd64(h + 32 * i + 24);
		uint64_t es = it->dtype == NPY_F32 ? 4 : it->dtype == NPY_F16
			      ? 2 : 1;
		/* intgemm8: the values, then their float multiplier */
		uint64_t extra = it->dtype == MARIAN_INTGEMM8 ? 4 : 0;

		if (len > n - pos || len < it->count * es + extra) {
			err_set("bin: item %s's %llu bytes at offset %llu are "
				"outside the file or fewer than its shape "
				"needs (%llu)", it->name,
				(unsigned long long)len,
				(unsigned long long)pos,
				(unsigned long long)(it->count * es + extra));
			goto bad;
		}
		it->data = p + pos;
		if (extra && intgemm_mult(it) < 0)
			goto bad;
		pos += len;
	}
	for (i = 0; i < (int)nh; i++)
		if (index_add(mi, i, "bin") < 0)
			goto bad;
	return 0;
bad:
	marian_items_free(mi);
	return -1;
}

int marian_items_open(struct marian_items *mi, const void *p, size_t n)
{
	if (n >= 4 && !memcmp(p, "PK\3\4", 4))
		return npz_open(mi, p, n);
	if (n >= 4 && !memcmp(p, "PK\5\6", 4))	/* an empty archive */
		return npz_open(mi, p, n);
	return marian_items_read_bin(mi, p, n);
}

int marian_items_read(struct marian_items *mi, const void *p, size_t n)
{
	return marian_items_open(mi, p, n) < 0 ? -1 : load_all(mi);
}
