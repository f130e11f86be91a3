/*
 * test_stream.c: the tensor stream of doc/FORMAT.md: round trips of every
 * dtype and rank, the exact bytes of a record, alignment, compression,
 * frames, concatenated streams, pipes (byte by byte, EINTR, a reader that
 * goes away), the atomic writer and the mapped loader.  The refusals of
 * the spec are in test_stream_refuse.c.
 */
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>
#include <dirent.h>
#include <zlib.h>
#include "base/errmsg.h"
#include "run_suite.h"
#include "stream/stream.h"
#include "tsrtest.h"

static const int all_dtypes[] = {
	DT_F32, DT_F16, DT_BF16, DT_I32, DT_I8, DT_U8, DT_F64, DT_I64,
};
#define NDT (int)(sizeof all_dtypes / sizeof all_dtypes[0])

static void assert_same(const struct tensor *a, const struct tensor *b)
{
	ck_assert_str_eq(a->name, b->name);
	ck_assert_int_eq(a->dtype, b->dtype);
	ck_assert_int_eq(a->rank, b->rank);
	for (int i = 0; i < a->rank; i++)
		ck_assert_uint_eq(a->dim[i], b->dim[i]);
	ck_assert_uint_eq(a->nbytes, b->nbytes);
	ck_assert(a->nbytes == 0 || memcmp(a->data, b->data, a->nbytes) == 0);
}

/* Where the payload of the record t, of info, starts in the stream. */
static uint64_t stored_at(const struct tsr_recinfo *info,
			  const struct tensor *t)
{
	return info->offset + 32 + 8 * t->rank + strlen(t->name) + info->pad;
}

/* Where the payload of the record last read starts in the stream. */
static uint64_t payload_offset(struct tsr_reader *r, const struct tensor *t)
{
	struct tsr_recinfo info;

	tsr_read_info(r, &info);
	return stored_at(&info, t);
}

/* Every dtype, every rank 0..8, plain and compressed, with aligned
 * payloads and frames numbered as written. */
START_TEST(roundtrip_dtypes_ranks)
{
	for (int level = 0; level <= 9; level += 9) {
		struct tensor in[NDT * 9], out;
		struct tt_stream s;
		struct tsr_reader *r;
		int n = 0, end;

		tt_stream_open(&s, level);
		for (int d = 0; d < NDT; d++)
			for (int rank = 0; rank <= 8; rank++) {
				uint64_t dim[8];
				char name[32];
				for (int i = 0; i < rank; i++)
					dim[i] = 1 + (i + d) % 3;
				snprintf(name, sizeof name, "t%d.r%d", d, rank);
				tt_tensor(&in[n], name, all_dtypes[d], rank,
					  dim, n);
				ck_assert_int_eq(tsr_write(s.w, &in[n], 1000 + n,
							   n % 2), 0);
				n++;
			}
		r = tt_stream_reader(&s, "rt");
		for (int i = 0; i < n; i++) {
			struct tsr_recinfo info;
			ck_assert_int_eq(tsr_read(r, &out, &end), 1);
			assert_same(&in[i], &out);
			ck_assert_uint_eq(out.frame, 1000 + i);
			ck_assert_int_eq(end, i % 2);
			ck_assert_int_eq(payload_offset(r, &out) % 64, 0);
			tsr_read_info(r, &info);
			ck_assert_int_eq(!!(info.flags & TSR_FLAG_ZLIB), level > 0);
			ck_assert(out.owned && ((uintptr_t)out.data % 64) == 0);
			tensor_free(&out);
			tensor_free(&in[i]);
		}
		ck_assert_int_eq(tsr_read(r, &out, &end), 0);
		ck_assert_int_eq(tsr_read(r, &out, &end), 0);
		tsr_reader_free(r);
	}
}
END_TEST

/* The bytes of one record, laid out by hand from doc/FORMAT.md. */
START_TEST(exact_bytes)
{
	struct tt_stream s;
	struct tensor t;
	unsigned char want[80] = {
		'T', 'N', 'S', 'R', 1, DT_I32, 1, 0x02,
		3, 0, 21, 0, 0, 0, 0, 0,                /* name_len, pad, crc */
		5, 0, 0, 0, 0, 0, 0, 0,                 /* frame 5 */
		8, 0, 0, 0, 0, 0, 0, 0,                 /* stored 8 */
		2, 0, 0, 0, 0, 0, 0, 0,                 /* dim 2 */
		'a', '.', 'b',                          /* then 21 zeros */
	};
	uint64_t dim[1] = { 2 };
	int32_t v[2] = { 1, -2 };
	unsigned char payload[8] = { 1, 0, 0, 0, 0xfe, 0xff, 0xff, 0xff };
	uint32_t crc = crc32(0, payload, 8);
	unsigned char *got;
	size_t n;

	want[12] = crc;
	want[13] = crc >> 8;
	want[14] = crc >> 16;
	want[15] = crc >> 24;
	memcpy(want + 64, payload, 8);
	ck_assert_int_eq(tensor_init_copy(&t, "a.b", DT_I32, 1, dim, v), 0);
	tt_stream_open(&s, 0);
	ck_assert_int_eq(tsr_write(s.w, &t, 5, 1), 0);
	got = tt_stream_bytes(&s, &n);
	ck_assert_uint_eq(n, 136);
	ck_assert(memcmp(got, want, 72) == 0);
	/* then the end mark: i64 [] "stream.end" in frame 2^64-1 with the
	 * end flag, 14 bytes of padding (72 + 32 + 10 + 14 = 128), the
	 * count of frames, 1 */
	memset(want, 0, sizeof want);
	memcpy(want, "TNSR\x01\x08\x00\x02\x0a\x00\x0e\x00", 12);
	memset(payload, 0, 8);
	payload[0] = 1;
	crc = crc32(0, payload, 8);
	for (int i = 0; i < 4; i++)
		want[12 + i] = crc >> 8 * i;
	memset(want + 16, 0xff, 8);
	want[24] = 8;
	memcpy(want + 32, "stream.end", 10);
	memcpy(want + 56, payload, 8);
	ck_assert(memcmp(got + 72, want, 64) == 0);
	free(got);
	tensor_free(&t);
}
END_TEST

