/*
 * test_import.c: the readers of lib/import on bytes made here by hand:
 * zip archives (stored and deflated members, ZIP64 fields in the central
 * directory and the end records, as numpy writes them) and their
 * refusals (no end record, bad CRC, bad offsets and sizes, encrypted,
 * unknown method, corrupt deflate data); .npy headers of versions 1 and
 * 2 and their refusals; Marian's YAML subset and its refusals; Marian's
 * .bin layout; and an .npz's items with their names.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <zlib.h>
#include "base/errmsg.h"
#include "import/marian_import.h"
#include "import/marian_items.h"
#include "import/npy.h"
#include "import/yaml.h"
#include "import/zip.h"
#include "run_suite.h"

/* ---- a zip archive, written by hand ---------------------------------- */

struct zb {
	uint8_t b[1 << 16];
	size_t n;
	int count;
	struct {
		char name[32];
		uint32_t crc, csize, usize, local;
		int method, zip64, flags;
	} m[8];
};

static void put16(struct zb *z, unsigned v)
{
	z->b[z->n++] = (uint8_t)v;
	z->b[z->n++] = (uint8_t)(v >> 8);
}

static void put32(struct zb *z, uint32_t v)
{
	put16(z, v & 0xffff);
	put16(z, v >> 16);
}

static void put64(struct zb *z, uint64_t v)
{
	put32(z, (uint32_t)v);
	put32(z, (uint32_t)(v >> 32));
}

static void putb(struct zb *z, const void *p, size_t n)
{
	memcpy(z->b + z->n, p, n);
	z->n += n;
}

/* Raw deflate of n bytes into out; its length. */
static size_t deflate_raw(const void *p, size_t n, uint8_t *out, size_t cap)
{
	z_stream s;

	memset(&s, 0, sizeof(s));
	ck_assert(deflateInit2(&s, 9, Z_DEFLATED, -MAX_WBITS, 8,
			       Z_DEFAULT_STRATEGY) == Z_OK);
	s.next_in = (Bytef *)p;
	s.avail_in = (uInt)n;
	s.next_out = out;
	s.avail_out = (uInt)cap;
	ck_assert(deflate(&s, Z_FINISH) == Z_STREAM_END);
	deflateEnd(&s);
	return s.total_out;
}

/* A member: local header (ZIP64 sizes in its extra field with zip64),
 * then its data, stored (method 0) or deflated (8). */
static void zb_add(struct zb *z, const char *name, const void *p, size_t n,
		   int method, int zip64)
{
	uint8_t c[4096];
	size_t cn = method == 8 ? deflate_raw(p, n, c, sizeof(c)) : n;
	int i = z->count++;

	snprintf(z->m[i].name, sizeof(z->m[i].name), "%s", name);
	z->m[i].crc = (uint32_t)crc32(0, p, (uInt)n);
	z->m[i].csize = (uint32_t)cn;
	z->m[i].usize = (uint32_t)n;
	z->m[i].local = (uint32_t)z->n;
	z->m[i].method = method;
	z->m[i].zip64 = zip64;
	put32(z, 0x04034b50);
	put16(z, zip64 ? 45 : 20);
	put16(z, 0);
	put16(z, (unsigned)method);
	put32(z, 0);
	put32(z, z->m[i].crc);
	put32(z, zip64 ? 0xffffffffu : (uint32_t)cn);
	put32(z, zip64 ? 0xffffffffu : (uint32_t)n);
	put16(z, (unsigned)strlen(name));
	put16(z, zip64 ? 20 : 0);
	putb(z, name, strlen(name));
	if (zip64) {
		put16(z, 1);
		put16(z, 16);
		put64(z, n);
		put64(z, cn);
	}
	putb(z, method == 8 ? (const void *)c : p, cn);
}

/* The central directory and the end record (ZIP64's too with zip64). */
static void zb_finish(struct zb *z, int zip64)
{
	uint32_t cd = (uint32_t)z->n, cdn;
	int i;

	for (i = 0; i < z->count; i++) {
		int x = z->m[i].zip64;

		put32(z, 0x02014b50);
		put16(z, 45);
		put16(z, x ? 45 : 20);
		put16(z, (unsigned)z->m[i].flags);
		put16(z, (unsigned)z->m[i].method);
		put32(z, 0);
		put32(z, z->m[i].crc);
		put32(z, x ? 0xffffffffu : z->m[i].csize);
		put32(z, x ? 0xffffffffu : z->m[i].usize);
		put16(z, (unsigned)strlen(z->m[i].name));
		put16(z, x ? 28 : 0);
		put16(z, 0);
		put16(z, 0);
		put16(z, 0);
		put32(z, 0);
		put32(z, x ? 0xffffffffu : z->m[i].local);
		putb(z, z->m[i].name, strlen(z->m[i].name));
		if (x) {
			put16(z, 1);
			put16(z, 24);
			put64(z, z->m[i].usize);
			put64(z, z->m[i].csize);
			put64(z, z->m[i].local);
		}
	}
	cdn = (uint32_t)z->n - cd;
	if (zip64) {
		uint32_t e64 = (uint32_t)z->n;

		put32(z, 0x06064b50);
		put64(z, 44);
		put16(z, 45);
		put16(z, 45);
		put32(z, 0);
		put32(z, 0);
		put64(z, (uint64_t)z->count);
		put64(z, (uint64_t)z->count);
		put64(z, cdn);
		put64(z, cd);
		put32(z, 0x07064b50);
		put32(z, 0);
		put64(z, e64);
		put32(z, 1);
	}
	put32(z, 0x06054b50);
	put16(z, 0);
	put16(z, 0);
	put16(z, zip64 ? 0xffff : (unsigned)z->count);
	put16(z, zip64 ? 0xffff : (unsigned)z->count);
	put32(z, zip64 ? 0xffffffffu : cdn);
	put32(z, zip64 ? 0xffffffffu : cd);
	put16(z, 0);
}

static const char text[] =
	"Marian's parameters, compressed well: aaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.";

static void two_members(struct zb *z, int zip64)
{
	memset(z, 0, sizeof(*z));
	zb_add(z, "stored.txt", "hello", 5, 0, zip64);
	zb_add(z, "deflated.txt", text, sizeof(text) - 1, 8, zip64);
	zb_finish(z, zip64);
}

static void check_two(const struct zb *b)
{
	struct zip z;
	size_t len;
	char *s;

	ck_assert_msg(zip_open(&z, b->b, b->n) == 0, "%s", err_msg());
	ck_assert_int_eq(z.count, 2);
	ck_assert_int_eq(zip_find(&z, "stored.txt"), 0);
	ck_assert_int_eq(zip_find(&z, "deflated.txt"), 1);
	ck_assert_int_eq(zip_find(&z, "none"), -1);
	ck_assert_int_eq(z.m[1].method, 8);
	ck_assert(z.m[1].csize < z.m[1].usize);
	s = zip_extract(&z, 0, &len);
	ck_assert_msg(s != NULL, "%s", err_msg());
	ck_assert_uint_eq(len, 5);
	ck_assert_str_eq(s, "hello");
	free(s);
	s = zip_extract(&z, 1, &len);
	ck_assert_msg(s != NULL, "%s", err_msg());
	ck_assert_uint_eq(len, sizeof(text) - 1);
	ck_assert_str_eq(s, text);
	free(s);
	zip_close(&z);
}

