/* linejoin.c: the records of a line's sentences, and the line put back
 * from them; see linejoin.h. */
#include <stdio.h>
#include <stdlib.h>
#include "base/errmsg.h"
#include "text/attn_align.h"
#include "filter.h"
#include "linejoin.h"

int linejoin_put(struct tsr_writer *w, uint64_t frame, const char *line,
		 const struct sent_span *span, long k, long n)
{
	int32_t part[2] = { (int32_t)k, (int32_t)n };
	size_t gap = k ? span[k - 1].end : 0;

	if (filter_write_vec(w, "line.part", DT_I32, part, 2, frame, 0) < 0)
		return -1;
	if (span[k].start > gap &&
	    filter_write_vec(w, "line.gap", DT_U8, line + gap,
			     span[k].start - gap, frame, 0) < 0)
		return -1;
	return 0;
}

/* Whether the frame's record of that name, if any, is u8 [n]; if not,
 * err_msg() says so. */
static int text_ok(const struct frame *f, const char *name)
{
	return !frame_head(f, name) ||
	       frame_need(f, name, DT_U8, 1, "tokenize") != NULL;
}

int linejoin_frame(struct linejoin *j, const struct frame *f)
{
	unsigned long long num = f->number;
	const struct tensor *p = frame_head(f, "line.part");
	const int32_t *kn;

	if (p && !(p = frame_need(f, "line.part", DT_I32, 1, "tokenize")))
		return -1;
	if (p && p->dim[0] != 2) {
		err_set("frame %llu: line.part has %llu values, not 2", num,
			(unsigned long long)p->dim[0]);
		return -1;
	}
	if (!text_ok(f, "line.gap"))
		return -1;
	if (!p && frame_head(f, "line.gap")) {
		err_set("frame %llu: line.gap without line.part", num);
		return -1;
	}
	kn = p ? p->data : NULL;
	if (kn && !(kn[1] >= 2 && kn[0] >= 0 && kn[0] < kn[1])) {
		err_set("frame %llu: line.part {%d, %d} is not part k of n, "
			"0 <= k < n, n >= 2", num, (int)kn[0], (int)kn[1]);
		return -1;
	}
	if (kn && kn[0] == 0 && frame_head(f, "line.gap")) {
		err_set("frame %llu: line.gap before a line's first sentence",
			num);
		return -1;
	}
	if (j->n && (!kn || f->number != j->number || kn[0] != j->k ||
		     kn[1] != j->n)) {
		err_set("frame %llu: the sentences of frame %llu stop after "
			"%ld of %ld (line.part)", num,
			(unsigned long long)j->number, j->k, j->n);
		return -1;
	}
	if (kn && !j->n && kn[0] != 0) {
		err_set("frame %llu: line.part {%d, %d} where a line "
			"starts", num, (int)kn[0], (int)kn[1]);
		return -1;
	}
	if (!j->n) {            /* a new line */
		j->text.n = j->align.n = 0;
		j->src_words = j->tgt_words = 0;
		j->score = 0;
		j->len = 0;
		j->number = f->number;
	}
	j->part = kn != NULL;
	if (!kn || kn[0] == kn[1] - 1) {
		j->n = 0;
		return 1;
	}
	j->k = kn[0] + 1;
	j->n = kn[1];
	return 0;
}

int linejoin_text(struct linejoin *j, const struct frame *f, const char *s,
		  size_t n)
{
	const struct tensor *gap = frame_find(f, "line.gap");

	if (gap && bpe_text_add(&j->text, gap->data, gap->nbytes) < 0)
		return -1;
	return bpe_text_add(&j->text, s, n);
}

int linejoin_align(struct linejoin *j, const char *a, size_t n,
		   long src_words, long tgt_words)
{
	const char *p = a, *e = a + n;
	long v[2];
	char buf[64];
	int len, k;

	/* a [n] is not a string: the numbers are read within it */
	while (p < e) {
		if (*p < '0' || *p > '9') {
			p++;
			continue;
		}
		for (k = 0; k < 2; k++) {	/* i, '-', j */
			for (v[k] = 0; p < e && *p >= '0' && *p <= '9'; p++)
				v[k] = 10 * v[k] + (*p - '0');
			p += p < e;
		}
		len = snprintf(buf, sizeof buf, "%s%ld-%ld",
			       j->align.n ? " " : "", v[0] + j->src_words,
			       v[1] + j->tgt_words);
		if (bpe_text_add(&j->align, buf, (size_t)len) < 0)
			return -1;
	}
	j->src_words += src_words;
	j->tgt_words += tgt_words;
	return 0;
}

long linejoin_words(const struct vocab *v, const int32_t *ids, int n)
{
	int *word = malloc((n ? n : 1) * sizeof *word), i;
	long words = 0;

	if (!word) {
		err_set("out of memory for %d units", n);
		return -1;
	}
	if (align_unit_words(v, ids, n, word) < 0) {
		free(word);
		return -1;
	}
	for (i = 0; i < n; i++)
		if (word[i] + 1 > words)
			words = word[i] + 1;
	free(word);
	return words;
}

int linejoin_end(const struct linejoin *j)
{
	if (!j->n)
		return 0;
	err_set("the stream ends after %ld of the %ld sentences of frame "
		"%llu (line.part)", j->k, j->n, (unsigned long long)j->number);
	return -1;
}

void linejoin_free(struct linejoin *j)
{
	bpe_text_free(&j->text);
	bpe_text_free(&j->align);
}