/* A scalar, empty tensors, and compression of an empty payload (never). */
START_TEST(empty_and_scalar)
{
	uint64_t d0[1] = { 0 }, d1[3] = { 3, 0, 2 };
	struct tensor in[3], out;
	struct tt_stream s;
	struct tsr_reader *r;
	struct tsr_recinfo info;

	tt_tensor(&in[0], "empty", DT_F32, 1, d0, 1);
	tt_tensor(&in[1], "empty3", DT_I64, 3, d1, 2);
	tt_tensor(&in[2], "scalar", DT_F64, 0, NULL, 3);
	ck_assert_uint_eq(in[0].nbytes, 0);
	ck_assert_uint_eq(in[2].nbytes, 8);
	tt_stream_open(&s, 6);
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(tsr_write(s.w, &in[i], 0, i == 2), 0);
	r = tt_stream_reader(&s, "empty");
	for (int i = 0; i < 3; i++) {
		ck_assert_int_eq(tsr_read(r, &out, NULL), 1);
		assert_same(&in[i], &out);
		ck_assert_ptr_nonnull(out.data);
		tsr_read_info(r, &info);
		ck_assert_int_eq(!!(info.flags & TSR_FLAG_ZLIB), i == 2);
		tensor_free(&out);
		tensor_free(&in[i]);
	}
	ck_assert_int_eq(tsr_read(r, &out, NULL), 0);
	tsr_reader_free(r);
}
END_TEST

/* Compression shrinks a compressible payload and reads back exactly,
 * also past the reader's buffer (1 MiB payloads). */
START_TEST(compression_large)
{
	uint64_t dim[1] = { 1 << 18 };
	struct tensor t, out;
	struct tt_stream s;
	struct tsr_reader *r;
	struct tsr_recinfo info;
	float *v;

	ck_assert_int_eq(tensor_init(&t, "big", DT_F32, 1, dim), 0);
	v = t.data;
	for (size_t i = 0; i < dim[0]; i++)
		v[i] = (float)(i % 100);
	for (int level = 0; level <= 1; level++) {
		tt_stream_open(&s, level);
		ck_assert_int_eq(tsr_write(s.w, &t, 7, 1), 0);
		ck_assert_int_eq(tsr_write(s.w, &t, 8, 1), 0);
		r = tt_stream_reader(&s, "big");
		for (int k = 0; k < 2; k++) {
			ck_assert_int_eq(tsr_read(r, &out, NULL), 1);
			assert_same(&t, &out);
			tsr_read_info(r, &info);
			if (level)
				ck_assert_uint_lt(info.stored, t.nbytes / 4);
			else
				ck_assert_uint_eq(info.stored, t.nbytes);
			tensor_free(&out);
		}
		tsr_reader_free(r);
	}
	tensor_free(&t);
}
END_TEST

/* Frames end at the end flag, a change of number, or the end of input;
 * the same number after an end flag starts a new frame. */
START_TEST(frame_boundaries)
{
	/* frame numbers and end flags of 8 records */
	static const uint64_t num[] = { 0, 0, 1, 1, 3, 3, 3, 2 };
	static const int endf[] = { 0, 1, 0, 0, 1, 0, 1, 0 };
	/* expected frames: {0,1} {2,3} {4} {5,6} {7} */
	static const int first[] = { 0, 2, 4, 5, 7 }, count[] = { 2, 2, 1, 2, 1 };
	struct tt_stream s;
	struct tsr_reader *r;
	struct frame f = { 0 };
	struct tensor t;
	uint64_t dim[1] = { 1 };

	tt_stream_open(&s, 0);
	for (int i = 0; i < 8; i++) {
		char name[8];
		snprintf(name, sizeof name, "r%d", i);
		tt_tensor(&t, name, DT_U8, 1, dim, i);
		ck_assert_int_eq(tsr_write(s.w, &t, num[i], endf[i]), 0);
		tensor_free(&t);
	}
	r = tt_stream_reader(&s, "frames");
	for (int k = 0; k < 5; k++) {
		ck_assert_int_eq(tsr_read_frame(r, &f), 1);
		ck_assert_int_eq(f.n, count[k]);
		ck_assert_uint_eq(f.number, num[first[k]]);
		for (int i = 0; i < f.n; i++) {
			char name[8];
			snprintf(name, sizeof name, "r%d", first[k] + i);
			ck_assert_str_eq(f.rec[i].name, name);
		}
	}
	ck_assert_int_eq(tsr_read_frame(r, &f), 0);
	ck_assert_int_eq(f.n, 0);
	frame_free(&f);
	tsr_reader_free(r);
}
END_TEST

/* Writing frames moves the end flag to the last record; two streams
 * concatenated read as one, and the second loses nothing. */
START_TEST(frames_concatenated)
{
	struct frame f = { 0 }, g = { 0 };
	struct tt_stream s;
	struct tsr_reader *r;
	struct tensor t;
	unsigned char *a, *cat;
	size_t na;
	uint64_t dim[2] = { 3, 5 };

	tt_stream_open(&s, 0);
	for (int k = 0; k < 2; k++) {
		f.number = k;
		tt_tensor(&t, "x", DT_F32, 2, dim, k);
		frame_put(&f, &t);
		tt_tensor(&t, "src.ids", DT_I32, 1, dim, k + 10);
		frame_put(&f, &t);
		ck_assert_int_eq(tsr_write_frame(s.w, &f), 0);
		frame_clear(&f);
	}
	a = tt_stream_bytes(&s, &na);
	/* Make the second copy start off the 64-byte grid. */
	cat = malloc(2 * na);
	memcpy(cat, a, na);
	memcpy(cat + na, a, na);
	r = tsr_reader_mem(cat, 2 * na, "cat");
	for (int k = 0; k < 4; k++) {
		ck_assert_int_eq(tsr_read_frame(r, &g), 1);
		ck_assert_uint_eq(g.number, k % 2);
		ck_assert_int_eq(g.n, 2);
		tt_tensor(&t, "x", DT_F32, 2, dim, k % 2);
		assert_same(&t, frame_find(&g, "x"));
		tensor_free(&t);
		ck_assert_ptr_nonnull(frame_need(&g, "src.ids", DT_I32, 1, "tokenize"));
	}
	ck_assert_int_eq(tsr_read_frame(r, &g), 0);
	frame_free(&f);
	frame_free(&g);
	tsr_reader_free(r);
	free(a);
	free(cat);
}
END_TEST

