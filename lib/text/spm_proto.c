/*
 * spm_proto.c: just enough of the protobuf wire format to read a
 * SentencePiece model: tags, varints, length-delimited fields and 32-bit
 * values, each checked against the end of its message so that a
 * truncated or forged file is refused, never read past.
 */
#include "spm_impl.h"
#include "base/errmsg.h"

static size_t at(const struct pb *r)
{
	return (size_t)(r->p - r->base);
}

int pb_varint(struct pb *r, uint64_t *v)
{
	size_t start = at(r);
	uint64_t x = 0;
	int shift;

	for (shift = 0; shift < 70; shift += 7) {
		if (r->p == r->end) {
			err_set("truncated varint at byte %zu", start);
			return -1;
		}
		x |= (uint64_t)(*r->p & 0x7f) << (shift < 64 ? shift : 0);
		if (!(*r->p++ & 0x80)) {
			*v = x;
			return 0;
		}
	}
	err_set("varint longer than 10 bytes at byte %zu", start);
	return -1;
}

int pb_tag(struct pb *r, uint32_t *field, int *wire)
{
	size_t start = at(r);
	uint64_t t;

	if (r->p == r->end)
		return 0;
	r->tag = r->p;
	if (pb_varint(r, &t) < 0)
		return -1;
	*field = (uint32_t)(t >> 3);
	*wire = (int)(t & 7);
	if (t >> 3 == 0 || t >> 3 > 0x1fffffff) {
		err_set("field number %llu at byte %zu",
			(unsigned long long)(t >> 3), start);
		return -1;
	}
	if (*wire != PB_VARINT && *wire != PB_I64 && *wire != PB_LEN &&
	    *wire != PB_I32) {
		err_set("field %u at byte %zu: wire type %d (not 0, 1, 2 or "
			"5)", *field, start, *wire);
		return -1;
	}
	return 1;
}

int pb_bytes(struct pb *r, const uint8_t **s, size_t *n)
{
	size_t start = at(r);
	uint64_t len;

	if (pb_varint(r, &len) < 0)
		return -1;
	if (len > (uint64_t)(r->end - r->p)) {
		err_set("field of %llu bytes at byte %zu runs past the end of "
			"its message (%zu bytes left)", (unsigned long long)len,
			start, (size_t)(r->end - r->p));
		return -1;
	}
	*s = r->p;
	*n = (size_t)len;
	r->p += len;
	return 0;
}

int pb_fixed32(struct pb *r, uint32_t *v)
{
	if (r->end - r->p < 4) {
		err_set("truncated 32-bit value at byte %zu", at(r));
		return -1;
	}
	*v = (uint32_t)r->p[0] | (uint32_t)r->p[1] << 8 |
	     (uint32_t)r->p[2] << 16 | (uint32_t)r->p[3] << 24;
	r->p += 4;
	return 0;
}

int pb_skip(struct pb *r, int wire)
{
	const uint8_t *s;
	uint64_t v;
	size_t n;

	switch (wire) {
	case PB_VARINT:
		return pb_varint(r, &v);
	case PB_LEN:
		return pb_bytes(r, &s, &n);
	case PB_I32:
		if (r->end - r->p < 4)
			break;
		r->p += 4;
		return 0;
	case PB_I64:
		if (r->end - r->p < 8)
			break;
		r->p += 8;
		return 0;
	}
	err_set("truncated %d-bit value at byte %zu", wire == PB_I32 ? 32 : 64,
		at(r));
	return -1;
}

int pb_want(const struct pb *r, uint32_t field, int wire, int want,
	    const char *what)
{
	if (wire == want)
		return 0;
	err_set("field %u of %s at byte %zu: wire type %d, not %d", field,
		what, r->tag ? (size_t)(r->tag - r->base) : at(r), wire, want);
	return -1;
}
