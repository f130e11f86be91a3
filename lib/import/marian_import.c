/*
 * marian_import.c: a Marian Transformer as an attn model (marian_import.h).
 *
 * Marian's names (its src/models/transformer.h): the embeddings Wemb
 * (tied-embeddings-all or -src) or encoder_Wemb and decoder_Wemb, [V, d];
 * layer l (from 1) of the encoder: encoder_l{l}_self_W{q,k,v,o} [d, d] and
 * _b{q,k,v,o} [1, d], the self-attention's layer norm
 * encoder_l{l}_self_Wo_ln_{scale,bias} (with "_pre" appended when it is a
 * pre-norm's), the FFN encoder_l{l}_ffn_W1 [d, f], _b1 [1, f], _W2 [f, d],
 * _b2 [1, d] and its norm encoder_l{l}_ffn_ffn_ln_{scale,bias}[_pre]; the
 * decoder's the same with decoder_l{l}_context_* for the cross-attention
 * between them; a pre-norm stack's last norm {encoder,decoder}_top_ln_*;
 * the output layer decoder_ff_logit_out_W [d, V] (absent when tied to the
 * target embedding) and _b [1, V].  Marian multiplies x W with W
 * [in, out]: attn's matrices are [out, in], so every one is transposed.
 *
 * Bergamot's students (transformer-decoder-autoreg: rnn, dec-cell: ssru)
 * have in place of a decoder layer's self-attention its
 * DecoderLayerRNN (src/models/transformer.h): an SSRU (src/rnn/cells.h)
 * of decoder_l{l}_rnn_W [d, d] (no bias), _Wf [d, d] and _bf [1, d],
 * whose layer norm is decoder_l{l}_rnn_ffn_ln_{scale,bias} after it
 * (postProcess with the prefix's "_ffn") or decoder_l{l}_rnn_ln_*_pre
 * before it (preProcess): attn's dec_self=ssru, dec.{l}.ssru.W, .Wf,
 * .bf and dec.{l}.ln1.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/errmsg.h"
#include "base/f16.h"
#include "marian_import.h"
#include "marian_int8.h"
#include "marian_items.h"
#include "marian_names.h"
#include "spm_ids.h"
#include "text/vocab.h"
#include "yaml.h"

/* Bytes of a special:model.yml, at most (Marian's have some 3,000). */
#define MODEL_YML_MAX (1 << 20)

struct imp {
	struct yaml y;			/* special:model.yml */
	int pre;			/* norm=pre */
	int ssru;			/* dec_self=ssru */
	const char *tie_s;		/* tie, as attn spells it */
};

/* key's scalar, def when absent; a list is refused. */
static const char *ystr(const struct yaml *y, const char *key,
			const char *def, int *bad)
{
	const struct yaml_entry *e = yaml_get(y, key);

	if (!e)
		return def;
	if (e->list) {
		err_set("model.yml: %s is a list, not a value", key);
		*bad = 1;
		return def;
	}
	return e->v[0];
}

static int yint(const struct yaml *y, const char *key, long *v)
{
	const char *s = yaml_str(y, key);
	char *end;

	if (!s) {
		err_set("model.yml: %s is missing", key);
		return -1;
	}
	*v = strtol(s, &end, 10);
	if (end == s || *end || *v < 1 || *v > 1 << 20) {
		err_set("model.yml: %s: %s is not a size", key, s);
		return -1;
	}
	return 0;
}

/* Refuses boolean key when it is true: what attn does not implement. */
static int refuse_true(const struct yaml *y, const char *key, const char *why)
{
	int b;

	if (yaml_bool(y, key, 0, &b) < 0) {
		err_prefix("model.yml");
		return -1;
	}
	if (b) {
		err_set("model.yml: %s: true is not supported (%s)", key, why);
		return -1;
	}
	return 0;
}

