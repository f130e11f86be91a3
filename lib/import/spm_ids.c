/*
 * spm_ids.c: a SentencePiece model's special ids (spm_ids.h), from the
 * protobuf wire format: each field a varint key (number << 3 | wire
 * type), then a varint (type 0), 8 bytes (1), a varint length and that
 * many bytes (2) or 4 bytes (5); groups (3, 4) are not used by
 * sentencepiece_model.proto and are refused.
 */
#include <stdint.h>
#include <string.h>
#include "base/errmsg.h"
#include "spm_ids.h"

static int varint(const uint8_t **p, const uint8_t *e, uint64_t *v)
{
	int s;

	*v = 0;
	for (s = 0; s < 64 && *p < e; s += 7) {
		uint8_t b = *(*p)++;

		*v |= (uint64_t)(b & 0x7f) << s;
		if (!(b & 0x80))
			return 0;
	}
	return -1;
}

/* One field at *p: its number and wire type, and for type 2 its bytes;
 * *p moves past it. */
static int field(const uint8_t **p, const uint8_t *e, int *num, int *type,
		 const uint8_t **b, uint64_t *len)
{
	uint64_t key, v;

	if (varint(p, e, &key) < 0)
		return -1;
	*num = (int)(key >> 3);
	*type = (int)(key & 7);
	switch (*type) {
	case 0:		/* the value in *len */
		if (varint(p, e, &v) < 0)
			return -1;
		*b = NULL;
		*len = v;
		return 0;
	case 1:
	case 5:
		v = *type == 1 ? 8 : 4;
		break;
	case 2:
		if (varint(p, e, &v) < 0)
			return -1;
		break;
	default:
		return -1;
	}
	if (v > (uint64_t)(e - *p))
		return -1;
	*b = *p;
	*len = v;
	*p += v;
	return 0;
}

int spm_special_ids(const void *data, size_t n, int *size, int *eos, int *unk)
{
	const uint8_t *p = data, *e = p + n, *b;
	uint64_t len;
	int num, type, k = 0;

	*size = 0;
	*eos = *unk = -1;
	while (p < e) {
		const uint8_t *q, *qe;
		int is_eos = 0, t = 1;

		if (field(&p, e, &num, &type, &b, &len) < 0)
			goto bad;
		if (num != 1 || type != 2)
			continue;
		for (q = b, qe = b + len; q < qe;) {
			const uint8_t *s;
			uint64_t sl;
			int fn, ft;

			if (field(&q, qe, &fn, &ft, &s, &sl) < 0)
				goto bad;
			if (fn == 1 && ft == 2)
				is_eos = sl == 4 && !memcmp(s, "</s>", 4);
			else if (fn == 3 && ft == 0)
				t = (int)sl;
		}
		if (is_eos && *eos < 0)
			*eos = k;
		if (t == 2 && *unk < 0)
			*unk = k;
		k++;
	}
	*size = k;
	return 0;
bad:
	err_set("spm: not a SentencePiece model (malformed protobuf)");
	return -1;
}