START_TEST(zip_reads_stored_and_deflated)
{
	static struct zb b;

	two_members(&b, 0);
	check_two(&b);
	/* with a comment after the end record */
	b.b[b.n - 2] = 3;
	memcpy(b.b + b.n, "abc", 3);
	b.n += 3;
	check_two(&b);
}
END_TEST

START_TEST(zip_reads_zip64)
{
	static struct zb b;

	two_members(&b, 1);
	check_two(&b);
}
END_TEST

/* zip_open or zip_extract of member 1 fails with a message holding want */
static void refused(const struct zb *b, const char *want)
{
	struct zip z;
	size_t len;
	void *p = NULL;

	if (zip_open(&z, b->b, b->n) == 0) {
		p = zip_extract(&z, 1, &len);
		zip_close(&z);
	}
	ck_assert_msg(p == NULL, "accepted, wanted: %s", want);
	ck_assert_msg(strstr(err_msg(), want) != NULL, "message \"%s\", "
		      "wanted \"%s\"", err_msg(), want);
}

/* Offset of member i's central header in b. */
static size_t central(const struct zb *b, int i)
{
	size_t k = 0;
	int j = -1;

	for (k = 0; k + 4 <= b->n; k++)
		if (b->b[k] == 0x50 && b->b[k + 1] == 0x4b &&
		    b->b[k + 2] == 1 && b->b[k + 3] == 2 && ++j == i)
			return k;
	ck_abort();
	return 0;
}

START_TEST(zip_refuses_bad_archives)
{
	static struct zb b, g;
	size_t c;

	two_members(&g, 0);
	b = g;
	b.n -= 1;			/* truncated: no end record */
	refused(&b, "no end of central directory");
	b = g;
	c = central(&b, 1);
	b.b[c + 16] ^= 1;		/* member 1's CRC */
	refused(&b, "deflated.txt): CRC-32 mismatch");
	b = g;
	b.b[g.m[1].local + 30 + 12 + 3] ^= 0x55;	/* its deflate data */
	refused(&b, "deflated.txt");
	b = g;
	c = central(&b, 1);
	b.b[c + 42] = 0xf0;		/* local header offset */
	refused(&b, "no local header at offset");
	b = g;
	c = central(&b, 1);
	b.b[c + 20] = 0xff;		/* compressed size */
	b.b[c + 21] = 0xff;
	refused(&b, "run past the archive");
	b = g;
	c = central(&b, 1);
	b.b[c + 24] = 0;		/* uncompressed size: 0 */
	b.b[c + 25] = 0x7f;		/* (or 32512: wrong either way) */
	refused(&b, "does not inflate to its");
	b = g;
	c = central(&b, 1);
	b.b[c + 10] = 12;		/* bzip2 */
	refused(&b, "compression method 12");
	b = g;
	c = central(&b, 1);
	b.b[c + 8] = 1;			/* encrypted */
	refused(&b, "deflated.txt) is encrypted");
	b = g;
	b.b[b.n - 6] = 0xff;		/* central directory's offset */
	refused(&b, "outside the archive");
	b = g;
	b.b[b.n - 12] = 200;		/* 200 members */
	b.b[b.n - 14] = 200;
	refused(&b, "members do not fit");
	/* member 1 named at member 0's bytes, and at bytes inside its
	 * own data: both share bytes with another member */
	b = g;
	c = central(&b, 1);
	b.b[c + 42] = 0;
	refused(&b, "members 0 (stored.txt) and 1 (deflated.txt) share bytes");
	{
		static struct zb h;
		size_t c0;
		uint32_t cs;

		memset(&h, 0, sizeof(h));
		zb_add(&h, "a", text, sizeof(text) - 1, 8, 0);
		zb_add(&h, "b", "hello", 5, 0, 0);
		zb_finish(&h, 0);
		c0 = central(&h, 0);		/* member 0 runs over 1 */
		cs = h.m[0].csize + 40;
		h.b[c0 + 20] = (uint8_t)cs;
		h.b[c0 + 21] = (uint8_t)(cs >> 8);
		refused(&h, "members 0 (a) and 1 (b) share bytes at offset");
	}
	/* a ZIP64 end record that is not there */
	two_members(&b, 1);
	b.b[b.n - 22 - 20] = 0;		/* the locator's signature */
	refused(&b, "no ZIP64 locator");
}
END_TEST

/* ---- .npy ------------------------------------------------------------- */

/* A .npy of version v with header dict h, padded to 64, then n bytes. */
static size_t npy_make(uint8_t *out, int v, const char *h, const void *p,
		       size_t n)
{
	size_t pre = v == 1 ? 10 : 12, hl = strlen(h) + 1, k;

	while ((pre + hl) % 64)
		hl++;
	memcpy(out, "\x93NUMPY", 6);
	out[6] = (uint8_t)v;
	out[7] = 0;
	out[8] = (uint8_t)hl;
	out[9] = (uint8_t)(hl >> 8);
	if (v > 1)
		out[10] = out[11] = 0;
	memcpy(out + pre, h, strlen(h));
	for (k = strlen(h); k < hl - 1; k++)
		out[pre + k] = ' ';
	out[pre + hl - 1] = '\n';
	memcpy(out + pre + hl, p, n);
	return pre + hl + n;
}

START_TEST(npy_reads_headers)
{
	float f[6] = { 1, 2, 3, 4, 5, 6 };
	uint8_t buf[512];
	struct npy a;
	size_t n;

	n = npy_make(buf, 1, "{'descr': '<f4', 'fortran_order': False, "
		     "'shape': (2, 3), }", f, sizeof(f));
	ck_assert_msg(npy_parse(&a, buf, n) == 0, "%s", err_msg());
	ck_assert_int_eq(a.dtype, NPY_F32);
	ck_assert_int_eq(a.rank, 2);
	ck_assert_uint_eq(a.shape[0], 2);
	ck_assert_uint_eq(a.shape[1], 3);
	ck_assert_uint_eq(a.count, 6);
	ck_assert(memcmp(a.data, f, sizeof(f)) == 0);
	/* version 2, keys in another order, double quotes, rank 1 */
	n = npy_make(buf, 2, "{\"shape\": (6,), \"fortran_order\": False, "
		     "\"descr\": \"<f4\"}", f, sizeof(f));
	ck_assert_msg(npy_parse(&a, buf, n) == 0, "%s", err_msg());
	ck_assert_int_eq(a.rank, 1);
	ck_assert_uint_eq(a.shape[0], 6);
	/* float16 and bytes (Marian's model.yml) and a scalar */
	n = npy_make(buf, 1, "{'descr': '<f2', 'fortran_order': False, "
		     "'shape': (3,), }", f, 6);
	ck_assert_msg(npy_parse(&a, buf, n) == 0, "%s", err_msg());
	ck_assert_int_eq(a.dtype, NPY_F16);
	n = npy_make(buf, 1, "{'descr': '|i1', 'fortran_order': False, "
		     "'shape': (5,), }", "a: 1\0", 5);
	ck_assert_msg(npy_parse(&a, buf, n) == 0, "%s", err_msg());
	ck_assert_int_eq(a.dtype, NPY_BYTES);
	ck_assert_uint_eq(a.nbytes, 5);
	n = npy_make(buf, 1, "{'descr': '<f4', 'fortran_order': False, "
		     "'shape': (), }", f, 4);
	ck_assert_msg(npy_parse(&a, buf, n) == 0, "%s", err_msg());
	ck_assert_int_eq(a.rank, 0);
	ck_assert_uint_eq(a.count, 1);
}
END_TEST

