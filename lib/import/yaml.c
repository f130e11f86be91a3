/*
 * yaml.c: Marian's YAML subset (yaml.h), a line at a time.  A line's
 * indentation says whose it is: at column 0 a "key: value" (or, under a
 * key without a value, a "- item"), further in an item or the value of
 * the key above it.  Each line loses its comment (a # at its start or
 * after a blank, outside quotes) and its trailing blanks first.  Each
 * key goes into a hash table as it is read (struct yaml's index), which
 * finds a repeated one and serves yaml_get: a vocab.yml of 100,000
 * pieces parses in time linear in its size.
 */
#include <ctype.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "base/errmsg.h"
#include "base/utf8.h"
#include "yaml.h"

struct parser {
	struct yaml *y;
	const char *label;
	int line;
	/* the last key's entry while it may still take items or a value
	 * on the next line: 1 open (no value yet), 2 taking items */
	int open;
};

static int ATTN_PRINTF(2, 3) fail(struct parser *ps, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	err_set("%s:%d: %s", ps->label, ps->line, msg);
	return -1;
}

void yaml_free(struct yaml *y)
{
	int i, k;

	for (i = 0; i < y->n; i++) {
		free(y->e[i].key);
		for (k = 0; k < y->e[i].n; k++)
			free(y->e[i].v[k]);
		free(y->e[i].v);
	}
	free(y->e);
	strmap_free(&y->index);
	memset(y, 0, sizeof(*y));
}

const struct yaml_entry *yaml_get(const struct yaml *y, const char *key)
{
	const int64_t *i = strmap_find(&y->index, key, strlen(key));

	return i ? &y->e[*i] : NULL;
}

const char *yaml_str(const struct yaml *y, const char *key)
{
	const struct yaml_entry *e = yaml_get(y, key);

	return e && !e->list ? e->v[0] : NULL;
}

int yaml_bool(const struct yaml *y, const char *key, int def, int *out)
{
	static const char *const yes[] = { "true", "yes", "on", "1" };
	static const char *const no[] = { "false", "no", "off", "0" };
	const struct yaml_entry *e = yaml_get(y, key);
	int i;

	*out = def;
	if (!e)
		return 0;
	for (i = 0; !e->list && i < 4; i++) {
		if (!strcasecmp(e->v[0], yes[i])) {
			*out = 1;
			return 0;
		}
		if (!strcasecmp(e->v[0], no[i])) {
			*out = 0;
			return 0;
		}
	}
	err_set("%s (line %d) is not true or false", key, e->line);
	return -1;
}

/* Appends the n bytes at s, as a new string, to entry e's items.  e->v
 * grows geometrically: its capacity is e->n rounded up to a power of two
 * (a list of a million items takes 20 reallocations, not a million). */
static int add_item(struct parser *ps, struct yaml_entry *e, const char *s,
		    size_t n)
{
	char **v, *t;

	if (e->n == INT_MAX)
		return fail(ps, "a list of more than INT_MAX items");
	if (!(t = malloc(n + 1)))
		return fail(ps, "out of memory");
	if (!(e->n & (e->n - 1))) {	/* 0, 1, 2, 4 ...: full */
		size_t cap = e->n ? 2 * (size_t)e->n : 1;

		if (!(v = realloc(e->v, sizeof(*v) * cap))) {
			free(t);
			return fail(ps, "out of memory");
		}
		e->v = v;
	}
	memcpy(t, s, n);
	t[n] = 0;
	e->v[e->n++] = t;
	return 0;
}

/*
 * The character of a \x, \u or \U escape: the nd hex digits at s (up
 * to e) as UTF-8 into out; its length, or -1 when they are not nd hex
 * digits of a character other than NUL (a string cannot hold it) or a
 * surrogate.
 */
