/*
 * test_stream_refuse.c: every refusal of doc/FORMAT.md ("What a reader must
 * refuse"), each with its whole message: the stream, the byte offset of
 * the record, its name and frame where known.  The damaged record is the
 * second of its stream, at byte 80, so offsets are really counted.  The
 * records are laid out by a small encoder written here from the spec,
 * independent of the library's writer.  Then the end mark's refusals
 * (doc/FORMAT.md, The end mark).
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "base/errmsg.h"
#include "run_suite.h"
#include "stream/stream.h"
#include "tsrtest.h"

struct rec {
	int version, dtype, rank, flags;
	unsigned name_len, pad;
	uint32_t crc;
	uint64_t frame, stored;
	uint64_t dim[9];
	const char *name;
	const void *payload;
};

static unsigned char *put_le(unsigned char *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = v >> (8 * i);
	return p + n;
}

/* Lays out r at p, padding zero; returns the end. */
static unsigned char *encode(unsigned char *p, const struct rec *r)
{
	memcpy(p, "TNSR", 4);
	p[4] = r->version;
	p[5] = r->dtype;
	p[6] = r->rank;
	p[7] = r->flags;
	p = put_le(p + 8, r->name_len, 2);
	p = put_le(p, r->pad, 2);
	p = put_le(p, r->crc, 4);
	p = put_le(p, r->frame, 8);
	p = put_le(p, r->stored, 8);
	for (int i = 0; i < r->rank; i++)
		p = put_le(p, r->dim[i], 8);
	memcpy(p, r->name, strlen(r->name));
	p += strlen(r->name);
	memset(p, 0, r->pad);
	p += r->pad;
	memcpy(p, r->payload, r->stored);
	return p + r->stored;
}

static const float values[6] = { 1, -2, 0.5f, 3, 4, -1e9f };
static unsigned char buf[1 << 12];
static size_t len;      /* of the stream in buf */
#define B 80            /* the second record */

/* A good first record (i32 [4] "src.ids", 80 bytes), then r. */
static void build(const struct rec *r)
{
	static const int32_t ids[4] = { 5, 6, 7, 2 };
	struct rec first = {
		.version = 1, .dtype = DT_I32, .rank = 1, .name_len = 7,
		.pad = 17, .frame = 3, .stored = 16, .dim = { 4 },
		.name = "src.ids", .payload = ids,
	};

	first.crc = crc32(0, (const void *)ids, 16);
	ck_assert_uint_eq(encode(buf, &first) - buf, B);
	len = encode(buf + B, r) - buf;
}

/* The good second record: f32 [2, 3] "enc.out", frame 3, end flag. */
static struct rec good(void)
{
	struct rec r = {
		.version = 1, .dtype = DT_F32, .rank = 2, .flags = 2,
		.name_len = 7, .pad = 57, .frame = 3, .stored = 24,
		.dim = { 2, 3 }, .name = "enc.out", .payload = values,
	};

	r.crc = crc32(0, (const void *)values, 24);
	return r;
}

/* Reads buf (the first len bytes): the first record must be fine, the
 * second refused with exactly want, by readers of modes 0 to last: one
 * that inflates, one that keeps compressed records as stored
 * (tsr_reader_set_raw), and one that leaves them unchecked as well. */
static void refused_by(const char *want, uint64_t limit, int last)
{
	for (int raw = TSR_RAW_OFF; raw <= last; raw++) {
		struct tsr_reader *r = tsr_reader_mem(buf, len, "in.tsr");
		struct tensor t;

		if (limit)
			tsr_reader_set_limit(r, limit);
		tsr_reader_set_raw(r, raw);
		ck_assert_int_eq(tsr_read(r, &t, NULL), 1);
		tensor_free(&t);
		ck_assert_int_eq(tsr_read(r, &t, NULL), -1);
		ck_assert_str_eq(err_msg(), want);
		ck_assert_ptr_null(t.data);
		err_set("something else");
		ck_assert_int_eq(tsr_read(r, &t, NULL), -1);	/* stays */
		ck_assert_str_eq(err_msg(), want);
		tsr_reader_free(r);
	}
}

/* What every reader refuses as it reads: all but a compressed payload. */
static void refused(const char *want, uint64_t limit)
{
	refused_by(want, limit, TSR_RAW_LAZY);
}