/*
 * transformer-decoder-autoreg: rnn: Marian's DecoderLayerRNN makes its
 * cell from dec-cell (gru when absent), with the cell's own layer norms
 * when layer-normalization is true, and a linear map after it with
 * transformer-rnn-projection (decoder_l{l}_rnn_Wo, _bo): attn has the
 * SSRU alone.
 */
static int read_rnn(struct imp *im)
{
	const struct yaml *y = &im->y;
	int bad = 0;
	const char *cell = ystr(y, "dec-cell", "gru", &bad);

	if (bad)
		return -1;
	if (strcmp(cell, "ssru")) {
		err_set("model.yml: dec-cell: %s is not supported with "
			"transformer-decoder-autoreg: rnn (ssru is)", cell);
		return -1;
	}
	if (refuse_true(y, "layer-normalization",
			"the SSRU's own layer norms, _gamma and _gammaf") < 0 ||
	    refuse_true(y, "transformer-rnn-projection",
			"a linear map after the SSRU, _Wo and _bo") < 0)
		return -1;
	im->ssru = 1;
	return 0;
}

/*
 * model.yml's rate key (a dropout, the label smoothing) as attn's key=value
 * into kv [64]: 1, 0 when absent; -1 with err_msg() when it is not a
 * number from 0 to 1 (1 excluded), as train-step takes it.
 */
static int rate(const struct yaml *y, const char *key, const char *attn,
		char kv[64])
{
	const struct yaml_entry *e = yaml_get(y, key);
	char *end;
	double x;

	if (!e)
		return 0;
	x = e->list ? -1 : strtod(e->v[0], &end);
	if (e->list || end == e->v[0] || *end || !(x >= 0 && x < 1)) {
		err_set("model.yml:%d: %s: %s is not a rate from 0 to 1 (1 "
			"excluded)", e->line, key, e->list ? "a list" : e->v[0]);
		return -1;
	}
	/* the shortest of 15 and 17 digits that reads back as x */
	snprintf(kv, 64, "%s=%.15g", attn, x);
	if (strtod(strchr(kv, '=') + 1, NULL) != x)
		snprintf(kv, 64, "%s=%.17g", attn, x);
	return 1;
}

