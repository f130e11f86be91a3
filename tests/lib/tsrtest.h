/*
 * tsrtest.h: helpers for tests that build tensor streams in memory.
 *
 *      struct tt_stream s;
 *      tt_stream_open(&s, 0);                  // 0: plain, 1..9: zlib
 *      tsr_write(s.w, &t, 0, 1);               // any tsr_write* calls
 *      struct tsr_reader *r = tt_stream_reader(&s, "test");
 *      ... tsr_read(r, ...) ...;  tsr_reader_free(r);
 *
 * or tt_stream_bytes(&s, &n) for the bytes themselves, the end mark last (to damage them,
 * concatenate them, or feed them to a program through tt_pipe_bytes()).
 * The stream lives in an anonymous memory file; nothing touches the disk.
 */
#ifndef ATTN_TSRTEST_H
#define ATTN_TSRTEST_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "stream/stream.h"

struct tt_stream {
	int fd;
	struct tsr_writer *w;
};

/* Opens a writer into a fresh memory file; aborts the test on failure. */
void tt_stream_open(struct tt_stream *s, int zlib_level);
/* Finishes the writer (its end mark); returns what it wrote (malloc'ed)
 * and its length. */
unsigned char *tt_stream_bytes(struct tt_stream *s, size_t *n);
/* The same without the end mark: a model file, or a stream cut short. */
unsigned char *tt_stream_unmarked(struct tt_stream *s, size_t *n);
/* Closes the writer; returns a reader over what it wrote. */
struct tsr_reader *tt_stream_reader(struct tt_stream *s, const char *label);

/* A tensor with a payload of bytes that depend on seed (any dtype, so
 * floats may be NaN: compare payloads with memcmp). */
void tt_tensor(struct tensor *t, const char *name, int dtype, int rank,
	       const uint64_t *dim, uint32_t seed);

/*
 * Returns the read end of a pipe into which a child process writes the n
 * bytes at p, chunk bytes per write(2) (1: byte by byte), then exits.
 * *pid is the child, for tt_wait().
 */
int tt_pipe_bytes(const void *p, size_t n, size_t chunk, pid_t *pid);
/* Waits for a child; returns its exit status (-1 if it did not exit). */
int tt_wait(pid_t pid);

/* Writes n bytes to a new file at path; aborts the test on failure. */
void tt_write_file(const char *path, const void *p, size_t n);

#endif
