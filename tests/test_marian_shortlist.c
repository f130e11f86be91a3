/*
 * test_marian_shortlist.c: Marian's lexical shortlists (import/
 * marian_shortlist.h).  A binary file and a text table written here byte
 * by byte, read into the lists and attn's table worked out by hand in the
 * comments (Marian's rules: marian-dev src/data/shortlist.cpp); a
 * sentence's units with Marian's filling to a multiple of 8; every
 * refusal of both readers.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "base/errmsg.h"
#include "import/marian_shortlist.h"
#include "lib/bytes_vocab.h"
#include "lib/run_suite.h"

/* ---- the binary format, written here ---- */

static void put64(unsigned char *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (unsigned char)(v >> 8 * i);
}

/* boost's hash_combine over the words from byte 16 (whole words only):
 * Marian's util::hashMem, written again here */
static void seal(unsigned char *p, size_t len)
{
	uint64_t seed = 0, w;

	for (size_t i = 16; i + 8 <= len; i += 8) {
		w = 0;
		for (int j = 7; j >= 0; j--)
			w = w << 8 | p[i + j];
		seed ^= w + 0x9e3779b9 + (seed << 6) + (seed >> 2);
	}
	put64(p + 8, seed);
}

/*
 * Source vocabulary 4, target 10, first 2, best 2: unit 0 -> 5, 1 ->
 * none, 2 -> 7 9, 3 -> none.  48 + 5 x 8 + 3 x 4 = 100 bytes.
 */
enum { BLEN = 100 };
static void binary(unsigned char *p)
{
	static const uint64_t off[5] = { 0, 1, 1, 3, 3 };
	static const uint32_t ids[3] = { 5, 7, 9 };

	memset(p, 0, BLEN);
	put64(p, 0xF11A48D5013417F5ull);
	put64(p + 16, 2);
	put64(p + 24, 2);
	put64(p + 32, 5);
	put64(p + 40, 3);
	for (int i = 0; i < 5; i++)
		put64(p + 48 + 8 * i, off[i]);
	for (int i = 0; i < 3; i++)
		for (int j = 0; j < 4; j++)
			p[88 + 4 * i + j] = (unsigned char)(ids[i] >> 8 * j);
	seal(p, BLEN);
}

/* A Marian model's specials: </s> 0 (pad too), <unk> 1, no <s>. */
static void marian_model(struct model *m, int src, int tgt)
{
	memset(m, 0, sizeof *m);
	m->src_vocab = src;
	m->tgt_vocab = tgt;
	m->pad_id = 0, m->bos_id = -1, m->eos_id = 0, m->unk_id = 1;
}

static void want_row(const struct sl_table *t, int s, const int32_t *w)
{
	for (int j = 0; j < t->k; j++)
		ck_assert_msg(t->trans[s * t->k + j] == w[j],
			      "unit %d, %d: %d, not %d", s, j,
			      t->trans[s * t->k + j], w[j]);
}

static struct frame frame;
static struct frame *fp[1] = { &frame };

/* Sentence src [n]'s units by table t for m into ids; how many. */
static int units(const struct model *m, const struct sl_table *t,
		 const int32_t *src, uint64_t n, int32_t *ids)
{
	struct tensor x;
	struct shortlist *sl;
	int k;

	frame_clear(&frame);
	ck_assert_int_eq(tensor_init_copy(&x, "src.ids", DT_I32, 1, &n, src),
			 0);
	ck_assert_ptr_nonnull(frame_put(&frame, &x));
	sl = shortlist_new(m, t, fp, 1, 1, (float[64]){ 0 }, NULL, 2,
			   WPACK_F32);
	ck_assert_msg(sl != NULL, "%s", err_msg());
	k = sl->off[1];
	memcpy(ids, sl->ids, sizeof *ids * k);
	shortlist_free(sl);
	frame_clear(&frame);
	return k;
}

