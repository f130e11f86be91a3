/* bytes_vocab.c: the unit tests' byte vocabulary (bytes_vocab.h). */
#include <check.h>
#include <stdio.h>
#include "base/errmsg.h"
#include "bytes_vocab.h"

struct vocab *bytes_vocab(void)
{
	static const char specials[] = "0\t<pad>\tspecial\n1\t<s>\tspecial\n"
		"2\t</s>\tspecial\n3\t<unk>\tspecial\n";
	struct bpe_text t = { 0 };
	struct vocab *v;
	char line[32];
	int n;

	n = snprintf(line, sizeof line, "attn-bpe 1 %d\n", BPE_FIRST_UNIT);
	bpe_text_add(&t, line, n);
	bpe_text_add(&t, specials, sizeof specials - 1);
	for (int b = 0; b < 256; b++) {
		n = snprintf(line, sizeof line, "%d\t<0x%02X>\tbyte\n",
			     BPE_BYTE0 + b, b);
		bpe_text_add(&t, line, n);
	}
	v = vocab_load(t.s, t.n);
	ck_assert_msg(v != NULL, "%s", err_msg());
	bpe_text_free(&t);
	return v;
}