static void npy_refused(const char *h, size_t nbytes, const char *want)
{
	float f[8] = { 0 };
	uint8_t buf[512];
	struct npy a;
	size_t n = npy_make(buf, 1, h, f, nbytes);

	ck_assert_msg(npy_parse(&a, buf, n) < 0, "accepted %s", h);
	ck_assert_msg(strstr(err_msg(), want) != NULL, "%s: message \"%s\", "
		      "wanted \"%s\"", h, err_msg(), want);
}

START_TEST(npy_refuses)
{
	uint8_t buf[16] = "\x93NUMPX\1\0\0\0";
	struct npy a;

	ck_assert(npy_parse(&a, buf, 10) < 0);
	ck_assert(strstr(err_msg(), "magic") != NULL);
	memcpy(buf, "\x93NUMPY\1\0\xff\x00", 10);
	ck_assert(npy_parse(&a, buf, 16) < 0);
	ck_assert(strstr(err_msg(), "runs past") != NULL);
	npy_refused("{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }",
		    8, "'>f4' is not supported");
	npy_refused("{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }",
		    16, "'<f8' is not supported");
	npy_refused("{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }",
		    8, "Fortran-order");
	npy_refused("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }",
		    8, "holds 3 elements of 4 bytes but the data has 8");
	npy_refused("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }",
		    8, "holds 1 elements");
	npy_refused("{'descr': '<f4', 'fortran_order': False}", 4,
		    "lacks descr");
	npy_refused("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), "
		    "'x': 1}", 4, "unexpected or repeated key 'x'");
	npy_refused("{'descr': '<f4', 'fortran_order': False, 'shape': (a,)}",
		    4, "shape is not a tuple");
	npy_refused("{'descr': '<f4', 'fortran_order': False, 'shape': "
		    "(4294967296, 4294967296, 4294967296)}", 4, "overflows");
}
END_TEST

/* ---- YAML ------------------------------------------------------------- */

static const char marian_yml[] =
	"# a model.yml as Marian writes it\n"
	"bert-class-symbol: \"[CLS]\"\n"
	"dim-emb: 512\n"
	"dim-vocabs:\n"
	"  - 32000\n"
	"  - 32000\n"
	"tied-embeddings-all: true\n"
	"transformer-preprocess: \"\"\n"
	"transformer-postprocess: dan  # comment\n"
	"transformer-tied-layers:\n"
	"  []\n"
	"quoted: 'it''s # no comment'\n"
	"escaped: \"a\\\"b\\\\c\\n\"\n"
	"flow: [a, \"b, c\", 'd' ]\n"
	"version: v1.10.0 6f6d4846 2021-02-06 15:35:16 -0800\n"
	"shortlist:\n"
	"- lex.s2t.bin\n"
	"- false\n"
	"empty:\n"
	"last-null:\n";

START_TEST(yaml_reads_marians_subset)
{
	const struct yaml_entry *e;
	struct yaml y;
	int b;

	/* with the NUL Marian stores after the text */
	ck_assert_msg(yaml_parse(&y, marian_yml, sizeof(marian_yml), "m") == 0,
		      "%s", err_msg());
	ck_assert_int_eq(y.n, 14);
	ck_assert_str_eq(yaml_str(&y, "bert-class-symbol"), "[CLS]");
	ck_assert_str_eq(yaml_str(&y, "dim-emb"), "512");
	e = yaml_get(&y, "dim-vocabs");
	ck_assert(e && e->list && e->n == 2);
	ck_assert_str_eq(e->v[1], "32000");
	ck_assert_int_eq(e->line, 4);
	ck_assert(yaml_str(&y, "dim-vocabs") == NULL);
	ck_assert(yaml_bool(&y, "tied-embeddings-all", 0, &b) == 0 && b == 1);
	ck_assert(yaml_bool(&y, "absent", 7, &b) == 0 && b == 7);
	ck_assert(yaml_bool(&y, "dim-emb", 0, &b) < 0);
	ck_assert_str_eq(yaml_str(&y, "transformer-preprocess"), "");
	ck_assert_str_eq(yaml_str(&y, "transformer-postprocess"), "dan");
	e = yaml_get(&y, "transformer-tied-layers");
	ck_assert(e && e->list && e->n == 0);
	ck_assert_str_eq(yaml_str(&y, "quoted"), "it's # no comment");
	ck_assert_str_eq(yaml_str(&y, "escaped"), "a\"b\\c\n");
	e = yaml_get(&y, "flow");
	ck_assert(e && e->list && e->n == 3);
	ck_assert_str_eq(e->v[0], "a");
	ck_assert_str_eq(e->v[1], "b, c");
	ck_assert_str_eq(e->v[2], "d");
	ck_assert_str_eq(yaml_str(&y, "version"),
			 "v1.10.0 6f6d4846 2021-02-06 15:35:16 -0800");
	e = yaml_get(&y, "shortlist");
	ck_assert(e && e->list && e->n == 2);
	ck_assert_str_eq(e->v[1], "false");
	ck_assert_str_eq(yaml_str(&y, "empty"), "");
	ck_assert_str_eq(yaml_str(&y, "last-null"), "");
	yaml_free(&y);
}
END_TEST

static void yaml_refused(const char *t, const char *want)
{
	struct yaml y;

	ck_assert_msg(yaml_parse(&y, t, strlen(t), "f.yml") < 0,
		      "accepted %s", t);
	ck_assert_msg(strstr(err_msg(), want) != NULL, "%s: message \"%s\", "
		      "wanted \"%s\"", t, err_msg(), want);
	ck_assert_int_eq(y.n, 0);
}