START_TEST(frame_helpers)
{
	struct frame f = { 0 };
	struct tensor t, *p;
	uint64_t dim[1] = { 4 };

	f.number = 12;
	tt_tensor(&t, "src.ids", DT_I32, 1, dim, 1);
	ck_assert_ptr_nonnull(frame_put(&f, &t));
	ck_assert_ptr_null(t.data);
	tt_tensor(&t, "enc.out", DT_F32, 1, dim, 2);
	frame_put(&f, &t);
	tt_tensor(&t, "att.k", DT_F32, 1, dim, 3);
	frame_put(&f, &t);
	/* Replacing keeps the place. */
	tt_tensor(&t, "src.ids", DT_I32, 1, dim, 4);
	p = frame_put(&f, &t);
	ck_assert_int_eq(f.n, 3);
	ck_assert_ptr_eq(p, &f.rec[0]);
	tt_tensor(&t, "src.ids", DT_I32, 1, dim, 4);
	assert_same(&t, p);
	tensor_free(&t);

	ck_assert_ptr_null(frame_need(&f, "hyp.ids", DT_I32, 1, "decode"));
	ck_assert_str_eq(err_msg(), "frame 12 has no record \"hyp.ids\" "
			 "(written by decode)");
	ck_assert_ptr_null(frame_need(&f, "enc.out", DT_F32, 2, "encode"));
	ck_assert_str_eq(err_msg(), "frame 12: record \"enc.out\" is f32 of "
			 "rank 1, not f32 of rank 2 (as written by encode)");
	ck_assert_ptr_null(frame_need(&f, "enc.out", DT_F16, -1, "encode"));
	ck_assert_str_eq(err_msg(), "frame 12: record \"enc.out\" is f32, not "
			 "f16 (as written by encode)");
	ck_assert_ptr_nonnull(frame_need(&f, "enc.out", DT_F32, -1, "encode"));

	frame_drop(&f, "att.*");
	ck_assert_int_eq(f.n, 2);
	ck_assert_ptr_null(frame_find(&f, "att.k"));
	frame_drop(&f, "*");
	ck_assert_int_eq(f.n, 0);
	frame_free(&f);
}
END_TEST

/*
 * A reader that keeps compressed records as stored (tsr_reader_set_raw):
 * a 4 MiB record of seven values repeated and a plain record come back
 * with the stream's own payload bytes, a plain writer writes the frame
 * again byte for byte, and frame_need and frame_find inflate it to the
 * values written.  A wrong checksum is refused all the same.
 */
START_TEST(raw_records)
{
	uint64_t dim[1] = { 1 << 20 }, small[1] = { 5 };
	struct tensor big, ids, *t;
	struct tt_stream s;
	struct frame f = { 0 };
	struct tsr_reader *r;
	struct tsr_recinfo info;
	unsigned char *in, *out;
	size_t n_in, n_out;
	char want[200];
	uint32_t crc;

	ck_assert_int_eq(tensor_init(&big, "src.emb", DT_F32, 1, dim), 0);
	for (size_t i = 0; i < dim[0]; i++)
		((float *)big.data)[i] = (float)(i % 7);
	tt_tensor(&ids, "src.ids", DT_I32, 1, small, 3);
	tt_stream_open(&s, 9);
	ck_assert_int_eq(tsr_write_ex(s.w, &ids, 4, 0, -1), 0);
	ck_assert_int_eq(tsr_write(s.w, &big, 4, 1), 0);
	in = tt_stream_bytes(&s, &n_in);
	ck_assert_uint_lt(n_in, big.nbytes / 100);

	r = tsr_reader_mem(in, n_in, "raw");
	tsr_reader_set_raw(r, 1);
	ck_assert_int_eq(tsr_read_frame(r, &f), 1);
	tsr_read_info(r, &info);
	ck_assert_int_eq(f.n, 2);
	ck_assert_uint_eq(f.rec[0].stored, 0);
	assert_same(&ids, &f.rec[0]);
	t = frame_head(&f, "src.emb");
	ck_assert_uint_eq(t->stored, info.stored);
	ck_assert_uint_eq(t->nbytes, big.nbytes);
	ck_assert(memcmp(t->data, in + stored_at(&info, t), t->stored) == 0);

	tt_stream_open(&s, 0);
	ck_assert_int_eq(tsr_write_frame(s.w, &f), 0);
	out = tt_stream_bytes(&s, &n_out);
	ck_assert_uint_eq(n_out, n_in);
	ck_assert(memcmp(out, in, n_in) == 0);
	free(out);

	t = frame_need(&f, "src.emb", DT_F32, 1, "embed");
	ck_assert_ptr_nonnull(t);
	ck_assert_uint_eq(t->stored, 0);
	assert_same(&big, t);
	ck_assert_ptr_eq(frame_find(&f, "src.emb"), t);
	ck_assert_int_eq(tsr_read_frame(r, &f), 0);
	tsr_reader_free(r);
	frame_free(&f);

	/* The checksum is checked though nothing is kept inflated. */
	crc = in[info.offset + 12] | in[info.offset + 13] << 8 |
	      in[info.offset + 14] << 16 | (uint32_t)in[info.offset + 15] << 24;
	in[info.offset + 12] ^= 1;
	snprintf(want, sizeof want, "raw: byte %llu, record \"src.emb\", "
		 "frame 4: checksum mismatch (stored 0x%08x, payload 0x%08x)",
		 (unsigned long long)info.offset, crc ^ 1, crc);
	r = tsr_reader_mem(in, n_in, "raw");
	tsr_reader_set_raw(r, 1);
	ck_assert_int_eq(tsr_read_frame(r, &f), -1);
	ck_assert_str_eq(err_msg(), want);
	tsr_reader_free(r);
	frame_free(&f);
	free(in);
	tensor_free(&big);
	tensor_free(&ids);
}
END_TEST

