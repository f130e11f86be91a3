/*
 * test_spm.c: the SentencePiece model on hand-made bytes: the protobuf
 * reader, the charsmap's double array (built here by hand), the
 * normaliser's flags, unigram and BPE segmentations worked out by hand,
 * decoding, and the loader's refusals.  tests/cli_spm.sh compares whole
 * models with spm_encode's output.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "run_suite.h"
#include "text/spm_impl.h"
#include "text/vocab.h"
#include "base/errmsg.h"

/* ---- writing protobuf, to make models ----------------------------------- */

struct buf {
	uint8_t b[8192];
	size_t n;
};

static void put_varint(struct buf *o, uint64_t v)
{
	do {
		ck_assert_uint_lt(o->n, sizeof o->b);
		o->b[o->n++] = (uint8_t)(v & 0x7f) | (v > 0x7f ? 0x80 : 0);
		v >>= 7;
	} while (v);
}

static void put_tag(struct buf *o, uint32_t field, int wire)
{
	put_varint(o, (uint64_t)field << 3 | (unsigned)wire);
}

static void put_bytes(struct buf *o, uint32_t field, const void *s, size_t n)
{
	put_tag(o, field, PB_LEN);
	put_varint(o, n);
	ck_assert_uint_le(o->n + n, sizeof o->b);
	memcpy(o->b + o->n, s, n);
	o->n += n;
}

static void put_msg(struct buf *o, uint32_t field, const struct buf *m)
{
	put_bytes(o, field, m->b, m->n);
}

static void put_float(struct buf *o, uint32_t field, float f)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	put_tag(o, field, PB_I32);
	for (int i = 0; i < 4; i++)
		o->b[o->n++] = (uint8_t)(u >> 8 * i);
}

static void put_piece(struct buf *o, const char *s, float score, int type)
{
	struct buf p = { .n = 0 };

	put_bytes(&p, 1, s, strlen(s));
	put_float(&p, 2, score);
	if (type != SPM_NORMAL) {
		put_tag(&p, 3, PB_VARINT);
		put_varint(&p, (uint64_t)type);
	}
	put_msg(o, 1, &p);
}

/* The normalizer spec: identity (no charsmap) and the three flags. */
static void put_norm(struct buf *o, int prefix, int extra, int escape)
{
	struct buf n = { .n = 0 };

	put_bytes(&n, 1, "identity", 8);
	put_tag(&n, 3, PB_VARINT);
	put_varint(&n, (uint64_t)prefix);
	put_tag(&n, 4, PB_VARINT);
	put_varint(&n, (uint64_t)extra);
	put_tag(&n, 5, PB_VARINT);
	put_varint(&n, (uint64_t)escape);
	put_msg(o, 3, &n);
}

static void put_type(struct buf *o, int model_type, int byte_fallback)
{
	struct buf t = { .n = 0 };

	put_tag(&t, 3, PB_VARINT);
	put_varint(&t, (uint64_t)model_type);
	if (byte_fallback) {
		put_tag(&t, 35, PB_VARINT);
		put_varint(&t, 1);
	}
	put_msg(o, 2, &t);
}

/* ids of text under m, and its pieces, as "id id ..." and "p p ..." */
static void encodes(struct spm *m, const char *text, const char *ids,
		    const char *pieces)
{
	struct bpe_ids out = { 0 };
	struct bpe_text p = { 0 }, s = { 0 };
	char num[16];

	ck_assert_int_eq(spm_encode(m, text, strlen(text), &out, &p), 0);
	for (size_t i = 0; i < out.n; i++) {
		snprintf(num, sizeof num, "%s%d", i ? " " : "", out.v[i]);
		bpe_text_add(&s, num, strlen(num));
	}
	bpe_text_add(&s, "", 1);
	bpe_text_add(&p, "", 1);
	ck_assert_msg(!strcmp(s.s, ids), "'%s': ids '%s', not '%s'", text,
		      s.s, ids);
	ck_assert_msg(!strcmp(p.s, pieces), "'%s': pieces '%s', not '%s'",
		      text, p.s, pieces);
	bpe_ids_free(&out);
	bpe_text_free(&p);
	bpe_text_free(&s);
}

static void decodes(const struct spm *m, const int32_t *ids, size_t n,
		    const char *want)
{
	struct bpe_text t = { 0 };

	ck_assert_int_eq(spm_decode(m, ids, n, &t), 0);
	bpe_text_add(&t, "", 1);
	ck_assert_msg(!strcmp(t.s, want), "decoded '%s', not '%s'", t.s, want);
	bpe_text_free(&t);
}

