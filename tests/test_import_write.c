/*
 * test_import_write.c: the writers of lib/import (the Marian export's):
 * .npy headers and zip archives read back through the readers (npy.h,
 * zip.h, marian_items.h), with what Marian's cnpy needs of them checked
 * on the bytes (version 1.0 headers of at most 256 bytes, stored members,
 * sizes and CRC-32 in each local header, no extra fields) and the CRCs
 * against zlib's; and file sets written all or none (file_set.h).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include "base/errmsg.h"
#include "import/file_set.h"
#include "import/marian_items.h"
#include "import/npy.h"
#include "import/npy_write.h"
#include "import/zip.h"
#include "import/zip_write.h"
#include "run_suite.h"
#include "tmpdir.h"

static uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

/* The bytes of file path, malloc'ed, into *n. */
static uint8_t *slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	uint8_t *p;
	long len;

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
	len = ftell(f);
	rewind(f);
	p = malloc((size_t)len + 1);
	ck_assert_ptr_nonnull(p);
	ck_assert_uint_eq(fread(p, 1, (size_t)len, f), (size_t)len);
	fclose(f);
	*n = (size_t)len;
	return p;
}

START_TEST(npy_headers_read_back)
{
	static const struct {
		int dtype, rank;
		uint64_t shape[2];
		const char *descr;
	} c[] = {
		{ NPY_F32, 2, { 1, 16 }, "'<f4'" },
		{ NPY_F32, 2, { 36, 16 }, "'<f4'" },
		{ NPY_F32, 1, { 7, 0 }, "'<f4'" },
		{ NPY_BYTES, 1, { 602, 0 }, "'|i1'" },
		/* the longest shapes fit cnpy's 256 bytes */
		{ NPY_F32, 2, { 4294967295u, 4294967295u }, "'<f4'" },
	};
	char buf[NPY_HEADER_MAX + 64];
	size_t i;

	for (i = 0; i < sizeof c / sizeof c[0]; i++) {
		uint64_t count = c[i].shape[0] * (c[i].rank == 2 ?
						  c[i].shape[1] : 1);
		size_t es = c[i].dtype == NPY_F32 ? 4 : 1, nb;
		int n = npy_header(buf, c[i].dtype, c[i].rank, c[i].shape);
		struct npy a;
		char *whole;

		ck_assert_int_gt(n, 0);
		ck_assert_int_eq(n % 64, 0);
		ck_assert_int_le(n, NPY_HEADER_MAX);
		ck_assert(!memcmp(buf, "\x93NUMPY\x01\x00", 8));
		ck_assert_int_eq((uint8_t)buf[8] | (uint8_t)buf[9] << 8, n - 10);
		ck_assert_int_eq(buf[n - 1], '\n');
		ck_assert_ptr_null(memchr(buf + 10, '\n', (size_t)n - 11));
		ck_assert_ptr_nonnull(memmem(buf, (size_t)n, c[i].descr,
					      strlen(c[i].descr)));
		if (count > 1000)
			continue;	/* no data to parse it with */
		nb = (size_t)count * es;
		whole = calloc(1, (size_t)n + nb);
		ck_assert_ptr_nonnull(whole);
		memcpy(whole, buf, (size_t)n);
		ck_assert_int_eq(npy_parse(&a, whole, (size_t)n + nb), 0);
		ck_assert_int_eq(a.dtype, c[i].dtype);
		ck_assert_int_eq(a.rank, c[i].rank);
		ck_assert_uint_eq(a.shape[0], c[i].shape[0]);
		if (c[i].rank == 2)
			ck_assert_uint_eq(a.shape[1], c[i].shape[1]);
		ck_assert_uint_eq(a.count, count);
		ck_assert_ptr_eq(a.data, (const uint8_t *)whole + n);
		free(whole);
	}
}
END_TEST

START_TEST(npy_header_refuses)
{
	char buf[NPY_HEADER_MAX];
	uint64_t sh[3] = { 2, 3, 4 };

	ck_assert_int_eq(npy_header(buf, NPY_F16, 1, sh), -1);
	ck_assert_ptr_nonnull(strstr(err_msg(), "float32 and byte"));
	ck_assert_int_eq(npy_header(buf, NPY_F32, 3, sh), -1);
	ck_assert_int_eq(npy_header(buf, NPY_F32, 0, sh), -1);
}
END_TEST

