/*
 * fuzz_spm.c: libFuzzer target for the SentencePiece model loader and
 * encoder (make fuzz).  Any input must load or be refused without a
 * crash, a leak or undefined behaviour; a model that loads encodes the
 * input itself and a few fixed lines into ids inside the model, never a
 * control piece (or refuses a line, as SentencePiece does, where a
 * forged model's control piece is text too), the same ids twice over
 * (the scratch space keeps nothing between lines), and decodes those
 * ids, its pieces and the line itself read as pieces without an error.
 * The seeds are small models from tests/fixtures/spm.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "text/spm_impl.h"

static void encode(struct spm *m, const char *s, size_t n)
{
	struct bpe_ids a = { 0 }, b = { 0 };
	struct bpe_text p = { 0 }, t = { 0 };
	size_t i;
	int rc = spm_encode(m, s, n, &a, &p);

	/* a forged model may refuse a line (a control piece that is also
	 * text, as SentencePiece refuses it), but the same way twice */
	if (spm_encode(m, s, n, &b, NULL) != rc)
		abort();
	if (rc < 0)
		goto out;
	if (a.n != b.n || (a.n && memcmp(a.v, b.v, a.n * sizeof(*a.v))))
		abort();
	for (i = 0; i < a.n; i++)
		if (a.v[i] < 0 || a.v[i] >= spm_size(m) ||
		    m->piece[a.v[i]].type == SPM_CONTROL)
			abort();
	if (spm_decode(m, a.v, a.n, &t) < 0 ||
	    spm_decode_units(m, a.v, a.n, &t) < 0 ||
	    spm_decode_pieces(m, p.s, p.n, &t) < 0 ||
	    spm_decode_pieces(m, s, n, &t) < 0)
		abort();
out:
	bpe_ids_free(&a);
	bpe_ids_free(&b);
	bpe_text_free(&p);
	bpe_text_free(&t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const lines[] = {
		"", "hello world", "  a\tb  c ", "\xff\xfe\xc3", "<s></s><unk>",
		"\xe2\x96\x81x\xe2\x96\x81", "\xef\xbc\xa1\xe6\x97\xa5",
	};
	struct spm *m = spm_load(data, size);
	size_t i;

	if (!m)
		return 0;
	for (i = 0; i < sizeof(lines) / sizeof(*lines); i++)
		encode(m, lines[i], strlen(lines[i]));
	encode(m, (const char *)data, size < 4096 ? size : 4096);
	spm_free(m);
	return 0;
}
