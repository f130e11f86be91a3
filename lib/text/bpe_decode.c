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

int bpe_text_line(struct bpe_text *t, size_t start)
{
	size_t k, len = t->n - start;
	char *s;

	if (len == 0)
		return 0;
	if (bpe_text_add(t, NULL, 3 * len) < 0)
		return -1;
	/* repair into the room after the text, then move it back */
	s = t->s + start;
	t->n = start + utf8_repair((unsigned char *)s + len,
				   (unsigned char *)s, len);
	memmove(s, s + len, t->n - start);
	for (k = start; k < t->n; k++)
		if (t->s[k] == '\n' || t->s[k] == '\r')
			t->s[k] = ' ';
	return 0;
}

int bpe_decode_line(const struct bpe *v, const int32_t *ids, size_t n,
		    struct bpe_text *out)
{
	out->n = 0;
	if (bpe_decode(v, ids, n, out) < 0)
		return -1;
	return bpe_text_line(out, 0);
}
