/*
 * bpe_vocab.c: the vocabulary of the subword tokenizer: its units and
 * merges, and the text format of bpe.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bpe_impl.h"
#include "base/errmsg.h"

#define MARKER "\xe2\x96\x81"           /* U+2581, a space in the text format */
#define MAX_UNITS (1 << 24)
#define HEADER "attn-bpe "      /* then the version, a space, the units */
#define HEADER_LEN 9

static const char *const special_name[] = { "<pad>", "<s>", "</s>", "<unk>" };
static const char *const kind_name[] = { "special", "byte", "char", "merge" };

int bpe_ids_push(struct bpe_ids *b, int32_t id)
{
	size_t cap;
	int32_t *v;

	if (b->n == b->cap) {
		cap = b->cap ? 2 * b->cap : 64;
		v = realloc(b->v, cap * sizeof(*v));
		if (!v) {
			err_set("out of memory");
			return -1;
		}
		b->v = v;
		b->cap = cap;
	}
	b->v[b->n++] = id;
	return 0;
}

int bpe_text_add(struct bpe_text *b, const void *s, size_t len)
{
	size_t cap;
	char *p;

	if (len > b->cap - b->n) {
		cap = b->cap ? b->cap : 256;
		while (len > cap - b->n)
			cap *= 2;
		p = realloc(b->s, cap);
		if (!p) {
			err_set("out of memory");
			return -1;
		}
		b->s = p;
		b->cap = cap;
	}
	if (len && s)
		memcpy(b->s + b->n, s, len);
	b->n += len;
	return 0;
}

void bpe_ids_free(struct bpe_ids *b)
{
	free(b->v);
	memset(b, 0, sizeof(*b));
}

void bpe_text_free(struct bpe_text *b)
{
	free(b->s);
	memset(b, 0, sizeof(*b));
}

static int32_t push_unit(struct bpe *v, int kind, const char *s, size_t len,
			 int32_t left, int32_t right)
{
	struct bpe_unit *u;
	int cap;

	if (v->n == MAX_UNITS) {
		err_set("more than %d units", MAX_UNITS);
		return -1;
	}
	if (v->n == v->cap) {
		cap = v->cap ? 2 * v->cap : 512;
		u = realloc(v->unit, cap * sizeof(*u));
		if (!u) {
			err_set("out of memory");
			return -1;
		}
		v->unit = u;
		v->cap = cap;
	}
	u = &v->unit[v->n];
	u->off = v->bytes.n;
	u->len = len;
	u->left = left;
	u->right = right;
	u->kind = kind;
	if (bpe_text_add(&v->bytes, s, len) < 0)
		return -1;
	return v->n++;
}

struct bpe *bpe_new(void)
{
	struct bpe *v = calloc(1, sizeof(*v));
	unsigned char b;
	int i;

	if (!v) {
		err_set("out of memory");
		return NULL;
	}
	for (i = 0; i < 128; i++)
		v->ascii[i] = -1;
	for (i = 0; i < BPE_BYTE0; i++)
		if (push_unit(v, BPE_KIND_SPECIAL, special_name[i],
			      strlen(special_name[i]), -1, -1) < 0)
			goto fail;
	for (i = 0; i < 256; i++) {
		b = i;
		if (push_unit(v, BPE_KIND_BYTE, (char *)&b, 1, -1, -1) < 0)
			goto fail;
	}
	return v;
fail:
	bpe_free(v);
	return NULL;
}

int32_t bpe_add_unit(struct bpe *v, int kind, const char *s, size_t len,
		     int32_t left, int32_t right)
{
	int64_t *slot, *m;
	uint64_t key;
	int added;
	int32_t id;

	slot = strmap_put(&v->by_bytes, s, len, &added);
	if (!slot)
		return -1;
	if (!added) {
		err_set("unit '%.*s' twice", (int)len, s);
		return -1;
	}
	id = push_unit(v, kind, s, len, left, right);
	if (id < 0)
		return -1;
	*slot = id;
	if (kind == BPE_KIND_CHAR && len == 1)
		v->ascii[(unsigned char)s[0]] = id;
	if (kind == BPE_KIND_MERGE) {
		key = bpe_pair_key(left, right);
		if (!(m = strmap_put(&v->merge, &key, sizeof(key), NULL)))
			return -1;
		*m = id;
		v->nmerges++;
	}
	return id;
}