/*
 * A compressed second record whose zlib stream or checksum is wrong:
 * refused with exactly want as it is read by a reader that inflates or
 * checks as stored; a lazy reader (TSR_RAW_LAZY) takes it, writes it out
 * byte for byte (so the next reader refuses it the same), reads on, and
 * refuses it with the same message when it is inflated, as often as
 * asked, the record left as it was.
 */
static void refused_when_inflated(const char *want)
{
	struct tsr_reader *r = tsr_reader_mem(buf, len, "in.tsr");
	struct tensor t, u;
	struct tt_stream st;
	unsigned char *out;
	size_t n;
	int end;

	refused_by(want, 0, TSR_RAW_CHECKED);
	tsr_reader_set_raw(r, TSR_RAW_LAZY);
	tsr_reader_set_unterminated(r, 1);	/* made by hand: no end mark */
	tt_stream_open(&st, 0);
	ck_assert_int_eq(tsr_read(r, &t, &end), 1);
	ck_assert_ptr_null(t.origin);		/* plain: checked */
	ck_assert_int_eq(tsr_write(st.w, &t, t.frame, end), 0);
	tensor_free(&t);
	ck_assert_int_eq(tsr_read(r, &u, &end), 1);
	ck_assert_str_eq(u.origin, "in.tsr");
	ck_assert_uint_eq(u.offset, B);
	ck_assert_int_eq(tsr_write(st.w, &u, u.frame, end), 0);
	ck_assert_int_eq(tsr_read(r, &t, NULL), 0);
	tsr_reader_free(r);
	out = tt_stream_unmarked(&st, &n);
	ck_assert_uint_eq(n, len);
	ck_assert(memcmp(out, buf, len) == 0);
	free(out);
	for (int k = 0; k < 2; k++) {
		err_set("something else");
		ck_assert_int_eq(tsr_inflate(&u), -1);
		ck_assert_str_eq(err_msg(), want);
		ck_assert_uint_eq(u.stored, len - B - 112);
		ck_assert(memcmp(u.data, buf + B + 112, u.stored) == 0);
	}
	tensor_free(&u);
	ck_assert_ptr_null(u.origin);
}

START_TEST(good_reads)
{
	struct rec r = good();
	struct tsr_reader *rd;
	struct tensor t;
	int end;

	build(&r);
	ck_assert_uint_eq(len, 216);
	rd = tsr_reader_mem(buf, len, "in.tsr");
	tsr_reader_set_unterminated(rd, 1);	/* made by hand: no end mark */
	ck_assert_int_eq(tsr_read(rd, &t, &end), 1);
	ck_assert_int_eq(end, 0);
	tensor_free(&t);
	ck_assert_int_eq(tsr_read(rd, &t, &end), 1);
	ck_assert_int_eq(end, 1);
	ck_assert_str_eq(t.name, "enc.out");
	ck_assert(memcmp(t.data, values, 24) == 0);
	tensor_free(&t);
	ck_assert_int_eq(tsr_read(rd, &t, &end), 0);
	tsr_reader_free(rd);
}
END_TEST

START_TEST(bad_magic)
{
	struct rec r = good();

	build(&r);
	buf[B] = 'X';
	buf[B + 3] = 0x01;
	refused("in.tsr: byte 80: bad magic \"XNS\\x01\" (not a tensor "
		"stream, or damaged)", 0);
}
END_TEST

/*
 * The good record with one header field set to what the spec refuses
 * (name: another name), and the refusal.
 */
