/*
 * marian_names.c: attn's Transformer parameters as Marian names them
 * (marian_names.h).
 *
 * Marian's names (its src/models/transformer.h): the embeddings Wemb
 * (tied-embeddings-all or -src) or encoder_Wemb and decoder_Wemb;
 * encoder layer l (from 1): encoder_l{l}_self_W{q,k,v,o}, _b{q,k,v,o},
 * the self-attention's layer norm encoder_l{l}_self_Wo_ln_{scale,bias}
 * ("_pre" appended for a pre-norm's: preProcess, not postProcess), the
 * FFN encoder_l{l}_ffn_W1, _b1, _W2, _b2 and its norm
 * encoder_l{l}_ffn_ffn_ln_*; the decoder's the same, with
 * decoder_l{l}_context_* for the cross-attention; a pre-norm stack's
 * last norm {encoder,decoder}_top_ln_* (postProcess: no "_pre"); the
 * output layer decoder_ff_logit_out_W and _b.  An SSRU decoder layer
 * (DecoderLayerRNN) has decoder_l{l}_rnn_W, _Wf, _bf, and its norm
 * decoder_l{l}_rnn_ffn_ln_* after it (post-norm) or
 * decoder_l{l}_rnn_ln_*_pre before it (pre-norm).
 */
#include <stdio.h>
#include <string.h>
#include "marian_names.h"

int marian_name(const char *a, int pre, int ssru, const char *tie, char *mn,
		size_t sz, int *tr)
{
	static const char *const ln_suffix[2] = { "", "_pre" };
	char side[4], part[16], x[4], y[4];
	const char *pfx, *sub;
	int l, k;

	pre = !!pre;	/* an index of ln_suffix */
	*tr = 0;
	if (!strcmp(a, "src.emb"))
		return snprintf(mn, sz, "encoder_Wemb") < 0;
	if (!strcmp(a, "tgt.emb"))
		return snprintf(mn, sz, "%s", strcmp(tie, "all") &&
				strcmp(tie, "src") ? "decoder_Wemb" :
				"Wemb") < 0;
	if (!strcmp(a, "out.W")) {
		*tr = 1;
		return snprintf(mn, sz, "decoder_ff_logit_out_W") < 0;
	}
	if (!strcmp(a, "out.b"))
		return snprintf(mn, sz, "decoder_ff_logit_out_b") < 0;
	if (sscanf(a, "%3[a-z].ln.%1[gb]%n", side, x, &k) == 2 && !a[k])
		return snprintf(mn, sz, "%s_top_ln_%s", *side == 'e' ?
				"encoder" : "decoder", *x == 'g' ? "scale" :
				"bias") < 0;
	if (sscanf(a, "%3[a-z].%d.%15[a-z0-9].%3[a-zA-Z0-9]%n", side, &l, part,
		   x, &k) < 4)
		return -1;
	pfx = *side == 'e' ? "encoder" : "decoder";
	l++;
	if (!a[k] && ssru && *side == 'd' && !strcmp(part, "ln1"))
		return snprintf(mn, sz, "%s_l%d_rnn%s_ln_%s%s", pfx, l,
				pre ? "" : "_ffn",
				*x == 'g' ? "scale" : "bias",
				ln_suffix[pre]) < 0;
	if (!a[k] && !strcmp(part, "ssru")) {
		*tr = x[0] == 'W';
		return snprintf(mn, sz, "%s_l%d_rnn_%s", pfx, l, x) < 0;
	}
	if (!a[k] && (!strcmp(part, "ln1") || !strcmp(part, "ln2") ||
		      !strcmp(part, "ln3"))) {
		sub = part[2] == '1' ? "self_Wo" : part[2] == '3' ||
			*side == 'e' ? "ffn_ffn" : "context_Wo";
		return snprintf(mn, sz, "%s_l%d_%s_ln_%s%s", pfx, l, sub,
				*x == 'g' ? "scale" : "bias",
				ln_suffix[pre]) < 0;
	}
	if (!a[k] && !strcmp(part, "ffn")) {
		*tr = x[0] == 'W';
		return snprintf(mn, sz, "%s_l%d_ffn_%s", pfx, l, x) < 0;
	}
	/* self.q.W: part self, x q, then .W */
	if (a[k] != '.' || sscanf(a + k + 1, "%1[Wb]", y) != 1 || a[k + 2])
		return -1;
	*tr = *y == 'W';
	return snprintf(mn, sz, "%s_l%d_%s_%c%s", pfx, l,
			!strcmp(part, "cross") ? "context" : "self", *y, x) < 0;
}
