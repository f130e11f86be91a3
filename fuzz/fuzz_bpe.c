/*
 * fuzz_bpe.c: libFuzzer target for the vocabulary loader (make fuzz).
 * Any input must load or be refused without a crash, a leak or undefined
 * behaviour; a vocabulary that loads saves back to text that loads to the
 * same text again, and encodes the input itself to ids that decode
 * back to it byte for byte (with the dummy prefix of version 2 or
 * without it, version 1: the seeds have both).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "text/bpe.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bpe *v = bpe_load((const char *)data, size), *w;
	struct bpe_text a = { 0 }, b = { 0 }, dec = { 0 };
	struct bpe_ids ids = { 0 };

	if (!v)
		return 0;
	if (bpe_save(v, &a) < 0 || !(w = bpe_load(a.s, a.n)))
		abort();
	if (bpe_save(w, &b) < 0 || a.n != b.n || memcmp(a.s, b.s, a.n))
		abort();
	if (bpe_encode(v, (const char *)data, size, &ids) < 0 ||
	    bpe_decode(v, ids.v, ids.n, &dec) < 0 || dec.n != size ||
	    (size && memcmp(dec.s, data, size)))
		abort();
	bpe_free(v);
	bpe_free(w);
	bpe_text_free(&a);
	bpe_text_free(&b);
	bpe_text_free(&dec);
	bpe_ids_free(&ids);
	return 0;
}
