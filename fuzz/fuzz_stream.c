/*
 * fuzz_stream.c: libFuzzer target for the stream reader and the mapped
 * loader (make fuzz).  Any input must be read without a crash, a leak or
 * undefined behaviour; what reads as records must write back and read
 * again to the same records, in the stream and in the text form (so every
 * float prints exactly), and then end at the writer's end mark (half the
 * inputs are taken without one of their own).  A reader that keeps
 * compressed records as stored (tsr_reader_set_raw, TSR_RAW_CHECKED)
 * must accept and refuse
 * exactly what the inflating one does, with the same message, and its
 * records, written back as stored, must read as the inflating reader's.
 * So must a lazy one (TSR_RAW_LAZY), but that where the inflating reader
 * refuses a compressed payload, it takes the record and refuses it, with
 * the same message, when it is inflated.  fuzz_text reads input as text.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "base/errmsg.h"
#include "stream/stream.h"
#include "fuzz_util.h"

/* A raw reader of the mode given against the inflating one, record by
 * record. */
static void raw_same(int in, int mode)
{
	struct tsr_reader *r, *raw, *back;
	struct tensor t, u, v;
	char msg[1024], path[64];
	int out = fuzz_mem_file(NULL, 0), rc, rc2, n = 0, end, end2;
	struct tsr_writer *w = tsr_writer_fd(out, "out", 0);

	lseek(in, 0, SEEK_SET);
	r = tsr_reader_fd(in, "fuzz");
	tsr_reader_set_limit(r, 1 << 22);
	/* the same bytes through a descriptor of their own (own offset);
	 * messages then differ only in the stream's name */
	snprintf(path, sizeof path, "/proc/self/fd/%d", in);
	if (!(raw = tsr_reader_path(path)))
		abort();
	tsr_reader_set_limit(raw, 1 << 22);
	tsr_reader_set_raw(raw, mode);
	for (;;) {
		rc = tsr_read(r, &t, &end);
		snprintf(msg, sizeof msg, "%s", rc < 0 ? err_msg() : "");
		rc2 = tsr_read(raw, &u, &end2);
		if (rc < 0 && rc2 == 1 && mode == TSR_RAW_LAZY) {
			/* left unchecked: refused when inflated */
			if (!u.origin || tsr_inflate(&u) == 0 ||
			    strcmp(strchr(msg, ':'), strchr(err_msg(), ':')))
				abort();
			tensor_free(&u);
			break;
		}
		if (rc != rc2 || (rc == 1 && end != end2))
			abort();
		if (rc < 0) {
			if (strcmp(strchr(msg, ':'), strchr(err_msg(), ':')))
				abort();
			break;
		}
		if (rc == 0)
			break;
		/* lazy: every record kept as stored left unchecked */
		if (!u.origin != (mode != TSR_RAW_LAZY || !u.stored))
			abort();
		/* the end-of-frame flags too: a frame may follow one of
		 * the same number, and its names may be the same */
		if (tsr_write(w, &u, u.frame, end2) < 0)
			abort();
		n++;
		if (tsr_inflate(&u) < 0)
			abort();
		fuzz_same(&t, &u);
		tensor_free(&t);
		tensor_free(&u);
	}
	if (tsr_writer_close(w) < 0)
		abort();
	tsr_reader_free(r);
	tsr_reader_free(raw);
	/* what was written as stored reads as the inflating reader read */
	lseek(in, 0, SEEK_SET);
	lseek(out, 0, SEEK_SET);
	r = tsr_reader_fd(in, "fuzz");
	tsr_reader_set_limit(r, 1 << 22);
	back = tsr_reader_fd(out, "back");
	while (n--) {
		if (tsr_read(r, &t, NULL) != 1 || tsr_read(back, &v, NULL) != 1)
			abort();
		fuzz_same(&t, &v);
		tensor_free(&t);
		tensor_free(&v);
	}
	tsr_reader_free(r);
	tsr_reader_free(back);
	close(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int in = fuzz_mem_file(data, size), out = fuzz_mem_file(NULL, 0);
	struct tsr_reader *r = tsr_reader_fd(in, "fuzz");
	struct tsr_writer *w = tsr_writer_fd(out, "out", size % 2 ? 1 : 0);
	struct frame f = { 0 }, g = { 0 };
	struct tsr_map *m;
	char path[64];
	int n = 0;

	tsr_reader_set_limit(r, 1 << 22);
	/* half the inputs taken without an end mark, as --unterminated */
	tsr_reader_set_unterminated(r, size % 4 >= 2);
	while (tsr_read_frame(r, &f) == 1) {
		if (tsr_write_frame(w, &f) < 0)
			abort();
		n++;
	}
	frame_clear(&f);
	if (tsr_writer_finish(w) < 0)
		abort();
	tsr_reader_free(r);

	/* What was read writes back and reads again the same, frame by
	 * frame (so go over the input again). */
	lseek(in, 0, SEEK_SET);
	lseek(out, 0, SEEK_SET);
	r = tsr_reader_fd(in, "fuzz");
	tsr_reader_set_limit(r, 1 << 22);
	/* as the first pass took it: a last frame cut short is one of the
	 * n only without the end mark's check */
	tsr_reader_set_unterminated(r, size % 4 >= 2);
	{
		struct tsr_reader *back = tsr_reader_fd(out, "back");
		for (int k = 0; k < n; k++) {
			if (tsr_read_frame(r, &f) != 1 ||
			    tsr_read_frame(back, &g) != 1 || f.n != g.n ||
			    f.number != g.number)
				abort();
			for (int i = 0; i < f.n; i++) {
				fuzz_same(&f.rec[i], &g.rec[i]);
				fuzz_text_roundtrip(&f.rec[i]);
			}
		}
		if (tsr_read_frame(back, &g) != 0)
			abort();
		tsr_reader_free(back);
	}
	tsr_reader_free(r);
	frame_free(&f);
	frame_free(&g);

	raw_same(in, TSR_RAW_CHECKED);
	raw_same(in, TSR_RAW_LAZY);
	snprintf(path, sizeof path, "/proc/self/fd/%d", in);
	m = tsr_map_open(path);
	tsr_map_close(m);
	close(in);
	close(out);
	return 0;
}
