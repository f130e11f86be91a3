/*
 * tsr_record.h: one record of doc/FORMAT.md, decoded and checked.  Internal to
 * libtensor: the streaming reader (stream_read.c), the loader of mapped
 * files (tsr_map.c) and the writer (stream_write.c) share it, so that every
 * rule of the format is written down once.
 *
 * A record is decoded in the order its bytes arrive: the fixed 32 bytes
 * (tsr_rec_fixed), which say how long the dims and the name are; those
 * (tsr_rec_var); the padding (tsr_rec_pad); the payload (tsr_rec_payload).
 * Every failure leaves a message naming the stream, the record's offset,
 * and its name and frame once they are known.
 */
#ifndef ATTN_TSR_RECORD_H
#define ATTN_TSR_RECORD_H

#include <stddef.h>
#include <stdint.h>
#include "base/errmsg.h"
#include "stream.h"

#define TSR_MAGIC   "TNSR"
#define TSR_VERSION 1
#define TSR_FIXED   32          /* bytes before the dims */
#define TSR_ALIGN   64          /* payload alignment a writer keeps */
#define TSR_FLAGS_KNOWN (TSR_FLAG_ZLIB | TSR_FLAG_END_FRAME)

struct tsr_rec {
	const char *label;      /* the stream, for messages */
	uint64_t offset;        /* where the record starts in the stream */
	int have_frame;         /* the fixed part was decoded */
	int dtype, rank, flags;
	unsigned name_len, pad;
	uint32_t crc;
	uint64_t frame, stored;
	uint64_t nbytes;        /* the uncompressed payload size */
	uint64_t dim[TENSOR_MAX_RANK];
	char name[TENSOR_NAME_MAX + 1];         /* "" until decoded */
};

/* Sets the message "LABEL: byte OFFSET, record "NAME", frame F: ...". */
void tsr_rec_fail(const struct tsr_rec *h, const char *fmt, ...) ATTN_PRINTF(2, 3);
/* tsr_rec_fail: "truncated: end of SOURCE after GOT of the WANT bytes of
 * the PART" (source: "input", "file"); returns -1. */
int tsr_rec_truncated(const struct tsr_rec *h, const char *source,
		      const char *part, uint64_t got, uint64_t want);

/*
 * Decodes the fixed part at p (TSR_FIXED bytes), checking what fixes the
 * record's layout: magic, version, rank, name_len.  h->label and h->offset
 * must be set.  Returns 0 or -1.
 */
int tsr_rec_fixed(struct tsr_rec *h, const unsigned char *p);
/* The error for n (< TSR_FIXED) bytes at the end of input: a bad magic
 * if they show one, else a truncated record.  Returns -1. */
int tsr_rec_short(struct tsr_rec *h, const unsigned char *p, size_t n);
/* Bytes of dims and name after the fixed part. */
static inline size_t tsr_rec_var_len(const struct tsr_rec *h)
{
	return 8 * (size_t)h->rank + h->name_len;
}
/* Bytes from the start of the record to its payload. */
static inline size_t tsr_rec_head_len(const struct tsr_rec *h)
{
	return TSR_FIXED + tsr_rec_var_len(h) + h->pad;
}
/*
 * Decodes the dims and name at p and checks the rest of the header: name,
 * dtype, flags, pad, and the sizes against limit.  Returns 0 or -1.
 */
int tsr_rec_var(struct tsr_rec *h, const unsigned char *p, uint64_t limit);
/* Checks that the h->pad bytes at p are zero. */
int tsr_rec_pad(const struct tsr_rec *h, const unsigned char *p);
/*
 * Turns the h->stored bytes at stored into the h->nbytes of out: inflates a
 * compressed payload, copies a plain one (unless out == stored), and checks
 * the CRC.  Returns 0 or -1.
 */
int tsr_rec_payload(const struct tsr_rec *h, const void *stored, void *out);
/*
 * Checks the h->stored bytes of a compressed payload at stored as
 * tsr_rec_payload does, without keeping what they inflate to: a piece at
 * a time through a small buffer, whatever the payload's size.  0 or -1.
 */
int tsr_rec_zcheck(const struct tsr_rec *h, const void *stored);
/* Checks the CRC of the h->nbytes at data (the payload, uncompressed). */
int tsr_rec_check(const struct tsr_rec *h, const void *data);
/*
 * The end mark (doc/FORMAT.md, The end mark), h a record named
 * TSR_END_NAME: its header, i64 [] in frame TSR_END_FRAME with the end
 * flag, and fresh (it started a frame: alone in its own); then its count,
 * the 8 payload bytes at p, against the frames read since `since` ("the
 * stream's start").  0 or -1.
 */
int tsr_rec_mark_head(const struct tsr_rec *h, int fresh);
int tsr_rec_mark_count(const struct tsr_rec *h, const void *p,
		       uint64_t frames, const char *since);
/* Fills t's header fields (not its payload) from h. */
void tsr_rec_to_tensor(const struct tsr_rec *h, struct tensor *t);

/* zlib's crc32 over any length, by the fastest kernel the CPU has
 * (crc32.h). */
uint32_t tsr_crc(const void *p, size_t n);

/*
 * Encodes the header of a record of t into out (at least
 * TSR_FIXED + 8 * TENSOR_MAX_RANK + TENSOR_NAME_MAX + 63 bytes), padding
 * included; returns its length.
 */
size_t tsr_rec_encode(unsigned char *out, const struct tensor *t,
		      uint64_t frame, int flags, unsigned pad, uint32_t crc,
		      uint64_t stored);
#define TSR_HEAD_MAX (TSR_FIXED + 8 * TENSOR_MAX_RANK + TENSOR_NAME_MAX + 63)

/* The frame and reader internals that frame.c and tsr_map.c share. */
struct frame;
struct tsr_reader;
/* Appends t (taking its payload) even if its name is there already. */
struct tensor *frame_push(struct frame *f, struct tensor *t);
/* Gives back a record read one too far; the next tsr_read returns it. */
void tsr_unread(struct tsr_reader *r, struct tensor *t, int end_frame);
/* Whether the record tsr_read returned last started a frame: after one
 * with the end flag (an end mark's too), or under another number. */
int tsr_frame_started(const struct tsr_reader *r);

#endif