enum field { VERSION, DTYPE, RANK, FLAGS, PAD, NAME };
static const struct {
	enum field field;
	int value;
	const char *name;
	const char *want;
} bad_fields[] = {
	{ VERSION, 2, NULL, "in.tsr: byte 80: unknown version 2 (this reader "
	  "knows 1)" },
	{ DTYPE, 0, NULL, "in.tsr: byte 80, record \"enc.out\", frame 3: "
	  "unknown dtype 0" },
	{ DTYPE, 9, NULL, "in.tsr: byte 80, record \"enc.out\", frame 3: "
	  "unknown dtype 9" },
	{ RANK, 9, NULL, "in.tsr: byte 80, frame 3: rank 9 above 8" },
	{ FLAGS, 0x06, NULL, "in.tsr: byte 80, record \"enc.out\", frame 3: "
	  "undefined flag bits 0x06" },
	{ FLAGS, 0x80, NULL, "in.tsr: byte 80, record \"enc.out\", frame 3: "
	  "undefined flag bits 0x80" },
	{ PAD, 64, NULL, "in.tsr: byte 80, record \"enc.out\", frame 3: "
	  "padding 64 above 63" },
	{ NAME, 0, "enc out", "in.tsr: byte 80, record \"enc\\x20out\", "
	  "frame 3: name has a byte outside A-Z a-z 0-9 . _ : - /" },
	{ NAME, 0, "enc\xffout", "in.tsr: byte 80, record \"enc\\xffout\", "
	  "frame 3: name has a byte outside A-Z a-z 0-9 . _ : - /" },
};

START_TEST(bad_field)
{
	struct rec r = good();
	int v = bad_fields[_i].value;

	switch (bad_fields[_i].field) {
	case VERSION: r.version = v; break;
	case DTYPE: r.dtype = v; break;
	case RANK: r.rank = v; break;
	case FLAGS: r.flags = v; break;
	case PAD: r.pad = v; break;
	case NAME: r.name = bad_fields[_i].name; break;
	}
	build(&r);
	refused(bad_fields[_i].want, 0);
}
END_TEST

/* A name of 255 bytes of garbage: the message shows its first 48 bytes
 * and "...", so that it still says what is wrong (whole, the name took
 * 1,020 of the message's 1,023 characters and cut the reason off). */
START_TEST(long_bad_name)
{
#define E4 "\\xff\\xff\\xff\\xff"
#define E16 E4 E4 E4 E4
	struct rec r = good();
	char name[256];

	memset(name, 0xff, 255);
	name[255] = 0;
	r.name = name;
	r.name_len = 255;
	r.pad = 1;
	build(&r);
	refused("in.tsr: byte 80, record \"" E16 E16 E16 "...\", frame 3: "
		"name has a byte outside A-Z a-z 0-9 . _ : - /", 0);
#undef E4
#undef E16
}
END_TEST

START_TEST(bad_name_len)
{
	struct rec r = good();

	build(&r);
	buf[B + 8] = 0;
	refused("in.tsr: byte 80, frame 3: name length 0 not in 1..255", 0);
	buf[B + 8] = 0;
	buf[B + 9] = 1;
	refused("in.tsr: byte 80, frame 3: name length 256 not in 1..255", 0);
}
END_TEST

START_TEST(bad_padding_bytes)
{
	struct rec r = good();

	build(&r);
	buf[B + 32 + 16 + 7 + 10] = 1;
	refused("in.tsr: byte 80, record \"enc.out\", frame 3: padding byte 10 "
		"is 0x01, not zero", 0);
}
END_TEST

START_TEST(over_limit)
{
	struct rec r = good();

	build(&r);
	refused("in.tsr: byte 80, record \"enc.out\", frame 3: shape exceeds "
		"the limit of 20 bytes", 20);
	/* A product that overflows 64 bits. */
	r.dim[0] = r.dim[1] = (uint64_t)1 << 40;
	build(&r);
	refused("in.tsr: byte 80, record \"enc.out\", frame 3: shape exceeds "
		"the limit of 4294967296 bytes", 0);
	/* A zero dim does not hide a huge one. */
	r.dim[0] = 0;
	r.dim[1] = (uint64_t)1 << 62;
	build(&r);
	refused("in.tsr: byte 80, record \"enc.out\", frame 3: shape exceeds "
		"the limit of 4294967296 bytes", 0);
	/* Nor does rank 8 of 256s overflow unnoticed. */
	r.rank = 8;
	for (int i = 0; i < 8; i++)
		r.dim[i] = 256;
	build(&r);
	refused("in.tsr: byte 80, record \"enc.out\", frame 3: shape exceeds "
		"the limit of 4294967296 bytes", 0);
}
END_TEST

START_TEST(stored_over_limit)
{
	struct rec r = good();

	build(&r);
	buf[B + 7] = TSR_FLAG_ZLIB;
	put_le(buf + B + 24, (uint64_t)1 << 33, 8);
	refused("in.tsr: byte 80, record \"enc.out\", frame 3: stored size "
		"8589934592 exceeds the limit of 4294967296 bytes", 0);
}
END_TEST