/*
 * A lazy reader (TSR_RAW_LAZY) over the same stream: the compressed
 * record is kept as stored and left unchecked; a frame that never looks
 * at it is written out byte for byte, and frame_need inflates it to the
 * values an inflating reader reads.  With a wrong checksum it is read
 * and passed on all the same, byte for byte, and refused, with the
 * reader's message, only when looked up (frame_need and frame_find), or
 * by the next reader that checks it.
 */
START_TEST(lazy_records)
{
	uint64_t dim[1] = { 1 << 20 }, small[1] = { 5 };
	struct tensor big, ids, *t;
	struct tt_stream s;
	struct frame f = { 0 }, g = { 0 };
	struct tsr_reader *r;
	struct tsr_recinfo info;
	unsigned char *in, *out;
	size_t n_in, n_out;
	char want[200];
	uint32_t crc = 0;

	ck_assert_int_eq(tensor_init(&big, "src.emb", DT_F32, 1, dim), 0);
	for (size_t i = 0; i < dim[0]; i++)
		((float *)big.data)[i] = (float)(i % 7);
	tt_tensor(&ids, "src.ids", DT_I32, 1, small, 3);
	tt_stream_open(&s, 9);
	ck_assert_int_eq(tsr_write_ex(s.w, &ids, 4, 0, -1), 0);
	ck_assert_int_eq(tsr_write(s.w, &big, 4, 1), 0);
	in = tt_stream_bytes(&s, &n_in);

	for (int bad = 0; bad <= 1; bad++) {
		r = tsr_reader_mem(in, n_in, "lazy");
		tsr_reader_set_raw(r, TSR_RAW_LAZY);
		ck_assert_int_eq(tsr_read_frame(r, &f), 1);
		tsr_read_info(r, &info);
		ck_assert_int_eq(tsr_read_frame(r, &g), 0);
		tsr_reader_free(r);
		ck_assert_int_eq(f.n, 2);
		ck_assert_ptr_null(f.rec[0].origin);
		assert_same(&ids, &f.rec[0]);
		t = frame_head(&f, "src.emb");
		ck_assert_str_eq(t->origin, "lazy");
		ck_assert_uint_eq(t->offset, info.offset);
		ck_assert_uint_eq(t->stored, info.stored);
		ck_assert(memcmp(t->data, in + stored_at(&info, t),
				 t->stored) == 0);

		tt_stream_open(&s, 0);
		ck_assert_int_eq(tsr_write_frame(s.w, &f), 0);
		out = tt_stream_bytes(&s, &n_out);
		ck_assert_uint_eq(n_out, n_in);
		ck_assert(memcmp(out, in, n_in) == 0);
		free(out);

		if (!bad) {
			t = frame_need(&f, "src.emb", DT_F32, 1, "embed");
			ck_assert_ptr_nonnull(t);
			ck_assert_uint_eq(t->stored, 0);
			ck_assert_ptr_null(t->origin);
			assert_same(&big, t);
			frame_free(&f);
			/* a wrong checksum for the next round */
			crc = in[info.offset + 12] |
			      in[info.offset + 13] << 8 |
			      in[info.offset + 14] << 16 |
			      (uint32_t)in[info.offset + 15] << 24;
			in[info.offset + 12] ^= 1;
			continue;
		}
		snprintf(want, sizeof want, "lazy: byte %llu, record "
			 "\"src.emb\", frame 4: checksum mismatch (stored "
			 "0x%08x, payload 0x%08x)",
			 (unsigned long long)info.offset, crc ^ 1, crc);
		ck_assert_ptr_null(frame_need(&f, "src.emb", DT_F32, 1,
					      "embed"));
		ck_assert_str_eq(err_msg(), want);
		err_set("something else");
		ck_assert_ptr_null(frame_find(&f, "src.emb"));
		ck_assert_str_eq(err_msg(), want);
		ck_assert_ptr_nonnull(frame_find(&f, "src.ids"));
		frame_free(&f);
		/* an inflating reader of what was passed on (the same
		 * bytes) */
		r = tsr_reader_mem(in, n_in, "lazy");
		ck_assert_int_eq(tsr_read_frame(r, &f), -1);
		ck_assert_str_eq(err_msg(), want);
		tsr_reader_free(r);
	}
	frame_free(&f);
	frame_free(&g);
	free(in);
	tensor_free(&big);
	tensor_free(&ids);
}
END_TEST

static unsigned char *sample_stream(int level, int frames, size_t *n)
{
	struct tt_stream s;
	struct tensor t;
	uint64_t dim[2] = { 7, 3 };

	tt_stream_open(&s, level);
	for (int k = 0; k < frames; k++) {
		tt_tensor(&t, "a", DT_F32, 2, dim, k);
		ck_assert_int_eq(tsr_write(s.w, &t, k, 0), 0);
		tensor_free(&t);
		tt_tensor(&t, "b", DT_U8, 1, dim, k + 100);
		ck_assert_int_eq(tsr_write(s.w, &t, k, 1), 0);
		tensor_free(&t);
	}
	return tt_stream_bytes(&s, n);
}