START_TEST(yaml_refuses)
{
	yaml_refused("a: 1\nb:\n  c: 2\n", "f.yml:3: ");
	yaml_refused("a: 1\nb:\n  c: 2\n", "nested mapping");
	yaml_refused("a: 1\na: 2\n", "f.yml:2: key a is repeated (first on "
		     "line 1)");
	yaml_refused("- x\n", "list item without its key");
	yaml_refused("a: 1\n- x\n", "list item without its key");
	yaml_refused("a:\n\t- x\n", "tab in the indentation");
	yaml_refused("a: |\n  text\n", "block scalar");
	yaml_refused("a: {b: 1}\n", "not supported");
	yaml_refused("a: [1, [2]]\n", "nested collections");
	yaml_refused("a:\n  - [1]\n", "nested collections");
	yaml_refused("a:\n  - b: 1\n", "nested mapping");
	yaml_refused("a: \"open\n", "unterminated");
	yaml_refused("a: [1, 2\n", "must end on its line");
	yaml_refused("a: &x 1\n", "anchor");
	yaml_refused("a: b: c\n", "nested mapping");
	yaml_refused("just text\n", "not a \"key: value\" line");
	yaml_refused("a: \"\\q\"\n", "escape \\q is not YAML's");
	yaml_refused("\"\\x4\": 1\n", "\\x needs 2 hex digits");
	yaml_refused("\"\\xZZ\": 1\n", "\\x needs 2 hex digits");
	yaml_refused("\"\\u00\": 1\n", "\\u needs 4 hex digits");
	yaml_refused("\"\\u0000\": 1\n", "\\u needs 4 hex digits");
	yaml_refused("\"\\ud800\": 1\n", "not a surrogate");
	yaml_refused("\"\\U00110000\": 1\n", "\\U needs 8 hex digits");
	yaml_refused("\"\\0\": 1\n", "a NUL");
	yaml_refused("a: \"x\\\n", "a \\ at the end of the line");
	yaml_refused("? x: 1\n", "f.yml:1: not a plain key");
	yaml_refused("-: 1\n", "f.yml:1: not a plain key");
	yaml_refused("a: 1\n: b\n", "f.yml:2: not a plain key");
	yaml_refused("a: 1\n,x: 2\n", "f.yml:2: not a plain key");
	{
		struct yaml y;

		ck_assert(yaml_parse(&y, "a: 1\0b: 2\n", 10, "f") < 0);
		ck_assert(strstr(err_msg(), "NUL") != NULL);
	}
}
END_TEST

/* Every key form of the vocab.yml files that OPUS-MT publishes (yaml-cpp
 * quotes a piece that would read as something else), each with the piece
 * it names, written out by hand. */
static const char *const vocab_forms[][2] = {
	{ "\"</s>\": 0", "</s>" },
	{ "\"<unk>\": 1", "<unk>" },
	{ "\xe2\x96\x81" "de: 2", "\xe2\x96\x81" "de" },
	{ "\"\xe2\x96\x81\\\"\": 3", "\xe2\x96\x81\"" },
	{ "\"\\\\\": 4", "\\" },
	{ "\"yes\": 5", "yes" },
	{ "\"no\": 6", "no" },
	{ "\"null\": 7", "null" },
	{ "\"#\": 8", "#" },
	{ "\":\": 9", ":" },
	{ "\"&\": 10", "&" },
	{ "\"*\": 11", "*" },
	{ "\" lead\": 12", " lead" },
	{ "\xc3\xb3: 13", "\xc3\xb3" },
	{ "\"\\xe9\": 14", "\xc3\xa9" },
	{ "\"\\u2581x\": 15", "\xe2\x96\x81x" },
	{ "\"\\U0001F600\": 16", "\xf0\x9f\x98\x80" },
	{ "-ing: 17", "-ing" },
	{ "\"-\": 18", "-" },
	{ "'it''s': 19", "it's" },
	{ "\"\\t\": 20", "\t" },
	{ "a:b: 21", "a:b" },
	{ "\"\\N\\_\\L\\P\": 22",
	  "\xc2\x85\xc2\xa0\xe2\x80\xa8\xe2\x80\xa9" },
	{ "\"\\e\\a\\b\\v\\f\\r\\/\\ \": 23", "\033\a\b\v\f\r/ " },
	{ "\"a#b\" : 24", "a#b" },
	{ "?x: 25", "?x" },
	{ "\"[\": 26", "[" },
	{ "\"%\": 27", "%" },
};

START_TEST(yaml_reads_every_vocab_key_form)
{
	int n = (int)(sizeof vocab_forms / sizeof vocab_forms[0]), i;
	char text[4096];
	size_t len = 0;
	struct yaml y;

	/* a byte-order mark first, CRLF line ends */
	len += (size_t)sprintf(text, "\xef\xbb\xbf");
	for (i = 0; i < n; i++)
		len += (size_t)sprintf(text + len, "%s\r\n", vocab_forms[i][0]);
	ck_assert_msg(yaml_parse(&y, text, len, "v.yml") == 0, "%s",
		      err_msg());
	ck_assert_int_eq(y.n, n);
	for (i = 0; i < n; i++) {
		const struct yaml_entry *e = yaml_get(&y, vocab_forms[i][1]);
		char id[16];

		ck_assert_msg(e != NULL, "%s: no key \"%s\"",
			      vocab_forms[i][0], vocab_forms[i][1]);
		sprintf(id, "%d", i);
		ck_assert_str_eq(e->v[0], id);
		ck_assert_int_eq(e->line, i + 1);
	}
	yaml_free(&y);
}
END_TEST

/* More keys than any published vocabulary (OPUS-MT's reach 65,000), each
 * found by its name; the same text with a key repeated at its end is
 * refused naming both lines. */
START_TEST(yaml_takes_any_number_of_keys)
{
	enum { N = 150000 };
	char *text = malloc((size_t)N * 24 + 64), key[16];
	size_t len = 0;
	struct yaml y;
	int i;

	ck_assert(text != NULL);
	for (i = 0; i < N; i++)
		len += (size_t)sprintf(text + len, "\"p%d\": %d\n", i, i);
	ck_assert_msg(yaml_parse(&y, text, len, "big.yml") == 0, "%s",
		      err_msg());
	ck_assert_int_eq(y.n, N);
	for (i = 0; i < N; i += 997) {
		sprintf(key, "p%d", i);
		ck_assert_int_eq(atoi(yaml_str(&y, key)), i);
	}
	ck_assert(yaml_get(&y, "p150000") == NULL);
	yaml_free(&y);
	len += (size_t)sprintf(text + len, "p1234: 7\n");
	ck_assert(yaml_parse(&y, text, len, "big.yml") < 0);
	ck_assert_str_eq(err_msg(), "big.yml:150001: key p1234 is repeated "
			 "(first on line 1235)");
	free(text);
}
END_TEST

/* ---- Marian's .bin ---------------------------------------------------- */

struct binb {
	uint8_t b[4096];
	size_t n;
};