/* The settings of the attn model from model.yml, checked. */
static int read_config(struct imp *im, char set[][64], int *nset)
{
	const struct yaml *y = &im->y;
	const char *type, *ar, *act, *pre, *post, *top, *emb;
	const struct yaml_entry *e;
	long d, h, f, el, dl;
	int bad = 0, ta, ts, tt, n = 0, r;

	type = ystr(y, "type", NULL, &bad);
	ar = ystr(y, "transformer-decoder-autoreg", "self-attention", &bad);
	act = ystr(y, "transformer-ffn-activation", "swish", &bad);
	pre = ystr(y, "transformer-preprocess", "", &bad);
	post = ystr(y, "transformer-postprocess", "dan", &bad);
	top = ystr(y, "transformer-postprocess-top", "", &bad);
	emb = ystr(y, "transformer-postprocess-emb", "d", &bad);
	if (bad)
		return -1;
	if (!type || strcmp(type, "transformer")) {
		err_set("model.yml: type: %s is not supported (only "
			"transformer is)", type ? type : "missing");
		return -1;
	}
	if (!strcmp(ar, "rnn") && read_rnn(im) < 0)
		return -1;
	if (!im->ssru && strcmp(ar, "self-attention")) {
		err_set("model.yml: transformer-decoder-autoreg: %s is not "
			"supported (self-attention and rnn are)", ar);
		return -1;
	}
	if ((e = yaml_get(y, "transformer-tied-layers")) && e->n &&
	    !(e->n == 1 && !e->list && !e->v[0][0])) {
		err_set("model.yml: transformer-tied-layers is not supported");
		return -1;
	}
	if ((e = yaml_get(y, "transformer-ffn-depth")) &&
	    (e->list || strcmp(e->v[0], "2"))) {
		err_set("model.yml: transformer-ffn-depth: only 2 is "
			"supported");
		return -1;
	}
	if (strcmp(act, "relu") && strcmp(act, "swish")) {
		err_set("model.yml: transformer-ffn-activation: %s is not "
			"supported (relu and swish are)", act);
		return -1;
	}
	if (!strcmp(pre, "") && !strcmp(post, "dan") && !strcmp(top, ""))
		im->pre = 0;
	else if (!strcmp(pre, "n") && !strcmp(post, "da") && !strcmp(top, "n"))
		im->pre = 1;
	else {
		err_set("model.yml: transformer-preprocess '%s', "
			"transformer-postprocess '%s', "
			"transformer-postprocess-top '%s' are not supported "
			"(post-norm '', dan, '' and pre-norm n, da, n are)",
			pre, post, top);
		return -1;
	}
	if (strcmp(emb, "d") && strcmp(emb, "")) {
		err_set("model.yml: transformer-postprocess-emb: %s is not "
			"supported (d is)", emb);
		return -1;
	}
	if (refuse_true(y, "transformer-train-position-embeddings",
			"attn's pos=learned is not Marian's") < 0 ||
	    refuse_true(y, "transformer-no-projection", "no Wo") < 0 ||
	    refuse_true(y, "transformer-pool", "pooling") < 0 ||
	    refuse_true(y, "right-left", "right-to-left decoding") < 0 ||
	    refuse_true(y, "ulr", "universal lexical representations") < 0 ||
	    refuse_true(y, "output-omit-bias", "attn's output has a bias") <
		    0)
		return -1;
	if ((e = yaml_get(y, "lemma-dim-emb")) && !e->list &&
	    strcmp(e->v[0], "0")) {
		err_set("model.yml: lemma-dim-emb: %s (factored vocabularies) "
			"is not supported", e->v[0]);
		return -1;
	}
	if (!(e = yaml_get(y, "dim-vocabs")) || !e->list || e->n != 2) {
		err_set("model.yml: dim-vocabs must list two sizes (one "
			"source, one target)");
		return -1;
	}
	if (yint(y, "dim-emb", &d) < 0 || yint(y, "transformer-heads", &h) < 0 ||
	    yint(y, "transformer-dim-ffn", &f) < 0 ||
	    yint(y, "enc-depth", &el) < 0 || yint(y, "dec-depth", &dl) < 0)
		return -1;
	if (yaml_bool(y, "tied-embeddings-all", 0, &ta) < 0 ||
	    yaml_bool(y, "tied-embeddings-src", 0, &ts) < 0 ||
	    yaml_bool(y, "tied-embeddings", 0, &tt) < 0) {
		err_prefix("model.yml");
		return -1;
	}
	im->tie_s = ta || (ts && tt) ? "all" : ts ? "src" : tt ? "tgt" :
		"none";
	snprintf(set[n++], 64, "d_model=%ld", d);
	snprintf(set[n++], 64, "heads=%ld", h);
	snprintf(set[n++], 64, "ffn=%ld", f);
	snprintf(set[n++], 64, "enc_layers=%ld", el);
	snprintf(set[n++], 64, "dec_layers=%ld", dl);
	snprintf(set[n++], 64, "src_vocab=%.40s", e->v[0]);
	snprintf(set[n++], 64, "tgt_vocab=%.40s", e->v[1]);
	snprintf(set[n++], 64, "norm=%s", im->pre ? "pre" : "post");
	/* Marian's pre-norm self-attention: the query of the layer norm,
	 * the keys and values of the input (transformer.h LayerAttention) */
	if (im->pre)
		snprintf(set[n++], 64, "pre_kv=input");
	snprintf(set[n++], 64, "tie=%s", im->tie_s);
	snprintf(set[n++], 64, "pos=marian");
	snprintf(set[n++], 64, "ffn_act=%s", act);
	snprintf(set[n++], 64, "ln_eps=1e-06");
	snprintf(set[n++], 64, "bos_id=-1");
	if (im->ssru)
		snprintf(set[n++], 64, "dec_self=ssru");
	/* fine-tuning: Marian's own rates, where the model says, in the
	 * range train-step takes them ([0, 1)) */
	if ((r = rate(y, "transformer-dropout", "dropout", set[n])) < 0)
		return -1;
	n += r;
	if ((r = rate(y, "label-smoothing", "label_smoothing", set[n])) < 0)
		return -1;
	n += r;
	*nset = n;
	return 0;
}

