/* keep_restore.c: the spans keep_mask took out, put back into a
 * translation; see keep.h.  Linear in the translation's bytes, the
 * links and the spans (times log of the spans), whatever their numbers,
 * in memory as large as they are. */
#include <stdlib.h>
#include <string.h>
#include "base/errmsg.h"
#include "keep.h"

#define NNAMES KEEP_NAMES

static int is_space(int c)
{
	return c == ' ' || c == '\t';
}

static int is_alnum(int c)
{
	return (c >= '0' && c <= '9') || ((c | 32) >= 'a' && (c | 32) <= 'z') ||
	       c >= 0x80;
}

static int punct(int c)
{
	return c && c < 0x80 && !is_alnum(c) && !is_space(c);
}

/* A word of the translation: its bytes, and its text without the ASCII
 * punctuation around it, after which a span placed after it goes. */
struct word {
	size_t a, b, cb;
};

/* The words of hyp [n], between spaces, into *w: their count; -1 out of
 * memory. */
static int split(const char *hyp, size_t n, struct word **w)
{
	size_t i = 0, cap = 0, ca;
	int nw = 0;

	*w = NULL;
	while (i < n) {
		struct word x;

		while (i < n && is_space(hyp[i]))
			i++;
		if (i == n)
			break;
		x.a = ca = i;
		while (i < n && !is_space(hyp[i]))
			i++;
		x.b = x.cb = i;
		while (ca < x.cb && punct((unsigned char)hyp[ca]))
			ca++;
		while (x.cb > ca && punct((unsigned char)hyp[x.cb - 1]))
			x.cb--;
		if (ca == x.cb)                 /* punctuation alone */
			x.cb = x.b;
		if ((size_t)nw == cap) {
			struct word *p;

			cap = cap ? 2 * cap : 16;
			if (!(p = realloc(*w, cap * sizeof *p)))
				return -1;
			*w = p;
		}
		(*w)[nw++] = x;
	}
	return nw;
}

/* Calls f(s, t, arg) for each link "s-t" of the Pharaoh links [n]. */
static void each_link(const char *links, size_t n,
		      void (*f)(long s, long t, void *arg), void *arg)
{
	size_t i = 0;

	while (links && i < n) {
		long s = 0, t = 0;

		while (i < n && (links[i] < '0' || links[i] > '9'))
			i++;
		if (i == n)
			break;
		while (i < n && links[i] >= '0' && links[i] <= '9' && s < 1 << 30)
			s = s * 10 + links[i++] - '0';
		if (i == n || links[i] != '-')
			break;
		for (i++; i < n && links[i] >= '0' && links[i] <= '9' &&
		     t < 1 << 30; i++)
			t = t * 10 + links[i] - '0';
		f(s, t, arg);
	}
}

/* The source words of the spans, sorted, each once, and the last target
 * word the links join to each (-1: none): a table as long as the spans,
 * whatever words the links or the rows name. */
struct linked {
	int32_t *word;
	int *last;
	size_t n;
};

static int by_value(const void *x, const void *y)
{
	int32_t a = *(const int32_t *)x, b = *(const int32_t *)y;

	return (a > b) - (a < b);
}

/* The index of word in l (-1: not a span's). */
static long find_word(const struct linked *l, long word)
{
	int32_t w = (int32_t)word;
	const int32_t *at;

	if (word != w || !l->n)
		return -1;
	at = bsearch(&w, l->word, l->n, sizeof *l->word, by_value);
	return at ? at - l->word : -1;
}

static void latest(long s, long t, void *arg)
{
	struct linked *l = arg;
	long i = find_word(l, s);

	if (i >= 0 && t > l->last[i])
		l->last[i] = (int)t;
}

/*
 * The next copy of the name in hyp [n] from byte *from: not after a
 * letter or digit, on its own or (unless source) made a word of the
 * model's own ("Moabites", "David's"), not before a letter or digit.
 * Its bytes [*q, return); 0: none (and *from is n).
 */