static void b64(struct binb *b, uint64_t v)
{
	int i;

	for (i = 0; i < 8; i++)
		b->b[b->n++] = (uint8_t)(v >> 8 * i);
}

/* Two items: special:model.yml (int8 [12]) and W (float32 [2, 3], 24
 * bytes and 8 of padding), as binary.cpp lays them out. */
static void bin_make(struct binb *b, uint64_t wtype)
{
	static const char yml[12] = "type: x\nz: 1";
	float w[6] = { 1, -2, 3, -4, 5, -6 };
	int32_t s[3] = { 12, 2, 3 };
	uint64_t off;

	b->n = 0;
	b64(b, 1);
	b64(b, 2);
	b64(b, 18);
	b64(b, 0x101);
	b64(b, 1);
	b64(b, 12);
	b64(b, 2);
	b64(b, wtype);
	b64(b, 2);
	b64(b, 32);
	memcpy(b->b + b->n, "special:model.yml\0W", 20);
	b->n += 20;
	memcpy(b->b + b->n, s, sizeof(s));
	b->n += sizeof(s);
	off = ((b->n + 8) / 256 + 1) * 256 - b->n - 8;
	b64(b, off);
	memset(b->b + b->n, 0, off);
	b->n += off;
	memcpy(b->b + b->n, yml, 12);
	b->n += 12;
	memcpy(b->b + b->n, w, sizeof(w));
	memset(b->b + b->n + sizeof(w), 0, 8);
	b->n += 32;
}

START_TEST(bin_reads_marians_layout)
{
	static struct binb b;
	struct marian_items mi;
	const struct marian_item *it;
	float w[6];

	bin_make(&b, 0x404);
	ck_assert_msg(marian_items_read(&mi, b.b, b.n) == 0, "%s", err_msg());
	ck_assert_int_eq(mi.n, 2);
	it = marian_item(&mi, "special:model.yml");
	ck_assert(it && it->dtype == NPY_BYTES && it->count == 12);
	ck_assert(memcmp(it->data, "type: x\nz: 1", 12) == 0);
	it = marian_item(&mi, "W");
	ck_assert(it && it->dtype == NPY_F32 && it->rank == 2);
	ck_assert(it->shape[0] == 2 && it->shape[1] == 3 && it->count == 6);
	ck_assert_uint_eq(((uintptr_t)it->data - (uintptr_t)b.b) % 256, 12);
	memcpy(w, it->data, sizeof(w));
	ck_assert(w[5] == -6);
	marian_items_free(&mi);

	bin_make(&b, 0x1101);		/* not a type read here */
	ck_assert(marian_items_read(&mi, b.b, b.n) < 0);
	ck_assert_msg(strstr(err_msg(), "item W has Marian type 0x1101"),
		      "%s", err_msg());
	bin_make(&b, 0x404);
	b.n -= 9;			/* W's data cut */
	ck_assert(marian_items_read(&mi, b.b, b.n) < 0);
	ck_assert_msg(strstr(err_msg(), "item W's 32 bytes"), "%s", err_msg());
	bin_make(&b, 0x404);
	b.b[0] = 2;			/* version */
	ck_assert(marian_items_read(&mi, b.b, b.n) < 0);
	ck_assert(strstr(err_msg(), "version 1") != NULL);
	bin_make(&b, 0x404);
	b.b[16] = 200;			/* a name's length */
	ck_assert(marian_items_read(&mi, b.b, b.n) < 0);
	ck_assert_msg(strstr(err_msg(), "item 0's name"), "%s", err_msg());
}
END_TEST

/* ---- an .npz ---------------------------------------------------------- */

START_TEST(npz_items_are_named_without_npy)
{
	static struct zb z;
	float f[4] = { 0.5f, 1, 2, 4 };
	uint8_t a[256], b[256];
	size_t na, nb;
	struct marian_items mi;
	const struct marian_item *it;

	na = npy_make(a, 1, "{'descr': '<f4', 'fortran_order': False, "
		      "'shape': (1, 4), }", f, sizeof(f));
	nb = npy_make(b, 1, "{'descr': '|i1', 'fortran_order': False, "
		      "'shape': (7,), }", "dim: 4\0", 7);
	memset(&z, 0, sizeof(z));
	zb_add(&z, "decoder_ff_logit_out_b.npy", a, na, 8, 1);
	zb_add(&z, "special:model.yml.npy", b, nb, 0, 1);
	zb_finish(&z, 0);
	ck_assert_msg(marian_items_read(&mi, z.b, z.n) == 0, "%s", err_msg());
	ck_assert_int_eq(mi.n, 2);
	it = marian_item(&mi, "decoder_ff_logit_out_b");
	ck_assert(it && it->dtype == NPY_F32 && it->rank == 2);
	ck_assert(it->shape[0] == 1 && it->shape[1] == 4);
	ck_assert(memcmp(it->data, f, sizeof(f)) == 0);
	it = marian_item(&mi, "special:model.yml");
	ck_assert(it && it->dtype == NPY_BYTES && it->count == 7);
	marian_items_free(&mi);

	memset(&z, 0, sizeof(z));
	zb_add(&z, "readme.txt", "x", 1, 0, 0);
	zb_finish(&z, 0);
	ck_assert(marian_items_read(&mi, z.b, z.n) < 0);
	ck_assert_msg(strstr(err_msg(), "readme.txt is not a .npy"), "%s",
		      err_msg());
	memset(&z, 0, sizeof(z));
	zb_add(&z, "W.npy", a, na - 1, 0, 0);
	zb_finish(&z, 0);
	ck_assert(marian_items_read(&mi, z.b, z.n) < 0);
	ck_assert_msg(strstr(err_msg(), "npz: W.npy: npy: the shape holds"),
		      "%s", err_msg());
}
END_TEST

/* ---- the import's refusals of a student's settings ---------------------- */

/* A student's model.yml as Bergamot's are (post-norm, an SSRU decoder),
 * with line extra added. */
static const char student_yml[] =
	"type: transformer\ndim-emb: 8\ndim-vocabs:\n  - 8\n  - 8\n"
	"enc-depth: 1\ndec-depth: 1\ntransformer-heads: 2\n"
	"transformer-dim-ffn: 16\ntransformer-ffn-activation: relu\n"
	"transformer-preprocess: \"\"\ntransformer-postprocess: dan\n"
	"tied-embeddings-all: true\ntransformer-decoder-autoreg: rnn\n";

/* An .npz of model.yml alone: marian_import refuses it with want in the
 * message (its settings are read before any parameter); without want,
 * the settings pass and the first parameter, Wemb, is missing. */