static struct spm *load(const struct buf *o)
{
	struct spm *m = spm_load(o->b, o->n);

	ck_assert_msg(m != NULL, "%s", err_msg());
	return m;
}

static void refused(const struct buf *o, const char *msg)
{
	struct spm *m = spm_load(o->b, o->n);

	ck_assert_ptr_null(m);
	ck_assert_msg(strstr(err_msg(), msg) != NULL, "'%s' lacks '%s'",
		      err_msg(), msg);
}

/* ---- the protobuf reader ------------------------------------------------ */

/* A reader of [p, end) in the input that starts at base. */
static struct pb reader(const uint8_t *base, const uint8_t *p,
			const uint8_t *end)
{
	struct pb r = { .p = p, .end = end, .base = base };

	return r;
}

START_TEST(varints)
{
	static const uint8_t b[] = { 0x01, 0xac, 0x02, 0xff, 0xff, 0xff, 0xff,
		0xff, 0xff, 0xff, 0xff, 0xff, 0x01 };
	static const uint8_t eleven[] = { 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
		0x80, 0x80, 0x80, 0x80, 0x01 };
	struct pb r = reader(b, b, b + sizeof b);
	uint64_t v;

	ck_assert_int_eq(pb_varint(&r, &v), 0);
	ck_assert_uint_eq(v, 1);
	ck_assert_int_eq(pb_varint(&r, &v), 0);
	ck_assert_uint_eq(v, 300);              /* 0x2c + 2 << 7 */
	ck_assert_int_eq(pb_varint(&r, &v), 0);
	ck_assert(v == UINT64_MAX);             /* ten bytes */
	ck_assert(r.p == r.end);
	ck_assert_int_eq(pb_varint(&r, &v), -1);
	ck_assert_str_eq(err_msg(), "truncated varint at byte 13");

	r = reader(b, b + 1, b + 2);     /* 0xac: more to come */
	ck_assert_int_eq(pb_varint(&r, &v), -1);
	ck_assert_str_eq(err_msg(), "truncated varint at byte 1");
	r = reader(eleven, eleven, eleven + sizeof eleven);
	ck_assert_int_eq(pb_varint(&r, &v), -1);
	ck_assert_str_eq(err_msg(), "varint longer than 10 bytes at byte 0");
}
END_TEST