static size_t next_copy(const char *hyp, size_t n, size_t *from,
			const char *name, int source, size_t *q)
{
	size_t len = strlen(name), e;
	const char *p;

	while (*from < n &&
	       (p = memmem(hyp + *from, n - *from, name, len))) {
		*q = p - hyp;
		*from = *q + 1;
		if (*q > 0 && is_alnum((unsigned char)hyp[*q - 1]))
			continue;
		/* lower-case letters, an apostrophe before one ("'s"); in
		 * the masked source, the name alone */
		for (e = *q + len; !source && e < n &&
		     ((hyp[e] >= 'a' && hyp[e] <= 'z') ||
					     (hyp[e] == '\'' && e + 1 < n &&
					      hyp[e + 1] >= 'a' &&
					      hyp[e + 1] <= 'z')); e++)
			;
		if (e < n && is_alnum((unsigned char)hyp[e]))
			continue;
		*from = e;
		return e;
	}
	*from = n;
	return 0;
}

/* An edit of the translation at byte at: bytes [at, end) replaced by
 * span (-1: by nothing), or (end 0) the spans of list before the byte. */
struct edit {
	size_t at, end;
	int span, list;
};

struct plan {
	size_t *off;		/* [k + 1]: span i is bytes off[i] .. off[i+1] */
	int *next;		/* [k]: the spans of a list, in their order */
	int *head, *tail;	/* [nw + 2]: list j + 1 after word j, 0 at
				   the start, nw + 1 at the end */
	struct linked l;	/* the spans' source words' links */
	struct edit *e;
	size_t ne, cap;
};

static int edit(struct plan *p, size_t at, size_t end, int span, int list)
{
	if (p->ne == p->cap) {
		size_t c = p->cap ? 2 * p->cap : 16;
		struct edit *e = realloc(p->e, c * sizeof *e);

		if (!e)
			return -1;
		p->e = e;
		p->cap = c;
	}
	p->e[p->ne].at = at;
	p->e[p->ne].end = end;
	p->e[p->ne].span = span;
	p->e[p->ne++].list = list;
	return 0;
}

static void append(struct plan *p, int list, int i)
{
	p->next[i] = -1;
	if (p->head[list] < 0)
		p->head[list] = i;
	else
		p->next[p->tail[list]] = i;
	p->tail[list] = i;
}

/* By byte; at one byte, a replacement before the spans placed there. */
static int by_byte(const void *x, const void *y)
{
	const struct edit *a = x, *b = y;

	if (a->at != b->at)
		return a->at < b->at ? -1 : 1;
	return (a->end == 0) - (b->end == 0);
}

/* pos's rows are sane and add up to nbytes: 0, else -1 (err_msg()). */
static int check(const int32_t *pos, size_t k, size_t nbytes)
{
	size_t i, sum = 0;

	for (i = 0; i < k; i++) {
		const int32_t *r = pos + KEEP_COLS * i;

		if (r[0] < 0 || r[1] < -1 || r[2] < -1 || (uint32_t)r[3] > 3) {
			err_set("src.keep.pos row %zu: a length below 0, a "
				"word or name below -1 or glue not 0 to 3", i);
			return -1;
		}
		sum += (size_t)r[0];
	}
	if (sum != nbytes) {
		err_set("src.keep has %zu bytes, src.keep.pos's lengths %zu",
			nbytes, sum);
		return -1;
	}
	return 0;
}

/*
 * Each span's place (keep.h's rules 1 to 3) as edits: a copied name
 * replaced (in the masked source, with the spaces glue says masking put
 * around it), a list of spans after a word, at the start or the end,
 * and the copies of a restored name that are left over taken out.
 */
static int place(const char *hyp, size_t n, const struct word *w, int nw,
		 const int32_t *pos, size_t k, int source, struct plan *p)
{
	size_t from[NNAMES] = { 0 }, i, q, e;
	int restored = 0, m, j;
	long t;

	for (i = 0; i < k; i++) {
		const int32_t *r = pos + KEEP_COLS * i;
		int nm = r[2] >= 0 ? r[2] % NNAMES : -1;

		if (nm >= 0 && (e = next_copy(hyp, n, &from[nm],
					      keep_name(nm), source, &q))) {
			if (source && (r[3] & 1) && q > 0 && hyp[q - 1] == ' ')
				q--;
			if (source && (r[3] & 2) && e < n && hyp[e] == ' ')
				e++;
			if (edit(p, q, e, (int)i, 0) < 0)
				return -1;
			restored |= 1 << nm;
		} else if ((t = find_word(&p->l, r[1])) >= 0 &&
			   p->l.last[t] >= 0 && p->l.last[t] < nw) {
			append(p, p->l.last[t] + 1, (int)i);	/* 2. */
		} else if (r[1] < 0 && r[2] < 0) {
			append(p, 0, (int)i);	/* dropped before any word */
		} else {
			append(p, nw + 1, (int)i);	/* 3. */
		}
	}
	for (m = 0; m < NNAMES; m++)
		while ((restored >> m & 1) &&
		       (e = next_copy(hyp, n, &from[m], keep_name(m), source,
				      &q)))
			if (edit(p, q, e, -1, 0) < 0)
				return -1;
	for (j = 0; j < nw; j++)
		if (p->head[j + 1] >= 0 && edit(p, w[j].cb, 0, -1, j + 1) < 0)
			return -1;
	if (p->ne)
		qsort(p->e, p->ne, sizeof *p->e, by_byte);
	return 0;
}