void bpe_free(struct bpe *v)
{
	if (!v)
		return;
	free(v->unit);
	bpe_text_free(&v->bytes);
	bpe_text_free(&v->line);
	strmap_free(&v->by_bytes);
	strmap_free(&v->merge);
	strmap_free(&v->cache);
	bpe_ids_free(&v->cache_ids);
	bpe_ids_free(&v->sym);
	bpe_ids_free(&v->prev);
	bpe_ids_free(&v->next);
	bpe_heap_free(&v->heap);
	free(v);
}

int bpe_size(const struct bpe *v)
{
	return v->n;
}

int bpe_merges(const struct bpe *v)
{
	return v->nmerges;
}

int bpe_unit_show(const struct bpe *v, int32_t id, struct bpe_text *out)
{
	const struct bpe_unit *u = &v->unit[id];
	const char *s = bpe_unit_bytes(v, id), *sp;
	char hex[8];
	size_t n = u->len;

	if (u->kind == BPE_KIND_BYTE) {
		snprintf(hex, sizeof(hex), "<0x%02X>", (unsigned char)s[0]);
		return bpe_text_add(out, hex, 6);
	}
	if (u->kind == BPE_KIND_SPECIAL)
		return bpe_text_add(out, s, n);
	while ((sp = memchr(s, ' ', n))) {
		if (bpe_text_add(out, s, sp - s) < 0 ||
		    bpe_text_add(out, MARKER, 3) < 0)
			return -1;
		n -= sp + 1 - s;
		s = sp + 1;
	}
	return bpe_text_add(out, s, n);
}

