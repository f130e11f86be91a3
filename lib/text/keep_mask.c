/* keep_mask.c: spans taken out of a line and put back into its
 * translation; see keep.h. */
#include <stdlib.h>
#include <string.h>
#include "base/errmsg.h"
#include "keep.h"

/*
 * Names the shipped model (models/bible-es-en.tsr) writes as they are in
 * its Spanish: it copies each into the English (doc/results.md, "What is
 * kept as written"), where a digit or a URL comes out as a Bible name of
 * its own making.
 */
static const char *const names[] = { "Moab", "David", "Jacob", "Aaron",
				     "Samuel", "Isaac", "Gilead", "Levi" };
#define NNAMES ((int)(sizeof names / sizeof *names))

const char *keep_name(int i)
{
	return names[i % NNAMES];
}

static int is_space(int c)
{
	return c == ' ' || c == '\t';
}

static int is_alnum(int c)
{
	return (c >= '0' && c <= '9') || ((c | 32) >= 'a' && (c | 32) <= 'z') ||
	       c >= 0x80;
}

/* The index of the word that holds byte at-1 of t [at]: the words that
 * start before at, less one (-1: none). */
static int word_of(const struct bpe_text *t, size_t at)
{
	int w = -1;
	size_t q;

	for (q = 0; q < at; q++)
		if (!is_space(t->s[q]) && (q == 0 || is_space(t->s[q - 1])))
			w++;
	return w;
}

int keep_mask(const char *s, size_t n, const struct keep_span *sp,
	      size_t nspans, enum keep_mode mode, struct bpe_text *masked,
	      struct bpe_text *bytes, struct bpe_ids *pos)
{
	size_t i, from = 0;
	int name = 0;

	masked->n = bytes->n = pos->n = 0;
	for (i = 0; i < nspans; i++) {
		size_t a = sp[i].start, b = sp[i].end, len;
		int word, ph = -1, glue = 0;

		if (bpe_text_add(masked, s + from, a - from) < 0 ||
		    bpe_text_add(bytes, s + a, b - a) < 0)
			return -1;
		from = b;
		if (mode == KEEP_DROP) {
			/* "de 2025." is "de." */
			if (masked->n && is_space(masked->s[masked->n - 1]) &&
			    (b == n || !is_alnum((unsigned char)s[b])))
				masked->n--;
			word = word_of(masked, masked->n);
		} else {
			/* a name not in the line, its own word */
			for (len = 0; len < 2 * NNAMES; len++, name++)
				if (!memmem(s, n, keep_name(name),
					    strlen(keep_name(name))))
					break;
			ph = name++;
			glue = (masked->n && is_alnum((unsigned char)
						      masked->s[masked->n - 1])) |
			       (b < n && is_alnum((unsigned char)s[b])) << 1;
			if ((glue & 1) && bpe_text_add(masked, " ", 1) < 0)
				return -1;
			len = masked->n;
			if (bpe_text_add(masked, keep_name(ph),
					 strlen(keep_name(ph))) < 0 ||
			    ((glue & 2) && bpe_text_add(masked, " ", 1) < 0))
				return -1;
			word = word_of(masked, len + 1);
		}
		if (bpe_ids_push(pos, (int32_t)(b - a)) < 0 ||
		    bpe_ids_push(pos, word) < 0 || bpe_ids_push(pos, ph) < 0 ||
		    bpe_ids_push(pos, glue) < 0)
			return -1;
	}
	return bpe_text_add(masked, s + from, n - from);
}

/* ---- restoring ---------------------------------------------------------- */

/* Where span k goes: in the place of word j's text (REPLACE), after it
 * (AFTER; j -1: at the start), or at the end (j -1). */
enum { AFTER, REPLACE };

struct word {
	size_t a, b;		/* its bytes in the translation */
	size_t ca, cb;		/* its text, ASCII punctuation aside */
	int dup;		/* 1 its name restored, 2 a restored name
				   once more: left out, 3 restored, the
				   space after it masking's */
};

static int punct(int c)
{
	return c && c < 0x80 && !is_alnum(c) && !is_space(c);
}