START_TEST(stored_disagrees)
{
	struct rec r = good();

	build(&r);
	buf[B + 24] = 20;
	refused("in.tsr: byte 80, record \"enc.out\", frame 3: stored size 20 "
		"disagrees with the shape (24 bytes)", 0);
}
END_TEST

/* A compressed variant of the good record, z holding the zlib stream. */
static struct rec compressed(unsigned char *z, uLongf *zn)
{
	struct rec r = good();

	*zn = 256;
	ck_assert_int_eq(compress(z, zn, (const void *)values, 24), Z_OK);
	r.flags |= TSR_FLAG_ZLIB;
	r.stored = *zn;
	r.payload = z;
	return r;
}

START_TEST(zlib_refusals)
{
	unsigned char z[256];
	uLongf zn;
	struct rec r = compressed(z, &zn);
	struct tsr_reader *rd;
	struct tensor t;

	build(&r);
	rd = tsr_reader_mem(buf, len, "in.tsr");        /* fine as it is */
	ck_assert_int_eq(tsr_read(rd, &t, NULL), 1);
	tensor_free(&t);
	ck_assert_int_eq(tsr_read(rd, &t, NULL), 1);
	ck_assert(memcmp(t.data, values, 24) == 0);
	ck_assert_uint_eq(t.stored, 0);
	tensor_free(&t);
	tsr_reader_free(rd);
	/* Kept as stored: the zlib stream itself, until inflated. */
	rd = tsr_reader_mem(buf, len, "in.tsr");
	tsr_reader_set_raw(rd, 1);
	ck_assert_int_eq(tsr_read(rd, &t, NULL), 1);
	ck_assert_uint_eq(t.stored, 0);		/* plain stays plain */
	tensor_free(&t);
	ck_assert_int_eq(tsr_read(rd, &t, NULL), 1);
	ck_assert_uint_eq(t.stored, zn);
	ck_assert_uint_eq(t.nbytes, 24);
	ck_assert_uint_eq(t.crc, r.crc);
	ck_assert(memcmp(t.data, z, zn) == 0);
	ck_assert_int_eq(tsr_inflate(&t), 0);
	ck_assert_uint_eq(t.stored, 0);
	ck_assert(memcmp(t.data, values, 24) == 0);
	ck_assert_int_eq(tsr_inflate(&t), 0);		/* a no-op now */
	ck_assert(memcmp(t.data, values, 24) == 0);
	tensor_free(&t);
	tsr_reader_free(rd);
	/* Left unchecked too: the same, checked when inflated. */
	rd = tsr_reader_mem(buf, len, "in.tsr");
	tsr_reader_set_raw(rd, TSR_RAW_LAZY);
	ck_assert_int_eq(tsr_read(rd, &t, NULL), 1);
	ck_assert_uint_eq(t.stored, 0);
	ck_assert_ptr_null(t.origin);
	tensor_free(&t);
	ck_assert_int_eq(tsr_read(rd, &t, NULL), 1);
	ck_assert_uint_eq(t.stored, zn);
	ck_assert_uint_eq(t.crc, r.crc);
	ck_assert_str_eq(t.origin, "in.tsr");
	ck_assert(memcmp(t.data, z, zn) == 0);
	ck_assert_int_eq(tsr_inflate(&t), 0);
	ck_assert_uint_eq(t.stored, 0);
	ck_assert_ptr_null(t.origin);
	ck_assert(memcmp(t.data, values, 24) == 0);
	tensor_free(&t);
	tsr_reader_free(rd);

	/* Not zlib at all. */
	build(&r);
	buf[len - zn] ^= 0xff;
	refused_when_inflated("in.tsr: byte 80, record \"enc.out\", frame 3: "
			      "compressed payload is damaged (zlib: incorrect "
			      "header check)");
	/* Cut short: the last 4 bytes (the Adler-32) missing. */
	r.stored = zn - 4;
	build(&r);
	refused_when_inflated("in.tsr: byte 80, record \"enc.out\", frame 3: "
			      "compressed payload is not a complete zlib "
			      "stream");
	/* Bytes after the zlib stream. */
	z[zn] = 0;
	r.stored = zn + 1;
	build(&r);
	refused_when_inflated("in.tsr: byte 80, record \"enc.out\", frame 3: "
			      "1 bytes after the end of the zlib stream");
	/* Inflates to more, or to less, than the shape says. */
	r.stored = zn;
	r.dim[1] = 2;
	build(&r);
	refused_when_inflated("in.tsr: byte 80, record \"enc.out\", frame 3: "
			      "compressed payload inflates to more than the "
			      "declared 16 bytes");
	r.dim[1] = 4;
	build(&r);
	refused_when_inflated("in.tsr: byte 80, record \"enc.out\", frame 3: "
			      "compressed payload inflates to 24 bytes, not "
			      "the declared 32");
	r.dim[1] = 0;
	build(&r);
	refused_when_inflated("in.tsr: byte 80, record \"enc.out\", frame 3: "
			      "compressed payload inflates to more than the "
			      "declared 0 bytes");
	/* More than deflate's 1032:1 can give. */
	r.dim[0] = 1;
	r.dim[1] = 1032 * zn + 4;
	build(&r);
	{
		char want[200];
		snprintf(want, sizeof want, "in.tsr: byte 80, record "
			 "\"enc.out\", frame 3: compressed payload of %lu "
			 "bytes cannot inflate to the declared %lu",
			 (unsigned long)zn, (unsigned long)(4 * r.dim[1]));
		refused(want, 0);
	}
	r.dim[0] = 2;
	/* Compressed flag with nothing stored: refused as it is read by a
	 * lazy reader too, which would have no zlib stream to keep. */
	r.dim[1] = 3;
	r.stored = 0;
	build(&r);
	refused("in.tsr: byte 80, record \"enc.out\", frame 3: compressed "
		"payload is not a complete zlib stream", 0);
}
END_TEST

