/*
 * fuzz_keep.c: libFuzzer target for what is kept as written (keep.h;
 * make fuzz).  Any line is scanned (every kind and a regex), masked both
 * ways and restored, into the masked source and into the line itself
 * taken as a translation, without a crash, a leak or undefined
 * behaviour; restoring a line's names into its masked source gives the
 * line back whenever the line holds none of the names itself.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "text/keep.h"

static void check(const char *s, size_t n, const struct keep_span *sp,
		  size_t k, enum keep_mode mode)
{
	struct bpe_text m = { 0 }, b = { 0 }, out = { 0 };
	struct bpe_ids p = { 0 };
	size_t j, rows;
	int held = 0;

	for (j = 0; j < KEEP_NAMES; j++)
		held |= memmem(s, n, keep_name(j), strlen(keep_name(j))) != NULL;
	if (keep_mask(s, n, sp, k, mode, &m, &b, &p) < 0)
		goto out;
	rows = p.n / KEEP_COLS;
	if (keep_restore(m.s ? m.s : "", m.n, b.s ? b.s : "", b.n, p.v, rows,
			 NULL, 0, 1, &out) == 0 && mode == KEEP_NAME && !held &&
	    (out.n != n || (n && memcmp(out.s, s, n))))
		abort();	/* the round trip lost the line */
	out.n = 0;
	/* the line as a translation, with links of its own bytes' making */
	keep_restore(s, n, b.s ? b.s : "", b.n, p.v, rows, s, n, 0, &out);
out:
	bpe_text_free(&m);
	bpe_text_free(&b);
	bpe_text_free(&out);
	bpe_ids_free(&p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct keep k = { KEEP_ALL, NULL, 0 };
	struct keep_span *sp = NULL;
	size_t cap = 0, n;

	if (!k.nre && keep_add_regex(&k, "[A-Z]{2} [0-9]+") < 0)
		abort();
	if (keep_find(&k, (const char *)data, size, &sp, &cap, &n) == 0) {
		check((const char *)data, size, sp, n, KEEP_NAME);
		check((const char *)data, size, sp, n, KEEP_DROP);
	}
	free(sp);
	return 0;
}