static void import_refused(const char *extra, const char *want)
{
	static struct zb z;
	static uint8_t a[4096];
	char yml[2048], h[128];
	size_t na, n;
	struct marian_import_in in;

	n = (size_t)snprintf(yml, sizeof yml, "%s%s", student_yml, extra) + 1;
	snprintf(h, sizeof h, "{'descr': '|i1', 'fortran_order': False, "
		 "'shape': (%zu,), }", n);
	na = npy_make(a, 1, h, yml, n);
	memset(&z, 0, sizeof(z));
	zb_add(&z, "special:model.yml.npy", a, na, 8, 1);
	zb_finish(&z, 0);
	memset(&in, 0, sizeof(in));
	in.model = z.b;
	in.model_len = z.n;
	in.vsrc = in.vtgt = "</s>: 0\n<unk>: 1\na: 2\nb: 3\nc: 4\nd: 5\n"
			    "e: 6\nf: 7\n";	/* dim-vocabs' 8 */
	in.vsrc_len = in.vtgt_len = strlen(in.vsrc);
	ck_assert_ptr_null(marian_import(&in));
	if (!want)
		want = "the Marian model has no Wemb (for tgt.emb)";
	ck_assert_msg(strstr(err_msg(), want), "%s: \"%s\", not \"%s\"",
		      extra, err_msg(), want);
}

START_TEST(import_takes_ssru_students_alone)
{
	import_refused("dec-cell: ssru\n", NULL);
	import_refused("dec-cell: ssru\nlayer-normalization: false\n"
		       "transformer-rnn-projection: false\n", NULL);
	/* Marian's default cell is a GRU */
	import_refused("", "dec-cell: gru is not supported with "
		       "transformer-decoder-autoreg: rnn (ssru is)");
	import_refused("dec-cell: lstm\n", "dec-cell: lstm is not supported");
	import_refused("dec-cell: ssru\nlayer-normalization: true\n",
		       "layer-normalization: true is not supported (the "
		       "SSRU's own layer norms");
	import_refused("dec-cell: ssru\ntransformer-rnn-projection: true\n",
		       "transformer-rnn-projection: true is not supported");
	import_refused("dec-cell: [ssru]\n", "dec-cell is a list");
	/* Marian's rates, for fine-tuning: train-step's range, not stored
	 * and refused later */
	import_refused("dec-cell: ssru\ntransformer-dropout: 0.1\n"
		       "label-smoothing: 0\n", NULL);
	import_refused("dec-cell: ssru\ntransformer-dropout: nan\n",
		       "model.yml:16: transformer-dropout: nan is not a rate");
	import_refused("dec-cell: ssru\ntransformer-dropout: -0.1\n",
		       "transformer-dropout: -0.1 is not a rate");
	import_refused("dec-cell: ssru\nlabel-smoothing: 1\n",
		       "label-smoothing: 1 is not a rate from 0 to 1");
	import_refused("dec-cell: ssru\nlabel-smoothing: abc\n",
		       "label-smoothing: abc is not a rate");
	import_refused("dec-cell: ssru\nlabel-smoothing: "
		       "0.1000000000000000000000000000000000000000001\n", NULL);
}
END_TEST

/* ---- checks before anything large is read or allocated ---------------- */

/* The model.yml of import_refused (with extra) as an .npy into a. */
static size_t student_npy(uint8_t *a, const char *extra)
{
	char yml[2048], h[128];
	size_t n;

	n = (size_t)snprintf(yml, sizeof yml, "%s%s", student_yml, extra) + 1;
	snprintf(h, sizeof h, "{'descr': '|i1', 'fortran_order': False, "
		 "'shape': (%zu,), }", n);
	return npy_make(a, 1, h, yml, n);
}

/* marian_import of the archive z, with the student's vocabularies: NULL
 * and a message holding want. */
static void npz_refused(const struct zb *z, const char *want)
{
	struct marian_import_in in;

	memset(&in, 0, sizeof(in));
	in.model = z->b;
	in.model_len = z->n;
	in.vsrc = in.vtgt = "</s>: 0\n<unk>: 1\na: 2\nb: 3\nc: 4\nd: 5\n"
			    "e: 6\nf: 7\n";
	in.vsrc_len = in.vtgt_len = strlen(in.vsrc);
	ck_assert_ptr_null(marian_import(&in));
	ck_assert_msg(strstr(err_msg(), want), "\"%s\", not \"%s\"",
		      err_msg(), want);
}

/*
 * Every member's shape, from its .npy header, and every parameter's
 * member, are checked against model.yml before any member is inflated
 * whole: here every member but model.yml has a wrong CRC-32 (which only
 * the whole member's bytes show), yet the refusal names the shape, or
 * the member that is missing.  (Before, every member was inflated
 * first, and this said "CRC-32 mismatch".)  A member read whole is
 * still checked: the same CRC-32 refused by marian_items_read.
 */
START_TEST(import_checks_shapes_before_inflating)
{
	static struct zb z;
	static uint8_t a[4096], w[4096];
	static float zero[8 * 9];
	struct marian_items mi;
	size_t na, nw;
	int i;

	na = student_npy(a, "dec-cell: ssru\n");
	/* tgt.emb is [8, 8]: Wemb [8, 9] is no Wemb of this model */
	nw = npy_make(w, 1, "{'descr': '<f4', 'fortran_order': False, "
		      "'shape': (8, 9), }", zero, sizeof(zero));
	memset(&z, 0, sizeof(z));
	zb_add(&z, "special:model.yml.npy", a, na, 8, 1);
	zb_add(&z, "Wemb.npy", w, nw, 8, 1);
	zb_add(&z, "extra.npy", w, nw, 8, 1);
	zb_finish(&z, 1);
	for (i = 1; i < 3; i++)
		z.b[central(&z, i) + 16] ^= 1;	/* the CRC-32s */
	npz_refused(&z, "Wemb: shape [8, 8] expected for tgt.emb (rank 2, "
		    "72 elements given)");
	ck_assert(marian_items_read(&mi, z.b, z.n) < 0);
	ck_assert_msg(strstr(err_msg(), "Wemb.npy): CRC-32 mismatch"), "%s",
		      err_msg());

	/* Wemb right (stored, read in place), the next parameter missing */
	nw = npy_make(w, 1, "{'descr': '<f4', 'fortran_order': False, "
		      "'shape': (8, 8), }", zero, 8 * 8 * 4);
	memset(&z, 0, sizeof(z));
	zb_add(&z, "special:model.yml.npy", a, na, 0, 0);
	zb_add(&z, "Wemb.npy", w, nw, 0, 0);
	zb_add(&z, "extra.npy", w, nw, 8, 0);
	zb_finish(&z, 0);
	for (i = 1; i < 3; i++)
		z.b[central(&z, i) + 16] ^= 1;
	npz_refused(&z, "the Marian model has no encoder_l1_self_Wq (for "
		    "enc.0.");
	ck_assert(marian_items_read(&mi, z.b, z.n) < 0);
	ck_assert_msg(strstr(err_msg(), "Wemb.npy): CRC-32 mismatch"), "%s",
		      err_msg());
}
END_TEST