static void check_sample(struct tsr_reader *r, int frames)
{
	struct frame f = { 0 };
	struct tensor t;
	uint64_t dim[2] = { 7, 3 };

	for (int k = 0; k < frames; k++) {
		ck_assert_msg(tsr_read_frame(r, &f) == 1, "%s", err_msg());
		ck_assert_uint_eq(f.number, k);
		ck_assert_int_eq(f.n, 2);
		tt_tensor(&t, "a", DT_F32, 2, dim, k);
		assert_same(&t, &f.rec[0]);
		tensor_free(&t);
		tt_tensor(&t, "b", DT_U8, 1, dim, k + 100);
		assert_same(&t, &f.rec[1]);
		tensor_free(&t);
	}
	ck_assert_int_eq(tsr_read_frame(r, &f), 0);
	frame_free(&f);
}

/* A pipe written one byte per write(2): every read is short. */
START_TEST(pipe_byte_by_byte)
{
	for (int level = 0; level <= 1; level++) {
		size_t n;
		unsigned char *p = sample_stream(level, 4, &n);
		pid_t pid;
		int fd = tt_pipe_bytes(p, n, 1, &pid);
		struct tsr_reader *r = tsr_reader_fd(fd, "pipe");

		check_sample(r, 4);
		tsr_reader_free(r);
		close(fd);
		ck_assert_int_eq(tt_wait(pid), 0);
		free(p);
	}
}
END_TEST

static void on_alarm(int sig)
{
	(void)sig;
}

/* Reads interrupted by a signal (no SA_RESTART) are retried. */
START_TEST(pipe_eintr)
{
	struct sigaction sa = { .sa_handler = on_alarm };
	struct itimerval every = { { 0, 200 }, { 0, 200 } }, off = { 0 };
	size_t n;
	unsigned char *p = sample_stream(0, 30, &n);
	pid_t pid;
	int fd;
	struct tsr_reader *r;

	sigemptyset(&sa.sa_mask);
	ck_assert_int_eq(sigaction(SIGALRM, &sa, NULL), 0);
	fd = tt_pipe_bytes(p, n, 7, &pid);
	r = tsr_reader_fd(fd, "pipe");
	ck_assert_int_eq(setitimer(ITIMER_REAL, &every, NULL), 0);
	check_sample(r, 30);
	setitimer(ITIMER_REAL, &off, NULL);
	tsr_reader_free(r);
	close(fd);
	ck_assert_int_eq(tt_wait(pid), 0);
	free(p);
}
END_TEST

/* A frame with its end flag is returned at once, while the writer still
 * holds the pipe open (interactive use). */
START_TEST(frame_without_waiting)
{
	int data[2], go[2];
	pid_t pid;
	struct frame f = { 0 };
	struct tsr_reader *r;

	ck_assert_int_eq(pipe(data), 0);
	ck_assert_int_eq(pipe(go), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct tsr_writer *w;
		struct tensor t;
		uint64_t dim[1] = { 3 };
		char c;
		close(data[0]);
		close(go[1]);
		w = tsr_writer_fd(data[1], "child", 0);
		tensor_init(&t, "src.ids", DT_I32, 1, dim);
		tsr_write(w, &t, 0, 0);
		strcpy(t.name, "tgt.ids");
		tsr_write(w, &t, 0, 1);
		tsr_flush(w);
		if (read(go[0], &c, 1) != 1)    /* wait for the parent */
			_exit(2);
		tsr_write(w, &t, 1, 1);
		_exit(tsr_writer_finish(w) == 0 ? 0 : 1);
	}
	close(data[1]);
	close(go[0]);
	alarm(5);               /* a hang fails the test */
	r = tsr_reader_fd(data[0], "pipe");
	ck_assert_int_eq(tsr_read_frame(r, &f), 1);
	ck_assert_int_eq(f.n, 2);
	ck_assert_int_eq(write(go[1], "x", 1), 1);
	ck_assert_int_eq(tsr_read_frame(r, &f), 1);
	ck_assert_uint_eq(f.number, 1);
	ck_assert_int_eq(tsr_read_frame(r, &f), 0);
	alarm(0);
	frame_free(&f);
	tsr_reader_free(r);
	close(data[0]);
	close(go[1]);
	ck_assert_int_eq(tt_wait(pid), 0);
}
END_TEST

/* A reader that goes away: EPIPE comes back as TSR_EPIPE, no signal. */
START_TEST(writer_epipe)
{
	int fds[2], rc = 0;
	struct tsr_writer *w;
	struct tensor t;
	uint64_t dim[1] = { 1000 };

	ck_assert_int_eq(pipe(fds), 0);
	close(fds[0]);
	w = tsr_writer_fd(fds[1], "out", 0);
	tt_tensor(&t, "x", DT_F32, 1, dim, 1);
	for (int i = 0; i < 1000 && rc == 0; i++)
		rc = tsr_write(w, &t, i, 1);
	if (rc == 0)
		rc = tsr_flush(w);
	ck_assert_int_eq(rc, TSR_EPIPE);
	ck_assert_int_eq(tsr_write(w, &t, 0, 1), TSR_EPIPE);   /* sticky */
	ck_assert_int_eq(tsr_writer_close(w), TSR_EPIPE);
	close(fds[1]);
	tensor_free(&t);
}
END_TEST

/* The writer refuses a tensor that would make a bad record, and the
 * stream stays usable. */
