/* wordvocab.c: the words of a bitext's side; see wordvocab.h. */
#include <stdlib.h>
#include <string.h>
#include "wordvocab.h"
#include "base/errmsg.h"
#include "base/unicode_cat.h"
#include "base/utf8.h"

/* FNV-1a, 64 bits. */
static uint64_t hash(const char *w, size_t len)
{
	uint64_t h = 1469598103934665603ULL;

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)w[i]) * 1099511628211ULL;
	return h;
}

static int grow_table(struct wa_vocab *v)
{
	size_t n = v->nslot ? 2 * v->nslot : 1024;
	int32_t *s = calloc(n, sizeof *s);

	if (!s) {
		err_set("word vocabulary: out of memory");
		return -1;
	}
	for (int32_t id = 1; id <= v->n; id++) {
		const char *w = v->buf + v->off[id - 1];
		size_t k = hash(w, v->off[id] - v->off[id - 1] - 1) & (n - 1);

		while (s[k])
			k = (k + 1) & (n - 1);
		s[k] = id;
	}
	free(v->slot);
	v->slot = s;
	v->nslot = n;
	return 0;
}

int32_t wa_vocab_id(struct wa_vocab *v, const char *w, size_t len, int add)
{
	size_t k;

	if (!v->nslot && grow_table(v) < 0)
		return -1;
	for (k = hash(w, len) & (v->nslot - 1); v->slot[k];
	     k = (k + 1) & (v->nslot - 1)) {
		int32_t id = v->slot[k];
		size_t o = v->off[id - 1];

		if (v->off[id] - o - 1 == len && memcmp(v->buf + o, w, len) == 0)
			return id;
	}
	if (!add)
		return 0;
	if (v->n == INT32_MAX - 1) {
		err_set("word vocabulary: more than %d words", INT32_MAX - 1);
		return -1;
	}
	if (v->len + len + 1 > v->cap) {
		size_t cap = 2 * (v->len + len + 1) + 4096;
		char *b = realloc(v->buf, cap);

		if (!b)
			goto oom;
		v->buf = b;
		v->cap = cap;
	}
	if (v->n + 2 > v->off_cap) {
		int cap = 2 * v->off_cap + 1024;
		size_t *o = realloc(v->off, cap * sizeof *o);

		if (!o)
			goto oom;
		v->off = o;
		v->off_cap = cap;
		if (v->n == 0)
			v->off[0] = 0;
	}
	memcpy(v->buf + v->len, w, len);
	v->buf[v->len + len] = 0;
	v->len += len + 1;
	v->off[++v->n] = v->len;
	v->slot[k] = v->n;
	if (2 * (size_t)v->n > v->nslot && grow_table(v) < 0)
		return -1;
	return v->n;
oom:
	err_set("word vocabulary: out of memory");
	return -1;
}

const char *wa_vocab_word(const struct wa_vocab *v, int32_t id)
{
	return v->buf + v->off[id - 1];
}

void wa_vocab_free(struct wa_vocab *v)
{
	free(v->buf);
	free(v->off);
	free(v->slot);
	memset(v, 0, sizeof *v);
}

size_t wa_vocab_key(const char *w, size_t len, int fold, char *out)
{
	const unsigned char *s = (const unsigned char *)w;
	size_t i = 0, k, n = 0, lo = 0, hi = len;
	uint32_t c;

	if (!fold) {
		memcpy(out, w, len);
		return len;
	}
	/* the punctuation at the start, then at the end */
	while (lo < len && (k = utf8_decode(s + lo, len - lo, &c)) &&
	       (ucat_flags(c) & UCAT_P))
		lo += k;
	if (lo == len)
		lo = 0;		/* punctuation alone: kept whole */
	else
		for (i = lo; i < len; i += k ? k : 1)
			if ((k = utf8_decode(s + i, len - i, &c)) == 0 ||
			    !(ucat_flags(c) & UCAT_P))
				hi = i + (k ? k : 1);
	for (i = lo; i < hi; i += k) {
		k = utf8_decode(s + i, hi - i, &c);
		if (k == 0) {
			out[n++] = w[i];
			k = 1;
		} else {
			n += (size_t)utf8_encode(out + n, ucat_lower(c));
		}
	}
	return n;
}

static int is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

int wa_vocab_words(struct wa_vocab *v, const char *line, size_t len,
		   int fold, int add, int32_t **ids, size_t *n, size_t *cap)
{
	char small[512], *key = small;
	size_t i = 0, start, keycap = sizeof small;
	int words = 0, rc = 0;

	while (i < len) {
		while (i < len && is_space(line[i]))
			i++;
		if (i == len)
			break;
		start = i;
		while (i < len && !is_space(line[i]))
			i++;
		if (2 * (i - start) + 8 > keycap) {
			if (key != small)
				free(key);
			keycap = 2 * (i - start) + 8;
			if (!(key = malloc(keycap)))
				goto oom;
		}
		size_t kl = wa_vocab_key(line + start, i - start, fold, key);
		int32_t id = wa_vocab_id(v, key, kl, add);

		if (id < 0) {
			rc = -1;
			break;
		}
		if (*n == *cap) {
			size_t c = 2 * *cap + 256;
			int32_t *p = realloc(*ids, c * sizeof *p);

			if (!p)
				goto oom;
			*ids = p;
			*cap = c;
		}
		(*ids)[(*n)++] = id ? id : -1;
		words++;
	}
	if (key != small)
		free(key);
	return rc < 0 ? -1 : words;
oom:
	if (key != small)
		free(key);
	err_set("word vocabulary: out of memory");
	return -1;
}
