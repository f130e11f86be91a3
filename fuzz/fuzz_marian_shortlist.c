/*
 * fuzz_marian_shortlist.c: libFuzzer target for Marian's lexical
 * shortlists (import/marian_shortlist.h, make fuzz): any bytes read as
 * marian-conv's binary file (for the fixture's 36 units, and for the
 * source vocabulary its header claims, up to 4096) and as the text table
 * (plain, or gzip when they begin so) over a byte vocabulary are read or
 * refused without a crash, a leak or undefined behaviour; what reads
 * holds together: offsets in order ending at the ids' count, ids in the
 * target vocabulary, a text list ascending and at most best long; the
 * tables made of them check.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "import/marian_shortlist.h"

static void check(const struct marian_lex *l, int best)
{
	for (int s = 0; s < l->src_vocab; s++) {
		if (l->off[s] > l->off[s + 1])
			abort();
		if (best >= 0 && l->off[s + 1] - l->off[s] > (uint64_t)best)
			abort();
		for (uint64_t i = l->off[s]; i < l->off[s + 1]; i++)
			if (l->ids[i] < 0 || l->ids[i] >= l->tgt_vocab ||
			    (best >= 0 && i > l->off[s] &&
			     l->ids[i] <= l->ids[i - 1]))
				abort();
	}
}

/* Both tables of l for a Marian-like model of its sizes. */
static void tables(const struct marian_lex *l)
{
	struct model m;

	memset(&m, 0, sizeof m);
	m.src_vocab = l->src_vocab;
	m.tgt_vocab = l->tgt_vocab;
	m.pad_id = 0, m.bos_id = -1, m.eos_id = 0, m.unk_id = 1;
	for (int shared = 0; shared < 2; shared++) {
		struct sl_table *t = marian_lex_table(l, &m, shared);

		if (t && (t->pad[0] != 8 || t->pad[1] > t->tgt_vocab))
			abort();
		shortlist_table_free(t);
	}
}

/* attn-bpe's bytes: specials 0-3, byte b "<0xBB>" 4 + b. */
static struct vocab *bytes_vocab(void)
{
	static struct vocab *v;
	char *text;
	size_t n = 0;

	if (v)
		return v;
	text = malloc(16384);
	if (!text)
		abort();
	n += sprintf(text, "attn-bpe 1 260\n0\t<pad>\tspecial\n1\t<s>\t"
		     "special\n2\t</s>\tspecial\n3\t<unk>\tspecial\n");
	for (int b = 0; b < 256; b++)
		n += sprintf(text + n, "%d\t<0x%02X>\tbyte\n", 4 + b, b);
	if (!(v = vocab_load(text, n)))
		abort();
	free(text);
	return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct marian_lex_opts o;
	struct marian_lex l;
	int claimed = -1;

	if (marian_lex_read_bin(&l, data, size, 36, 36) == 0) {
		check(&l, -1);
		tables(&l);
		marian_lex_free(&l);
	}
	if (size >= 40) {	/* the header's wordToOffsetSize - 1 */
		uint64_t n = 0;

		for (int i = 7; i >= 0; i--)
			n = n << 8 | data[32 + i];
		if (n >= 1 && n <= 4097)
			claimed = (int)n - 1;
	}
	if (claimed >= 0 &&
	    marian_lex_read_bin(&l, data, size, claimed, 260) == 0) {
		check(&l, -1);
		tables(&l);
		marian_lex_free(&l);
	}
	marian_lex_opts_parse(&o, size && data[0] & 1 ? "2,3,0.25" : "4,2");
	if (marian_lex_read_text(&l, data, size, bytes_vocab(), bytes_vocab(),
				 &o) == 0) {
		check(&l, o.best);
		tables(&l);
		marian_lex_free(&l);
	}
	return 0;
}