START_TEST(tags_and_fields)
{
	/* field 1 varint 5; field 2 "hi"; field 3 fixed32; field 4 fixed64 */
	static const uint8_t b[] = { 0x08, 0x05, 0x12, 0x02, 'h', 'i', 0x1d,
		0x00, 0x00, 0x80, 0x3f, 0x21, 1, 2, 3, 4, 5, 6, 7, 8 };
	struct pb r = reader(b, b, b + sizeof b);
	const uint8_t *s;
	uint32_t f, u;
	uint64_t v;
	size_t n;
	int w;
	float x;

	ck_assert_int_eq(pb_tag(&r, &f, &w), 1);
	ck_assert_uint_eq(f, 1);
	ck_assert_int_eq(w, PB_VARINT);
	ck_assert_int_eq(pb_varint(&r, &v), 0);
	ck_assert_uint_eq(v, 5);
	ck_assert_int_eq(pb_tag(&r, &f, &w), 1);
	ck_assert_int_eq(w, PB_LEN);
	ck_assert_int_eq(pb_want(&r, f, w, PB_VARINT, "x"), -1);
	ck_assert_str_eq(err_msg(), "field 2 of x at byte 2: wire type 2, "
			 "not 0");
	ck_assert_int_eq(pb_bytes(&r, &s, &n), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert(!memcmp(s, "hi", 2));
	ck_assert_int_eq(pb_tag(&r, &f, &w), 1);
	ck_assert_int_eq(w, PB_I32);
	ck_assert_int_eq(pb_fixed32(&r, &u), 0);
	memcpy(&x, &u, 4);
	ck_assert(x == 1.0f);
	ck_assert_int_eq(pb_tag(&r, &f, &w), 1);
	ck_assert_int_eq(w, PB_I64);
	ck_assert_int_eq(pb_skip(&r, w), 0);
	ck_assert_int_eq(pb_tag(&r, &f, &w), 0);        /* the end */

	/* a length past the end; a fixed32 cut short; odd tags */
	r = reader(b, b + 2, b + 5);
	ck_assert_int_eq(pb_tag(&r, &f, &w), 1);
	ck_assert_int_eq(pb_bytes(&r, &s, &n), -1);
	ck_assert_str_eq(err_msg(), "field of 2 bytes at byte 3 runs past "
			 "the end of its message (1 bytes left)");
	r = reader(b, b + 7, b + 9);
	ck_assert_int_eq(pb_fixed32(&r, &u), -1);
	ck_assert_int_eq(pb_skip(&r, PB_I64), -1);
	{
		static const uint8_t group[] = { 0x0b }, zero[] = { 0x00 },
			seven[] = { 0x0f };

		r = reader(group, group, group + 1);
		ck_assert_int_eq(pb_tag(&r, &f, &w), -1);
		ck_assert_str_eq(err_msg(), "field 1 at byte 0: wire type 3 "
				 "(not 0, 1, 2 or 5)");
		r = reader(zero, zero, zero + 1);
		ck_assert_int_eq(pb_tag(&r, &f, &w), -1);
		ck_assert_str_eq(err_msg(), "field number 0 at byte 0");
		r = reader(seven, seven, seven + 1);
		ck_assert_int_eq(pb_tag(&r, &f, &w), -1);
	}
}
END_TEST

/* ---- the charsmap's double array ----------------------------------------- */

/*
 * Keys "a" -> "x" and "ab" -> "yz", laid out by hand: the root (unit 0)
 * has offset 1, so byte c leads to unit 1 ^ c: 'a' to 96.  Unit 96 (label
 * 'a', a leaf) has offset 100: its leaf is unit 96 ^ 100 = 4 (value 0,
 * "x"), its child 'b' unit 4 ^ 'b' = 102.  Unit 102 (label 'b', a leaf)
 * has offset 110: its leaf is unit 8 (value 2, "yz").
 */
static size_t make_charsmap(uint8_t *blob)
{
	uint32_t u[128] = { 0 };
	const char strings[] = "x\0yz";
	size_t i;

	u[0] = 1u << 10;
	u[96] = 'a' | 1u << 8 | 100u << 10;
	u[4] = 0x80000000u | 0;
	u[102] = 'b' | 1u << 8 | 110u << 10;
	u[8] = 0x80000000u | 2;
	blob[0] = 0;
	blob[1] = 2;            /* 512 bytes of trie */
	blob[2] = blob[3] = 0;
	for (i = 0; i < 128; i++)
		for (int k = 0; k < 4; k++)
			blob[4 + 4 * i + k] = (uint8_t)(u[i] >> 8 * k);
	memcpy(blob + 4 + 512, strings, sizeof strings);
	return 4 + 512 + sizeof strings;
}

START_TEST(charsmap_trie)
{
	uint8_t blob[600];
	size_t n = make_charsmap(blob), tolen;
	struct spm_charsmap c;
	const char *to;

	ck_assert_int_eq(spm_charsmap_init(&c, blob, n), 0);
	ck_assert_uint_eq(c.nunits, 128);
	ck_assert_uint_eq(spm_charsmap_match(&c, "abc", 3, &to, &tolen), 2);
	ck_assert_uint_eq(tolen, 2);
	ck_assert(!memcmp(to, "yz", 2));
	ck_assert_uint_eq(spm_charsmap_match(&c, "ac", 2, &to, &tolen), 1);
	ck_assert_uint_eq(tolen, 1);
	ck_assert(!memcmp(to, "x", 1));
	ck_assert_uint_eq(spm_charsmap_match(&c, "a", 1, &to, &tolen), 1);
	ck_assert_uint_eq(spm_charsmap_match(&c, "b", 1, &to, &tolen), 0);
	ck_assert_uint_eq(spm_charsmap_match(&c, "ba", 2, &to, &tolen), 0);
	ck_assert_uint_eq(spm_charsmap_match(&c, "", 0, &to, &tolen), 0);
	/* bytes above the array's end are no match, not a read past it */
	ck_assert_uint_eq(spm_charsmap_match(&c, "\xff", 1, &to, &tolen), 0);

	ck_assert_int_eq(spm_charsmap_init(&c, blob, 0), 0);    /* none */
	ck_assert_uint_eq(spm_charsmap_match(&c, "a", 1, &to, &tolen), 0);
	ck_assert_int_eq(spm_charsmap_init(&c, blob, 3), -1);
	ck_assert_int_eq(spm_charsmap_init(&c, blob, 500), -1);
	ck_assert(strstr(err_msg(), "a trie of 512 bytes in 496") != NULL);
}
END_TEST

/* The normalised s; its bytes' origins (spm_normalize's from) each in
 * s and in order, kept in norm_from. */
static struct bpe_ids norm_from;

static const char *norm(const struct spm_norm *nm, const char *s)
{
	static struct bpe_text t;
	int32_t len = (int32_t)strlen(s);

	ck_assert_int_eq(spm_normalize(nm, NULL, s, strlen(s), &t, NULL), 0);
	ck_assert_int_eq(spm_normalize(nm, NULL, s, strlen(s), &t,
				       &norm_from), 0);
	ck_assert_uint_eq(norm_from.n, 2 * t.n);
	for (size_t k = 0; k < t.n; k++) {
		ck_assert_int_le(norm_from.v[2 * k], norm_from.v[2 * k + 1]);
		ck_assert_int_le(norm_from.v[2 * k + 1], len);
		ck_assert(!k || norm_from.v[2 * k] >= norm_from.v[2 * k - 2]);
	}
	bpe_text_add(&t, "", 1);
	return t.s;
}

START_TEST(normaliser)
{
	struct spm_norm nm = { .add_dummy_prefix = 1,
			       .remove_extra_whitespaces = 1,
			       .escape_whitespaces = 1 };
	uint8_t blob[600];

	ck_assert_str_eq(norm(&nm, "  a  b \t "), "▁a▁b▁\t");
	{
		/* the dummy prefix none (2, 2), the spaces before b the first
		 * of them, \t itself; each ▁ three bytes of one origin */
		static const int32_t want[] = { 2, 2, 2, 3, 3, 4, 5, 6, 6, 7,
						7, 8 };
		static const int at[] = { 0, 3, 4, 7, 8, 11 };

		for (int k = 0; k < 6; k++) {
			ck_assert_int_eq(norm_from.v[2 * at[k]], want[2 * k]);
			ck_assert_int_eq(norm_from.v[2 * at[k] + 1],
					 want[2 * k + 1]);
		}
	}
	ck_assert_str_eq(norm(&nm, "   "), "");
	ck_assert_str_eq(norm(&nm, ""), "");
	ck_assert_str_eq(norm(&nm, "a\xff" "b\xc3"), "▁a\xef\xbf\xbd" "b\xef\xbf\xbd");
	nm.remove_extra_whitespaces = 0;
	ck_assert_str_eq(norm(&nm, " a  b "), "▁▁a▁▁b▁");
	nm.add_dummy_prefix = 0;
	ck_assert_str_eq(norm(&nm, " a"), "▁a");
	nm.escape_whitespaces = 0;
	ck_assert_str_eq(norm(&nm, " a "), " a ");
	nm.remove_extra_whitespaces = 1;
	nm.add_dummy_prefix = 1;
	ck_assert_str_eq(norm(&nm, "  a  b  "), " a b");

	/* the hand-made charsmap: "ab" -> "yz", "a" -> "x" */
	ck_assert_int_eq(spm_charsmap_init(&nm.map, blob, make_charsmap(blob)),
			 0);
	nm.escape_whitespaces = 1;
	ck_assert_str_eq(norm(&nm, "ab aab b"), "▁yz▁xyz▁b");
	/* y and z both of "ab" (0..2), x of the second a, yz of ab (4..6) */
	ck_assert_int_eq(norm_from.v[2 * 3], 0);
	ck_assert_int_eq(norm_from.v[2 * 4 + 1], 2);
	ck_assert_int_eq(norm_from.v[2 * 8], 3);
	ck_assert_int_eq(norm_from.v[2 * 8 + 1], 4);
	ck_assert_int_eq(norm_from.v[2 * 10], 4);
	ck_assert_int_eq(norm_from.v[2 * 10 + 1], 6);
	bpe_ids_free(&norm_from);
}
END_TEST

/* ---- models ------------------------------------------------------------- */

/* <unk> <s> </s>, then the normal pieces of a unigram model */
static struct spm *unigram(int user)
{
	struct buf o = { .n = 0 };

	put_piece(&o, "<unk>", 0, SPM_UNKNOWN);         /* 0 */
	put_piece(&o, "<s>", 0, SPM_CONTROL);           /* 1 */
	put_piece(&o, "</s>", 0, SPM_CONTROL);          /* 2 */
	put_piece(&o, "▁a", -1, SPM_NORMAL);            /* 3 */
	put_piece(&o, "b", -2, SPM_NORMAL);             /* 4 */
	put_piece(&o, "▁ab", -4, SPM_NORMAL);           /* 5 */
	put_piece(&o, "▁", -5, SPM_NORMAL);             /* 6 */
	put_piece(&o, "a", -3, SPM_NORMAL);             /* 7 */
	put_piece(&o, "ba", -0.5f, SPM_NORMAL);         /* 8 */
	if (user)
		put_piece(&o, "ab", 0, SPM_USER_DEFINED);       /* 9 */
	put_type(&o, SPM_UNIGRAM, 0);
	put_norm(&o, 1, 1, 1);
	return load(&o);
}

START_TEST(unigram_by_hand)
{
	struct spm *m = unigram(0);

	ck_assert_int_eq(spm_size(m), 9);
	ck_assert_int_eq(spm_special(m, SPM_UNK), 0);
	ck_assert_int_eq(spm_special(m, SPM_BOS), 1);
	ck_assert_int_eq(spm_special(m, SPM_EOS), 2);
	ck_assert_int_eq(spm_special(m, SPM_PAD), -1);
	/* ▁ab: ▁a b -3 beats ▁ab -4 and ▁ a b -10 */
	encodes(m, "ab", "3 4", "▁a b");
	/* ▁aba: ▁a ba -1.5 beats ▁a b a -6 and ▁ab a -7 */
	encodes(m, "aba", "3 8", "▁a ba");
	/* c is no piece: <unk> (-5 - 10); a run of them is one <unk> */
	encodes(m, "ac", "3 0", "▁a c");
	encodes(m, "a cc<s>", "3 6 0", "▁a ▁ cc<s>");
	encodes(m, "", "", "");
	encodes(m, "   ", "", "");
	spm_free(m);

	/* an unused piece is never used */
	{
		struct buf o = { .n = 0 };

		put_piece(&o, "<unk>", 0, SPM_UNKNOWN);
		put_piece(&o, "▁a", -1, SPM_NORMAL);
		put_piece(&o, "b", -1, SPM_NORMAL);
		put_piece(&o, "▁ab", 0, SPM_UNUSED);
		put_type(&o, SPM_UNIGRAM, 0);
		m = load(&o);
		encodes(m, "ab", "1 2", "▁a b");
		spm_free(m);
	}

	/* a user-defined piece scores its length times the highest normal
	 * score (or FLT_MIN, when none is positive, as here) less 0.1:
	 * ▁a ab -1.1 beats ▁a a b -6 */
	m = unigram(1);
	encodes(m, "aab", "3 9", "▁a ab");
	spm_free(m);
}
END_TEST

START_TEST(bpe_by_hand)
{
	struct buf o = { .n = 0 };
	struct spm *m;

	put_piece(&o, "<unk>", 0, SPM_UNKNOWN);         /* 0 */
	put_piece(&o, "a", -1, SPM_NORMAL);             /* 1 */
	put_piece(&o, "b", -1, SPM_NORMAL);             /* 2 */
	put_piece(&o, "c", -1, SPM_NORMAL);             /* 3 */
	put_piece(&o, "ab", -5, SPM_NORMAL);            /* 4 */
	put_piece(&o, "bc", -5, SPM_NORMAL);            /* 5 */
	put_piece(&o, "cd", -2, SPM_UNUSED);            /* 6 */
	put_piece(&o, "d", -1, SPM_NORMAL);             /* 7 */
	put_piece(&o, "bcd", -3, SPM_NORMAL);           /* 8 */
	put_piece(&o, "e", -1, SPM_NORMAL);             /* 9 */
	put_piece(&o, "de", -4, SPM_NORMAL);            /* 10 */
	put_type(&o, SPM_BPE, 0);
	put_norm(&o, 0, 1, 1);
	m = load(&o);
	/* ab and bc score the same: the leftmost merges */
	encodes(m, "abc", "4 3", "ab c");
	/* cd (unused) merges first, then bcd: b cd -> bcd */
	encodes(m, "bcd", "8", "bcd");
	/* cd merges but makes nothing more: cut back into c d */
	encodes(m, "acd", "1 3 7", "a c d");
	/* cd (-2) before de (-4): "cde" is cd e, cd cut back */
	encodes(m, "cde", "3 7 9", "c d e");
	/* an unknown character, twice: one <unk> */
	encodes(m, "axxb", "1 0 2", "a xx b");
	spm_free(m);
}
END_TEST

/* <unk> <s> </s>, the 256 bytes, ▁ a ▁a; the normaliser's flags */
static struct spm *bytes_model(int prefix, int extra)
{
	struct buf o = { .n = 0 };
	char name[8];

	put_piece(&o, "<unk>", 0, SPM_UNKNOWN);         /* 0 */
	put_piece(&o, "<s>", 0, SPM_CONTROL);           /* 1 */
	put_piece(&o, "</s>", 0, SPM_CONTROL);          /* 2 */
	for (int b = 0; b < 256; b++) {                 /* 3 + b */
		snprintf(name, sizeof name, "<0x%02X>", b);
		put_piece(&o, name, 0, SPM_BYTE);
	}
	put_piece(&o, "▁", -1, SPM_NORMAL);             /* 259 */
	put_piece(&o, "a", -1, SPM_NORMAL);             /* 260 */
	put_piece(&o, "▁a", -1, SPM_NORMAL);            /* 261 */
	put_type(&o, SPM_UNIGRAM, 1);
	put_norm(&o, prefix, extra, 1);
	return load(&o);
}

START_TEST(byte_fallback_and_decoding)
{
	struct spm *m = bytes_model(1, 1);
	int32_t ids[8];

	/* ñ is no piece: its bytes C3 B1, each a piece */
	encodes(m, "añ", "261 198 180", "▁a <0xC3> <0xB1>");
	encodes(m, "ñ ñ", "259 198 180 259 198 180",
		"▁ <0xC3> <0xB1> ▁ <0xC3> <0xB1>");

	/* bytes back into characters; a byte that makes none is U+FFFD */
	decodes(m, (int32_t[]){ 261, 198, 180 }, 3, "añ");
	decodes(m, (int32_t[]){ 198, 261, 198 }, 3,
		"\xef\xbf\xbd a\xef\xbf\xbd");
	/* the dummy prefix, as spm_decode drops it: with
	 * remove_extra_whitespaces, while the text is empty */
	decodes(m, (int32_t[]){ 1, 259, 259, 260, 2 }, 5, "a");
	decodes(m, (int32_t[]){ 259, 0, 261 }, 3, " \xe2\x81\x87  a");
	decodes(m, (int32_t[]){ 3 + 'x', 261 }, 2, "x a");
	/* <unk> is " ⁇ " */
	decodes(m, (int32_t[]){ 0, 260 }, 2, " \xe2\x81\x87 a");
	decodes(m, ids, 0, "");
	ids[0] = 262;
	{
		struct bpe_text t = { 0 };

		ck_assert_int_eq(spm_decode(m, ids, 1, &t), -1);
		ck_assert(strstr(err_msg(), "outside") != NULL);
		ids[0] = -1;
		ck_assert_int_eq(spm_decode_units(m, ids, 1, &t), -1);
		ck_assert_int_eq(spm_decode_units(m,
			(int32_t[]){ 1, 261, 3 + 'z', 0 }, 4, &t), 0);
		bpe_text_add(&t, "", 1);
		ck_assert_str_eq(t.s, " az \xe2\x81\x87 ");
		bpe_text_free(&t);
	}
	ck_assert_int_eq(spm_piece_find(m, "<0x41>", 6), 3 + 0x41);
	ck_assert_int_eq(spm_piece_find(m, "<0x41", 5), -1);

	/* pieces as text: bytes, a piece the model lacks as it is, <unk> */
	{
		static const char line[] = "▁a <0xC3> <0xB1> xyz  <unk> ▁a";
		struct bpe_text t = { 0 };

		ck_assert_int_eq(spm_decode_pieces(m, line, strlen(line), &t),
				 0);
		bpe_text_add(&t, "", 1);
		ck_assert_str_eq(t.s, "añxyz \xe2\x81\x87  a");
		bpe_text_free(&t);
	}
	spm_free(m);

	/* without it, from the first piece but control pieces only */
	m = bytes_model(1, 0);
	decodes(m, (int32_t[]){ 1, 259, 259, 260, 2 }, 5, " a");
	decodes(m, (int32_t[]){ 3 + 'x', 259, 261 }, 3, "x  a");
	spm_free(m);
	/* and with neither flag, never */
	m = bytes_model(0, 0);
	decodes(m, (int32_t[]){ 261 }, 1, " a");
	spm_free(m);
}
END_TEST

START_TEST(marian_specials)
{
	struct buf o = { .n = 0 }, t = { .n = 0 };
	struct vocab *v;

	put_piece(&o, "</s>", 0, SPM_CONTROL);
	put_piece(&o, "<unk>", 0, SPM_UNKNOWN);
	put_piece(&o, "<pad>", 0, SPM_CONTROL);
	put_piece(&o, "▁a", -1, SPM_NORMAL);
	put_bytes(&t, 45, "<unk>", 5);
	put_msg(&o, 2, &t);
	v = vocab_load(o.b, o.n);
	ck_assert_ptr_nonnull(v);
	ck_assert_int_eq(v->kind, VOCAB_SPM);
	ck_assert_int_eq(vocab_special(v, VOCAB_EOS), 0);
	ck_assert_int_eq(vocab_special(v, VOCAB_UNK), 1);
	ck_assert_int_eq(vocab_special(v, VOCAB_PAD), 2);
	ck_assert_int_eq(vocab_special(v, VOCAB_BOS), -1);
	ck_assert_int_eq(vocab_size(v), 4);
	{
		struct bpe_text t = { 0 };
		struct bpe_ids ids = { 0 };

		/* one line for people: up to </s> (id 0 here) */
		ck_assert_int_eq(vocab_decode_line(v, (int32_t[]){ 3, 3, 0, 3 },
						   4, &t), 0);
		ck_assert_uint_eq(t.n, 3);
		ck_assert(!memcmp(t.s, "a a", 3));
		t.n = 0;
		ck_assert_int_eq(vocab_encode(v, "a  a", 4, &ids, &t), 0);
		ck_assert_uint_eq(ids.n, 2);
		ck_assert_int_eq(ids.v[0], 3);
		ck_assert_int_eq(ids.v[1], 3);
		ck_assert_uint_eq(t.n, strlen("▁a ▁a"));
		ck_assert(!memcmp(t.s, "▁a ▁a", t.n));
		ck_assert_int_eq(vocab_encode_dropout(v, "a", 1, &ids, 0.1,
						      NULL), -1);
		bpe_text_free(&t);
		bpe_ids_free(&ids);
	}
	vocab_free(v);
}
END_TEST

/* A table of ids over a model (vocab.h's third kind): the model's
 * pieces under the table's ids, a piece the table lacks as its <unk>,
 * the specials by name, and the refusals of damaged bytes. */
START_TEST(table_of_ids)
{
	struct buf o = { .n = 0 }, t = { .n = 0 };
	const char *const piece[] = { "</s>", "<unk>", "\u2581b", "x",
				      "\u2581a" };
	struct bpe_text blob = { 0 }, out = { 0 };
	struct bpe_ids ids = { 0 };
	struct vocab *v;

	put_piece(&o, "<unk>", 0, SPM_UNKNOWN);
	put_piece(&o, "</s>", 0, SPM_CONTROL);
	put_piece(&o, "\u2581a", -1, SPM_NORMAL);
	put_piece(&o, "\u2581b", -2, SPM_NORMAL);
	put_piece(&o, "\u2581c", -3, SPM_NORMAL);
	put_bytes(&t, 45, "<unk>", 5);
	put_msg(&o, 2, &t);
	ck_assert_int_eq(vocab_map_make(o.b, o.n, piece, 5, &blob), 0);
	v = vocab_load(blob.s, blob.n);
	ck_assert_msg(v != NULL, "%s", err_msg());
	ck_assert_int_eq(vocab_size(v), 5);
	ck_assert_int_eq(vocab_special(v, VOCAB_EOS), 0);
	ck_assert_int_eq(vocab_special(v, VOCAB_UNK), 1);
	ck_assert_int_eq(vocab_special(v, VOCAB_BOS), -1);
	/* a b c: the table's 4 2, and c (the model's, not the table's) is
	 * <unk> */
	ck_assert_int_eq(vocab_encode(v, "a b c", 5, &ids, NULL), 0);
	ck_assert_uint_eq(ids.n, 3);
	ck_assert_int_eq(ids.v[0], 4);
	ck_assert_int_eq(ids.v[1], 2);
	ck_assert_int_eq(ids.v[2], 1);
	/* each id's bytes in the text (▁a: a; ▁b: the space before b and
	 * b; c, an <unk> here, its space and c), spaces in a row one ▁ */
	{
		struct bpe_ids sp = { 0 };
		static const int32_t want[] = { 0, 1, 1, 4, 4, 6 };

		ids.n = 0;
		ck_assert_int_eq(vocab_encode_spans(v, "a  b c", 6, &ids, &sp,
						    0, NULL), 0);
		ck_assert_uint_eq(ids.n, 3);
		ck_assert_int_eq(ids.v[2], 1);
		ck_assert_uint_eq(sp.n, 6);
		for (size_t k = 0; k < 6; k++)
			ck_assert_int_eq(sp.v[k], want[k]);
		bpe_ids_free(&sp);
	}
	ck_assert_int_eq(vocab_decode_line(v, (int32_t[]){ 2, 4, 0, 4 }, 4,
					   &out), 0);
	ck_assert_uint_eq(out.n, 3);
	ck_assert(!memcmp(out.s, "b a", 3));
	out.n = 0;
	ck_assert_int_eq(vocab_unit_show(v, 2, &out), 0);
	ck_assert(out.n == strlen("\u2581b") && !memcmp(out.s, "\u2581b", out.n));
	ck_assert_int_eq(vocab_unit_find(v, "x", 1), 3);
	ck_assert_int_eq(vocab_unit_show(v, 5, &out), -1);
	ck_assert_int_eq(vocab_decode(v, (int32_t[]){ 5 }, 1, &out), -1);
	vocab_free(v);
	/* damaged: cut short, the header's lengths, no <unk>, a piece with
	 * a newline */
	ck_assert_ptr_null(vocab_load(blob.s, blob.n - 1));
	ck_assert_ptr_nonnull(strstr(err_msg(), "piece 4"));
	ck_assert_ptr_null(vocab_load(blob.s, 20));
	blob.s[strlen("attn-spm-map 1 ")] = '9';
	ck_assert_ptr_null(vocab_load(blob.s, blob.n));
	blob.n = 0;
	ck_assert_int_eq(vocab_map_make(o.b, o.n, (const char *[]){ "</s>",
				"a", "b", "c" }, 4, &blob), 0);
	ck_assert_ptr_null(vocab_load(blob.s, blob.n));
	ck_assert_ptr_nonnull(strstr(err_msg(), "without <unk>"));
	blob.n = 0;
	ck_assert_int_eq(vocab_map_make(o.b, o.n, (const char *[]){ "a\nb" },
					1, &blob), -1);
	bpe_text_free(&blob);
	bpe_text_free(&out);
	bpe_ids_free(&ids);
}
END_TEST

START_TEST(refusals)
{
	struct buf o = { .n = 0 };

	refused(&o, "no pieces");
	put_piece(&o, "a", 0, SPM_NORMAL);
	refused(&o, "no unknown piece");
	put_piece(&o, "<unk>", 0, SPM_UNKNOWN);
	put_piece(&o, "<u2>", 0, SPM_UNKNOWN);
	refused(&o, "piece 2 '<u2>': a second unknown piece (the first is 1)");
	o.n = 0;
	put_piece(&o, "<unk>", 0, SPM_UNKNOWN);
	put_piece(&o, "a", 0, SPM_NORMAL);
	put_piece(&o, "a", 0, SPM_USER_DEFINED);
	refused(&o, "piece 2 'a' is already defined");
	o.n = 0;
	put_piece(&o, "<unk>", 0, SPM_UNKNOWN);
	put_piece(&o, "", 0, SPM_NORMAL);
	refused(&o, "piece 1 is empty");
	o.n = 0;
	put_piece(&o, "<unk>", 0, SPM_UNKNOWN);
	put_piece(&o, "<0x41>", 0, SPM_BYTE);
	refused(&o, "byte_fallback is off");
	put_type(&o, SPM_UNIGRAM, 1);
	refused(&o, "no piece <0x00>");
	o.n = 0;
	put_piece(&o, "<unk>", 0, SPM_UNKNOWN);
	put_piece(&o, "<0x4g>", 0, SPM_BYTE);
	put_type(&o, SPM_UNIGRAM, 1);
	refused(&o, "not named <0x00>..<0xFF>");
	/* a score as a varint */
	o.n = 0;
	{
		struct buf p = { .n = 0 };

		put_bytes(&p, 1, "x", 1);
		put_tag(&p, 2, PB_VARINT);
		put_varint(&p, 1);
		put_msg(&o, 1, &p);
	}
	refused(&o, "field 2 of a piece at byte 5: wire type 0, not 5");
	/* a charsmap cut short */
	o.n = 0;
	put_piece(&o, "<unk>", 0, SPM_UNKNOWN);
	{
		struct buf n = { .n = 0 };

		put_bytes(&n, 2, "\x10\0\0\0abc", 7);
		put_msg(&o, 3, &n);
	}
	refused(&o, "the normalizer spec: precompiled charsmap: a trie of 16 "
		"bytes in 3");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("spm");
	TCase *tc = tcase_create("spm");

	tcase_add_test(tc, varints);
	tcase_add_test(tc, tags_and_fields);
	tcase_add_test(tc, charsmap_trie);
	tcase_add_test(tc, normaliser);
	tcase_add_test(tc, unigram_by_hand);
	tcase_add_test(tc, bpe_by_hand);
	tcase_add_test(tc, byte_fallback_and_decoding);
	tcase_add_test(tc, marian_specials);
	tcase_add_test(tc, table_of_ids);
	tcase_add_test(tc, refusals);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