/* A vocabulary's name in messages: its file's, else its side's. */
static const char *vname(const char *name, const char *side, char buf[32])
{
	if (name)
		return name;
	snprintf(buf, 32, "the %s vocab.yml", side);
	return buf;
}

/*
 * A Marian vocab.yml (piece: id) into y, and its pieces by id into
 * *piece [y->n] (pointing into y): every id an integer from 0 to n-1,
 * given once.  -1 with err_msg() when the text is no YAML mapping, -2
 * naming the file (label), the line and the piece when an id is wrong.
 */
static int yml_pieces(const void *v, size_t n, const char *label,
		      struct yaml *y, const char ***piece)
{
	int *line = NULL, rc = -1;

	*piece = NULL;
	if (yaml_parse(y, v, n, label) < 0)
		return -1;
	if (!(*piece = calloc(y->n ? y->n : 1, sizeof **piece)) ||
	    !(line = calloc(y->n ? y->n : 1, sizeof *line))) {
		err_set("%s: out of memory", label);
		goto bad;
	}
	for (int i = 0; i < y->n; i++) {
		const struct yaml_entry *e = &y->e[i];
		char *end = NULL;
		long id = e->list || e->n != 1 ? -1 : strtol(e->v[0], &end, 10);

		rc = -2;
		if (id < 0 || id >= y->n || !end || end == e->v[0] || *end) {
			err_set("%s:%d: piece '%s': its id %s is not from 0 to "
				"%d (a Marian vocabulary gives each piece "
				"one)", label, e->line, e->key,
				e->list ? "(a list)" : e->v[0], y->n - 1);
			goto bad;
		}
		if ((*piece)[id]) {
			err_set("%s:%d: id %ld is given twice: to '%s' (line %d) "
				"and to '%s'", label, e->line, id, (*piece)[id],
				line[id], e->key);
			goto bad;
		}
		(*piece)[id] = e->key;
		line[id] = e->line;
	}
	free(line);
	return 0;
bad:
	free(line);
	free(*piece);
	*piece = NULL;
	yaml_free(y);
	return rc;
}

/* The special ids of a vocabulary: a SentencePiece model's, or a Marian
 * vocab.yml's (piece: id); name for messages. */
static int vocab_ids(const void *v, size_t n, const char *name,
		     const char *side, int *size, int *eos, int *unk)
{
	const struct yaml_entry *e;
	const char **piece;
	struct yaml y;
	char buf[32];
	int rc;

	if (spm_special_ids(v, n, size, eos, unk) == 0 && *size > 0)
		return 0;
	if ((rc = yml_pieces(v, n, vname(name, side, buf), &y, &piece)) < 0) {
		if (rc == -1)
			err_prefix("the %s vocabulary is neither a "
				   "SentencePiece model nor a Marian "
				   "vocab.yml", side);
		return -1;
	}
	*size = y.n;
	*eos = (e = yaml_get(&y, "</s>")) ? atoi(e->v[0]) : -1;
	*unk = (e = yaml_get(&y, "<unk>")) ? atoi(e->v[0]) : -1;
	free(piece);
	yaml_free(&y);
	return 0;
}