START_TEST(checksum)
{
	struct rec r = good();
	char want[200];
	uint32_t crc = r.crc;

	r.crc ^= 0x100;
	build(&r);
	snprintf(want, sizeof want, "in.tsr: byte 80, record \"enc.out\", "
		 "frame 3: checksum mismatch (stored 0x%08x, payload 0x%08x)",
		 crc ^ 0x100, crc);
	refused(want, 0);
	/* The same for a compressed payload, checked after inflating. */
	{
		unsigned char z[256];
		uLongf zn;
		r = compressed(z, &zn);
		r.crc ^= 1;
		build(&r);
		snprintf(want, sizeof want, "in.tsr: byte 80, record "
			 "\"enc.out\", frame 3: checksum mismatch (stored "
			 "0x%08x, payload 0x%08x)", crc ^ 1, crc);
		refused_when_inflated(want);
	}
	/* An empty payload has crc32 0. */
	r = good();
	r.dim[0] = 0;
	r.stored = 0;
	r.crc = 1;
	build(&r);
	refused("in.tsr: byte 80, record \"enc.out\", frame 3: checksum "
		"mismatch (stored 0x00000001, payload 0x00000000)", 0);
}
END_TEST

START_TEST(truncated)
{
	struct rec r = good();

	build(&r);
	len = B + 10;
	refused("in.tsr: byte 80: truncated: end of input after 10 of the 32 "
		"bytes of the record header", 0);
	len = B + 40;
	refused("in.tsr: byte 80, frame 3: truncated: end of input after 40 "
		"of the 55 bytes of the record header", 0);
	len = B + 60;
	refused("in.tsr: byte 80, record \"enc.out\", frame 3: truncated: end "
		"of input after 60 of the 112 bytes of the record header", 0);
	len = B + 112 + 10;
	refused("in.tsr: byte 80, record \"enc.out\", frame 3: truncated: end "
		"of input after 10 of the 24 bytes of the payload", 0);
	len = B + 112;
	refused("in.tsr: byte 80, record \"enc.out\", frame 3: truncated: end "
		"of input after 0 of the 24 bytes of the payload", 0);
	len = B + 1;
	refused("in.tsr: byte 80: truncated: end of input after 1 of the 32 "
		"bytes of the record header", 0);
}
END_TEST

/* The same refusals through a pipe written byte by byte: the reader
 * must not depend on how the bytes arrive. */