/* Appends list's spans, each after a space unless it starts out or a
 * space is there. */
static int put_list(struct bpe_text *out, size_t start, const char *bytes,
		    const struct plan *p, int list)
{
	int i;

	for (i = p->head[list]; i >= 0; i = p->next[i])
		if ((out->n > start && out->s[out->n - 1] != ' ' &&
		     bpe_text_add(out, " ", 1) < 0) ||
		    bpe_text_add(out, bytes + p->off[i],
				 p->off[i + 1] - p->off[i]) < 0)
			return -1;
	return 0;
}

int keep_restore(const char *hyp, size_t n, const char *bytes,
		 size_t nbytes, const int32_t *pos, size_t k,
		 const char *links, size_t nlinks, int source,
		 struct bpe_text *out)
{
	struct plan p = { 0 };
	struct word *w = NULL;
	size_t i, at = 0, start = out->n;
	int nw, j, rc = -1;

	if (check(pos, k, nbytes) < 0)
		return -1;
	if ((nw = split(hyp, n, &w)) < 0 ||
	    !(p.off = malloc((k + 1) * sizeof *p.off)) ||
	    !(p.next = malloc((k + 1) * sizeof *p.next)) ||
	    !(p.head = malloc((nw + 2) * sizeof *p.head)) ||
	    !(p.tail = malloc((nw + 2) * sizeof *p.tail)) ||
	    !(p.l.word = malloc((k + 1) * sizeof *p.l.word)) ||
	    !(p.l.last = malloc((k + 1) * sizeof *p.l.last)))
		goto nomem;
	for (p.off[0] = 0, i = 0; i < k; i++)
		p.off[i + 1] = p.off[i] + (size_t)pos[KEEP_COLS * i];
	for (j = 0; j < nw + 2; j++)
		p.head[j] = -1;
	for (i = 0; i < k; i++) {
		p.l.word[i] = pos[KEEP_COLS * i + 1];
		p.l.last[i] = -1;
	}
	if (k)
		qsort(p.l.word, k, sizeof *p.l.word, by_value);
	for (i = 0; i < k; i++)
		if (!p.l.n || p.l.word[p.l.n - 1] != p.l.word[i])
			p.l.word[p.l.n++] = p.l.word[i];
	each_link(links, nlinks, latest, &p.l);
	if (place(hyp, n, w, nw, pos, k, source, &p) < 0)
		goto nomem;
	/* the start's spans, then the text with its edits, then the end's */
	if (put_list(out, start, bytes, &p, 0) < 0 ||
	    (out->n > start && n && bpe_text_add(out, " ", 1) < 0))
		goto nomem;
	for (i = 0; i < p.ne; i++) {
		const struct edit *e = &p.e[i];
		/* edits may touch (a space two glued names took out): each
		 * makes what it makes, from where the last one ended */
		size_t b = e->at > at ? e->at : at;

		if (bpe_text_add(out, hyp + at, b - at) < 0)
			goto nomem;
		at = b;
		if (e->end == 0) {
			if (put_list(out, start, bytes, &p, e->list) < 0)
				goto nomem;
			continue;
		}
		if (e->span >= 0 &&
		    bpe_text_add(out, bytes + p.off[e->span],
				 p.off[e->span + 1] - p.off[e->span]) < 0)
			goto nomem;
		if (e->end > at)
			at = e->end;
	}
	if (bpe_text_add(out, hyp + at, n - at) < 0 ||
	    put_list(out, start, bytes, &p, nw + 1) < 0)
		goto nomem;
	rc = 0;
	goto out;
nomem:
	err_set("out of memory");
out:
	free(w);
	free(p.off);
	free(p.next);
	free(p.head);
	free(p.tail);
	free(p.l.word);
	free(p.l.last);
	free(p.e);
	return rc;
}