/* The words of hyp [n], between spaces, into *w: their count. */
static int split(const char *hyp, size_t n, struct word **w)
{
	size_t i = 0, cap = 0;
	int nw = 0;

	*w = NULL;
	while (i < n) {
		struct word x;

		while (i < n && is_space(hyp[i]))
			i++;
		if (i == n)
			break;
		x.a = x.ca = i;
		while (i < n && !is_space(hyp[i]))
			i++;
		x.b = x.cb = i;
		while (x.ca < x.cb && punct((unsigned char)hyp[x.ca]))
			x.ca++;
		while (x.cb > x.ca && punct((unsigned char)hyp[x.cb - 1]))
			x.cb--;
		if (x.ca == x.cb)               /* punctuation alone */
			x.ca = x.a, x.cb = x.b;
		x.dup = 0;
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

/* The last target word that links (Pharaoh i-j) name source word src; -1
 * none. */
static int linked(const char *links, size_t n, int src)
{
	size_t i = 0;
	int best = -1;

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
		if (s == src && t > best)
			best = (int)t;
	}
	return best;
}

/*
 * The word holds the name, not after a letter or digit, on its own or
 * made a word of the model's own ("Moabites", "David's") and not before
 * an upper-case letter or a digit: a copy of a placeholder, whose bytes
 * then become the word's text (ca, cb), what it is replaced by.
 */
static int same(const char *hyp, struct word *w, const char *name)
{
	size_t len = strlen(name), q, e;

	for (q = w->a; q + len <= w->b; q++) {
		if (memcmp(hyp + q, name, len) ||
		    (q > w->a && is_alnum((unsigned char)hyp[q - 1])))
			continue;
		for (e = q + len; e < w->b && ((hyp[e] >= 'a' && hyp[e] <= 'z') ||
					       hyp[e] == '\''); e++)
			;
		if (e < w->b && is_alnum((unsigned char)hyp[e]))
			continue;
		w->ca = q;
		w->cb = e;
		return 1;
	}
	return 0;
}

/* Appends the spans whose place is (j, how), in their order, each with a
 * space before it unless it starts the output. */
static int put_spans(struct bpe_text *out, const char *bytes,
		     const int32_t *pos, size_t k, const int *where,
		     const int *how, int j, int h, size_t start)
{
	size_t i, off = 0;

	for (i = 0; i < k; off += pos[KEEP_COLS * i], i++) {
		if (where[i] != j || how[i] != h)
			continue;
		if (h == AFTER && out->n > start &&
		    out->s[out->n - 1] != ' ' && bpe_text_add(out, " ", 1) < 0)
			return -1;
		if (bpe_text_add(out, bytes + off, pos[KEEP_COLS * i]) < 0)
			return -1;
	}
	return 0;
}

int keep_restore(const char *hyp, size_t n, const char *bytes,
		 size_t nbytes, const int32_t *pos, size_t k,
		 const char *links, size_t nlinks, int source,
		 struct bpe_text *out)
{
	struct word *w = NULL;
	int *where = NULL, *how = NULL, nw, j, rc = -1;
	size_t i, sum = 0, start = out->n;

	for (i = 0; i < k; i++) {
		if (pos[KEEP_COLS * i] < 0 || pos[KEEP_COLS * i + 1] < -1 ||
		    pos[KEEP_COLS * i + 2] < -1 ||
		    (uint32_t)pos[KEEP_COLS * i + 3] > 3) {
			err_set("src.keep.pos row %zu: a length below 0, a "
				"word or name below -1 or glue not 0 to 3", i);
			return -1;
		}
		sum += (size_t)pos[KEEP_COLS * i];
	}
	if (sum != nbytes) {
		err_set("src.keep has %zu bytes, src.keep.pos's lengths %zu",
			nbytes, sum);
		return -1;
	}
	if ((nw = split(hyp, n, &w)) < 0 ||
	    !(where = malloc((k + 1) * sizeof *where)) ||
	    !(how = malloc((k + 1) * sizeof *how))) {
		err_set("out of memory");
		goto out;
	}
	for (i = 0; i < k; i++) {
		int ph = pos[KEEP_COLS * i + 2], src = pos[KEEP_COLS * i + 1];

		how[i] = AFTER;
		where[i] = -2;                  /* the end */
		for (j = 0; ph >= 0 && j < nw; j++)
			if (!w[j].dup && same(hyp, &w[j], keep_name(ph))) {
				w[j].dup = 1;   /* used: not twice */
				where[i] = j;
				how[i] = REPLACE;
				break;
			}
		if (how[i] == REPLACE)
			continue;
		if (links && (j = linked(links, nlinks, src)) >= 0 && j < nw)
			where[i] = j;
		else if (src < 0 && ph < 0)
			where[i] = -1;          /* dropped before any word */
	}
	/* the copies of a restored placeholder left over */
	for (j = 0; j < nw; j++)
		for (i = 0; i < k && !w[j].dup; i++)
			if (how[i] == REPLACE &&
			    same(hyp, &w[j], keep_name(pos[KEEP_COLS * i + 2])))
				w[j].dup = 2;
	if (put_spans(out, bytes, pos, k, where, how, -1, AFTER, start) < 0 ||
	    (out->n > start && nw && bpe_text_add(out, " ", 1) < 0))
		goto nomem;
	for (j = 0; j < nw; j++) {
		size_t gap = j ? w[j - 1].b : 0;
		int rep = -1;

		for (i = 0; i < k; i++)
			if (where[i] == j && how[i] == REPLACE)
				rep = (int)i;
		/* the spaces between words as they were, but in the masked
		 * source those masking added around a name glued to a word
		 * (src.keep.pos's glue) */
		if (source && w[j].a - gap == 1 && hyp[gap] == ' ' &&
		    ((j && w[j - 1].dup == 3) ||
		     (rep >= 0 && (pos[KEEP_COLS * rep + 3] & 1) &&
		      w[j].a == w[j].ca)))
			gap = w[j].a;
		if (rep >= 0 && (pos[KEEP_COLS * rep + 3] & 2) &&
		    w[j].b == w[j].cb)
			w[j].dup = 3;
		if (bpe_text_add(out, hyp + gap, w[j].a - gap) < 0 ||
		    bpe_text_add(out, hyp + w[j].a, w[j].ca - w[j].a) < 0 ||
		    (rep >= 0 ? put_spans(out, bytes, pos, k, where, how, j,
					  REPLACE, start) :
		     w[j].dup == 2 ? 0 :
		     bpe_text_add(out, hyp + w[j].ca, w[j].cb - w[j].ca)) < 0 ||
		    put_spans(out, bytes, pos, k, where, how, j, AFTER,
			      start) < 0 ||
		    bpe_text_add(out, hyp + w[j].cb, w[j].b - w[j].cb) < 0)
			goto nomem;
	}
	if (bpe_text_add(out, hyp + (nw ? w[nw - 1].b : 0),
			 n - (nw ? w[nw - 1].b : 0)) < 0)
		goto nomem;
	if (put_spans(out, bytes, pos, k, where, how, -2, AFTER, start) < 0)
		goto nomem;
	rc = 0;
	goto out;
nomem:
	err_set("out of memory");
out:
	free(w);
	free(where);
	free(how);
	return rc;
}
