/*
 * stream.h: the tensor stream of doc/FORMAT.md: a streaming reader and writer
 * that work on pipes, frames (one sentence and everything computed for it),
 * and a loader that maps a model file and uses aligned payloads in place.
 *
 * Errors: every function that can fail returns -1 (or NULL) and leaves a
 * message in err_msg() (errmsg.h) that names the stream, the byte offset of
 * the record and its name where known.  The programs print it prefixed with
 * their own name and exit 1.
 */
#ifndef ATTN_STREAM_H
#define ATTN_STREAM_H

#include <stdint.h>
#include <stdio.h>
#include "tensor.h"

/* Public: libtensor.so exports what is declared from here to the pop (the
 * library is built with -fvisibility=hidden; see the Makefile). */
#pragma GCC visibility push(default)

#define TSR_FLAG_ZLIB      0x01
#define TSR_FLAG_END_FRAME 0x02
#define TSR_DEFAULT_LIMIT  ((uint64_t)4 << 30)   /* 4 GiB per payload */

/*
 * The end mark (doc/FORMAT.md, The end mark): the record a writer that
 * finished writes last (tsr_writer_finish), i64 [] holding the number of
 * frames it wrote, alone in frame TSR_END_FRAME with the end flag.  A
 * reader takes it as the end of one stream (of those `cat` joined), not
 * as a frame: tsr_read never returns it.
 */
#define TSR_END_NAME  "stream.end"
#define TSR_END_FRAME UINT64_MAX

/* ---- reading ------------------------------------------------------------ */

struct tsr_reader;

/* label names the stream in messages ("<stdin>", a path). */
struct tsr_reader *tsr_reader_fd(int fd, const char *label);
struct tsr_reader *tsr_reader_path(const char *path);  /* "-" is stdin */
void tsr_reader_set_limit(struct tsr_reader *r, uint64_t max_payload_bytes);
/*
 * How a reader returns compressed records (tsr_reader_set_raw):
 * - TSR_RAW_OFF (the default): inflated and checked.
 * - TSR_RAW_CHECKED: as they were stored (t->stored, tensor.h), checked
 *   as ever (one complete zlib stream, the declared size, the checksum)
 *   by inflating a piece at a time and keeping none of it, so a record
 *   that is only passed on takes its compressed size in memory, not its
 *   declared one.
 * - TSR_RAW_LAZY: as stored, and the zlib stream and checksum left
 *   unchecked (t->origin) until the record is inflated, so a record that
 *   is only passed on costs no inflating either.  Everything else (the
 *   header, sizes, name, padding, a name repeated in the frame, the
 *   stored bytes all there) is checked as it is read.  A record never
 *   inflated is written out as it came, damage and all, and refused by
 *   the next reader that checks it: only for programs that pass on
 *   what they do not use (doc/FORMAT.md, Differences from the contract).
 * frame_find and frame_need inflate a record kept as stored when it is
 * first looked up (refusing it then, with the message the reader would
 * have given); tsr_write copies it as it was.
 */
enum { TSR_RAW_OFF, TSR_RAW_CHECKED, TSR_RAW_LAZY };
void tsr_reader_set_raw(struct tsr_reader *r, int raw);
/*
 * Input that ends without an end mark, or with nothing at all after the
 * last one, is an error (the writer stopped early) unless accept is set:
 * for streams saved before end marks, or written by other programs.
 * A mark that counts other than the frames read is an error either way.
 */
void tsr_reader_set_unterminated(struct tsr_reader *r, int accept);
/* The end marks read so far; *frames (may be NULL): the last one's count. */
uint64_t tsr_reader_marks(const struct tsr_reader *r, uint64_t *frames);
/* At the end of input: 0 if the last thing read was an end mark, else -1
 * with the message tsr_read gives when it refuses such input; for a
 * program that takes some streams without one and not others. */
int tsr_reader_ended(const struct tsr_reader *r);
void tsr_reader_free(struct tsr_reader *r);             /* closes a path's fd */
/* A reader over n bytes in memory (copied), for tests and tools. */
struct tsr_reader *tsr_reader_mem(const void *data, size_t n,
				  const char *label);
const char *tsr_reader_label(const struct tsr_reader *r);

/*
 * Reads the next record into t (payload owned by t, inflated and checked
 * unless the reader is set raw), end marks checked and passed over.
 * Returns 1 for a record, 0 at the normal end of input (after an end
 * mark, unless tsr_reader_set_unterminated), -1 on error.
 * *end_frame (may be NULL) is set from the record's end-of-frame flag.
 */
int tsr_read(struct tsr_reader *r, struct tensor *t, int *end_frame);

/* What the stream said about the record tsr_read returned last. */
struct tsr_recinfo {
	uint64_t offset;        /* where the record starts in the stream */
	uint64_t stored;        /* payload bytes as stored */
	int flags;              /* TSR_FLAG_* */
	int pad;                /* padding bytes before the payload */
	/* The payload as stored (compressed or not); valid until the next
	 * read from the reader or until the tensor is freed. */
	const void *stored_bytes;
};
void tsr_read_info(const struct tsr_reader *r, struct tsr_recinfo *info);

/* ---- frames ------------------------------------------------------------- */

/* A frame: records with one frame number, in stream order. */
struct frame {
	uint64_t number;
	int n, cap;
	struct tensor *rec;
};

/*
 * Reads one whole frame (up to and including the record with the end flag,
 * a change of frame number, an end mark, or the end of input).  Returns 1,
 * 0 at the end of input, -1 on error.  f is cleared first.
 */
int tsr_read_frame(struct tsr_reader *r, struct frame *f);