START_TEST(binary_by_hand)
{
	unsigned char p[BLEN];
	struct marian_lex l;
	struct model m;
	struct sl_table *t;
	int32_t ids[16];
	int n;

	binary(p);
	ck_assert_int_eq(marian_lex_is_binary(p, BLEN), 1);
	ck_assert_int_eq(marian_lex_read_bin(&l, p, BLEN, 4, 10), 0);
	ck_assert_int_eq(l.first, 2);
	ck_assert_int_eq(l.best, 2);
	ck_assert_int_eq(l.off[2], 1);
	ck_assert_int_eq(l.off[3], 3);
	ck_assert_int_eq(l.ids[2], 9);

	/* not shared: k = the longest list + 1 = 3; frequent 0 1; filled
	 * to 8 from id 2 */
	marian_model(&m, 4, 10);
	t = marian_lex_table(&l, &m, 0);
	ck_assert_msg(t != NULL, "%s", err_msg());
	ck_assert_int_eq(t->nfreq, 2);
	ck_assert_int_eq(t->freq[1], 1);
	ck_assert_int_eq(t->k, 3);
	want_row(t, 0, (int32_t[]){ 5, -1, -1 });
	want_row(t, 1, (int32_t[]){ -1, -1, -1 });
	want_row(t, 2, (int32_t[]){ 7, 9, -1 });
	ck_assert_int_eq(t->pad[0], 8);
	ck_assert_int_eq(t->pad[1], 2);
	/* "3 </s>": 0 1 (frequent), 5 (</s>'s): 3 units, filled with 2 3
	 * 4 6 7 */
	n = units(&m, t, (int32_t[]){ 3, 0 }, 2, ids);
	ck_assert_int_eq(n, 8);
	for (int j = 0; j < 8; j++)
		ck_assert_int_eq(ids[j], ((int32_t[]){ 0, 1, 2, 3, 4, 5, 6,
						       7 })[j]);
	shortlist_table_free(t);

	/* shared: each unit itself too.  "2 </s>": 0 1, 2 7 9, 0 5: six,
	 * filled with 3 4 */
	t = marian_lex_table(&l, &m, 1);
	ck_assert_ptr_nonnull(t);
	want_row(t, 0, (int32_t[]){ 0, 5, -1 });
	want_row(t, 1, (int32_t[]){ 1, -1, -1 });
	want_row(t, 2, (int32_t[]){ 2, 7, 9 });
	want_row(t, 3, (int32_t[]){ 3, -1, -1 });
	n = units(&m, t, (int32_t[]){ 2, 0 }, 2, ids);
	ck_assert_int_eq(n, 8);
	for (int j = 0; j < 8; j++)
		ck_assert_int_eq(ids[j], ((int32_t[]){ 0, 1, 2, 3, 4, 5, 7,
						       9 })[j]);
	/* filling stops at the vocabulary's end: first 9 of 10, "2 </s>":
	 * 0-8 and 9, ten units */
	t->pad[1] = 9;
	t->nfreq = 9;
	t->freq = realloc(t->freq, sizeof *t->freq * 9);
	for (int j = 0; j < 9; j++)
		t->freq[j] = j;
	n = units(&m, t, (int32_t[]){ 2, 0 }, 2, ids);
	ck_assert_int_eq(n, 10);
	shortlist_table_free(t);

	/* a table for other vocabularies */
	marian_model(&m, 4, 11);
	ck_assert_ptr_null(marian_lex_table(&l, &m, 0));
	ck_assert_ptr_nonnull(strstr(err_msg(), "not the model's 4 and 11"));
	marian_lex_free(&l);

	/* the checksum covers whole words only (shortlist.cpp:179): the
	 * last id's 4 bytes are outside it, as Marian reads them */
	p[96] = 8;
	ck_assert_int_eq(marian_lex_read_bin(&l, p, BLEN, 4, 10), 0);
	ck_assert_int_eq(l.ids[2], 8);
	marian_lex_free(&l);
}
END_TEST

static void bin_refused(const unsigned char *p, size_t len, int sv, int tv,
			const char *why)
{
	struct marian_lex l;

	ck_assert_int_eq(marian_lex_read_bin(&l, p, len, sv, tv), -1);
	ck_assert_msg(strstr(err_msg(), why) != NULL, "'%s', not '%s'",
		      err_msg(), why);
	ck_assert_ptr_null(l.off);
}