START_TEST(zip_archive_reads_back)
{
	static const char a1[] = "first part;", a2[] = "second part";
	static const char b[] = "another member";
	const void *pa[2] = { a1, a2 }, *pb[1] = { b }, *pe[1] = { "" };
	size_t la[2] = { strlen(a1), strlen(a2) }, lb[1] = { strlen(b) };
	size_t le[1] = { 0 }, n, len, off;
	const char *name[3] = { "a.npy", "b.npy", "empty.npy" };
	const char *want[3] = { "first part;second part", b, "" };
	struct zip_writer w;
	struct zip z;
	uint8_t *p;
	FILE *f = fopen(tmpdir_path("t.zip"), "wb");
	int i;

	ck_assert_ptr_nonnull(f);
	zip_writer_init(&w, fileno(f), "t.zip");
	ck_assert_int_eq(zip_writer_add(&w, name[0], pa, la, 2), 0);
	ck_assert_int_eq(zip_writer_add(&w, name[1], pb, lb, 1), 0);
	ck_assert_int_eq(zip_writer_add(&w, name[2], pe, le, 1), 0);
	ck_assert_int_eq(zip_writer_finish(&w), 0);
	zip_writer_free(&w);
	fclose(f);
	p = slurp(tmpdir_path("t.zip"), &n);
	ck_assert_int_eq(zip_open(&z, p, n), 0);
	ck_assert_int_eq(z.count, 3);
	for (i = 0, off = 0; i < 3; i++) {
		char *d;
		size_t wl = strlen(want[i]);

		ck_assert_str_eq(z.m[i].name, name[i]);
		ck_assert_int_eq(z.m[i].method, 0);
		ck_assert_uint_eq(z.m[i].crc,
				  crc32(0, (const Bytef *)want[i], (uInt)wl));
		ck_assert_int_eq(zip_find(&z, name[i]), i);
		d = zip_extract(&z, i, &len);
		ck_assert_ptr_nonnull(d);
		ck_assert_uint_eq(len, wl);
		ck_assert(!memcmp(d, want[i], wl));
		free(d);
		/* what cnpy reads: one local header after the other, each
		 * with its CRC and sizes, no extra field, stored */
		ck_assert_uint_eq(z.m[i].local, off);
		ck_assert_uint_eq(rd32(p + off), 0x04034b50);
		ck_assert_uint_eq(p[off + 8] | p[off + 9] << 8, 0);
		ck_assert_uint_eq(rd32(p + off + 14), z.m[i].crc);
		ck_assert_uint_eq(rd32(p + off + 18), wl);
		ck_assert_uint_eq(rd32(p + off + 22), wl);
		ck_assert_uint_eq(p[off + 28] | p[off + 29] << 8, 0);
		off += 30 + strlen(name[i]) + wl;
	}
	/* after the last member, the central directory */
	ck_assert_uint_eq(rd32(p + off), 0x02014b50);
	zip_close(&z);
	free(p);
}
END_TEST

/* An .npz of two arrays written with both writers: Marian's items. */
START_TEST(npz_reads_as_marian_items)
{
	float v[6] = { 1, -2, 3.5f, 0, 1e-30f, -7 };
	static const char yml[] = "type: transformer\n";
	uint64_t sh[2] = { 2, 3 }, sy[1] = { sizeof yml };
	char h1[NPY_HEADER_MAX], h2[NPY_HEADER_MAX];
	const void *p1[2] = { h1, v }, *p2[2] = { h2, yml };
	size_t l1[2], l2[2], n;
	struct marian_items mi;
	const struct marian_item *it;
	struct zip_writer w;
	uint8_t *p;
	FILE *f = fopen(tmpdir_path("m.npz"), "wb");

	ck_assert_ptr_nonnull(f);
	l1[0] = (size_t)npy_header(h1, NPY_F32, 2, sh);
	l1[1] = sizeof v;
	l2[0] = (size_t)npy_header(h2, NPY_BYTES, 1, sy);
	l2[1] = sizeof yml;
	zip_writer_init(&w, fileno(f), "m.npz");
	ck_assert_int_eq(zip_writer_add(&w, "encoder_l1_self_Wq.npy", p1, l1,
					2), 0);
	ck_assert_int_eq(zip_writer_add(&w, "special:model.yml.npy", p2, l2,
					2), 0);
	ck_assert_int_eq(zip_writer_finish(&w), 0);
	zip_writer_free(&w);
	fclose(f);
	p = slurp(tmpdir_path("m.npz"), &n);
	ck_assert_int_eq(marian_items_read(&mi, p, n), 0);
	ck_assert_int_eq(mi.n, 2);
	it = marian_item(&mi, "encoder_l1_self_Wq");
	ck_assert_ptr_nonnull(it);
	ck_assert_int_eq(it->dtype, NPY_F32);
	ck_assert_int_eq(it->rank, 2);
	ck_assert_uint_eq(it->shape[0], 2);
	ck_assert_uint_eq(it->shape[1], 3);
	ck_assert(!memcmp(it->data, v, sizeof v));
	it = marian_item(&mi, "special:model.yml");
	ck_assert_ptr_nonnull(it);
	ck_assert_int_eq(it->dtype, NPY_BYTES);
	ck_assert_uint_eq(it->count, sizeof yml);
	ck_assert_str_eq((const char *)it->data, yml);
	marian_items_free(&mi);
	free(p);
}
END_TEST