static int hex_escape(const char *s, const char *e, int nd, char *out)
{
	uint32_t c = 0;
	int i;

	if (e - s < nd)
		return -1;
	for (i = 0; i < nd; i++) {
		int d = s[i] >= '0' && s[i] <= '9' ? s[i] - '0' :
			s[i] >= 'a' && s[i] <= 'f' ? s[i] - 'a' + 10 :
			s[i] >= 'A' && s[i] <= 'F' ? s[i] - 'A' + 10 : -1;

		if (d < 0)
			return -1;
		c = c << 4 | (uint32_t)d;
	}
	if (!c || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return -1;
	return utf8_encode(out, c);
}

/*
 * A double-quoted scalar's escape at *sp (just past the backslash, before
 * e) into out: YAML 1.2's escapes (its section 5.7), which yaml-cpp
 * writes for pieces such as "\"" and "\\" and for control characters.
 * Its length in bytes (at most 4, and never more than 1.5 times the
 * escape's own), *sp past it; -1 on an unknown one or \0.
 */
static int escape(struct parser *ps, const char **sp, const char *e,
		  char *out)
{
	static const char simple[] = "abtnvfre \"/\\\t";
	static const char value[] = "\a\b\t\n\v\f\r\033 \"/\\\t";
	const char *s = *sp, *k;
	int n, nd;

	if (s >= e)
		return fail(ps, "a \\ at the end of the line (a string "
			    "over several lines is not supported)");
	*sp = s + 1;
	if ((k = memchr(simple, *s, sizeof simple - 1))) {
		out[0] = value[k - simple];
		return 1;
	}
	switch (*s) {
	case 'N': return utf8_encode(out, 0x85);	/* next line */
	case '_': return utf8_encode(out, 0xa0);	/* no-break space */
	case 'L': return utf8_encode(out, 0x2028);	/* line separator */
	case 'P': return utf8_encode(out, 0x2029);	/* paragraph separator */
	case 'x': nd = 2; break;
	case 'u': nd = 4; break;
	case 'U': nd = 8; break;
	case '0':
		return fail(ps, "\\0 (a NUL) in a string is not supported");
	default:
		return fail(ps, "escape \\%c is not YAML's", *s);
	}
	if ((n = hex_escape(s + 1, e, nd, out)) < 0)
		return fail(ps, "\\%c needs %d hex digits of a character "
			    "(not NUL, not a surrogate)", *s, nd);
	*sp = s + 1 + nd;
	return n;
}

/*
 * One scalar at *s (up to e) into buf (its text unquoted, NUL-terminated,
 * at most 1.5 times as long as the input: an escape such as \L gives
 * three bytes for two); *s moves past it.  In a flow list (flow 1) a
 * plain scalar ends at ',' or ']'.
 */
static int scalar(struct parser *ps, const char **sp, const char *e, int flow,
		  char *buf, size_t *len)
{
	const char *s = *sp;
	size_t k = 0;

	if (s < e && *s == '"') {
		for (s++; s < e && *s != '"';) {
			int n;

			if (*s != '\\') {
				buf[k++] = *s++;
				continue;
			}
			s++;
			if ((n = escape(ps, &s, e, buf + k)) < 0)
				return -1;
			k += (size_t)n;
		}
		if (s >= e)
			return fail(ps, "unterminated \"string\"");
		s++;
	} else if (s < e && *s == '\'') {
		for (s++; s < e; s++) {
			if (*s == '\'') {
				if (s + 1 < e && s[1] == '\'')
					s++;
				else
					break;
			}
			buf[k++] = *s;
		}
		if (s >= e)
			return fail(ps, "unterminated 'string'");
		s++;
	} else {
		const char *b = s;

		if (s < e && strchr("[]{}&*!|>%@`", *s))
			return fail(ps, "'%c' here (a nested collection, "
				    "anchor, alias, tag or block scalar) is "
				    "not supported", *s);
		while (s < e && !(flow && (*s == ',' || *s == ']'))) {
			if (*s == ':' && (s + 1 == e || s[1] == ' '))
				return fail(ps, "a nested mapping is not "
					    "supported");
			s++;
		}
		while (s > b && (s[-1] == ' ' || s[-1] == '\t'))
			s--;
		memcpy(buf, b, (size_t)(s - b));
		k = (size_t)(s - b);
		while (s < e && (*s == ' ' || *s == '\t'))
			s++;
	}
	*sp = s;
	buf[k] = 0;
	*len = k;
	return 0;
}

static void skip_blanks(const char **s, const char *e)
{
	while (*s < e && (**s == ' ' || **s == '\t'))
		(*s)++;
}

/* A value (the rest of a line, s .. e, not empty) into entry en. */
static int value(struct parser *ps, struct yaml_entry *en, const char *s,
		 const char *e, char *buf)
{
	size_t len;

	if (*s == '[') {
		en->list = 1;
		s++;
		skip_blanks(&s, e);
		if (s < e && *s == ']')
			s++;
		else
			for (;;) {
				skip_blanks(&s, e);
				if (s < e && (*s == '[' || *s == '{'))
					return fail(ps, "nested collections "
						    "are not supported");
				if (scalar(ps, &s, e, 1, buf, &len) < 0 ||
				    add_item(ps, en, buf, len) < 0)
					return -1;
				skip_blanks(&s, e);
				if (s < e && *s == ',') {
					s++;
					continue;
				}
				if (s < e && *s == ']') {
					s++;
					break;
				}
				return fail(ps, "a [list] must end on its "
					    "line with ]");
			}
	} else {
		en->list = 0;
		if (scalar(ps, &s, e, 0, buf, &len) < 0 ||
		    add_item(ps, en, buf, len) < 0)
			return -1;
	}
	skip_blanks(&s, e);
	if (s != e)
		return fail(ps, "text after the value");
	return 0;
}

/* The end of line s .. e without its comment and trailing blanks. */
static const char *strip(const char *s, const char *e)
{
	const char *p, *b = s;
	char q = 0;

	for (p = s; p < e; p++) {
		if (q == '"' && *p == '\\' && p + 1 < e)
			p++;
		else if (q == '\'' && *p == '\'' && p + 1 < e && p[1] == '\'')
			p++;
		else if (q && *p == q)
			q = 0;
		else if (!q && (*p == '"' || *p == '\'') &&
			 (p == b || strchr(" [,:-", p[-1])))
			q = *p;
		else if (!q && *p == '#' &&
			 (p == b || p[-1] == ' ' || p[-1] == '\t'))
			break;
	}
	while (p > s && (p[-1] == ' ' || p[-1] == '\t' || p[-1] == '\r'))
		p--;
	return p;
}

/* A "key: value" line at column 0. */
static int key_line(struct parser *ps, const char *s, const char *e,
		    char *buf)
{
	struct yaml *y = ps->y;
	struct yaml_entry *en;
	const char *k = s;
	size_t len;
	int64_t *slot;
	int i, added;

	if (*s == '"' || *s == '\'') {
		if (scalar(ps, &s, e, 0, buf, &len) < 0)
			return -1;
		skip_blanks(&s, e);
		if (s >= e || *s != ':')
			return fail(ps, "a quoted key without ':'");
		s++;
	} else {
		while (s < e && !(*s == ':' && (s + 1 == e || s[1] == ' ')))
			s++;
		if (s >= e)
			return fail(ps, "not a \"key: value\" line");
		len = (size_t)(s - k);
		while (len && (k[len - 1] == ' ' || k[len - 1] == '\t'))
			len--;
		/* YAML's indicators cannot begin a plain scalar, except
		 * - ? : before a non-blank */
		if (!len || strchr("[]{}&*!|>%@`,#", *k) ||
		    (strchr("-?:", *k) && (len == 1 || k[1] == ' ')))
			return fail(ps, "not a plain key");
		memcpy(buf, k, len);
		buf[len] = 0;
		s++;
	}
	if (!(slot = strmap_put(&y->index, buf, strlen(buf), &added)))
		return fail(ps, "out of memory");
	if (!added)
		return fail(ps, "key %s is repeated (first on line %d)", buf,
			    y->e[*slot].line);
	*slot = y->n;
	if (y->n == y->cap) {
		int cap = y->cap ? 2 * y->cap : 64;
		struct yaml_entry *ne = realloc(y->e, sizeof(*ne) * cap);

		if (!ne)
			return fail(ps, "out of memory");
		y->e = ne;
		y->cap = cap;
	}
	en = &y->e[y->n++];
	memset(en, 0, sizeof(*en));
	en->line = ps->line;
	if (!(en->key = strdup(buf)))
		return fail(ps, "out of memory");
	skip_blanks(&s, e);
	if (s == e) {
		ps->open = 1;
		return 0;
	}
	ps->open = 0;
	i = value(ps, en, s, e, buf);
	return i;
}

static int line(struct parser *ps, const char *s, const char *e, char *buf)
{
	struct yaml_entry *en = ps->y->n ? &ps->y->e[ps->y->n - 1] : NULL;
	const char *t = s;
	size_t len;

	while (t < e && *t == ' ')
		t++;
	if (t < e && *t == '\t')
		return fail(ps, "a tab in the indentation");
	e = strip(t, e);
	if (t == e)
		return 0;
	if (t == s && (e - t == 3) && (!memcmp(t, "---", 3) ||
				       !memcmp(t, "...", 3)))
		return 0;
	if (*t == '-' && (t + 1 == e || t[1] == ' ')) {
		if (!en || !ps->open)
			return fail(ps, "a list item without its key");
		ps->open = 2;
		en->list = 1;
		t++;
		skip_blanks(&t, e);
		if (t < e && (*t == '[' || *t == '{' ||
			      (*t == '-' && (t + 1 == e || t[1] == ' '))))
			return fail(ps, "nested collections are not "
				    "supported");
		if (scalar(ps, &t, e, 0, buf, &len) < 0)
			return -1;
		if (t != e)
			return fail(ps, "text after the item");
		return add_item(ps, en, buf, len);
	}
	if (t > s) {
		/* the value of the key above, on its own line */
		if (!en || ps->open != 1)
			return fail(ps, "an indented line that is no list "
				    "item (a nested mapping?)");
		ps->open = 0;
		return value(ps, en, t, e, buf);
	}
	if (en && ps->open == 1 && add_item(ps, en, "", 0) < 0)
		return -1;
	return key_line(ps, t, e, buf);
}

int yaml_parse(struct yaml *y, const char *text, size_t len,
	       const char *label)
{
	struct parser ps = { y, label, 0, 0 };
	const char *s = text, *end;
	char *buf;
	size_t n = len;

	memset(y, 0, sizeof(*y));
	while (n && !text[n - 1])
		n--;
	if (memchr(text, 0, n)) {
		err_set("%s: a NUL byte inside the text", label);
		return -1;
	}
	if (!(buf = malloc(n + n / 2 + 8))) {	/* scalar()'s most */
		err_set("%s: out of memory", label);
		return -1;
	}
	end = text + n;
	if (n >= 3 && !memcmp(s, "\xef\xbb\xbf", 3))	/* a byte-order mark */
		s += 3;
	while (s < end) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		const char *le = nl ? nl : end;

		ps.line++;
		if (line(&ps, s, le, buf) < 0)
			goto bad;
		s = nl ? nl + 1 : end;
	}
	if (y->n && ps.open == 1 && add_item(&ps, &y->e[y->n - 1], "", 0) < 0)
		goto bad;
	free(buf);
	return 0;
bad:
	free(buf);
	yaml_free(y);
	return -1;
}