START_TEST(binary_refusals)
{
	unsigned char p[BLEN + 8], q[BLEN];

	binary(p);
	bin_refused(p, 47, 4, 10, "too short for a binary shortlist's header");
	memcpy(q, p, BLEN);
	q[0] ^= 1;
	ck_assert_int_eq(marian_lex_is_binary(q, BLEN), 0);
	bin_refused(q, BLEN, 4, 10, "no magic");
	bin_refused(p, BLEN - 1, 4, 10, "not its 99 bytes");
	p[BLEN] = 0;
	bin_refused(p, BLEN + 1, 4, 10, "not its 101 bytes");
	/* counts far past the file, refused before any allocation */
	memcpy(q, p, BLEN);
	put64(q + 32, (uint64_t)1 << 61);
	bin_refused(q, BLEN, 4, 10, "offsets and");
	put64(q + 32, 5);
	put64(q + 40, (uint64_t)1 << 62);
	bin_refused(q, BLEN, 4, 10, "offsets and");
	memcpy(q, p, BLEN);
	q[60] ^= 1;		/* an offset, inside the checksum */
	bin_refused(q, BLEN, 4, 10, "checksum mismatch");
	bin_refused(p, BLEN, 5, 10, "source vocabulary of 4 units, not the "
		    "model's 5");
	bin_refused(p, BLEN, 4, 9, "id 9 at 2 is past the target vocabulary");
	/* offsets out of order, or not ending at the ids' end (sealed) */
	memcpy(q, p, BLEN);
	put64(q + 56, 2);	/* 0 2 1 3 3 */
	seal(q, BLEN);
	bin_refused(q, BLEN, 4, 10, "offset 1 of source unit 2");
	memcpy(q, p, BLEN);
	put64(q + 80, 2);	/* 0 1 1 3 2 */
	seal(q, BLEN);
	bin_refused(q, BLEN, 4, 10, "offset 2 of source unit 4");
}
END_TEST

/* ---- the text table ---- */


/*
 * TARGET SOURCE PROB, threshold 0.1, best 2 (a = 101, b 102, c 103, d
 * 104; <unk> 3):
 *   a: b .5, c .5, d .7, e .9 then .05 (the last wins: not above .1):
 *      d, then c before b (a tie: the higher id first): 103 104
 *   b: a .1 (not above .1), c .11: 103; NULL lines skipped
 *   c: zz .3, a target word no vocabulary has: <unk> 3
 *   d: d .2, its triple across a line break: 104
 *   <unk>: yy (unknown) -> a .4: 101
 */
static const char table[] =
	"<0x62> <0x61> 0.5\n<0x63>\t<0x61>  0.5\r\n<0x64> <0x61> 0.7\n"
	"<0x65> <0x61> 0.9\nNULL <0x62> 0.9\n<0x61> NULL 0.9\n"
	"<0x61> <0x62> 0.1\n<0x63> <0x62> 0.11\nzz <0x63> 3e-1\n"
	"<0x64> <0x64>\n0.2\n<0x61> yy .4\n<0x65> <0x61> 0.05\n";

static void want_text(const struct marian_lex *l)
{
	static const struct { int s, n, ids[2]; } w[] = {
		{ 3, 1, { 101 } }, { 101, 2, { 103, 104 } },
		{ 102, 1, { 103 } }, { 103, 1, { 3 } }, { 104, 1, { 104 } },
	};
	int i = 0, s, j;

	ck_assert_int_eq(l->src_vocab, 260);
	ck_assert_int_eq(l->first, 2);
	for (s = 0; s < 260; s++) {
		int n = (int)(l->off[s + 1] - l->off[s]);

		if (i < 5 && w[i].s == s) {
			ck_assert_msg(n == w[i].n, "unit %d: %d ids", s, n);
			for (j = 0; j < n; j++)
				ck_assert_int_eq(l->ids[l->off[s] + j],
						 w[i].ids[j]);
			i++;
		} else
			ck_assert_msg(n == 0, "unit %d: %d ids", s, n);
	}
}

/* data [n] gzipped into out; its length */
static size_t gz(const char *data, size_t n, unsigned char *out, size_t cap)
{
	z_stream z = { 0 };

	ck_assert_int_eq(deflateInit2(&z, 9, Z_DEFLATED, 31, 8,
				      Z_DEFAULT_STRATEGY), Z_OK);
	z.next_in = (unsigned char *)data;
	z.avail_in = (uInt)n;
	z.next_out = out;
	z.avail_out = (uInt)cap;
	ck_assert_int_eq(deflate(&z, Z_FINISH), Z_STREAM_END);
	n = z.total_out;
	deflateEnd(&z);
	return n;
}

