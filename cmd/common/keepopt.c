/* keepopt.c: spans kept as written, for the programs; see keepopt.h. */
#include <string.h>
#include "base/errmsg.h"
#include "keepopt.h"
#include "prog.h"

struct keep keepopt = { KEEP_ALL & ~KEEP_REGEX, NULL, 0 };
enum keep_mode keepopt_mode = KEEP_NAME;
int keepopt_given, keepopt_none, keepopt_print;

void keepopt_option(int c, const char *arg)
{
	switch (c) {
	case KEEPOPT_KEEP:
		keepopt_regex(arg);
		keepopt_given = 1;
		break;
	case KEEPOPT_NO_KEEP:
		keepopt_off(arg);
		keepopt_none = 1;
		keepopt_given |= arg != NULL;
		break;
	case KEEPOPT_AS:
		keepopt_as(arg);
		keepopt_given = 1;
		break;
	case KEEPOPT_SPANS:
		keepopt_print = 1;
		break;
	}
}

void keepopt_regex(const char *arg)
{
	if (keep_add_regex(&keepopt, arg) < 0)
		usage_error("option --keep: %s", err_msg());
}

void keepopt_off(const char *arg)
{
	const char *p = arg, *q;
	unsigned bit;

	if (!arg) {
		keepopt.kinds = 0;
		return;
	}
	for (; *p; p = *q ? q + 1 : q) {
		q = p + strcspn(p, ",");
		if (!(bit = keep_kind_bit(p, q - p)))
			usage_error("option --no-keep: '%.*s' is not url, "
				    "email, number, path, code, placeholder "
				    "or regex", (int)(q - p), p);
		keepopt.kinds &= ~bit;
	}
}

void keepopt_as(const char *arg)
{
	if (!strcmp(arg, "name"))
		keepopt_mode = KEEP_NAME;
	else if (!strcmp(arg, "drop"))
		keepopt_mode = KEEP_DROP;
	else
		usage_error("option --keep-as: '%s' is not name or drop", arg);
}

static void put(struct tsr_writer *w, const char *name, int dtype, int rank,
		size_t rows, void *data, size_t nbytes, uint64_t frame)
{
	struct tensor t;

	memset(&t, 0, sizeof(t));
	strcpy(t.name, name);
	t.dtype = dtype;
	t.rank = rank;
	t.dim[0] = rows;
	t.dim[1] = KEEP_COLS;
	t.data = data;
	t.nbytes = nbytes;
	check_write(tsr_write(w, &t, frame, 0));
}

const char *keepopt_mask(struct tsr_writer *w, const char *line, size_t len,
			 size_t *mlen, uint64_t frame)
{
	static struct keep_span *sp;
	static size_t cap;
	static struct bpe_text masked, bytes;
	static struct bpe_ids pos;
	size_t n;

	*mlen = len;
	if (!keepopt.kinds)
		return line;
	if (keep_find(&keepopt, line, len, &sp, &cap, &n) < 0 ||
	    keep_mask(line, len, sp, n, keepopt_mode, &masked, &bytes,
		      &pos) < 0)
		die_err();
	if (!n)
		return line;
	put(w, "src.keep", DT_U8, 1, bytes.n, bytes.s, bytes.n, frame);
	put(w, "src.keep.pos", DT_I32, 2, n, pos.v, pos.n * sizeof *pos.v,
	    frame);
	*mlen = masked.n;
	return masked.s;
}

void keepopt_spans(const char *line, size_t len, struct bpe_text *out)
{
	static struct keep_span *sp;
	static size_t cap;
	size_t n, i;

	if (keep_find(&keepopt, line, len, &sp, &cap, &n) < 0)
		die_err();
	for (i = 0; i < n; i++)
		if ((i && bpe_text_add(out, "\t", 1) < 0) ||
		    bpe_text_add(out, line + sp[i].start,
				 sp[i].end - sp[i].start) < 0)
			die_err();
}

int keepopt_restore(const struct frame *f, struct bpe_text *text,
		    struct bpe_text *tmp, const char *links, size_t nlinks,
		    int source)
{
	const struct tensor *pos = frame_find(f, "src.keep.pos"), *b;
	struct bpe_text swap;

	if (!pos)
		return 0;
	if (!(b = frame_need(f, "src.keep", DT_U8, 1, "tokenize")) ||
	    !(pos = frame_need(f, "src.keep.pos", DT_I32, 2, "tokenize")))
		return -1;
	if (pos->dim[1] != KEEP_COLS) {
		err_set("frame %llu: src.keep.pos is [%llu, %llu], not [K, 4]",
			(unsigned long long)f->number,
			(unsigned long long)pos->dim[0],
			(unsigned long long)pos->dim[1]);
		return -1;
	}
	tmp->n = 0;
	/* empty records and text may have no bytes at all: "" */
	if (keep_restore(text->s ? text->s : "", text->n,
			 b->data ? (const char *)b->data : "", b->dim[0],
			 pos->data,
			 pos->dim[0], links, nlinks, source, tmp) < 0) {
		err_prefix("frame %llu", (unsigned long long)f->number);
		return -1;
	}
	swap = *text;
	*text = *tmp;
	*tmp = swap;
	return 0;
}
