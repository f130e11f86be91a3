/* keep.c: the spans that are kept as written; see keep.h. */
#include <stdlib.h>
#include <string.h>
#include "base/errmsg.h"
#include "keep.h"

/* How far a brace placeholder is looked for: {...} longer than this is
 * not one, and a line of unclosed braces costs n * this at most. */
#define BRACE_MAX 256

static int is_space(int c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static int is_alnum(int c)
{
	return (c >= '0' && c <= '9') || ((c | 32) >= 'a' && (c | 32) <= 'z');
}

static int is_digit(int c)
{
	return c >= '0' && c <= '9';
}

/* What the built-in scanners look at: the line, and where the next
 * backtick is (n: none), which is searched for once, not at every '`'. */
struct scan {
	const char *s;
	size_t n;
	size_t tick;
};

static int at(const struct scan *c, size_t i)
{
	return i < c->n ? (unsigned char)c->s[i] : 0;
}

/* A span may start at i: the byte before is not a letter, digit or '_',
 * nor a '.' or ',' after one (a number in "mp3" or "x3.5" is not one). */
static int boundary(const struct scan *c, size_t i)
{
	int b = i ? at(c, i - 1) : ' ';

	if (b == '.' || b == ',')
		b = i > 1 ? at(c, i - 2) : ' ';
	return !(is_alnum(b) || b == '_');
}

/*
 * The end of a run of bytes that are not spaces from i, less the
 * punctuation that ends a sentence or a clause after it (". , ; : ! ? '
 * \"", "»") and a closing bracket that no bracket in the run opens: the
 * full stop after a URL is the sentence's.
 */
static size_t trim_end(const struct scan *c, size_t i)
{
	size_t e = i, j;
	int open = 0;

	while (e < c->n && !is_space(at(c, e)) && at(c, e) != '<' &&
	       at(c, e) != '>')
		e++;
	for (j = i; j < e; j++)
		open += strchr("([{", at(c, j)) && at(c, j) ? 1 : 0;
	while (e > i) {
		int b = at(c, e - 1);

		if (b && strchr(".,;:!?'\"", b)) {
			e--;
		} else if (b && strchr(")]}", b) && open == 0) {
			e--;
		} else if (b && strchr(")]}", b)) {
			break;
		} else if (b == 0xbb && e - i >= 2 && at(c, e - 2) == 0xc2) {
			e -= 2;         /* » */
		} else {
			break;
		}
	}
	return e;
}

static int prefix(const struct scan *c, size_t i, const char *p)
{
	size_t k;

	for (k = 0; p[k]; k++)
		if (i + k >= c->n || (at(c, i + k) | 32) != p[k])
			return 0;
	return 1;
}

/* `code`: to the next backtick, not empty, and not GNU's `quote' (an
 * apostrophe before a space, punctuation or the end inside: its
 * placeholders are found one by one). */
static size_t scan_code(struct scan *c, size_t i)
{
	const char *q, *a;

	if (at(c, i) != '`' || c->tick <= i)
		return 0;
	q = memchr(c->s + i + 1, '`', c->n - i - 1);
	if (!q) {
		c->tick = i;    /* none after i: none after any later one */
		return 0;
	}
	for (a = c->s + i + 1; a < q; a++)
		if (*a == '\'' && !is_alnum(at(c, a + 1 - c->s)))
			return 0;
	return q - c->s > (long)i + 1 ? (size_t)(q - c->s) + 1 : 0;
}

static size_t scan_url(const struct scan *c, size_t i)
{
	static const char *const scheme[] = { "https://", "http://", "ftp://",
					      "file://", "www." };
	size_t k, e;

	if (!boundary(c, i))
		return 0;
	for (k = 0; k < sizeof scheme / sizeof *scheme; k++)
		if (prefix(c, i, scheme[k]))
			break;
	if (k == sizeof scheme / sizeof *scheme)
		return 0;
	k = i + strlen(scheme[k]);
	e = trim_end(c, i);
	return e > k && is_alnum(at(c, k)) ? e : 0;
}

static int local_char(int b)
{
	return is_alnum(b) || (b && strchr("._%+-", b));
}

/* name@host.tld: a last label of two letters or more. */
static size_t scan_email(const struct scan *c, size_t i)
{
	size_t j = i, e, k;

	if (i > 0 && local_char(at(c, i - 1)))
		return 0;
	while (local_char(at(c, j)))
		j++;
	if (j == i || at(c, j) != '@')
		return 0;
	for (e = ++j; is_alnum(at(c, e)) || at(c, e) == '-' || at(c, e) == '.';
	     e++)
		;
	while (e > j && (at(c, e - 1) == '.' || at(c, e - 1) == '-'))
		e--;
	for (k = e; k > j && ((at(c, k - 1) | 32) >= 'a' &&
			      (at(c, k - 1) | 32) <= 'z'); k--)
		;
	/* host "." tld */
	return k > j + 1 && at(c, k - 1) == '.' && e - k >= 2 ? e : 0;
}

/* %s %-5.2f %1$d %lu %%, Qt's %1 %L1, GCC's %qD %wu %C and its quotes
 * %<code%> */
static size_t scan_percent(const struct scan *c, size_t i)
{
	size_t j = i + 1;

	if (at(c, j) == '%' || at(c, j) == '>')
		return j + 1;
	if (at(c, j) == '<') {
		for (j++; j + 1 < c->n && j - i < BRACE_MAX; j++)
			if (at(c, j) == '%' && at(c, j + 1) == '>')
				return j + 2;
		return i + 2;
	}
	if (at(c, j) == 'L' && is_digit(at(c, j + 1)))
		j++;
	if (is_digit(at(c, j))) {
		size_t d = j;

		while (is_digit(at(c, d)))
			d++;
		if (at(c, d) != '$')
			return d;               /* Qt's %1 */
		j = d + 1;
	}
	while (at(c, j) && strchr("-+#0'q", at(c, j)))
		j++;
	while (is_digit(at(c, j)) || at(c, j) == '*')
		j++;
	if (at(c, j) == '.')
		for (j++; is_digit(at(c, j)) || at(c, j) == '*'; j++)
			;
	while (at(c, j) && strchr("hlLjztw", at(c, j)) &&
	       ((at(c, j + 1) | 32) >= 'a' && (at(c, j + 1) | 32) <= 'z'))
		j++;
	return ((at(c, j) | 32) >= 'a' && (at(c, j) | 32) <= 'z') ||
	       at(c, j) == '@' ? j + 1 : 0;
}

/* {} {name} {0} {{name}} and ICU's {n, plural, one {# día} other
 * {...}}: balanced braces, a letter, digit or '_' first. */
static size_t scan_brace(const struct scan *c, size_t i)
{
	size_t j;
	int depth = 0;

	if (at(c, i + 1) == '}')
		return i + 2;
	if (!(is_alnum(at(c, i + 1)) || at(c, i + 1) == '_' ||
	      (at(c, i + 1) == '{' && (is_alnum(at(c, i + 2)) ||
				       at(c, i + 2) == '_'))))
		return 0;
	for (j = i; j < c->n && j - i < BRACE_MAX; j++) {
		if (at(c, j) == '{')
			depth++;
		else if (at(c, j) == '}' && --depth == 0)
			return j + 1;
		else if (at(c, j) == '\n')
			return 0;
	}
	return 0;
}

/* $VAR ${VAR} $(VAR) (a '$' before a digit is currency: scan_number's) */
static size_t scan_dollar(const struct scan *c, size_t i)
{
	size_t j = i + 1;

	if (at(c, j) == '{' || at(c, j) == '(') {
		int close = at(c, j) == '{' ? '}' : ')';

		for (j++; is_alnum(at(c, j)) || at(c, j) == '_'; j++)
			;
		return j > i + 2 && at(c, j) == close ? j + 1 : 0;
	}
	if (!((at(c, j) | 32) >= 'a' && (at(c, j) | 32) <= 'z') &&
	    at(c, j) != '_')
		return 0;
	while (is_alnum(at(c, j)) || at(c, j) == '_')
		j++;
	return j;
}

static size_t scan_placeholder(const struct scan *c, size_t i)
{
	switch (at(c, i)) {
	case '%': return scan_percent(c, i);
	case '{': return scan_brace(c, i);
	case '$': return scan_dollar(c, i);
	}
	return 0;
}

/* /usr/bin/env ./a ../a ~/a C:\Temp \\server\share, from a word's start */
static size_t scan_path(const struct scan *c, size_t i)
{
	size_t k;

	if (i > 0 && !is_space(at(c, i - 1)) &&
	    !strchr("([\"'=", at(c, i - 1)))
		return 0;
	if (at(c, i) == '/')
		k = i + 1;
	else if (prefix(c, i, "~/") || prefix(c, i, "./"))
		k = i + 2;
	else if (prefix(c, i, "../"))
		k = i + 3;
	else if (prefix(c, i, "\\\\"))
		k = i + 2;
	else if (((at(c, i) | 32) >= 'a' && (at(c, i) | 32) <= 'z') &&
		 at(c, i + 1) == ':' && at(c, i + 2) == '\\')
		k = i + 3;
	else
		return 0;
	if (!(is_alnum(at(c, k)) || (at(c, k) && strchr("._~-", at(c, k)))))
		return 0;
	return trim_end(c, i);
}

/* The bytes of a currency sign at i: $ € £ ¥ (0: none). */
static size_t currency(const struct scan *c, size_t i)
{
	if (at(c, i) == '$')
		return 1;
	if (at(c, i) == 0xe2 && at(c, i + 1) == 0x82 && at(c, i + 2) == 0xac)
		return 3;       /* € */
	if (at(c, i) == 0xc2 && (at(c, i + 1) == 0xa3 || at(c, i + 1) == 0xa5))
		return 2;       /* £ ¥ */
	return 0;
}

/* The end of digits, and digits after single '.' ',' ':' '/' '-', and
 * groups of digits one space apart (915 123 456), from j (a digit). */
static size_t digits(const struct scan *c, size_t j)
{
	for (;;) {
		while (is_digit(at(c, j)))
			j++;
		if (at(c, j) && strchr(".,:/- ", at(c, j)) &&
		    is_digit(at(c, j + 1)))
			j++;
		else
			return j;
	}
}

/* -12 +34 3.5% 50 % 1.234,56 € $5 10:30 2025-01-31 1º */
static size_t scan_number(const struct scan *c, size_t i)
{
	size_t j = i, k;

	if (!boundary(c, i))
		return 0;
	j += currency(c, j);
	if (at(c, j) == '-' || at(c, j) == '+')
		j++;
	else if (at(c, j) == 0xe2 && at(c, j + 1) == 0x88 &&
		 at(c, j + 2) == 0x92)
		j += 3;         /* − */
	if (!is_digit(at(c, j)))
		return 0;
	j = digits(c, j);
	k = j + (at(c, j) == ' ');
	if (at(c, k) == '%')
		return k + 1;
	if (currency(c, k) && !is_alnum(at(c, k + currency(c, k))))
		return k + currency(c, k);
	if (at(c, j) == 0xc2 && (at(c, j + 1) == 0xba || at(c, j + 1) == 0xaa))
		return j + 2;   /* º ª */
	return j;
}

unsigned keep_kind_bit(const char *name, size_t len)
{
	static const char *const names[] = { "code", "regex", "url", "email",
					     "placeholder", "path", "number" };
	unsigned i;

	for (i = 0; i < sizeof names / sizeof *names; i++)
		if (strlen(names[i]) == len && !memcmp(names[i], name, len))
			return 1u << i;
	return 0;
}

int keep_add_regex(struct keep *k, const char *pattern)
{
	regex_t *re = realloc(k->re, (k->nre + 1) * sizeof *re);
	char msg[256];
	int rc;

	if (!re) {
		err_set("out of memory");
		return -1;
	}
	k->re = re;
	if ((rc = regcomp(&re[k->nre], pattern, REG_EXTENDED))) {
		regerror(rc, &re[k->nre], msg, sizeof msg);
		err_set("'%s': %s", pattern, msg);
		return -1;
	}
	if (regexec(&re[k->nre], "", 0, NULL, 0) == 0) {
		regfree(&re[k->nre]);
		err_set("'%s' matches the empty string, so everywhere",
			pattern);
		return -1;
	}
	k->nre++;
	k->kinds |= KEEP_REGEX;
	return 0;
}

void keep_free(struct keep *k)
{
	int i;

	for (i = 0; i < k->nre; i++)
		regfree(&k->re[i]);
	free(k->re);
	k->re = NULL;
	k->nre = 0;
}

/*
 * The first match of any regex that starts at i or later, into *m
 * (rm_so -1: none): each regex's next match is kept in next[] and
 * searched for again only once i has passed its start.
 */
static int regex_next(const struct keep *k, const char *s, size_t n,
		      size_t i, regmatch_t *next, regmatch_t *m)
{
	int r, rc;

	m->rm_so = -1;
	for (r = 0; r < k->nre; r++) {
		if (next[r].rm_so == -2 || (next[r].rm_so >= 0 &&
					    (size_t)next[r].rm_so < i)) {
			regmatch_t g = { (regoff_t)i, (regoff_t)n };

			rc = regexec(&k->re[r], s, 1, &g,
				     REG_STARTEND | (i ? REG_NOTBOL : 0));
			if (rc == REG_NOMATCH) {
				g.rm_so = -1;
			} else if (rc) {
				err_set("regexec failed (%d)", rc);
				return -1;
			}
			next[r] = g;
		}
		if (next[r].rm_so >= 0 && next[r].rm_eo > next[r].rm_so &&
		    (m->rm_so < 0 || next[r].rm_so < m->rm_so ||
		     (next[r].rm_so == m->rm_so && next[r].rm_eo > m->rm_eo)))
			*m = next[r];
	}
	return 0;
}

static int push(struct keep_span **out, size_t *cap, size_t *n, size_t start,
		size_t end, int kind)
{
	if (*n == *cap) {
		size_t c = *cap ? 2 * *cap : 16;
		struct keep_span *p = realloc(*out, c * sizeof *p);

		if (!p) {
			err_set("out of memory");
			return -1;
		}
		*out = p;
		*cap = c;
	}
	(*out)[*n].start = start;
	(*out)[(*n)++].end = end;
	(*out)[*n - 1].kind = kind;
	return 0;
}

int keep_find(const struct keep *k, const char *s, size_t n,
	      struct keep_span **out, size_t *cap, size_t *nspans)
{
	struct scan c = { s, n, n };
	regmatch_t *next = NULL, m = { -1, -1 };
	char *z = NULL;
	size_t i = 0, e;
	int r, rc = -1;

	*nspans = 0;
	if (k->nre && (k->kinds & KEEP_REGEX)) {
		/* REG_STARTEND reads [0, n) alone, but a NUL after it costs
		 * a copy and keeps regexec's string a C string (for checkers
		 * such as ASan's, which measure it) */
		if (!(next = malloc(k->nre * sizeof *next)) ||
		    !(z = malloc(n + 1))) {
			free(next);
			err_set("out of memory");
			return -1;
		}
		memcpy(z, s, n);
		z[n] = 0;
		for (r = 0; r < k->nre; r++)
			next[r].rm_so = -2;     /* not searched yet */
	}
	while (i < n) {
		int kind = 0;

		if (next && regex_next(k, z, n, i, next, &m) < 0)
			goto out;
		e = 0;
		if ((k->kinds & KEEP_CODE) && (e = scan_code(&c, i)))
			kind = KEEP_CODE;
		else if (next && m.rm_so == (regoff_t)i && (e = m.rm_eo))
			kind = KEEP_REGEX;
		else if ((k->kinds & KEEP_URL) && (e = scan_url(&c, i)))
			kind = KEEP_URL;
		else if ((k->kinds & KEEP_EMAIL) && (e = scan_email(&c, i)))
			kind = KEEP_EMAIL;
		else if ((k->kinds & KEEP_PLACEHOLDER) &&
			 (e = scan_placeholder(&c, i)))
			kind = KEEP_PLACEHOLDER;
		else if ((k->kinds & KEEP_PATH) && (e = scan_path(&c, i)))
			kind = KEEP_PATH;
		else if ((k->kinds & KEEP_NUMBER) && (e = scan_number(&c, i)))
			kind = KEEP_NUMBER;
		if (e > i) {
			if (push(out, cap, nspans, i, e, kind) < 0)
				goto out;
			i = e;
		} else {
			i++;
		}
	}
	rc = 0;
out:
	free(next);
	free(z);
	return rc;
}