START_TEST(text_by_hand)
{
	struct vocab *v = bytes_vocab();
	struct marian_lex_opts o;
	struct marian_lex l;
	struct model m;
	struct sl_table *t;
	unsigned char z[2048];
	size_t nz;

	ck_assert_int_eq(marian_lex_opts_parse(&o, "2,2,0.1"), 0);
	ck_assert_int_eq(o.given, 1);
	ck_assert_int_eq(marian_lex_read_text(&l, table, sizeof table - 1, v,
					      v, &o), 0);
	want_text(&l);
	/* not shared: k 3; -1 past each list */
	marian_model(&m, 260, 260);
	m.unk_id = 3;
	t = marian_lex_table(&l, &m, 0);
	ck_assert_msg(t != NULL, "%s", err_msg());
	ck_assert_int_eq(t->k, 3);
	want_row(t, 101, (int32_t[]){ 103, 104, -1 });
	want_row(t, 3, (int32_t[]){ 101, -1, -1 });
	want_row(t, 0, (int32_t[]){ -1, -1, -1 });
	shortlist_table_free(t);
	marian_lex_free(&l);

	/* gzipped, and two gzip members end to end */
	nz = gz(table, sizeof table - 1, z, sizeof z);
	ck_assert_int_eq(marian_lex_read_text(&l, z, nz, v, v, &o), 0);
	want_text(&l);
	marian_lex_free(&l);
	{
		size_t half = 60, n1 = gz(table, half, z, sizeof z);
		size_t n2 = gz(table + half, sizeof table - 1 - half, z + n1,
			       sizeof z - n1);

		ck_assert_int_eq(marian_lex_read_text(&l, z, n1 + n2, v, v,
						      &o), 0);
		want_text(&l);
		marian_lex_free(&l);
	}

	/* Marian's defaults: 100 100 0 (every entry above 0, 100 a unit):
	 * a keeps b c d, the last e (.05) too */
	ck_assert_int_eq(marian_lex_opts_parse(&o, NULL), 0);
	ck_assert_int_eq(o.given, 0);
	ck_assert_int_eq(o.first, 100);
	ck_assert_int_eq(o.best, 100);
	ck_assert_int_eq(marian_lex_read_text(&l, table, sizeof table - 1, v,
					      v, &o), 0);
	ck_assert_int_eq(l.off[102] - l.off[101], 4);
	ck_assert_int_eq(l.ids[l.off[101] + 3], 105);
	ck_assert_int_eq(l.off[103] - l.off[102], 2);	/* a .1 now in */
	marian_lex_free(&l);

	/* an empty table: every list empty */
	ck_assert_int_eq(marian_lex_read_text(&l, " \n", 2, v, v, &o), 0);
	ck_assert_int_eq(l.off[260], 0);
	marian_lex_free(&l);
	vocab_free(v);
}
END_TEST

static void text_refused(const void *data, size_t n, const char *why)
{
	struct vocab *v = bytes_vocab();
	struct marian_lex_opts o;
	struct marian_lex l;

	marian_lex_opts_parse(&o, NULL);
	ck_assert_int_eq(marian_lex_read_text(&l, data, n, v, v, &o), -1);
	ck_assert_msg(strstr(err_msg(), why) != NULL, "'%s', not '%s'",
		      err_msg(), why);
	ck_assert_ptr_null(l.off);
	vocab_free(v);
}

START_TEST(text_refusals)
{
	static const char *const bad[][2] = {
		{ "a b 0.5\nc d", "line 2: truncated: 2 of the 3 fields" },
		{ "a b 0.5\n\nc\n", "line 3: truncated: 1 of the 3" },
		{ "a b 0.5x\n", "line 1: '0.5x' is not a finite probability" },
		{ "a b\tnan\n", "'nan' is not a finite" },
		{ "a b -inf\n", "'-inf' is not a finite" },
		{ "a b 1e40\n", "'1e40' is not a finite" },
	};
	struct marian_lex_opts o;
	unsigned char z[256];
	size_t nz;
	char *big;

	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
		text_refused(bad[i][0], strlen(bad[i][0]), bad[i][1]);
	/* a probability longer than any word kept */
	big = malloc(2100);
	memcpy(big, "a b ", 4);
	memset(big + 4, '1', 2000);
	text_refused(big, 2004, "is not a finite probability");
	/* a word that long is only unknown: <unk> */
	{
		struct vocab *v = bytes_vocab();
		struct marian_lex l;

		memcpy(big, "<0x61> ", 7);
		memset(big + 7, 'x', 2000);
		memcpy(big + 2007, " 0.5", 4);
		marian_lex_opts_parse(&o, NULL);
		ck_assert_int_eq(marian_lex_read_text(&l, big, 2011, v, v,
						      &o), 0);
		ck_assert_int_eq(l.off[4] - l.off[3], 1);
		ck_assert_int_eq(l.ids[l.off[3]], 101);
		marian_lex_free(&l);
		vocab_free(v);
	}
	free(big);
	/* gzip cut short, or corrupt */
	nz = gz(table, sizeof table - 1, z, sizeof z);
	text_refused(z, nz - 10, "truncated gzip data");
	z[2] = 7;	/* not deflate */
	text_refused(z, nz, "corrupt gzip data");

	/* the numbers */
	ck_assert_int_eq(marian_lex_opts_parse(&o, "4"), 0);
	ck_assert_int_eq(o.first, 4);
	ck_assert_int_eq(o.best, 100);
	ck_assert_int_eq(marian_lex_opts_parse(&o, "4,3,0.25"), 0);
	ck_assert_int_eq(o.best, 3);
	ck_assert(o.threshold == 0.25f);
	ck_assert_int_eq(marian_lex_opts_parse(&o, "-1"), -1);
	ck_assert_int_eq(marian_lex_opts_parse(&o, "4,"), -1);
	ck_assert_int_eq(marian_lex_opts_parse(&o, "4,3,x"), -1);
	ck_assert_int_eq(marian_lex_opts_parse(&o, "4,3,inf"), -1);
	ck_assert_int_eq(marian_lex_opts_parse(&o, "4x"), -1);
}
END_TEST

