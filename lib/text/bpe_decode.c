/* bpe_decode.c: ids back to text, the way decode and beam print. */
#include <string.h>
#include "bpe_impl.h"
#include "base/errmsg.h"
#include "base/utf8.h"

#define REPLACEMENT "\xef\xbf\xbd"      /* U+FFFD, for <unk> */

int bpe_decode_units(const struct bpe *v, const int32_t *ids, size_t n,
		     struct bpe_text *out)
{
	size_t i;
	int32_t id;

	for (i = 0; i < n; i++) {
		id = ids[i];
		if (id < 0 || id >= v->n) {
			err_set("id %d at position %zu is outside the vocabulary "
				"of %d units", id, i, v->n);
			return -1;
		}
		if (id == BPE_EOS)
			break;
		if (id == BPE_PAD || id == BPE_BOS)
			continue;
		if (id == BPE_UNK ? bpe_text_add(out, REPLACEMENT, 3) < 0
				  : bpe_text_add(out, bpe_unit_bytes(v, id),
						 v->unit[id].len) < 0)
			return -1;
	}
	return 0;
}

int bpe_decode(const struct bpe *v, const int32_t *ids, size_t n,
	       struct bpe_text *out)
{
	size_t start = out->n;

	if (bpe_decode_units(v, ids, n, out) < 0)
		return -1;
	if (v->prefix && out->n > start && out->s[start] == ' ') {
		memmove(out->s + start, out->s + start + 1,
			out->n - start - 1);
		out->n--;
	}
	return 0;
}

int bpe_decode_line(const struct bpe *v, const int32_t *ids, size_t n,
		    struct bpe_text *out)
{
	size_t k, len;

	out->n = 0;
	if (bpe_decode(v, ids, n, out) < 0)
		return -1;
	len = out->n;
	if (len == 0)
		return 0;
	if (bpe_text_add(out, NULL, 3 * len) < 0)
		return -1;
	/* repair into the room after the text, then move it back */
	out->n = utf8_repair((unsigned char *)out->s + len,
			     (unsigned char *)out->s, len);
	memmove(out->s, out->s + len, out->n);
	for (k = 0; k < out->n; k++)
		if (out->s[k] == '\n' || out->s[k] == '\r')
			out->s[k] = ' ';
	return 0;
}
