/* vocab.c: a vocabulary of either kind (vocab.h). */
#include <stdlib.h>
#include <string.h>
#include "vocab.h"
#include "spm.h"
#include "base/errmsg.h"

#define BPE_MAGIC "attn-bpe"

struct vocab *vocab_load(const void *data, size_t len)
{
	struct vocab *v = calloc(1, sizeof(*v));
	int k;

	if (!v) {
		err_set("out of memory");
		return NULL;
	}
	if (len >= 8 && !memcmp(data, BPE_MAGIC, 8)) {
		v->kind = VOCAB_BPE;
		if (memchr(data, 0, len)) {
			err_set("not a vocabulary (a NUL byte)");
			free(v);
			return NULL;
		}
		if (!(v->bpe = bpe_load(data, len))) {
			free(v);
			return NULL;
		}
		v->special[VOCAB_PAD] = BPE_PAD;
		v->special[VOCAB_BOS] = BPE_BOS;
		v->special[VOCAB_EOS] = BPE_EOS;
		v->special[VOCAB_UNK] = BPE_UNK;
		return v;
	}
	v->kind = VOCAB_SPM;
	if (!(v->spm = spm_load(data, len))) {
		err_prefix("neither an attn-bpe vocabulary nor a SentencePiece "
			   "model");
		free(v);
		return NULL;
	}
	for (k = 0; k < 4; k++)
		v->special[k] = spm_special(v->spm,
			k == VOCAB_PAD ? SPM_PAD : k == VOCAB_BOS ? SPM_BOS :
			k == VOCAB_EOS ? SPM_EOS : SPM_UNK);
	return v;
}

void vocab_free(struct vocab *v)
{
	if (!v)
		return;
	bpe_free(v->bpe);
	spm_free(v->spm);
	free(v);
}

int vocab_size(const struct vocab *v)
{
	return v->bpe ? bpe_size(v->bpe) : spm_size(v->spm);
}

int vocab_encode(struct vocab *v, const char *text, size_t len,
		 struct bpe_ids *ids, struct bpe_text *units)
{
	size_t first = ids->n, i;

	if (v->spm)
		return spm_encode(v->spm, text, len, ids, units);
	if (bpe_encode(v->bpe, text, len, ids) < 0)
		return -1;
	for (i = first; units && i < ids->n; i++)
		if ((i > first && bpe_text_add(units, " ", 1) < 0) ||
		    bpe_unit_show(v->bpe, ids->v[i], units) < 0)
			return -1;
	return 0;
}

int vocab_encode_dropout(struct vocab *v, const char *text, size_t len,
			 struct bpe_ids *ids, double p, struct rng *r)
{
	if (v->spm) {
		err_set("BPE-dropout needs an attn-bpe vocabulary, not a "
			"SentencePiece model");
		return -1;
	}
	return bpe_encode_dropout(v->bpe, text, len, ids, p, r);
}

int vocab_decode(const struct vocab *v, const int32_t *ids, size_t n,
		 struct bpe_text *out)
{
	return v->bpe ? bpe_decode(v->bpe, ids, n, out)
		      : spm_decode(v->spm, ids, n, out);
}

int vocab_decode_line(const struct vocab *v, const int32_t *ids, size_t n,
		      struct bpe_text *out)
{
	size_t k;

	if (v->bpe)
		return bpe_decode_line(v->bpe, ids, n, out);
	for (k = 0; k < n && ids[k] != v->special[VOCAB_EOS]; k++)
		;
	out->n = 0;
	if (spm_decode(v->spm, ids, k, out) < 0)
		return -1;
	return bpe_text_line(out, 0);
}

int vocab_decode_units(const struct vocab *v, const int32_t *ids, size_t n,
		       struct bpe_text *out)
{
	return v->bpe ? bpe_decode_units(v->bpe, ids, n, out)
		      : spm_decode_units(v->spm, ids, n, out);
}

int vocab_unit_show(const struct vocab *v, int32_t id, struct bpe_text *out)
{
	return v->bpe ? bpe_unit_show(v->bpe, id, out)
		      : spm_piece_show(v->spm, id, out);
}

int32_t vocab_unit_find(const struct vocab *v, const char *s, size_t len)
{
	return v->bpe ? bpe_unit_find(v->bpe, s, len)
		      : spm_piece_find(v->spm, s, len);
}