START_TEST(writer_refuses)
{
	struct tt_stream s;
	struct tensor t, ok, out;
	struct tsr_reader *r;
	uint64_t dim[1] = { 2 };

	tt_tensor(&ok, "ok", DT_I8, 1, dim, 1);
	tt_tensor(&t, "bad", DT_I8, 1, dim, 1);
	tt_stream_open(&s, 0);
	strcpy(t.name, "bad name");
	ck_assert_int_eq(tsr_write(s.w, &t, 0, 0), -1);
	ck_assert_ptr_nonnull(strstr(err_msg(), "\"bad name\""));
	strcpy(t.name, "bad");
	t.nbytes = 3;
	ck_assert_int_eq(tsr_write(s.w, &t, 0, 0), -1);
	ck_assert_ptr_nonnull(strstr(err_msg(), "3 payload bytes"));
	t.nbytes = 2;
	t.dtype = 9;
	ck_assert_int_eq(tsr_write(s.w, &t, 0, 0), -1);
	t.dtype = DT_I8;
	ck_assert_int_eq(tsr_write(s.w, &ok, 0, 1), 0);
	r = tt_stream_reader(&s, "ok");
	ck_assert_int_eq(tsr_read(r, &out, NULL), 1);
	assert_same(&ok, &out);
	tensor_free(&out);
	ck_assert_int_eq(tsr_read(r, &out, NULL), 0);
	tsr_reader_free(r);
	tensor_free(&t);
	tensor_free(&ok);
}
END_TEST

/* tsr_write_ex reproduces a record's flags and padding. */
START_TEST(write_ex_pad_flags)
{
	struct tt_stream s;
	struct tensor t, t2, out;
	struct tsr_reader *r;
	struct tsr_recinfo info;
	uint64_t dim[1] = { 100 };

	tt_tensor(&t, "x", DT_U8, 1, dim, 3);
	tt_tensor(&t2, "y", DT_U8, 1, dim, 3);
	tt_stream_open(&s, 0);
	ck_assert_int_eq(tsr_write_ex(s.w, &t, 4, TSR_FLAG_ZLIB, 5), 0);
	ck_assert_int_eq(tsr_write_ex(s.w, &t2, 4, TSR_FLAG_END_FRAME, 0), 0);
	ck_assert_int_eq(tsr_write_ex(s.w, &t, 4, 0, 64), -1);
	ck_assert_int_eq(tsr_write_ex(s.w, &t, 4, 4, 0), -1);
	r = tt_stream_reader(&s, "ex");
	ck_assert_int_eq(tsr_read(r, &out, NULL), 1);
	tsr_read_info(r, &info);
	ck_assert_int_eq(info.flags, TSR_FLAG_ZLIB);
	ck_assert_int_eq(info.pad, 5);
	assert_same(&t, &out);
	tensor_free(&out);
	ck_assert_int_eq(tsr_read(r, &out, NULL), 1);
	tsr_read_info(r, &info);
	ck_assert_int_eq(info.flags, TSR_FLAG_END_FRAME);
	ck_assert_int_eq(info.pad, 0);
	tensor_free(&out);
	tsr_reader_free(r);
	tensor_free(&t);
	tensor_free(&t2);
}
END_TEST

static char tmpdir[64];

