/*
 * fuzz_spm.c: libFuzzer target for the SentencePiece model loader and
 * encoder (make fuzz).  Any input must load or be refused without a
 * crash, a leak or undefined behaviour; a model that loads encodes the
 * input itself and a few fixed lines into ids inside the model, never a
 * control piece (or refuses a line, as SentencePiece does, where a
 * forged model's control piece is text too), the same ids twice over
 * (the scratch space keeps nothing between lines), and decodes those
 * ids, its pieces and the line itself read as pieces without an error.
 * An input that vocab_load takes (a table of ids over a model too:
 * vocab.h's third kind) encodes and decodes a line within its ids.
 * The seeds are small models from tests/fixtures/spm.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "text/spm_impl.h"
#include "text/vocab.h"

/* Through vocab.h: ids within the vocabulary, decoded without error. */
static void as_vocab(const uint8_t *data, size_t size)
{
	struct vocab *v = vocab_load(data, size);
	struct bpe_ids ids = { 0 };
	struct bpe_text t = { 0 };

	if (!v)
		return;
	if (vocab_encode(v, "hello world a", 13, &ids, &t) == 0) {
		for (size_t i = 0; i < ids.n; i++)
			if (ids.v[i] < 0 || ids.v[i] >= vocab_size(v))
				abort();
		if (vocab_decode_line(v, ids.v, ids.n, &t) < 0)
			abort();
	}
	bpe_ids_free(&ids);
	bpe_text_free(&t);
	vocab_free(v);
}

static void encode(struct spm *m, const char *s, size_t n)
{
	struct bpe_ids a = { 0 }, b = { 0 }, c = { 0 }, sp = { 0 };
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
	/* with spans: the same ids, each its bytes of s, in order */
	if (spm_encode_spans(m, s, n, &c, NULL, &sp) < 0 || c.n != a.n ||
	    (a.n && memcmp(a.v, c.v, a.n * sizeof(*a.v))) || sp.n != 2 * a.n)
		abort();
	for (i = 0; i < a.n; i++)
		if (sp.v[2 * i] < 0 || sp.v[2 * i] > sp.v[2 * i + 1] ||
		    (size_t)sp.v[2 * i + 1] > n ||
		    (i && sp.v[2 * i] < sp.v[2 * i - 2]))
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
	bpe_ids_free(&c);
	bpe_ids_free(&sp);
	bpe_text_free(&p);
	bpe_text_free(&t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const lines[] = {
		"", "hello world", "  a\tb  c ", "\xff\xfe\xc3", "<s></s><unk>",
		"\xe2\x96\x81x\xe2\x96\x81", "\xef\xbc\xa1\xe6\x97\xa5",
	};
	struct spm *m;
	size_t i;

	as_vocab(data, size);
	if (!(m = spm_load(data, size)))
		return 0;
	for (i = 0; i < sizeof(lines) / sizeof(*lines); i++)
		encode(m, lines[i], strlen(lines[i]));
	encode(m, (const char *)data, size < 4096 ? size : 4096);
	spm_free(m);
	return 0;
}