/*
 * A side's vocabulary as the model keeps it, into out: an .spm as it is;
 * a vocab.yml with the .spm that segments it (spm not NULL) as a table
 * of ids over it (text/vocab.h); a vocab.yml alone as it is (ids only).
 */
static int side_vocab(const void *v, size_t n, const char *name,
		      const void *spm, size_t spm_len, struct bpe_text *out,
		      const char *side)
{
	int size, eos, unk, rc;
	const char **piece;
	struct yaml y;
	char buf[32];

	if (spm_special_ids(v, n, &size, &eos, &unk) == 0 && size > 0)
		return bpe_text_add(out, v, n);
	if (!spm)
		return bpe_text_add(out, v, n);
	if (spm_special_ids(spm, spm_len, &size, &eos, &unk) < 0 ||
	    size <= 0) {
		err_prefix("the %s segmenter is not a SentencePiece model", side);
		return -1;
	}
	if (yml_pieces(v, n, vname(name, side, buf), &y, &piece) < 0)
		return -1;
	rc = vocab_map_make(spm, spm_len, piece, y.n, out);
	if (rc < 0)
		err_prefix("%s", vname(name, side, buf));
	free(piece);
	yaml_free(&y);
	return rc;
}

/* 0 when item it has the type and shape of parameter p (transposed
 * with tr): by its header alone. */
static int param_fits(const struct param *p, const struct marian_item *it,
		      int tr)
{
	uint64_t r = p->rank == 2 ? (uint64_t)p->dim[0] : 1;
	uint64_t c = p->rank == 2 ? (uint64_t)p->dim[1] : (uint64_t)p->dim[0];
	uint64_t i0 = tr ? c : r, i1 = tr ? r : c;
	int shape_ok;

	if (it->dtype == MARIAN_INTGEMM8)
		return marian_i8_fits(p, it, tr);
	/* a vector may be [n] or Marian's [1, n] */
	if (it->rank == 2)
		shape_ok = it->shape[0] == i0 && it->shape[1] == i1;
	else
		shape_ok = it->rank == 1 && i0 == 1 && it->shape[0] == i1;
	if (!shape_ok || it->dtype == NPY_BYTES) {
		err_set("%s: shape [%llu, %llu] expected for %s (rank %d, "
			"%llu elements given)", it->name,
			(unsigned long long)i0, (unsigned long long)i1, p->name,
			it->rank, (unsigned long long)it->count);
		return -1;
	}
	return 0;
}

/* Item it (loaded) into parameter p (transposed with tr). */
static int copy_param(struct param *p, const struct marian_item *it, int tr)
{
	uint64_t r = p->rank == 2 ? (uint64_t)p->dim[0] : 1;
	uint64_t c = p->rank == 2 ? (uint64_t)p->dim[1] : (uint64_t)p->dim[0];
	uint64_t i0 = tr ? c : r, i1 = tr ? r : c, i, j;

	if (param_fits(p, it, tr) < 0)
		return -1;
	for (i = 0; i < i0; i++)
		for (j = 0; j < i1; j++) {
			uint64_t s = i * i1 + j;
			float v;

			if (it->dtype == NPY_F32)
				memcpy(&v, it->data + 4 * s, 4);
			else {
				uint16_t hv;

				memcpy(&hv, it->data + 2 * s, 2);
				v = f16_to_f32(hv);
			}
			p->w[tr ? j * i0 + i : s] = v;
		}
	return 0;
}

/*
 * With check, m only declared: every parameter's item there with its
 * type and shape, and every item used (one left over is refused), by
 * the items' headers alone, before the parameters' room is allocated or
 * a member inflated.  Without: each item loaded in turn, copied into its
 * parameter and let go (memory: the model and one member).
 */
static int fill_params(struct model *m, const struct imp *im,
		       struct marian_items *mi, int check)
{
	char *used = calloc((size_t)mi->n + 1, 1);
	char mn[128];
	int i, tr;

