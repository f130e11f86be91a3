/*
 * npy.c: the .npy header (npy.h).  The header is a dict literal as
 * numpy's repr writes it, {'descr': '<f4', 'fortran_order': False,
 * 'shape': (2, 3), }, padded with spaces to an aligned length and ended
 * by a newline; this reads any order of the three keys, single or double
 * quotes, spaces anywhere between tokens, and trailing commas, and
 * refuses other keys.
 */
#include <stdio.h>
#include <string.h>
#include "base/errmsg.h"
#include "npy.h"

struct cur {
	const char *s, *e;
};

static void skip_ws(struct cur *c)
{
	while (c->s < c->e && (*c->s == ' ' || *c->s == '\t' || *c->s == '\n'))
		c->s++;
}

static int eat(struct cur *c, char ch)
{
	skip_ws(c);
	if (c->s < c->e && *c->s == ch) {
		c->s++;
		return 1;
	}
	return 0;
}

/* A quoted string into buf (at most size - 1 bytes). */
static int string(struct cur *c, char *buf, size_t size)
{
	char q;
	size_t k = 0;

	skip_ws(c);
	if (c->s >= c->e || (*c->s != '\'' && *c->s != '"'))
		return -1;
	q = *c->s++;
	while (c->s < c->e && *c->s != q) {
		if (*c->s == '\\' || k + 1 >= size)
			return -1;
		buf[k++] = *c->s++;
	}
	if (c->s >= c->e)
		return -1;
	c->s++;
	buf[k] = 0;
	return 0;
}

/* (d0, d1, ...) into a->shape; "()" is a scalar, "(n,)" rank 1. */
static int shape(struct cur *c, struct npy *a)
{
	if (!eat(c, '('))
		return -1;
	a->rank = 0;
	for (;;) {
		uint64_t v = 0;
		int digits = 0;

		if (eat(c, ')'))
			return 0;
		skip_ws(c);
		while (c->s < c->e && *c->s >= '0' && *c->s <= '9') {
			if (v > (UINT64_MAX - 9) / 10)
				return -1;
			v = v * 10 + (uint64_t)(*c->s++ - '0');
			digits++;
		}
		/* numpy may write 3L for a long in Python 2's files */
		if (c->s < c->e && *c->s == 'L')
			c->s++;
		if (!digits || a->rank == NPY_MAX_RANK)
			return -1;
		a->shape[a->rank++] = v;
		if (!eat(c, ',')) {
			if (!eat(c, ')'))
				return -1;
			/* (n) without its comma is no tuple but numpy
			 * never writes it; accept it for rank > 1 only */
			return a->rank > 1 ? 0 : -1;
		}
	}
}

static int bad(const char *what)
{
	err_set("npy: %s", what);
	return -1;
}

int npy_parse_header(struct npy *a, const void *data, size_t n,
		     uint64_t total, size_t *data_off)
{
	const uint8_t *p = data;
	struct cur c;
	size_t hl, off, esize = 0;
	int have_d = 0, have_f = 0, have_s = 0, fortran = 0, i;
	char descr[16] = "";

	memset(a, 0, sizeof(*a));
	if (n > total)
		n = (size_t)total;
	/* the fixed part: the magic, the version, the header's length */
	if (n < 12 && n < total) {
		*data_off = total < 12 ? (size_t)total : 12;
		return 1;
	}
	if (n < 10 || memcmp(p, "\x93NUMPY", 6))
		return bad("no .npy magic (\\x93NUMPY)");
	if (p[6] < 1 || p[6] > 3)
		return bad("format version is not 1, 2 or 3");
	if (p[6] == 1) {
		hl = (size_t)p[8] | (size_t)p[9] << 8;
		off = 10;
	} else {
		if (n < 12)
			return bad("truncated header");
		hl = (size_t)p[8] | (size_t)p[9] << 8 | (size_t)p[10] << 16 |
		     (size_t)p[11] << 24;
		off = 12;
	}
	if (hl > total - off)
		return bad("the header runs past the end of the data");
	if (hl > NPY_MAX_HEADER) {
		err_set("npy: the header's %zu bytes are more than an array's "
			"(at most %d are read)", hl, NPY_MAX_HEADER);
		return -1;
	}
	if (hl > n - off) {
		*data_off = off + hl;
		return 1;
	}
	c.s = (const char *)p + off;
	c.e = c.s + hl;
	if (!eat(&c, '{'))
		return bad("the header is not a dict");
	while (!eat(&c, '}')) {
		char key[32];

		if (string(&c, key, sizeof(key)) < 0 || !eat(&c, ':'))
			return bad("the header's dict has a malformed key");
		if (!strcmp(key, "descr") && !have_d) {
			if (string(&c, descr, sizeof(descr)) < 0)
				return bad("descr is not a short string");
			have_d = 1;
		} else if (!strcmp(key, "fortran_order") && !have_f) {
			skip_ws(&c);
			if (c.e - c.s >= 4 && !memcmp(c.s, "True", 4)) {
				fortran = 1;
				c.s += 4;
			} else if (c.e - c.s >= 5 && !memcmp(c.s, "False", 5))
				c.s += 5;
			else
				return bad("fortran_order is not True or "
					   "False");
			have_f = 1;
		} else if (!strcmp(key, "shape") && !have_s) {
			if (shape(&c, a) < 0)
				return bad("shape is not a tuple of up to 8 "
					   "integers");
			have_s = 1;
		} else {
			err_set("npy: unexpected or repeated key '%s' in the "
				"header", key);
			return -1;
		}
		if (eat(&c, ','))
			continue;
		if (eat(&c, '}'))
			break;
		return bad("the header's dict is malformed");
	}
	skip_ws(&c);
	if (c.s != c.e)
		return bad("text after the header's dict");
	if (!have_d || !have_f || !have_s)
		return bad("the header lacks descr, fortran_order or shape");
	if (fortran)
		return bad("Fortran-order arrays are not supported");
	if (!strcmp(descr, "<f4")) {
		a->dtype = NPY_F32;
		esize = 4;
	} else if (!strcmp(descr, "<f2")) {
		a->dtype = NPY_F16;
		esize = 2;
	} else if (strlen(descr) == 3 && strchr("<|>=", descr[0]) &&
		   strchr("iuSb", descr[1]) && descr[2] == '1') {
		a->dtype = NPY_BYTES;
		esize = 1;
	} else {
		err_set("npy: element type '%s' is not supported (float32 "
			"'<f4', float16 '<f2' and bytes are)", descr);
		return -1;
	}
	a->count = 1;
	for (i = 0; i < a->rank; i++) {
		if (a->shape[i] && a->count > UINT64_MAX / a->shape[i])
			return bad("the shape's product overflows");
		a->count *= a->shape[i];
	}
	off += hl;
	if (a->count > (total - off) / esize ||
	    a->count * esize != total - off) {
		err_set("npy: the shape holds %llu elements of %zu bytes but "
			"the data has %llu bytes", (unsigned long long)a->count,
			esize, (unsigned long long)(total - off));
		return -1;
	}
	a->nbytes = (size_t)(total - off);
	*data_off = off;
	return 0;
}

int npy_parse(struct npy *a, const void *data, size_t n)
{
	size_t off;
	int rc = npy_parse_header(a, data, n, n, &off);

	if (rc > 0)	/* (n bytes hold every header that fits them) */
		return bad("the header runs past the end of the data");
	if (rc < 0)
		return -1;
	a->data = (const uint8_t *)data + off;
	return 0;
}