START_TEST(zip_write_errors_are_named)
{
	struct zip_writer w;
	const void *p[1] = { "x" };
	size_t l[1] = { 1 };

	zip_writer_init(&w, -1, "bad.npz");
	ck_assert_int_eq(zip_writer_add(&w, "m.npy", p, l, 1), -1);
	ck_assert_ptr_nonnull(strstr(err_msg(), "bad.npz: write error"));
	ck_assert_ptr_nonnull(strstr(err_msg(), "m.npy"));
	zip_writer_free(&w);
	/* past cnpy's 32-bit sizes */
	zip_writer_init(&w, -1, "big.npz");
	w.off = 0xfffffff0u;
	ck_assert_int_eq(zip_writer_add(&w, "m.npy", p, l, 1), -1);
	ck_assert_ptr_nonnull(strstr(err_msg(), "4 GiB"));
	zip_writer_free(&w);
}
END_TEST

static int exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

/* The names in the test's directory, sorted, space-separated. */
static const char *listing(void)
{
	static char buf[512];
	char cmd[600];
	FILE *f;
	size_t n;

	snprintf(cmd, sizeof cmd, "ls -A %s | tr '\\n' ' '", tmpdir_path(""));
	f = popen(cmd, "r");
	ck_assert_ptr_nonnull(f);
	n = fread(buf, 1, sizeof buf - 1, f);
	buf[n] = 0;
	pclose(f);
	return buf;
}

START_TEST(file_set_all_or_none)
{
	struct file_set s;
	size_t n;
	uint8_t *p;
	FILE *f;
	int a, b;

	/* aborted: nothing, not even the temporary files */
	file_set_init(&s);
	ck_assert_int_ge(a = file_set_open(&s, tmpdir_path("a")), 0);
	ck_assert_int_ge(b = file_set_open(&s, tmpdir_path("b")), 0);
	ck_assert_int_eq(file_set_write(&s, a, "aaa", 3), 0);
	ck_assert_str_ne(listing(), "");
	file_set_abort(&s);
	ck_assert_str_eq(listing(), "");
	/* committed: both, whole; an old file replaced */
	f = fopen(tmpdir_path("b"), "w");
	ck_assert_ptr_nonnull(f);
	fputs("old\n", f);
	fclose(f);
	file_set_init(&s);
	a = file_set_open(&s, tmpdir_path("a"));
	b = file_set_open(&s, tmpdir_path("b"));
	ck_assert_int_eq(file_set_write(&s, a, "aaa", 3), 0);
	ck_assert_int_eq(file_set_write(&s, b, "bb", 2), 0);
	ck_assert_int_eq(file_set_commit(&s), 0);
	ck_assert_str_eq(listing(), "a b ");
	p = slurp(tmpdir_path("a"), &n);
	ck_assert(n == 3 && !memcmp(p, "aaa", 3));
	free(p);
	p = slurp(tmpdir_path("b"), &n);
	ck_assert(n == 2 && !memcmp(p, "bb", 2));
	free(p);
	/* a link in the way is refused, and left as it is */
	ck_assert_int_eq(symlink("a", tmpdir_path("l")), 0);
	file_set_init(&s);
	ck_assert_int_eq(file_set_open(&s, tmpdir_path("l")), -1);
	ck_assert_ptr_nonnull(strstr(err_msg(), "not a regular file"));
	file_set_abort(&s);
	ck_assert(exists(tmpdir_path("l")));
	ck_assert_str_eq(listing(), "a b l ");
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("import_write");
	TCase *tc = tcase_create("import_write");

	tcase_add_checked_fixture(tc, tmpdir_setup, tmpdir_teardown);
	tcase_add_test(tc, npy_headers_read_back);
	tcase_add_test(tc, npy_header_refuses);
	tcase_add_test(tc, zip_archive_reads_back);
	tcase_add_test(tc, npz_reads_as_marian_items);
	tcase_add_test(tc, zip_write_errors_are_named);
	tcase_add_test(tc, file_set_all_or_none);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(suite());
}