static void make_tmpdir(void)
{
	strcpy(tmpdir, "/tmp/test_stream.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static int count_files(void)
{
	DIR *d = opendir(tmpdir);
	struct dirent *e;
	int n = 0;

	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

static void remove_tmpdir(void)
{
	DIR *d = opendir(tmpdir);
	struct dirent *e;
	char path[512];

	while ((e = readdir(d)))
		if (e->d_name[0] != '.') {
			snprintf(path, sizeof path, "%s/%s", tmpdir, e->d_name);
			unlink(path);
		}
	closedir(d);
	rmdir(tmpdir);
}

/* The atomic writer leaves the old file alone until it commits. */
START_TEST(atomic_writer)
{
	char path[128];
	struct tsr_writer *w;
	struct tsr_reader *r;
	struct tensor t, out;
	struct stat st;
	uint64_t dim[1] = { 5 };

	make_tmpdir();
	snprintf(path, sizeof path, "%s/model.tsr", tmpdir);
	tt_write_file(path, "old", 3);
	tt_tensor(&t, "w", DT_F32, 1, dim, 9);
	w = tsr_writer_atomic(path, 0);
	ck_assert_ptr_nonnull(w);
	ck_assert_int_eq(tsr_write(w, &t, 0, 1), 0);
	ck_assert_int_eq(tsr_flush(w), 0);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq(st.st_size, 3);
	ck_assert_int_eq(count_files(), 2);
	tsr_writer_abort(w);
	ck_assert_int_eq(count_files(), 1);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq(st.st_size, 3);

	w = tsr_writer_atomic(path, 0);
	ck_assert_int_eq(tsr_write(w, &t, 0, 1), 0);
	ck_assert_int_eq(tsr_writer_commit(w), 0);
	ck_assert_int_eq(count_files(), 1);
	r = tsr_reader_path(path);
	ck_assert_ptr_nonnull(r);
	ck_assert_int_eq(tsr_read(r, &out, NULL), 1);
	assert_same(&t, &out);
	tensor_free(&out);
	tsr_reader_free(r);
	tensor_free(&t);
	ck_assert_ptr_null(tsr_writer_atomic("/nonexistent/dir/m.tsr", 0));
	ck_assert_ptr_nonnull(strstr(err_msg(), "/nonexistent/dir/m.tsr"));
	ck_assert_ptr_null(tsr_reader_path("/nonexistent/x.tsr"));
	ck_assert_str_eq(err_msg(), "/nonexistent/x.tsr: No such file or directory");
	remove_tmpdir();
}
END_TEST

/* The mapped loader: aligned plain payloads in place, the rest copied or
 * inflated, each checked; a name twice is refused. */
START_TEST(map_model)
{
	char path[128];
	struct tt_stream s;
	struct tensor t[3];
	struct tsr_map *m;
	unsigned char *a, *b;
	size_t na, nb;
	uint64_t dim[2] = { 33, 5 };

	make_tmpdir();
	snprintf(path, sizeof path, "%s/m.tsr", tmpdir);
	tt_tensor(&t[0], "model.config", DT_U8, 1, dim, 1);
	tt_tensor(&t[1], "enc.w", DT_F32, 2, dim, 2);
	tt_tensor(&t[2], "dec.w", DT_F16, 2, dim, 3);
	tt_stream_open(&s, 0);
	tsr_write(s.w, &t[0], 0, 0);
	tsr_write_ex(s.w, &t[1], 0, TSR_FLAG_ZLIB, -1);
	tsr_write(s.w, &t[2], 0, 1);
	a = tt_stream_unmarked(&s, &na);	/* a model file */
	tt_write_file(path, a, na);
	m = tsr_map_open(path);
	ck_assert_msg(m != NULL, "%s", err_msg());
	ck_assert_int_eq(m->f.n, 3);
	for (int i = 0; i < 3; i++)
		assert_same(&t[i], &m->f.rec[i]);
	ck_assert_int_eq(m->f.rec[0].owned, 0);
	ck_assert_int_eq(m->f.rec[1].owned, 1);        /* inflated */
	ck_assert_int_eq(m->f.rec[2].owned, 0);
	ck_assert((char *)m->f.rec[2].data > (char *)m->base &&
		  (char *)m->f.rec[2].data < (char *)m->base + m->size);
	tsr_map_close(m);

	/* A 97-byte stream in front: nothing is aligned any more, so every
	 * payload is copied. */
	tt_stream_open(&s, 0);
	ck_assert_int_eq(tsr_write(s.w, &t[0], 0, 1), 0);
	b = tt_stream_unmarked(&s, &nb);
	ck_assert_uint_eq(nb, 97);
	{
		size_t n = nb + na;
		unsigned char *c = malloc(n);
		memcpy(c, b, nb);
		memcpy(c + nb, a, na);
		tt_write_file(path, c, n);
		ck_assert_ptr_null(tsr_map_open(path));
		ck_assert_ptr_nonnull(strstr(err_msg(), "record \"model.config\""));
		ck_assert_ptr_nonnull(strstr(err_msg(), "second record of that name"));
		/* Rename the first record (its name is at byte 32 + 8). */
		c[32 + 8 + 6] = 'x';
		tt_write_file(path, c, n);
		m = tsr_map_open(path);
		ck_assert_msg(m != NULL, "%s", err_msg());
		ck_assert_int_eq(m->f.n, 4);
		for (int i = 1; i < 4; i++) {
			assert_same(&t[i - 1], &m->f.rec[i]);
			ck_assert_int_eq(m->f.rec[i].owned, 1);
		}
		tsr_map_close(m);
		/* A damaged payload is refused like the reader does. */
		c[n - 1] ^= 1;
		tt_write_file(path, c, n);
		ck_assert_ptr_null(tsr_map_open(path));
		ck_assert_ptr_nonnull(strstr(err_msg(), "checksum mismatch"));
		ck_assert_ptr_nonnull(strstr(err_msg(), "record \"dec.w\""));
		tt_write_file(path, c, n - 3);
		ck_assert_ptr_null(tsr_map_open(path));
		ck_assert_ptr_nonnull(strstr(err_msg(), "truncated"));
		free(c);
	}
	tt_write_file(path, "", 0);
	m = tsr_map_open(path);
	ck_assert_ptr_nonnull(m);
	ck_assert_int_eq(m->f.n, 0);
	tsr_map_close(m);
	for (int i = 0; i < 3; i++)
		tensor_free(&t[i]);
	free(a);
	free(b);
	remove_tmpdir();
}
END_TEST

/*
 * The lazy loader: every header is checked at open, an uncompressed
 * payload only when tsr_map_verify is asked for it.  A damaged payload
 * that is used is refused with the usual message; one that is never used
 * is never read, so its damage goes unnoticed (tensordump -c checks all).
 */
START_TEST(map_lazy)
{
	char path[128], where[256];
	struct tt_stream s;
	struct tensor t[4];
	struct tsr_map *m;
	unsigned char *a;
	size_t na, used_at, unused_at, unused_rec;
	uint64_t dim[2] = { 7, 9 };

	make_tmpdir();
	snprintf(path, sizeof path, "%s/m.tsr", tmpdir);
	tt_tensor(&t[0], "model.config", DT_U8, 1, dim, 1);
	tt_tensor(&t[1], "used", DT_F32, 2, dim, 2);
	tt_tensor(&t[2], "unused", DT_F32, 2, dim, 3);
	tt_tensor(&t[3], "packed", DT_F32, 2, dim, 4);
	tt_stream_open(&s, 0);
	for (int i = 0; i < 3; i++)
		tsr_write(s.w, &t[i], 0, 0);
	tsr_write_ex(s.w, &t[3], 0, TSR_FLAG_ZLIB | TSR_FLAG_END_FRAME, -1);
	a = tt_stream_unmarked(&s, &na);	/* a model file */
	tt_write_file(path, a, na);

	/* Undamaged: the same records as the eager loader, in place. */
	m = tsr_map_open_lazy(path);
	ck_assert_msg(m != NULL, "%s", err_msg());
	ck_assert_int_eq(m->f.n, 4);
	for (int i = 0; i < 4; i++) {
		assert_same(&t[i], &m->f.rec[i]);
		ck_assert_int_eq(tsr_map_verify(m, &m->f.rec[i]), 0);
	}
	ck_assert_int_eq(m->f.rec[1].owned, 0);
	used_at = (char *)m->f.rec[1].data - (char *)m->base;
	unused_at = (char *)m->f.rec[2].data - (char *)m->base;
	/* the record starts after the end of the one before it */
	unused_rec = used_at + t[1].nbytes;
	ck_assert_int_eq(tsr_map_verify(m, &t[0]), -1);  /* not m's record */
	tsr_map_close(m);

	/* The unused payload damaged: the eager loader refuses the file, the
	 * lazy one only that record, and only when it is verified. */
	a[unused_at + 5] ^= 0x10;
	tt_write_file(path, a, na);
	ck_assert_ptr_null(tsr_map_open(path));
	ck_assert_ptr_nonnull(strstr(err_msg(), "checksum mismatch"));
	m = tsr_map_open_lazy(path);
	ck_assert_msg(m != NULL, "%s", err_msg());
	ck_assert_int_eq(tsr_map_verify(m, &m->f.rec[0]), 0);
	ck_assert_int_eq(tsr_map_verify(m, &m->f.rec[1]), 0);
	ck_assert_int_eq(tsr_map_verify(m, &m->f.rec[3]), 0);
	for (int k = 0; k < 2; k++) {   /* and again: never taken as good */
		ck_assert_int_eq(tsr_map_verify(m, &m->f.rec[2]), -1);
		snprintf(where, sizeof where, "%s: byte %zu, record \"unused\"",
			 path, unused_rec);
		ck_assert_msg(strstr(err_msg(), where) != NULL, "%s", err_msg());
		ck_assert_ptr_nonnull(strstr(err_msg(), "checksum mismatch"));
	}
	tsr_map_close(m);
	a[unused_at + 5] ^= 0x10;

	/* A used payload damaged: refused before use. */
	a[used_at] ^= 1;
	tt_write_file(path, a, na);
	m = tsr_map_open_lazy(path);
	ck_assert_msg(m != NULL, "%s", err_msg());
	ck_assert_int_eq(tsr_map_verify(m, &m->f.rec[1]), -1);
	ck_assert_ptr_nonnull(strstr(err_msg(), "record \"used\""));
	ck_assert_ptr_nonnull(strstr(err_msg(), "checksum mismatch"));
	tsr_map_close(m);
	a[used_at] ^= 1;

	/* Headers and compressed payloads are checked at open. */
	a[unused_rec + 32 + 8 * 2] = '!';       /* the name's first byte */
	tt_write_file(path, a, na);
	ck_assert_ptr_null(tsr_map_open_lazy(path));
	ck_assert_ptr_nonnull(strstr(err_msg(), "outside"));
	a[unused_rec + 32 + 8 * 2] = 'u';
	a[na - 1] ^= 1;                         /* zlib's trailer */
	tt_write_file(path, a, na);
	ck_assert_ptr_null(tsr_map_open_lazy(path));
	ck_assert_ptr_nonnull(strstr(err_msg(), "record \"packed\""));
	tt_write_file(path, a, na - 3);
	ck_assert_ptr_null(tsr_map_open_lazy(path));
	ck_assert_ptr_nonnull(strstr(err_msg(), "truncated"));

	for (int i = 0; i < 4; i++)
		tensor_free(&t[i]);
	free(a);
	remove_tmpdir();
}
END_TEST

/*
 * A model file that ends with an end mark (tensordump -r writes one):
 * the mark checked and left out, by both loaders; one that counts other
 * frames, or a mark before the last record, refused.
 */
START_TEST(map_end_mark)
{
	char path[128];
	struct tt_stream s;
	struct tensor t[2];
	struct tsr_map *m;
	unsigned char *a, *cut;
	size_t na, nb, k;
	uint64_t dim[1] = { 5 };
	uint32_t crc;

	make_tmpdir();
	snprintf(path, sizeof path, "%s/m.tsr", tmpdir);
	tt_tensor(&t[0], "model.config", DT_U8, 1, dim, 1);
	tt_tensor(&t[1], "enc.w", DT_F32, 1, dim, 2);
	tt_stream_open(&s, 0);
	tsr_write(s.w, &t[0], 0, 0);
	tsr_write(s.w, &t[1], 0, 1);
	a = tt_stream_bytes(&s, &na);
	tt_write_file(path, a, na);
	for (int lazy = 0; lazy <= 1; lazy++) {
		m = lazy ? tsr_map_open_lazy(path) : tsr_map_open(path);
		ck_assert_msg(m != NULL, "%s", err_msg());
		ck_assert_int_eq(m->f.n, 2);
		assert_same(&t[1], &m->f.rec[1]);
		tsr_map_close(m);
	}
	/* the mark counting 2 frames, its checksum to match */
	for (k = na - 4; memcmp(a + k, "TNSR", 4); k--)
		;
	a[na - 8] = 2;
	crc = crc32(0, a + na - 8, 8);
	for (int i = 0; i < 4; i++)
		a[k + 12 + i] = crc >> 8 * i;
	tt_write_file(path, a, na);
	ck_assert_ptr_null(tsr_map_open(path));
	ck_assert_ptr_nonnull(strstr(err_msg(), "frame 18446744073709551615: "
		"the end mark counts 2 frames, but 1 was read since the "
		"file's start"));
	/* a record after the mark */
	tt_stream_open(&s, 0);
	tsr_write(s.w, &t[1], 0, 1);
	cut = tt_stream_unmarked(&s, &nb);
	a = realloc(a, na + nb);
	memcpy(a + na, cut, nb);
	tt_write_file(path, a, na + nb);
	ck_assert_ptr_null(tsr_map_open(path));
	ck_assert_ptr_nonnull(strstr(err_msg(), "record \"stream.end\", "
		"frame 18446744073709551615: an end mark before the end of "
		"the file"));
	free(a);
	free(cut);
	tensor_free(&t[0]);
	tensor_free(&t[1]);
	remove_tmpdir();
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("stream");
	TCase *tc = tcase_create("stream");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, roundtrip_dtypes_ranks);
	tcase_add_test(tc, exact_bytes);
	tcase_add_test(tc, empty_and_scalar);
	tcase_add_test(tc, compression_large);
	tcase_add_test(tc, frame_boundaries);
	tcase_add_test(tc, frames_concatenated);
	tcase_add_test(tc, frame_helpers);
	tcase_add_test(tc, raw_records);
	tcase_add_test(tc, lazy_records);
	tcase_add_test(tc, pipe_byte_by_byte);
	tcase_add_test(tc, pipe_eintr);
	tcase_add_test(tc, frame_without_waiting);
	tcase_add_test(tc, writer_epipe);
	tcase_add_test(tc, writer_refuses);
	tcase_add_test(tc, write_ex_pad_flags);
	tcase_add_test(tc, atomic_writer);
	tcase_add_test(tc, map_model);
	tcase_add_test(tc, map_lazy);
	tcase_add_test(tc, map_end_mark);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(suite());
}
