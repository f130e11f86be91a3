/*
 * frame.c: frames, one sentence and everything computed for it, read and
 * written whole.  A frame ends at a record with the end flag, where the
 * frame number changes, or at the end of input (doc/FORMAT.md, Frames); the
 * reader reads one record ahead only in the second case, so a frame that
 * carries its end flag is returned as soon as it has arrived.
 */
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "stream.h"
#include "tsr_record.h"

void frame_clear(struct frame *f)
{
	for (int i = 0; i < f->n; i++)
		tensor_free(&f->rec[i]);
	f->n = 0;
	f->number = 0;
}

void frame_free(struct frame *f)
{
	frame_clear(f);
	free(f->rec);
	f->rec = NULL;
	f->cap = 0;
}

/* Appends t (taking its payload) whatever its name, as read. */
struct tensor *frame_push(struct frame *f, struct tensor *t)
{
	if (f->n == f->cap) {
		int cap = f->cap ? 2 * f->cap : 8;
		struct tensor *rec = realloc(f->rec, cap * sizeof *rec);
		if (!rec) {
			err_set("frame %llu: out of memory for %d records",
				(unsigned long long)f->number, cap);
			return NULL;
		}
		f->rec = rec;
		f->cap = cap;
	}
	f->rec[f->n] = *t;
	memset(t, 0, sizeof *t);
	return &f->rec[f->n++];
}

struct tensor *frame_head(const struct frame *f, const char *name)
{
	for (int i = 0; i < f->n; i++)
		if (strcmp(f->rec[i].name, name) == 0)
			return &f->rec[i];
	return NULL;
}

struct tensor *frame_find(const struct frame *f, const char *name)
{
	struct tensor *t = frame_head(f, name);

	return t && tsr_inflate(t) < 0 ? NULL : t;
}

static void describe(char *out, size_t cap, int dtype, int rank)
{
	const char *dt = dtype_name(dtype);

	if (rank < 0)
		snprintf(out, cap, "%s", dt ? dt : "?");
	else
		snprintf(out, cap, "%s of rank %d", dt ? dt : "?", rank);
}

struct tensor *frame_need(const struct frame *f, const char *name, int dtype,
			  int rank, const char *stage)
{
	struct tensor *t = frame_head(f, name);
	char want[40], have[40];

	if (!t) {
		err_set("frame %llu has no record \"%s\" (written by %s)",
			(unsigned long long)f->number, name, stage);
		return NULL;
	}
	if ((int)t->dtype != dtype || (rank >= 0 && t->rank != rank)) {
		describe(want, sizeof want, dtype, rank);
		describe(have, sizeof have, t->dtype, rank < 0 ? -1 : t->rank);
		err_set("frame %llu: record \"%s\" is %s, not %s (as written "
			"by %s)", (unsigned long long)f->number, name, have,
			want, stage);
		return NULL;
	}
	return tsr_inflate(t) < 0 ? NULL : t;
}

struct tensor *frame_put(struct frame *f, struct tensor *t)
{
	struct tensor *old = frame_head(f, t->name);

	if (old) {
		tensor_free(old);
		*old = *t;
		memset(t, 0, sizeof *t);
		return old;
	}
	return frame_push(f, t);
}

void frame_drop(struct frame *f, const char *pattern)
{
	int i, j;

	for (i = j = 0; i < f->n; i++) {
		if (fnmatch(pattern, f->rec[i].name, 0) == 0)
			tensor_free(&f->rec[i]);
		else
			f->rec[j++] = f->rec[i];
	}
	f->n = j;
}

int tsr_read_frame(struct tsr_reader *r, struct frame *f)
{
	struct tensor t;
	int end, rc;

	frame_clear(f);
	rc = tsr_read(r, &t, &end);
	if (rc <= 0)
		return rc;
	f->number = t.frame;
	for (;;) {
		if (!frame_push(f, &t)) {
			tensor_free(&t);
			return -1;
		}
		if (end)
			return 1;
		rc = tsr_read(r, &t, &end);
		if (rc < 0)
			return -1;
		if (rc == 0)
			return 1;
		if (tsr_frame_started(r)) {	/* or after an end mark */
			tsr_unread(r, &t, end);
			return 1;
		}
	}
}

int tsr_write_frame(struct tsr_writer *w, const struct frame *f)
{
	for (int i = 0; i < f->n; i++) {
		int rc = tsr_write(w, &f->rec[i], f->number, i == f->n - 1);
		if (rc < 0)
			return rc;
	}
	return 0;
}