/*
 * A member's header is read from its first bytes: here the header is a
 * deflate block of its own (Z_FULL_FLUSH) and the data after it is
 * corrupt; marian_items_open reads the shape, marian_item_load refuses
 * the data, naming the member.
 */
START_TEST(npz_headers_read_without_the_data)
{
	static struct zb z;
	static uint8_t a[512], c[1024];
	float f[16] = { 1, 2, 3 };
	struct marian_items mi;
	const struct marian_item *it;
	size_t na, hl;
	z_stream s;

	na = npy_make(a, 1, "{'descr': '<f4', 'fortran_order': False, "
		      "'shape': (4, 4), }", f, sizeof(f));
	hl = na - sizeof(f);
	memset(&s, 0, sizeof(s));
	ck_assert(deflateInit2(&s, 9, Z_DEFLATED, -MAX_WBITS, 8,
			       Z_DEFAULT_STRATEGY) == Z_OK);
	s.next_in = a;
	s.avail_in = (uInt)hl;
	s.next_out = c;
	s.avail_out = sizeof(c);
	ck_assert(deflate(&s, Z_FULL_FLUSH) == Z_OK);
	s.avail_in = (uInt)(na - hl);
	ck_assert(deflate(&s, Z_FINISH) == Z_STREAM_END);
	deflateEnd(&s);
	/* as zb_add would, with these deflated bytes */
	memset(&z, 0, sizeof(z));
	zb_add(&z, "W.npy", a, na, 0, 0);
	z.m[0].method = 8;
	z.m[0].csize = (uint32_t)s.total_out;
	z.n = 30 + 5;
	memcpy(z.b + z.n, c, s.total_out);
	z.b[8] = 8;				/* the local method */
	z.n += s.total_out;
	z.b[z.n - 3] ^= 0xff;			/* the data's last bytes */
	z.b[z.n - 2] ^= 0xff;
	zb_finish(&z, 0);
	ck_assert_msg(marian_items_open(&mi, z.b, z.n) == 0, "%s", err_msg());
	it = marian_item(&mi, "W");
	ck_assert(it && it->dtype == NPY_F32 && it->rank == 2 &&
		  it->shape[0] == 4 && it->shape[1] == 4 && !it->data);
	ck_assert(marian_item_load(&mi, it) < 0);
	ck_assert_msg(strstr(err_msg(), "W.npy"), "%s", err_msg());
	marian_items_free(&mi);
	/* uncorrupted, it loads; let go and loaded again */
	z.b[30 + 5 + s.total_out - 3] ^= 0xff;
	z.b[30 + 5 + s.total_out - 2] ^= 0xff;
	ck_assert_msg(marian_items_open(&mi, z.b, z.n) == 0, "%s", err_msg());
	it = marian_item(&mi, "W");
	ck_assert_msg(marian_item_load(&mi, it) == 0, "%s", err_msg());
	ck_assert(memcmp(it->data, f, sizeof(f)) == 0);
	marian_item_unload(&mi, it);
	ck_assert(it->data == NULL);
	ck_assert(marian_item_load(&mi, it) == 0 && it->data[4] == 0);
	marian_items_free(&mi);
}
END_TEST

static long max_rss_kb(void)
{
	struct rusage r;

	ck_assert(getrusage(RUSAGE_SELF, &r) == 0);
	return r.ru_maxrss;
}

/*
 * An .npz of model.yml alone (875 bytes in issue 45) whose settings
 * declare 240 M parameters: refused, the first parameter missing, before
 * their room (1 GB) is allocated.  (Before, it was allocated and
 * initialised first, and the peak grew by that much.)
 */
START_TEST(import_refuses_a_config_alone_in_little_memory)
{
	static struct zb z;
	static uint8_t a[4096];
	static const char yml[] =
		"type: transformer\ndim-emb: 1024\ndim-vocabs: [65536, 65536]"
		"\nenc-depth: 6\ndec-depth: 6\ntransformer-heads: 16\n"
		"transformer-dim-ffn: 4096\ntied-embeddings-all: true\n";
	char h[128], *v = malloc(65536 * 16);
	struct marian_import_in in;
	size_t na, vn = 0;
	long before;
	int i;

	ck_assert(v != NULL);
	vn += (size_t)sprintf(v, "</s>: 0\n<unk>: 1\n");
	for (i = 2; i < 65536; i++)
		vn += (size_t)sprintf(v + vn, "p%d: %d\n", i, i);
	snprintf(h, sizeof h, "{'descr': '|i1', 'fortran_order': False, "
		 "'shape': (%zu,), }", sizeof(yml));
	na = npy_make(a, 1, h, yml, sizeof(yml));
	memset(&z, 0, sizeof(z));
	zb_add(&z, "special:model.yml.npy", a, na, 8, 1);
	zb_finish(&z, 1);
	memset(&in, 0, sizeof(in));
	in.model = z.b;
	in.model_len = z.n;
	in.vsrc = in.vtgt = v;
	in.vsrc_len = in.vtgt_len = vn;
	before = max_rss_kb();
	ck_assert_ptr_null(marian_import(&in));
	ck_assert_msg(strstr(err_msg(), "the Marian model has no Wemb (for "
			     "tgt.emb)"), "%s", err_msg());
	/* the vocabularies' YAML, a few MB; not 1 GB */
	ck_assert_msg(max_rss_kb() - before < 200 * 1024, "the peak grew by "
		      "%ld KB", max_rss_kb() - before);
	free(v);
}
END_TEST

/* A growing buffer for the large archives below. */
struct big {
	uint8_t *b;
	size_t n, cap;
};

static void big_put(struct big *g, const void *p, size_t n)
{
	if (g->n + n > g->cap) {
		g->cap = 2 * (g->n + n);
		g->b = realloc(g->b, g->cap);
		ck_assert(g->b != NULL);
	}
	memcpy(g->b + g->n, p, n);
	g->n += n;
}

static void big_le(struct big *g, uint64_t v, int bytes)
{
	uint8_t b[8];
	int i;

	for (i = 0; i < bytes; i++)
		b[i] = (uint8_t)(v >> 8 * i);
	big_put(g, b, (size_t)bytes);
}

/* An .npz of n stored members p00000.npy ..., each a float32 [1] of its
 * number; the last one named as member dup when dup >= 0. */