/* A list too long for attn's dense table is refused before the table
 * is made: 2^20 source units, one list of 64 ids (the 4-byte ids of
 * 2^20 x 64 units would be 256 MB). */
START_TEST(table_too_long)
{
	uint64_t V = 1 << 20;
	size_t len = 48 + 8 * (V + 1) + 4 * 64;
	unsigned char *p = calloc(1, len);
	struct marian_lex l;
	struct model m;

	ck_assert_ptr_nonnull(p);
	put64(p, 0xF11A48D5013417F5ull);
	put64(p + 32, V + 1);
	put64(p + 40, 64);
	for (uint64_t i = 1; i <= V; i++)
		put64(p + 48 + 8 * i, 64);
	for (int i = 0; i < 64; i++)
		p[48 + 8 * (V + 1) + 4 * i] = (unsigned char)i;
	seal(p, len);
	ck_assert_int_eq(marian_lex_read_bin(&l, p, len, (int)V, 64), 0);
	marian_model(&m, (int)V, 64);
	ck_assert_ptr_null(marian_lex_table(&l, &m, 0));
	ck_assert_ptr_nonnull(strstr(err_msg(), "a list of 64 ids is too "
				     "long"));
	marian_lex_free(&l);
	free(p);
}
END_TEST

/* The table's records, and back from a model's annexes: shortlist.pad
 * only as a multiple from 2 to 64 and an id in the vocabulary. */
START_TEST(pad_record)
{
	unsigned char p[BLEN];
	struct tensor rec[3];
	struct marian_lex l;
	struct model m;
	struct sl_table *t, *u;
	int32_t *pad;

	binary(p);
	ck_assert_int_eq(marian_lex_read_bin(&l, p, BLEN, 4, 10), 0);
	marian_model(&m, 4, 10);
	t = marian_lex_table(&l, &m, 1);
	ck_assert_ptr_nonnull(t);
	ck_assert_int_eq(shortlist_table_records(t, rec), 3);
	ck_assert_str_eq(rec[2].name, "shortlist.pad");
	m.annex = rec;
	m.nannex = 3;
	ck_assert_int_eq(shortlist_table_load(&m, &u), 0);
	ck_assert_int_eq(u->pad[0], 8);
	ck_assert_int_eq(u->pad[1], 2);
	ck_assert_int_eq(u->k, 3);
	ck_assert_int_eq(u->trans[2 * 3 + 2], 9);
	shortlist_table_free(u);
	pad = rec[2].data;
	pad[0] = 1;
	ck_assert_int_eq(shortlist_table_load(&m, &u), -1);
	ck_assert_ptr_null(u);
	ck_assert_ptr_nonnull(strstr(err_msg(), "shortlist.pad is not"));
	pad[0] = 8;
	pad[1] = 11;
	ck_assert_int_eq(shortlist_table_load(&m, &u), -1);
	/* without it: attn's own rule, no filling */
	m.nannex = 2;
	ck_assert_int_eq(shortlist_table_load(&m, &u), 0);
	ck_assert_int_eq(u->pad[0], 0);
	shortlist_table_free(u);
	shortlist_table_free(t);
	marian_lex_free(&l);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("marian_shortlist");
	TCase *tc = tcase_create("marian_shortlist");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, binary_by_hand);
	tcase_add_test(tc, binary_refusals);
	tcase_add_test(tc, text_by_hand);
	tcase_add_test(tc, text_refusals);
	tcase_add_test(tc, table_too_long);
	tcase_add_test(tc, pad_record);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