/* The bytes of a unit as bpe_unit_show writes it, into out (cleared). */
static int unshow(const char *s, size_t n, struct bpe_text *out)
{
	const char *m;

	out->n = 0;
	while ((m = memmem(s, n, MARKER, 3))) {
		if (bpe_text_add(out, s, m - s) < 0 ||
		    bpe_text_add(out, " ", 1) < 0)
			return -1;
		n -= m + 3 - s;
		s = m + 3;
	}
	return bpe_text_add(out, s, n);
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* The byte of "<0xHH>", or -1. */
static int parse_byte(const char *s, size_t n)
{
	int hi, lo;

	if (n != 6 || memcmp(s, "<0x", 3) != 0 || s[5] != '>')
		return -1;
	hi = hex_digit(s[3]);
	lo = hex_digit(s[4]);
	return hi < 0 || lo < 0 ? -1 : hi << 4 | lo;
}

/* The char or merge unit shown as s, or -1; tmp is scratch. */
static int32_t find_shown(const struct bpe *v, const char *s, size_t n,
			  struct bpe_text *tmp)
{
	int64_t *id;

	if (unshow(s, n, tmp) < 0)
		return -1;
	id = strmap_find(&v->by_bytes, tmp->s, tmp->n);
	return id ? (int32_t)*id : -1;
}

int32_t bpe_unit_find(const struct bpe *v, const char *s, size_t n)
{
	struct bpe_text tmp = { 0 };
	int32_t id;
	int i;

	for (i = 0; i < BPE_BYTE0; i++)
		if (strlen(special_name[i]) == n &&
		    memcmp(special_name[i], s, n) == 0)
			return i;
	if ((i = parse_byte(s, n)) >= 0)
		return BPE_BYTE0 + i;
	id = find_shown(v, s, n, &tmp);
	bpe_text_free(&tmp);
	return id;
}

int bpe_save(const struct bpe *v, struct bpe_text *out)
{
	const struct bpe_unit *u;
	char num[32];
	int32_t id;

	snprintf(num, sizeof(num), HEADER "%d %d\n", v->prefix ? 2 : 1,
		 v->n);
	if (bpe_text_add(out, num, strlen(num)) < 0)
		return -1;
	for (id = 0; id < v->n; id++) {
		u = &v->unit[id];
		snprintf(num, sizeof(num), "%d\t", id);
		if (bpe_text_add(out, num, strlen(num)) < 0 ||
		    bpe_unit_show(v, id, out) < 0 ||
		    bpe_text_add(out, "\t", 1) < 0 ||
		    bpe_text_add(out, kind_name[u->kind],
				 strlen(kind_name[u->kind])) < 0)
			return -1;
		if (u->kind == BPE_KIND_MERGE &&
		    (bpe_text_add(out, "\t", 1) < 0 ||
		     bpe_unit_show(v, u->left, out) < 0 ||
		     bpe_text_add(out, " ", 1) < 0 ||
		     bpe_unit_show(v, u->right, out) < 0))
			return -1;
		if (bpe_text_add(out, "\n", 1) < 0)
			return -1;
	}
	return 0;
}

/* ---- loading ------------------------------------------------------------ */

struct fields {
	const char *f[5];
	size_t len[5];
	int n;
};

/* Splits a line at tabs; more than 4 fields make n 5. */
static void split_tabs(const char *s, size_t n, struct fields *fl)
{
	const char *t;

	fl->n = 0;
	for (;;) {
		t = memchr(s, '\t', n);
		fl->f[fl->n] = s;
		fl->len[fl->n] = t ? (size_t)(t - s) : n;
		if (++fl->n == 5 || !t)
			return;
		n -= t + 1 - s;
		s = t + 1;
	}
}

static int field_is(const struct fields *fl, int i, const char *s)
{
	return fl->len[i] == strlen(s) && memcmp(fl->f[i], s, fl->len[i]) == 0;
}

/* A merge's parts, "LEFT RIGHT", into *left and *right. */
static int parse_parts(const struct bpe *v, const char *s, size_t n,
		       struct bpe_text *tmp, int32_t *left, int32_t *right)
{
	const char *sp = memchr(s, ' ', n);

	if (!sp || memchr(sp + 1, ' ', n - (sp + 1 - s))) {
		err_set("merge parts must be two units separated by a space");
		return -1;
	}
	*left = find_shown(v, s, sp - s, tmp);
	*right = find_shown(v, sp + 1, n - (sp + 1 - s), tmp);
	if (*left < 0 || *right < 0) {
		err_set("merge of a unit not defined above");
		return -1;
	}
	return 0;
}

/* Checks one unit line (fields split) and adds its unit as id. */
static int load_unit(struct bpe *v, int32_t id, const struct fields *fl,
		     struct bpe_text *tmp, struct bpe_text *parts)
{
	int32_t left, right;
	struct bpe_char c;
	char want[16];
	int len;

	len = snprintf(want, sizeof(want), "%d", id);
	if (fl->len[0] != (size_t)len || memcmp(fl->f[0], want, len) != 0) {
		err_set("expected id %d", id);
		return -1;
	}
	if (id < BPE_FIRST_UNIT) {
		if (id < BPE_BYTE0 ? !field_is(fl, 2, "special") ||
				     !field_is(fl, 1, special_name[id])
				   : !field_is(fl, 2, "byte") ||
				     parse_byte(fl->f[1], fl->len[1]) !=
					     id - BPE_BYTE0 || fl->n != 3) {
			err_set("expected the %s unit of id %d",
				id < BPE_BYTE0 ? "special" : "byte", id);
			return -1;
		}
		return 0;
	}
	if (unshow(fl->f[1], fl->len[1], tmp) < 0)
		return -1;
	if (field_is(fl, 2, "char") && fl->n == 3) {
		c = tmp->n ? bpe_char_at(tmp->s, tmp->n) : (struct bpe_char){ 0 };
		if (tmp->n == 0 || (size_t)c.len != tmp->n || !c.unit) {
			err_set("'%.*s' cannot be a character unit",
				(int)fl->len[1], fl->f[1]);
			return -1;
		}
		return bpe_add_unit(v, BPE_KIND_CHAR, tmp->s, tmp->n, -1, -1) < 0
			       ? -1 : 0;
	}
	if (!field_is(fl, 2, "merge") || fl->n != 4) {
		err_set("expected 'char', or 'merge' and its parts");
		return -1;
	}
	if (parse_parts(v, fl->f[3], fl->len[3], parts, &left, &right) < 0)
		return -1;
	if (v->unit[left].len + v->unit[right].len != tmp->n ||
	    memcmp(bpe_unit_bytes(v, left), tmp->s, v->unit[left].len) != 0 ||
	    memcmp(bpe_unit_bytes(v, right), tmp->s + v->unit[left].len,
		   v->unit[right].len) != 0) {
		err_set("the unit is not its parts joined");
		return -1;
	}
	return bpe_add_unit(v, BPE_KIND_MERGE, tmp->s, tmp->n, left, right) < 0
		       ? -1 : 0;
}

/* The next line of [*s, end) without its newline; NULL at the end. */
static const char *next_line(const char **s, const char *end, size_t *len)
{
	const char *line = *s, *nl;

	if (line >= end)
		return NULL;
	nl = memchr(line, '\n', end - line);
	*len = (nl ? nl : end) - line;
	*s = nl ? nl + 1 : end;
	return line;
}

struct bpe *bpe_load(const char *text, size_t len)
{
	const char *s = text, *end = text + len, *line;
	struct bpe_text tmp = { 0 }, parts = { 0 };
	struct bpe *v;
	struct fields fl;
	size_t n;
	long count = 0;
	int32_t id;
	char head[40], *num_end;

	if (!(v = bpe_new()))
		return NULL;
	line = next_line(&s, end, &n);
	/* "attn-bpe V N": V 1 (no prefix) or 2 */
	if (line && n > HEADER_LEN + 2 && n < sizeof(head) &&
	    memcmp(line, HEADER, HEADER_LEN) == 0 &&
	    (line[HEADER_LEN] == '1' || line[HEADER_LEN] == '2') &&
	    line[HEADER_LEN + 1] == ' ') {
		v->prefix = line[HEADER_LEN] == '2';
		memcpy(head, line + HEADER_LEN + 2, n - HEADER_LEN - 2);
		head[n - HEADER_LEN - 2] = '\0';
		count = strtol(head, &num_end, 10);
		if (*num_end || head[0] < '0' || head[0] > '9')
			count = 0;
	}
	if (count < BPE_FIRST_UNIT || count > MAX_UNITS) {
		err_set("vocabulary line 1: expected 'attn-bpe V N' with V 1 "
			"or 2 and N from %d to %d", BPE_FIRST_UNIT, MAX_UNITS);
		goto fail;
	}
	for (id = 0; id < count; id++) {
		if (!(line = next_line(&s, end, &n))) {
			err_set("vocabulary ends after %d of %ld units", id,
				count);
			goto fail;
		}
		split_tabs(line, n, &fl);
		if (fl.n < 3 || load_unit(v, id, &fl, &tmp, &parts) < 0) {
			if (fl.n < 3)
				err_set("expected id, unit and kind");
			err_prefix("vocabulary line %d", id + 2);
			goto fail;
		}
	}
	while ((line = next_line(&s, end, &n)))
		if (n) {
			err_set("vocabulary line %ld: more lines than its %ld "
				"units", (long)(id + 2), count);
			goto fail;
		}
	bpe_text_free(&tmp);
	bpe_text_free(&parts);
	return v;
fail:
	bpe_text_free(&tmp);
	bpe_text_free(&parts);
	bpe_free(v);
	return NULL;
}