	if (!used) {
		err_set("out of memory");
		return -1;
	}
	if (!check && marian_i8_begin(m, mi) < 0)
		goto bad;
	for (i = 0; i < m->nparam; i++) {
		struct param *p = &m->param[i];
		const struct marian_item *it;
		float qa;

		if (marian_name(p->name, im->pre, im->ssru, im->tie_s, mn,
				sizeof(mn), &tr) < 0) {
			err_set("import: no Marian name for %s", p->name);
			goto bad;
		}
		if (!(it = marian_item(mi, mn))) {
			err_set("the Marian model has no %s (for %s)", mn,
				p->name);
			goto bad;
		}
		/* an intgemm8 item: marian_int8.h */
		if (check) {
			if (param_fits(p, it, tr) < 0 ||
			    marian_i8_alpha(mi, mn, used, NULL) < 0)
				goto bad;
		} else {
			if (marian_item_load(mi, it) < 0 ||
			    marian_i8_alpha(mi, mn, used, &qa) < 0 ||
			    (it->dtype == MARIAN_INTGEMM8 ?
			     marian_i8_param(m, p, it, tr, qa) :
			     copy_param(p, it, tr)) < 0)
				goto bad;
			marian_item_unload(mi, it);
		}
		used[it - mi->it] = 1;
	}
	if (marian_i8_end(m, mi, used) < 0)
		goto bad;
	for (i = 0; i < mi->n; i++)
		if (!used[i] && strncmp(mi->it[i].name, "special:", 8)) {
			err_set("the Marian model's %s has no place in attn's "
				"Transformer (a feature the import does not "
				"support)", mi->it[i].name);
			goto bad;
		}
	free(used);
	return 0;
bad:
	free(used);
	return -1;
}

/*
 * Marian's --gemm-precision for the model, from its configuration y
 * (label): gemm-precision, or the last of its aliases set true (src/
 * common/aliases.cpp, in that order), else Marian's default, float32.
 * An intgemm8 matrix's products are int8 whatever it says (src/graph/
 * expression_operators.cpp dot l. 487 and affine l. 577: isInt8() or
 * an intgemm8 B): float32 is int8's signed form for those, and keeps a
 * float matrix's products (a tied output layer) float, where int8*
 * quantise it (models/model_parts.h model_marian_float_out).  The
 * config's marian_int8 (marian_int8.c set the one of
 * Firefox, for a model without a configuration) is replaced.  Refused,
 * naming the line: a name Marian does not have, alphas that the model
 * lacks, int16 (attn has no 16-bit products), and any int8 for a float
 * model, which Marian would quantise when loaded (attn takes the
 * intgemm8 file marian-conv -g intgemm8 makes of it).
 */
static int gemm_precision(struct model *m, const struct yaml *y,
			  const char *label)
{
	static const char *const name[] = {
		"float32", "int16", "int8", "int8Alpha", "int8shift",
		"int8shiftAlpha", "int8shiftAll", "int8shiftAlphaAll"
	};
	const struct yaml_entry *e = yaml_get(y, "gemm-precision");
	const char *g = yaml_str(y, "gemm-precision");
	const char *had = config_get(&m->cfg, "marian_int8");
	int line = e ? e->line : 0, i, on;

	if (e && !g) {
		err_set("%s:%d: gemm-precision is a list, not a name", label,
			line);
		return -1;
	}
	if (!g)
		g = "float32";
	for (i = 1; i < 8; i++) {
		if (yaml_bool(y, name[i], 0, &on) < 0) {
			err_prefix("%s", label);
			return -1;
		}
		if (on) {
			g = name[i];
			line = yaml_get(y, name[i])->line;
		}
	}
	for (i = 0; i < 8 && strcmp(g, name[i]); i++)
		;
	if (i == 8 || i == 1 || (!m->int8 && i > 0)) {
		err_set("%s:%d: gemm-precision %s: %s", label, line, g,
			i == 8 ? "not one of Marian's (float32, int16, int8, "
			"int8Alpha, int8shift, int8shiftAlpha, int8shiftAll, "
			"int8shiftAlphaAll)" : i == 1 ? "attn has no 16-bit "
			"integer products" : "the model is float, which "
			"Marian would quantise when loaded; import the "
			"intgemm8 file marian-conv -g intgemm8 makes of it");
		return -1;
	}
	if (!m->int8)
		return 0;
	if (strstr(g, "Alpha") && !(had && strstr(had, "Alpha"))) {
		err_set("%s:%d: gemm-precision %s takes the activations' "
			"multipliers from the model (NAME_QuantMultA), and "
			"it has none", label, line, g);
		return -1;
	}
	return config_set(&m->cfg, "marian_int8", g);
}