void frame_clear(struct frame *f);                 /* frees the records */
void frame_free(struct frame *f);
/*
 * The record of that name, its payload inflated if it was kept as stored
 * (tsr_reader_set_raw); NULL if there is none, or (err_msg() says so) if
 * there is no memory to inflate it or a lazy reader's record is damaged.
 */
struct tensor *frame_find(const struct frame *f, const char *name);
/* The same, the payload left as it is: for a record's name, type and
 * shape. */
struct tensor *frame_head(const struct frame *f, const char *name);
/* Makes a record kept as stored a plain one (a no-op on others): 0, or
 * -1 (err_msg()) when out of memory or, for a record a lazy reader left
 * unchecked, when it is damaged (the stream, offset, record and frame
 * named as tsr_read names them). */
int tsr_inflate(struct tensor *t);
/*
 * Like frame_find, but a missing record or a wrong dtype or rank (rank < 0:
 * any) is an error naming the record, the frame and `stage`, the program
 * that writes that record ("tokenize", "encode", ...).
 */
struct tensor *frame_need(const struct frame *f, const char *name, int dtype,
			  int rank, const char *stage);
/*
 * Appends t to the frame (taking its payload; t is left empty), or puts it
 * in the place of a record of the same name.  Returns the record in the
 * frame (valid until the frame next grows), NULL on error.
 */
struct tensor *frame_put(struct frame *f, struct tensor *t);
/* Removes records whose name matches the fnmatch(3) pattern. */
void frame_drop(struct frame *f, const char *pattern);

/* ---- writing ------------------------------------------------------------ */

struct tsr_writer;

/* zlib_level 0 writes plain payloads; 1..9 compresses every non-empty one. */
struct tsr_writer *tsr_writer_fd(int fd, const char *label, int zlib_level);
/* Writes to a temporary file beside path; tsr_writer_commit() fsyncs it and
 * renames it over path, so a crash leaves the old file intact.  A path
 * that exists and is not a regular file (a symbolic link, followed or
 * not, a device, a FIFO, a directory) is refused, by both, and left as
 * it is. */
struct tsr_writer *tsr_writer_atomic(const char *path, int zlib_level);
int tsr_writer_commit(struct tsr_writer *w);       /* and frees w */
void tsr_writer_abort(struct tsr_writer *w);       /* removes the temp file */

/* A record named TSR_END_NAME is refused: tsr_writer_finish writes it. */
int tsr_write(struct tsr_writer *w, const struct tensor *t, uint64_t frame,
	      int end_frame);
/*
 * The same with the record's flags given (TSR_FLAG_ZLIB compresses at the
 * writer's level, or zlib's default if it has none; an empty payload is
 * never compressed) and its padding (pad < 0: the aligning choice).  For
 * tools that reproduce a stream byte for byte.  Both write a record kept
 * as stored (t->stored, tsr_reader_set_raw) as it was: its zlib stream
 * and checksum, whatever flags and level say of compression.
 */
int tsr_write_ex(struct tsr_writer *w, const struct tensor *t,
		 uint64_t frame, int flags, int pad);
/* Sets the zlib level (1..9) that TSR_FLAG_ZLIB records are written at
 * from now on; 0 makes tsr_write write plain payloads again. */
void tsr_writer_set_level(struct tsr_writer *w, int zlib_level);
/* Writes every record of f under f->number, the end flag on the last one. */
int tsr_write_frame(struct tsr_writer *w, const struct frame *f);
int tsr_flush(struct tsr_writer *w);
/* Flushes and frees; returns -1 (or TSR_EPIPE) if the flush failed.  Does
 * not close an fd it was given.  On an atomic writer it commits.  Writes
 * no end mark: for model files, and for a stream given up on an error,
 * which its reader then refuses. */
int tsr_writer_close(struct tsr_writer *w);
/*
 * The normal end of a stream: writes the end mark (TSR_END_NAME, the
 * count of frames written), then closes as tsr_writer_close does.  Only
 * on the path of a program that did all it had to.
 */
int tsr_writer_finish(struct tsr_writer *w);

/*
 * A reader that stops early closes the pipe: the writer then gets EPIPE
 * (SIGPIPE is ignored by tsr_writer_fd) and reports it as TSR_EPIPE, and
 * the program exits quietly with status 0 (see prog.h).
 */
#define TSR_EPIPE (-2)

/* ---- mapped model files ------------------------------------------------- */

/*
 * Loads a whole stream file as one frame of records.  The file is mapped:
 * aligned, uncompressed payloads are used in place (t->owned == 0, and
 * read-only); others are copied or inflated.  Every record is checked as
 * tsr_read does, and a name that appears twice is an error.
 */
struct tsr_map_lazy;
struct tsr_map {
	struct frame f;      /* every record, in file order */
	void *base;          /* the mapping */
	size_t size;
	struct tsr_map_lazy *lazy;   /* checksums still to verify, or NULL */
};
struct tsr_map *tsr_map_open(const char *path);
/*
 * The same, but the checksum of an uncompressed payload is verified on the
 * payload's first use, by tsr_map_verify, not at open: a program that
 * needs a few records of a large file reads only those, and a payload it
 * never uses is never read.  Everything else (headers, sizes, names,
 * padding, compressed payloads) is still checked at open, so a damaged
 * file is refused at once unless the damage lies in an unused payload.
 */
struct tsr_map *tsr_map_open_lazy(const char *path);
/*
 * Verifies the checksum of t, a record of m, unless that was done already
 * (or m was opened by tsr_map_open): 0, or -1 with the usual message
 * (stream, offset, record).  Call it before using the payload.  Not
 * thread-safe: verify before handing records to threads.
 */
int tsr_map_verify(struct tsr_map *m, const struct tensor *t);
void tsr_map_close(struct tsr_map *m);

#pragma GCC visibility pop

#endif