START_TEST(refused_through_pipe)
{
	struct rec r = good();
	struct tsr_reader *rd;
	struct tensor t;
	pid_t pid;
	int fd;

	r.crc ^= 1;
	build(&r);
	len -= 5;
	fd = tt_pipe_bytes(buf, len, 1, &pid);
	rd = tsr_reader_fd(fd, "<stdin>");
	ck_assert_int_eq(tsr_read(rd, &t, NULL), 1);
	tensor_free(&t);
	ck_assert_int_eq(tsr_read(rd, &t, NULL), -1);
	ck_assert_str_eq(err_msg(), "<stdin>: byte 80, record \"enc.out\", "
			 "frame 3: truncated: end of input after 19 of the 24 "
			 "bytes of the payload");
	tsr_reader_free(rd);
	close(fd);
	ck_assert_int_eq(tt_wait(pid), 0);
}
END_TEST

/* tsr_read_frame passes a refusal on. */
START_TEST(refused_in_frame)
{
	struct rec r = good();
	struct tsr_reader *rd;
	struct frame f = { 0 };

	r.dtype = 12;
	build(&r);
	rd = tsr_reader_mem(buf, len, "in.tsr");
	ck_assert_int_eq(tsr_read_frame(rd, &f), -1);
	ck_assert_str_eq(err_msg(), "in.tsr: byte 80, record \"enc.out\", "
			 "frame 3: unknown dtype 12");
	frame_free(&f);
	tsr_reader_free(rd);
}
END_TEST

/*
 * A frame holds each name once: a second record of a name in the same
 * frame is refused, naming record and frame, whether read record by
 * record or as frames; the same name in the next frame (after an end
 * flag, or under another frame number) is no repeat.  The same by a
 * reader of each mode (tsr_reader_set_raw, _i), over compressed records
 * where it keeps them as stored: a lazy reader too checks names as it
 * reads.
 */
START_TEST(repeated_name)
{
	struct tt_stream st;
	struct tensor t, u, out;
	struct tsr_reader *rd;
	struct frame f = { 0 };
	uint64_t dim[1] = { 2 };
	unsigned char *bytes;
	size_t n;

	tt_tensor(&t, "src.ids", DT_I32, 1, dim, 1);
	tt_tensor(&u, "src.text", DT_U8, 1, dim, 2);
	tt_stream_open(&st, _i ? 6 : 0);
	ck_assert_int_eq(tsr_write(st.w, &t, 0, 1), 0);	/* frame 0 */
	ck_assert_int_eq(tsr_write(st.w, &t, 0, 0), 0);	/* frame 0 again */
	ck_assert_int_eq(tsr_write(st.w, &u, 0, 0), 0);
	ck_assert_int_eq(tsr_write(st.w, &t, 1, 0), 0);	/* frame 1 */
	ck_assert_int_eq(tsr_write(st.w, &u, 1, 0), 0);
	ck_assert_int_eq(tsr_write(st.w, &t, 1, 1), 0);	/* repeated */
	bytes = tt_stream_bytes(&st, &n);
	rd = tsr_reader_mem(bytes, n, "in.tsr");
	tsr_reader_set_raw(rd, _i);
	for (int i = 0; i < 5; i++) {
		ck_assert_msg(tsr_read(rd, &out, NULL) == 1, "record %d: %s",
			      i, err_msg());
		tensor_free(&out);
	}
	ck_assert_int_eq(tsr_read(rd, &out, NULL), -1);
	ck_assert_ptr_nonnull(strstr(err_msg(), "in.tsr: byte "));
	ck_assert_ptr_nonnull(strstr(err_msg(), "record \"src.ids\", "
				     "frame 1: a second record of this name"));
	ck_assert_int_eq(tsr_read(rd, &out, NULL), -1);	/* and stays so */
	tsr_reader_free(rd);

	rd = tsr_reader_mem(bytes, n, "in.tsr");
	tsr_reader_set_raw(rd, _i);
	ck_assert_int_eq(tsr_read_frame(rd, &f), 1);
	ck_assert_int_eq(f.n, 1);
	ck_assert_int_eq(tsr_read_frame(rd, &f), 1);
	ck_assert_int_eq(f.n, 2);
	ck_assert_int_eq(tsr_read_frame(rd, &f), -1);
	ck_assert_ptr_nonnull(strstr(err_msg(), "frame 1: a second record"));
	frame_free(&f);
	tsr_reader_free(rd);
	free(bytes);
	tensor_free(&t);
	tensor_free(&u);
}
END_TEST

