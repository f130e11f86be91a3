/*
 * fuzz_sentsplit.c: libFuzzer target for the sentence splitter,
 * sentsplit (make fuzz).  The first byte picks the language (modulo
 * SENT_NLANG) and the clause length (its high bits: 0, 1, 4 or 40
 * words); the rest is the line.  Any line is cut without a crash, a leak
 * or undefined behaviour into spans that are in order, not empty, begin
 * and end with a byte that is not a space, and leave only spaces
 * between and around them, so that tokenize's frames give the line
 * back.
 */
#include <stdint.h>
#include <stdlib.h>
#include "text/sentsplit.h"

static int space(uint8_t c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const int words[4] = { 0, 1, 4, 40 };
	struct sent_span *sp = NULL;
	size_t cap = 0, i, j, prev = 0;
	const uint8_t *s;
	long n;

	if (size < 1)
		return 0;
	s = data + 1;
	n = sentsplit((const char *)s, size - 1, data[0] % SENT_NLANG,
		      words[data[0] >> 6], &sp, &cap);
	if (n < 0)
		abort();
	for (i = 0; i < (size_t)n; i++) {
		if (sp[i].start < prev || sp[i].end <= sp[i].start ||
		    sp[i].end > size - 1 || space(s[sp[i].start]) ||
		    space(s[sp[i].end - 1]))
			abort();
		for (j = prev; j < sp[i].start; j++)
			if (!space(s[j]))
				abort();
		prev = sp[i].end;
	}
	for (j = prev; j < size - 1; j++)
		if (!space(s[j]))
			abort();
	free(sp);
	return 0;
}