/*
 * How Marian decodes the model, as the config keys that decode and beam
 * take their defaults from (run/search.h search_opts_model): what the
 * decoder.yml (or Bergamot's config) at t [n] gives, t NULL for none, and
 * Marian's own defaults for the rest (src/common/config_parser.cpp,
 * addOptionsTranslation: beam-size 12, normalize 0, word-penalty 0,
 * max-length-factor 3, allow-unk false); and two rules of Marian's
 * search that attn's own models do not follow: no minimum length, and
 * an empty line (a source of </s> alone) translated to nothing
 * (src/translator/beam_search.cpp forces it to </s>).  A value outside
 * the range decode and beam take is refused here, naming the key and
 * the file (label), not left for the programs to trip on.
 */
static int decoder_defaults(struct model *m, const char *t, size_t n,
			    const char *label)
{
	static const struct {
		const char *yml, *key, *def;
		double lo, hi;
		int integer;
	} key[] = {
		{ "beam-size", "dec_beam_size", "12", 1, 1000, 1 },
		{ "normalize", "dec_normalize", "0", 0, 100, 0 },
		{ "word-penalty", "dec_word_penalty", "0", -1e6, 1e6, 0 },
		{ "max-length-factor", "dec_max_length_factor", "3", 1e-3,
		  1000, 0 },
	};
	struct yaml y = { 0 };
	int i, allow;

	if (t && yaml_parse(&y, t, n, label) < 0)
		return -1;
	if (t && gemm_precision(m, &y, label) < 0)
		goto bad;
	if (yaml_bool(&y, "allow-unk", 0, &allow) < 0) {
		err_prefix("%s", label);
		goto bad;
	}
	if (config_set(&m->cfg, "dec_allow_unk", allow ? "1" : "0") < 0 ||
	    config_set(&m->cfg, "dec_min_len", "0") < 0 ||
	    config_set(&m->cfg, "dec_empty_source", "1") < 0)
		goto bad;
	for (i = 0; i < (int)(sizeof key / sizeof key[0]); i++) {
		const char *v = yaml_str(&y, key[i].yml);
		const struct yaml_entry *e = yaml_get(&y, key[i].yml);
		char *end;
		double x;

		if (e && !v) {
			err_set("%s:%d: %s is a list, not a number", label,
				e->line, key[i].yml);
			goto bad;
		}
		if (!v)
			v = key[i].def;
		x = strtod(v, &end);
		if (end == v || *end || !(x >= key[i].lo && x <= key[i].hi) ||
		    (key[i].integer && x != (double)(long)x)) {
			err_set("%s:%d: %s: %s is not %s from %g to %g (as "
				"decode and beam take it)", label,
				e ? e->line : 0,
				key[i].yml, v, key[i].integer ? "an integer" :
				"a number", key[i].lo, key[i].hi);
			goto bad;
		}
		if (config_set(&m->cfg, key[i].key, v) < 0)
			goto bad;
	}
	yaml_free(&y);
	return 0;
bad:
	yaml_free(&y);
	return -1;
}