/* An end mark counting n frames, its payload at a multiple of 64 when it
 * starts at byte B (doc/FORMAT.md, The end mark). */
static struct rec mark(unsigned char *count, uint64_t n)
{
	struct rec r = {
		.version = 1, .dtype = DT_I64, .flags = 2, .name_len = 10,
		.pad = 6, .frame = UINT64_MAX, .stored = 8,
		.name = "stream.end", .payload = count,
	};

	put_le(count, n, 8);
	r.crc = crc32(0, count, 8);
	return r;
}

/* What each reader mode makes of buf: the record of build(), then 0 or
 * (want) an error, and the marks it saw. */
static void reads_to_end(const char *want, uint64_t marks)
{
	for (int raw = TSR_RAW_OFF; raw <= TSR_RAW_LAZY; raw++) {
		struct tsr_reader *r = tsr_reader_mem(buf, len, "in.tsr");
		struct tensor t;
		uint64_t count;

		tsr_reader_set_raw(r, raw);
		ck_assert_int_eq(tsr_read(r, &t, NULL), 1);
		ck_assert_str_eq(t.name, "src.ids");
		tensor_free(&t);
		ck_assert_int_eq(tsr_read(r, &t, NULL), want ? -1 : 0);
		if (want)
			ck_assert_str_eq(err_msg(), want);
		ck_assert_uint_eq(tsr_reader_marks(r, &count), marks);
		ck_assert_uint_eq(count, marks ? 1 : 0);
		tsr_reader_free(r);
	}
}

/*
 * The end mark: passed over, its count checked, its header refused
 * unless i64 [] alone in frame 2^64-1 with the end flag; compressed, it
 * reads the same.  Input that ends without one is refused (naming the
 * last frame, or that there was nothing), unless told to take it.
 */
START_TEST(end_mark)
{
	static const char bad_head[] = "in.tsr: byte 80, record "
		"\"stream.end\", frame %llu: a stream's end mark must be i64 "
		"[], alone in frame 18446744073709551615 with the end flag";
	unsigned char count[8], z[64];
	uLongf zn = sizeof z;
	struct rec r = mark(count, 1);
	struct tsr_reader *rd;
	struct tensor t;
	char want[300];

	build(&r);
	reads_to_end(NULL, 1);
	r = mark(count, 2);
	build(&r);
	reads_to_end("in.tsr: byte 80, record \"stream.end\", frame "
		     "18446744073709551615: the end mark counts 2 frames, but "
		     "1 was read since the stream's start", 0);
	snprintf(want, sizeof want, bad_head, (unsigned long long)UINT64_MAX);
	for (int k = 0; k < 3; k++) {
		r = mark(count, 1);
		if (k == 0)
			r.flags = 0;
		else if (k == 1)
			r.dtype = DT_F64;
		else
			r.rank = 1, r.dim[0] = 1, r.pad = 62;
		build(&r);
		refused(want, 0);
	}
	/* in the frame of the record before it */
	r = mark(count, 1);
	r.frame = 3;
	build(&r);
	snprintf(want, sizeof want, bad_head, 3ULL);
	refused(want, 0);
	/* compressed */
	r = mark(count, 1);
	ck_assert_int_eq(compress2(z, &zn, count, 8, 9), Z_OK);
	r.flags = 3;
	r.stored = zn;
	r.payload = z;
	build(&r);
	reads_to_end(NULL, 1);

	/* no mark after the frame: refused, or taken when told */
	r = good();
	build(&r);
	rd = tsr_reader_mem(buf, len, "in.tsr");
	for (int i = 0; i < 2; i++) {
		ck_assert_int_eq(tsr_read(rd, &t, NULL), 1);
		tensor_free(&t);
	}
	ck_assert_int_eq(tsr_read(rd, &t, NULL), -1);
	ck_assert_str_eq(err_msg(), "in.tsr: input ends after frame 3 (1 "
			 "frame since its start) without the stream's end "
			 "mark: the program that wrote it stopped early (a "
			 "stream saved before end marks: --unterminated takes "
			 "it)");
	tsr_reader_free(rd);
	rd = tsr_reader_mem(buf, len, "in.tsr");
	tsr_reader_set_unterminated(rd, 1);
	for (int i = 0; i < 2; i++) {
		ck_assert_int_eq(tsr_read(rd, &t, NULL), 1);
		tensor_free(&t);
	}
	ck_assert_int_eq(tsr_read(rd, &t, NULL), 0);
	ck_assert_uint_eq(tsr_reader_marks(rd, NULL), 0);
	tsr_reader_free(rd);
	rd = tsr_reader_mem(buf, 0, "in.tsr");
	ck_assert_int_eq(tsr_read(rd, &t, NULL), -1);
	ck_assert_str_eq(err_msg(), "in.tsr: no input, not even the stream's "
			 "end mark: the program that should have written it "
			 "stopped before it began");
	tsr_reader_free(rd);
}
END_TEST