static void big_npz(struct big *g, int n, int dup)
{
	uint64_t *local = malloc(sizeof(uint64_t) * (size_t)n);
	uint8_t a[256];
	char name[16];
	size_t na, cd, cdn;
	int i;

	ck_assert(local != NULL);
	memset(g, 0, sizeof(*g));
	for (i = 0; i < n; i++) {
		float f = (float)i;

		snprintf(name, sizeof name, "p%05d.npy",
			 i == n - 1 && dup >= 0 ? dup : i);
		na = npy_make(a, 1, "{'descr': '<f4', 'fortran_order': "
			      "False, 'shape': (1,), }", &f, 4);
		local[i] = g->n;
		big_le(g, 0x04034b50, 4);
		big_le(g, 20, 2);
		big_le(g, 0, 2);
		big_le(g, 0, 2);
		big_le(g, 0, 4);
		big_le(g, (uint32_t)crc32(0, a, (uInt)na), 4);
		big_le(g, na, 4);
		big_le(g, na, 4);
		big_le(g, 10, 2);
		big_le(g, 0, 2);
		big_put(g, name, 10);
		big_put(g, a, na);
	}
	cd = g->n;
	for (i = 0; i < n; i++) {
		uint8_t l[40];	/* (a copy: big_put may move g->b) */

		memcpy(l, g->b + local[i], 40);
		big_le(g, 0x02014b50, 4);
		big_le(g, 20, 2);
		big_put(g, l + 4, 26);		/* the local header's fields */
		big_le(g, 0, 2);		/* comment */
		big_le(g, 0, 2);		/* disk */
		big_le(g, 0, 2);
		big_le(g, 0, 4);
		big_le(g, local[i], 4);
		big_put(g, l + 30, 10);
	}
	cdn = g->n - cd;
	big_le(g, 0x06054b50, 4);
	big_le(g, 0, 4);
	big_le(g, (uint64_t)n, 2);
	big_le(g, (uint64_t)n, 2);
	big_le(g, cdn, 4);
	big_le(g, cd, 4);
	big_le(g, 0, 2);
	free(local);
}

/* g's n items, read: each p%05d a float32 [1] of its number, found by
 * its name, and none past them; g's bytes freed. */
static void items_are_numbered(struct big *g, int n)
{
	struct marian_items mi;
	const struct marian_item *it;
	char name[16];
	float f;
	int i;

	ck_assert_msg(marian_items_read(&mi, g->b, g->n) == 0, "%s", err_msg());
	ck_assert_int_eq(mi.n, n);
	for (i = 0; i < n; i += 7) {
		snprintf(name, sizeof name, "p%05d", i);
		ck_assert(it = marian_item(&mi, name));
		memcpy(&f, it->data, 4);
		ck_assert(f == (float)i && it->count == 1);
	}
	snprintf(name, sizeof name, "p%05d", n);
	ck_assert(marian_item(&mi, name) == NULL);
	marian_items_free(&mi);
	free(g->b);
}

/*
 * 60,000 members (issue 45's took 10-36 s: each name compared with every
 * other), each found by its name, in time linear in their number; a name
 * given twice is refused naming it.
 */
START_TEST(npz_of_60000_members)
{
	struct marian_items mi;
	struct big g;

	big_npz(&g, 60000, -1);
	items_are_numbered(&g, 60000);
	big_npz(&g, 60000, 12345);
	ck_assert(marian_items_read(&mi, g.b, g.n) < 0);
	ck_assert_str_eq(err_msg(), "npz: p12345.npy is there twice");
	free(g.b);
}
END_TEST

/* A .bin of n items p00000 ..., each a float32 [1] of its number; the
 * last one named dup when dup >= 0. */
static void big_bin(struct big *g, int n, int dup)
{
	char name[16];
	int i;

	memset(g, 0, sizeof(*g));
	big_le(g, 1, 8);
	big_le(g, (uint64_t)n, 8);
	for (i = 0; i < n; i++) {
		big_le(g, 7, 8);
		big_le(g, 0x404, 8);
		big_le(g, 1, 8);
		big_le(g, 4, 8);
	}
	for (i = 0; i < n; i++) {
		snprintf(name, sizeof name, "p%05d",
			 i == n - 1 && dup >= 0 ? dup : i);
		big_put(g, name, 7);
	}
	for (i = 0; i < n; i++)
		big_le(g, 1, 4);
	big_le(g, 0, 8);
	for (i = 0; i < n; i++) {
		float f = (float)i;

		big_put(g, &f, 4);
	}
}

/* 65,000 items of a .bin (issue 45's took 9.5 s), each found by name;
 * a name given twice refused. */
START_TEST(bin_of_65000_items)
{
	struct marian_items mi;
	struct big g;

	big_bin(&g, 65000, -1);
	items_are_numbered(&g, 65000);
	big_bin(&g, 65000, 4321);
	ck_assert(marian_items_read(&mi, g.b, g.n) < 0);
	ck_assert_str_eq(err_msg(), "bin: item p04321 is there twice");
	free(g.b);
}
END_TEST

/* A list of a million items, in block and in flow style (issue 45: 120 s
 * under ASan, one reallocation per item), every one kept in order. */
START_TEST(yaml_list_of_a_million_items)
{
	enum { N = 1000000 };
	char *t = malloc((size_t)N * 20 + 64);
	const struct yaml_entry *e;
	size_t len = 0;
	struct yaml y;
	int i, style;

	ck_assert(t != NULL);
	for (style = 0; style < 2; style++) {
		len = (size_t)sprintf(t, style ? "a: 1\nbig: [" :
				      "a: 1\nbig:\n");
		for (i = 0; i < N; i++)
			if (style)
				len += (size_t)sprintf(t + len, "%s%d",
						       i ? ", " : "", i);
			else
				len += (size_t)sprintf(t + len, "  - %d\n",
						       i);
		if (style)
			len += (size_t)sprintf(t + len, "]\n");
		ck_assert_msg(yaml_parse(&y, t, len, "l.yml") == 0, "%s",
			      err_msg());
		e = yaml_get(&y, "big");
		ck_assert(e && e->list && e->n == N);
		for (i = 0; i < N; i += 999)
			ck_assert_int_eq(atoi(e->v[i]), i);
		ck_assert_int_eq(atoi(e->v[N - 1]), N - 1);
		yaml_free(&y);
	}
	free(t);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("import");
	TCase *tc = tcase_create("import");

	tcase_add_test(tc, zip_reads_stored_and_deflated);
	tcase_add_test(tc, zip_reads_zip64);
	tcase_add_test(tc, zip_refuses_bad_archives);
	tcase_add_test(tc, npy_reads_headers);
	tcase_add_test(tc, npy_refuses);
	tcase_add_test(tc, yaml_reads_marians_subset);
	tcase_add_test(tc, yaml_refuses);
	tcase_add_test(tc, yaml_reads_every_vocab_key_form);
	tcase_add_test(tc, yaml_takes_any_number_of_keys);
	tcase_add_test(tc, bin_reads_marians_layout);
	tcase_add_test(tc, npz_items_are_named_without_npy);
	tcase_add_test(tc, import_takes_ssru_students_alone);
	tcase_add_test(tc, import_checks_shapes_before_inflating);
	tcase_add_test(tc, npz_headers_read_without_the_data);
	tcase_add_test(tc, import_refuses_a_config_alone_in_little_memory);
	tcase_add_test(tc, npz_of_60000_members);
	tcase_add_test(tc, bin_of_65000_items);
	tcase_add_test(tc, yaml_list_of_a_million_items);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(suite());
}