struct model *marian_import(const struct marian_import_in *in)
{
	struct marian_items mi;
	const struct marian_item *cfg;
	struct imp im;
	char set[32][64];
	const char *sp[32];
	struct model *m = NULL;
	int nset = 0, i, vs, es, us, vt, et, ut;
	struct bpe_text vb[2] = { { 0 }, { 0 } };

	memset(&im, 0, sizeof(im));
	/* the items' names and shapes; their data when they are known to
	 * be the model's (fill_params) */
	if (marian_items_open(&mi, in->model, in->model_len) < 0)
		return NULL;
	if (!(cfg = marian_item(&mi, "special:model.yml")) ||
	    cfg->dtype != NPY_BYTES) {
		err_set("the Marian model has no special:model.yml (its "
			"configuration)");
		goto out;
	}
	if (cfg->count > MODEL_YML_MAX) {
		err_set("the Marian model's special:model.yml has %llu bytes, "
			"more than a configuration (at most %d)",
			(unsigned long long)cfg->count, MODEL_YML_MAX);
		goto out;
	}
	if (marian_item_load(&mi, cfg) < 0 ||
	    yaml_parse(&im.y, (const char *)cfg->data, (size_t)cfg->count,
		       "special:model.yml") < 0 ||
	    read_config(&im, set, &nset) < 0)
		goto out;
	marian_item_unload(&mi, cfg);
	if (vocab_ids(in->vsrc, in->vsrc_len, in->vsrc_name, "source", &vs,
		      &es, &us) < 0 ||
	    vocab_ids(in->vtgt, in->vtgt_len, in->vtgt_name, "target", &vt,
		      &et, &ut) < 0)
		goto out;
	if (es < 0 || es != et || us < 0 || us != ut) {
		err_set("the vocabularies' </s> (%d, %d) and unknown piece "
			"(%d, %d) must be there and the same on both sides",
			es, et, us, ut);
		goto out;
	}
	snprintf(set[nset++], 64, "eos_id=%d", es);
	snprintf(set[nset++], 64, "unk_id=%d", us);
	snprintf(set[nset++], 64, "pad_id=%d", es);
	for (i = 0; i < nset; i++)
		sp[i] = set[i];
	/* every parameter's item checked before their room is taken */
	if (!(m = model_declared("transformer", sp, nset, "", ""))) {
		err_prefix("import");
		goto out;
	}
	if (vs != m->src_vocab || vt != m->tgt_vocab) {
		err_set("the vocabularies have %d and %d pieces, the model's "
			"dim-vocabs %d and %d: not this model's vocabularies",
			vs, vt, m->src_vocab, m->tgt_vocab);
		goto bad;
	}
	if (fill_params(m, &im, &mi, 1) < 0)
		goto bad;
	if (model_realize(m) < 0) {
		err_prefix("import");
		goto bad;
	}
	if (fill_params(m, &im, &mi, 0) < 0 ||
	    side_vocab(in->vsrc, in->vsrc_len, in->vsrc_name, in->ssrc,
		       in->ssrc_len, &vb[0], "source") < 0 ||
	    side_vocab(in->vtgt, in->vtgt_len, in->vtgt_name,
		       in->stgt ? in->stgt : in->ssrc,
		       in->stgt ? in->stgt_len : in->ssrc_len, &vb[1],
		       "target") < 0 ||
	    model_set_vocab(m, 0, vb[0].s, vb[0].n) < 0 ||
	    model_set_vocab(m, 1, vb[1].s, vb[1].n) < 0 ||
	    decoder_defaults(m, in->decoder, in->decoder_len,
			     in->decoder_name ? in->decoder_name :
			     "decoder.yml") < 0)
		goto bad;
	goto out;
bad:
	model_free(m);
	m = NULL;
out:
	bpe_text_free(&vb[0]);
	bpe_text_free(&vb[1]);
	yaml_free(&im.y);
	marian_items_free(&mi);
	return m;
}