/* Streams joined by cat: the frame before a mark ends there, whatever
 * the number after it; each mark counts the frames since the one before;
 * after the last, the input may end, and only there. */
START_TEST(end_mark_joined)
{
	unsigned char count[8], two[512];
	struct rec r = mark(count, 1);
	struct tsr_reader *rd;
	struct frame f = { 0 };
	size_t n;
	uint64_t c;

	build(&r);
	n = len;
	ck_assert_uint_eq(n, B + 56);
	memcpy(two, buf, n);
	memcpy(two + n, buf, n);
	rd = tsr_reader_mem(two, 2 * n, "cat");
	for (int i = 0; i < 2; i++) {
		ck_assert_int_eq(tsr_read_frame(rd, &f), 1);
		ck_assert_int_eq(f.n, 1);
	}
	ck_assert_int_eq(tsr_read_frame(rd, &f), 0);
	ck_assert_uint_eq(tsr_reader_marks(rd, &c), 2);
	ck_assert_uint_eq(c, 1);
	tsr_reader_free(rd);
	/* the second cut after its record */
	rd = tsr_reader_mem(two, n + B, "cat");
	ck_assert_int_eq(tsr_read_frame(rd, &f), 1);
	ck_assert_int_eq(tsr_read_frame(rd, &f), -1);
	ck_assert_str_eq(err_msg(), "cat: input ends after frame 3 (1 frame "
			 "since the last end mark) without the stream's end "
			 "mark: the program that wrote it stopped early (a "
			 "stream saved before end marks: --unterminated takes "
			 "it)");
	tsr_reader_free(rd);
	/* the second's mark counting 2 */
	r = mark(count, 2);
	build(&r);
	memcpy(two + n, buf, n);
	rd = tsr_reader_mem(two, 2 * n, "cat");
	ck_assert_int_eq(tsr_read_frame(rd, &f), 1);
	ck_assert_int_eq(tsr_read_frame(rd, &f), -1);
	ck_assert_str_eq(err_msg(), "cat: byte 216, record \"stream.end\", "
			 "frame 18446744073709551615: the end mark counts 2 "
			 "frames, but 1 was read since the previous end mark");
	tsr_reader_free(rd);
	frame_free(&f);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("stream_refuse");
	TCase *tc = tcase_create("refuse");

	tcase_add_test(tc, good_reads);
	tcase_add_test(tc, bad_magic);
	tcase_add_loop_test(tc, bad_field, 0,
			    sizeof bad_fields / sizeof bad_fields[0]);
	tcase_add_test(tc, long_bad_name);
	tcase_add_test(tc, bad_name_len);
	tcase_add_test(tc, bad_padding_bytes);
	tcase_add_test(tc, over_limit);
	tcase_add_test(tc, stored_over_limit);
	tcase_add_test(tc, stored_disagrees);
	tcase_add_test(tc, zlib_refusals);
	tcase_add_test(tc, checksum);
	tcase_add_test(tc, truncated);
	tcase_add_test(tc, refused_through_pipe);
	tcase_add_test(tc, refused_in_frame);
	tcase_add_loop_test(tc, repeated_name, TSR_RAW_OFF,
			    TSR_RAW_LAZY + 1);
	tcase_add_test(tc, end_mark);
	tcase_add_test(tc, end_mark_joined);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(suite());
}
