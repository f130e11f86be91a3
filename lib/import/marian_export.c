/*
 * marian_export.c: an attn Transformer as a Marian model (marian_export.h).
 *
 * What Marian needs, from marian-dev 1.9.56's source:
 * - the settings come from special:model.yml, an int8 array ending in a
 *   NUL (src/common/io.cpp addMetaToItems, read by YAML::Load of its
 *   bytes); a key it lacks takes Marian's default
 *   (src/common/config_parser.cpp addOptionsModel: transformer-ffn-
 *   activation swish, dec-cell gru, transformer-heads 8 ...), so every key
 *   that shapes the graph is written;
 * - an .npz member is read as float32 whatever its dtype says, a 1-D one
 *   as [1, n] (io.cpp loadItemsFromNpz), and every parameter must have the
 *   shape the graph asks for (biases and layer norms [1, n],
 *   src/layers/generic.h layerNorm; matrices [in, out], transformer.h);
 * - layer norms use eps 1e-6 (generic.h layerNorm), positions are its
 *   own sinusoids added after scaling by sqrt(d) (transformer.h
 *   addPositionalEmbeddings), the decoder starts from a zero vector;
 * - in pre-norm, self-attention's keys and values are the layer's
 *   un-normalised input (transformer.h LayerAttention: only the query is
 *   preProcess'ed): attn's pre_kv=input;
 * - a vocabulary is SentencePiece only when its file name ends in .spm
 *   (src/data/vocab.cpp), any other name a yml table.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "base/errmsg.h"
#include "file_set.h"
#include "marian_export.h"
#include "marian_names.h"
#include "npy.h"
#include "npy_write.h"
#include "spm_ids.h"
#include "yaml.h"
#include "zip_write.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the .npz holds little-endian floats, copied from memory"
#endif

/* A growing text. */
struct sbuf {
	char *s;
	size_t n, cap;
	int oom;
};

static void sb_printf(struct sbuf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void sb_printf(struct sbuf *b, const char *fmt, ...)
{
	va_list ap;
	int k;

	if (b->oom)
		return;
	for (;;) {
		va_start(ap, fmt);
		k = vsnprintf(b->s ? b->s + b->n : NULL, b->s ? b->cap - b->n : 0,
			      fmt, ap);
		va_end(ap);
		if (k < 0) {
			b->oom = 1;
			return;
		}
		if (b->s && b->n + (size_t)k < b->cap) {
			b->n += (size_t)k;
			return;
		}
		size_t cap = (b->cap + (size_t)k + 1) * 2;
		char *s = realloc(b->s, cap);

		if (!s) {
			b->oom = 1;
			return;
		}
		b->s = s;
		b->cap = cap;
	}
}

/* A vocabulary as Marian takes it. */
struct side {
	const char *spm;	/* the SentencePiece model, or NULL */
	size_t spm_len;
	struct sbuf yml;	/* the vocab.yml table, or empty */
	const char *raw_yml;	/* a vocab.yml kept as it was (ids only) */
	size_t raw_len;
	int eos, unk;
};

#define MAP_MAGIC "attn-spm-map 1 "

/* Piece p as a YAML double-quoted scalar (yaml-cpp reads it back, and
 * so does yaml.c): quote and backslash escaped, control bytes \xNN. */
static void yml_quote(struct sbuf *b, const char *p, size_t n)
{
	sb_printf(b, "\"");
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)p[i];

		if (c == '"' || c == '\\')
			sb_printf(b, "\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			sb_printf(b, "\\x%02x", c);
		else
			sb_printf(b, "%c", c);
	}
	sb_printf(b, "\"");
}

/* A third-kind vocabulary (text/vocab.h: "attn-spm-map 1 B N\n", the
 * model's B bytes, N pieces a line) as its .spm and a vocab.yml. */
static int side_map(struct side *s, const char *v, size_t n,
		    const char *name)
{
	const char *nl = memchr(v, '\n', n), *p, *end = v + n;
	unsigned long long b, k;
	char head[80];

	if (!nl || (size_t)(nl - v) >= sizeof head) {
		err_set("the %s vocabulary: a bad attn-spm-map header", name);
		return -1;
	}
	memcpy(head, v, (size_t)(nl - v));
	head[nl - v] = 0;
	if (sscanf(head + strlen(MAP_MAGIC), "%llu %llu", &b, &k) != 2 ||
	    b > (size_t)(end - nl - 1)) {
		err_set("the %s vocabulary: a bad attn-spm-map header", name);
		return -1;
	}
	s->spm = nl + 1;
	s->spm_len = (size_t)b;
	s->eos = s->unk = -1;
	p = s->spm + b;
	for (unsigned long long i = 0; i < k; i++) {
		const char *e = memchr(p, '\n', (size_t)(end - p));

		if (!e) {
			err_set("the %s vocabulary: %llu pieces, not %llu",
				name, i, k);
			return -1;
		}
		if (e - p == 4 && !memcmp(p, "</s>", 4))
			s->eos = (int)i;
		if (e - p == 5 && !memcmp(p, "<unk>", 5))
			s->unk = (int)i;
		yml_quote(&s->yml, p, (size_t)(e - p));
		sb_printf(&s->yml, ": %llu\n", i);
		p = e + 1;
	}
	if (s->yml.oom) {
		err_set("out of memory");
		return -1;
	}
	return 0;
}

/* A side's vocabulary v [n]: what Marian reads of it, or a refusal. */
static int side_read(struct side *s, const char *v, size_t n,
		     const char *name)
{
	struct yaml y;
	const char *id;
	int size;

	memset(s, 0, sizeof *s);
	if (n >= 8 && !memcmp(v, "attn-bpe", 8)) {
		err_set("the %s vocabulary is attn-bpe's, which Marian cannot "
			"read (it reads SentencePiece models and vocab.yml "
			"tables)", name);
		return -1;
	}
	if (n > strlen(MAP_MAGIC) && !memcmp(v, MAP_MAGIC, strlen(MAP_MAGIC)))
		return side_map(s, v, n, name);
	if (spm_special_ids(v, n, &size, &s->eos, &s->unk) == 0 && size > 0) {
		s->spm = v;
		s->spm_len = n;
		return 0;
	}
	if (yaml_parse(&y, v, n, "vocab.yml") < 0) {
		err_set("the %s vocabulary is neither a SentencePiece model "
			"nor a vocab.yml table", name);
		return -1;
	}
	s->eos = (id = yaml_str(&y, "</s>")) ? atoi(id) : -1;
	s->unk = (id = yaml_str(&y, "<unk>")) ? atoi(id) : -1;
	yaml_free(&y);
	s->raw_yml = v;
	s->raw_len = n;
	return 0;
}

static void side_free(struct side *s)
{
	free(s->yml.s);
}

/* The keys of an attn model that do not change what Marian computes:
 * training's (Marian has its own) and where a run stands, guided
 * alignment's (a training loss), and the sizes and settings read by
 * check_model; and any key that begins with a prefix of known_prefixes:
 * a run's best dev scores, decoding's defaults (dec_*: decoder.yml takes
 * those Marian has).  Any other key is a setting this does not know,
 * and is refused rather than dropped. */
static const char *const known_keys[] = {
	"arch", "step", "seed", "optim", "lr", "schedule", "warmup", "beta1",
	"beta2", "adam_eps", "rho", "adadelta_eps", "clip",
	"label_smoothing", "dropout", "batch_tokens", "epoch",
	"batch_in_epoch", "epoch_seed", "corpus_crc", "guided_weight",
	"guided_layer", "guided_head", "guided_shift",
	"d_model", "heads", "ffn", "enc_layers", "dec_layers", "norm", "tie",
	"ln_eps", "src_vocab", "tgt_vocab", "pos", "ffn_act", "dec_self",
	"pre_kv", "bos_id", "eos_id", "unk_id", "pad_id", NULL,
};
static const char *const known_prefixes[] = { "dev_", "dec_", NULL };

static int known_key(const char *k)
{
	int j;

	for (j = 0; known_keys[j]; j++)
		if (!strcmp(k, known_keys[j]))
			return 1;
	for (j = 0; known_prefixes[j]; j++)
		if (!strncmp(k, known_prefixes[j], strlen(known_prefixes[j])))
			return 1;
	return 0;
}

struct exp {
	const struct model *m;
	int pre, ssru;
	const char *tie, *act;
	int d, h, f, el, dl;
};

static const char *cfg(const struct model *m, const char *key,
		       const char *def)
{
	const char *v = config_get(&m->cfg, key);

	return v ? v : def;
}

/* The settings of m that Marian has, or a refusal naming the one it
 * does not. */
static int check_model(struct exp *e)
{
	const struct model *m = e->m;
	const char *pos = cfg(m, "pos", "sinusoidal"), *kv;
	double eps = 1e-5;
	int i;

	for (i = 0; i < m->cfg.n; i++)
		if (!known_key(m->cfg.key[i])) {
			err_set("model.config: %s=%s is a setting the Marian "
				"export does not know", m->cfg.key[i],
				m->cfg.val[i]);
			return -1;
		}
	if (m->int8) {
		err_set("an int8 export: Marian would compute with its "
			"dequantised floats, not as attn does; export the "
			"f32 model");
		return -1;
	}
	if (strcmp(pos, "marian")) {
		err_set("pos=%s: Marian's positions are its own sinusoids "
			"(pos=marian: sines in the first half, cosines in the "
			"second), not attn's %s", pos, pos);
		return -1;
	}
	if (m->bos_id != -1) {
		err_set("bos_id=%d: Marian's decoder starts from a zero vector "
			"(bos_id=-1)", m->bos_id);
		return -1;
	}
	if (config_get(&m->cfg, "ln_eps") &&
	    config_double(&m->cfg, "ln_eps", &eps) < 0)
		return -1;
	if ((float)eps != 1e-6f) {
		err_set("ln_eps=%g: Marian's layer norm adds 1e-6", eps);
		return -1;
	}
	e->pre = !strcmp(cfg(m, "norm", "post"), "pre");
	kv = cfg(m, "pre_kv", "norm");
	if (e->pre && strcmp(kv, "input")) {
		err_set("norm=pre with pre_kv=%s: Marian's pre-norm "
			"self-attention takes its keys and values from the "
			"un-normalised input (pre_kv=input)", kv);
		return -1;
	}
	e->ssru = !strcmp(cfg(m, "dec_self", "attention"), "ssru");
	e->tie = cfg(m, "tie", "none");
	e->act = cfg(m, "ffn_act", "relu");
	if (model_size_key(m, "d_model", &e->d) < 0 ||
	    model_size_key(m, "heads", &e->h) < 0 ||
	    model_size_key(m, "ffn", &e->f) < 0 ||
	    model_size_key(m, "enc_layers", &e->el) < 0 ||
	    model_size_key(m, "dec_layers", &e->dl) < 0)
		return -1;
	return 0;
}

/* special:model.yml: every setting that shapes Marian's graph. */
static void model_yml(const struct exp *e, struct sbuf *b)
{
	const struct model *m = e->m;
	const char *t = e->tie, *v;
	int all = !strcmp(t, "all"), src = !strcmp(t, "src");

	sb_printf(b, "type: transformer\n");
	sb_printf(b, "dim-emb: %d\n", e->d);
	sb_printf(b, "dim-vocabs:\n  - %d\n  - %d\n", m->src_vocab,
		  m->tgt_vocab);
	sb_printf(b, "enc-depth: %d\ndec-depth: %d\n", e->el, e->dl);
	sb_printf(b, "transformer-heads: %d\n", e->h);
	sb_printf(b, "transformer-dim-ffn: %d\n", e->f);
	sb_printf(b, "transformer-ffn-depth: 2\n");
	sb_printf(b, "transformer-ffn-activation: %s\n", e->act);
	sb_printf(b, "transformer-preprocess: %s\n", e->pre ? "n" : "\"\"");
	sb_printf(b, "transformer-postprocess: %s\n", e->pre ? "da" : "dan");
	sb_printf(b, "transformer-postprocess-top: %s\n",
		  e->pre ? "n" : "\"\"");
	sb_printf(b, "transformer-postprocess-emb: d\n");
	sb_printf(b, "transformer-decoder-autoreg: %s\n",
		  e->ssru ? "rnn" : "self-attention");
	if (e->ssru)
		sb_printf(b, "dec-cell: ssru\nlayer-normalization: false\n");
	sb_printf(b, "transformer-tied-layers:\n  []\n");
	sb_printf(b, "transformer-train-position-embeddings: false\n");
	sb_printf(b, "transformer-no-projection: false\n");
	sb_printf(b, "transformer-pool: false\n");
	sb_printf(b, "output-omit-bias: false\n");
	/* attn's tie as Marian's three flags (marian_import.c's inverse):
	 * all: one table for both inputs and the output; src: one for the
	 * inputs; tgt: the target's input and the output */
	sb_printf(b, "tied-embeddings: %s\n",
		  all || !strcmp(t, "tgt") ? "true" : "false");
	sb_printf(b, "tied-embeddings-src: %s\n", src ? "true" : "false");
	sb_printf(b, "tied-embeddings-all: %s\n", all ? "true" : "false");
	/* for fine-tuning: the rates the import reads back */
	if ((v = config_get(&m->cfg, "dropout")))
		sb_printf(b, "transformer-dropout: %s\n", v);
	if ((v = config_get(&m->cfg, "label_smoothing")))
		sb_printf(b, "label-smoothing: %s\n", v);
}

/* A parameter as Marian's float32 array: its shape into sh, the values
 * (transposed where tr) into a malloc'ed block. */
static float *param_data(const struct param *p, int tr, uint64_t sh[2])
{
	size_t r = p->rank == 2 ? (size_t)p->dim[0] : 1;
	size_t c = p->rank == 2 ? (size_t)p->dim[1] : (size_t)p->dim[0];
	float *w = malloc((r * c > 0 ? r * c : 1) * sizeof *w);

	if (!w) {
		err_set("%s: out of memory", p->name);
		return NULL;
	}
	sh[0] = tr ? c : r;
	sh[1] = tr ? r : c;
	for (size_t i = 0; i < r; i++)
		for (size_t j = 0; j < c; j++)
			w[tr ? j * r + i : i * c + j] = p->w[i * c + j];
	return w;
}

/* One .npy member of the archive. */
static int put_npy(struct zip_writer *z, const char *name, int dtype,
		   const uint64_t *sh, int rank, const void *data,
		   size_t bytes)
{
	char hdr[NPY_HEADER_MAX], member[160];
	const void *part[2];
	size_t len[2];
	int hl = npy_header(hdr, dtype, rank, sh);

	if (hl < 0)
		return -1;
	snprintf(member, sizeof member, "%s.npy", name);
	part[0] = hdr;
	len[0] = (size_t)hl;
	part[1] = data;
	len[1] = bytes;
	return zip_writer_add(z, member, part, len, 2);
}

static int write_npz(const struct exp *e, struct zip_writer *z,
		     const struct sbuf *yml)
{
	const struct model *m = e->m;
	char mn[128];
	uint64_t sh[2];
	int i, tr;

	for (i = 0; i < m->nparam; i++) {
		const struct param *p = &m->param[i];
		float *w;
		int rc;

		if (marian_name(p->name, e->pre, e->ssru, e->tie, mn,
				sizeof mn, &tr) < 0) {
			err_set("%s has no Marian name", p->name);
			return -1;
		}
		if (!(w = param_data(p, tr, sh)))
			return -1;
		rc = put_npy(z, mn, NPY_F32, sh, 2, w, p->n * sizeof *w);
		free(w);
		if (rc < 0)
			return -1;
	}
	/* the yml and its NUL, as Marian's addMetaToItems stores it */
	sh[0] = yml->n + 1;
	return put_npy(z, "special:model.yml", NPY_BYTES, sh, 1, yml->s,
		       yml->n + 1);
}

/* Number-valued config key as a decoder.yml line, when present. */
static void dec_key(const struct model *m, struct sbuf *b, const char *key,
		    const char *marian)
{
	const char *v = config_get(&m->cfg, key);

	if (v)
		sb_printf(b, "%s: %s\n", marian, v);
}

static void decoder_yml(const struct model *m, struct sbuf *b,
			const char *vsrc, const char *vtgt)
{
	const char *u = config_get(&m->cfg, "dec_allow_unk");

	sb_printf(b, "# attn's train-step --export-marian: marian-decoder "
		  "-c decoder.yml\n");
	sb_printf(b, "models:\n  - model.npz\nvocabs:\n  - %s\n  - %s\n",
		  vsrc, vtgt);
	sb_printf(b, "relative-paths: true\n");
	dec_key(m, b, "dec_beam_size", "beam-size");
	dec_key(m, b, "dec_normalize", "normalize");
	dec_key(m, b, "dec_max_length_factor", "max-length-factor");
	dec_key(m, b, "dec_word_penalty", "word-penalty");
	/* attn says <unk> unless the model says not to; Marian never
	 * unless told to */
	sb_printf(b, "allow-unk: %s\n", u && !strcmp(u, "0") ? "false" :
		  "true");
	/* Marian limits a translation by the widest source of its batch,
	 * attn by its own: one sentence a batch, as OPUS-MT's do */
	sb_printf(b, "mini-batch: 1\nmaxi-batch: 1\n");
}

static int same(const void *a, size_t na, const void *b, size_t nb)
{
	return na == nb && !memcmp(a, b, na);
}

/* Opens dir/name in s: its index, or -1. */
static int open_in(struct file_set *s, const char *dir, const char *name)
{
	char path[4096];

	if (snprintf(path, sizeof path, "%s/%s", dir, name) >=
	    (int)sizeof path) {
		err_set("%s: path too long", dir);
		return -1;
	}
	return file_set_open(s, path);
}

/* Writes bytes to a new member dir/name of s. */
static int put_file(struct file_set *s, const char *dir, const char *name,
		    const void *p, size_t n)
{
	int i = open_in(s, dir, name);

	return i < 0 ? -1 : file_set_write(s, i, p, n);
}

/* The vocabulary files of the two sides; the names decoder.yml gives
 * Marian into vname. */
static int put_vocabs(struct file_set *fs, const char *dir,
		      const struct side *s, char vname[2][32])
{
	int one_spm = s[0].spm && s[1].spm &&
		same(s[0].spm, s[0].spm_len, s[1].spm, s[1].spm_len);
	const char *spm_name[2] = { "vocab.spm", "vocab.spm" };
	int i;

	if (!one_spm) {
		spm_name[0] = "source.spm";
		spm_name[1] = "target.spm";
	}
	for (i = 0; i < 2; i++) {
		const char *yml = s[i].raw_yml ? s[i].raw_yml : s[i].yml.s;
		size_t yl = s[i].raw_yml ? s[i].raw_len : s[i].yml.n;
		const char *oy = s[!i].raw_yml ? s[!i].raw_yml : s[!i].yml.s;
		size_t oyl = s[!i].raw_yml ? s[!i].raw_len : s[!i].yml.n;

		if (s[i].spm && !(i == 1 && one_spm) &&
		    put_file(fs, dir, spm_name[i], s[i].spm, s[i].spm_len) < 0)
			return -1;
		if (!yml) {
			snprintf(vname[i], 32, "%s", spm_name[i]);
			continue;
		}
		if (oy && same(yml, yl, oy, oyl)) {
			snprintf(vname[i], 32, "vocab.yml");
			if (i == 1)
				continue;
		} else {
			snprintf(vname[i], 32, "%s.vocab.yml",
				 i ? "target" : "source");
		}
		if (put_file(fs, dir, vname[i], yml, yl) < 0)
			return -1;
	}
	return 0;
}

int marian_export(const struct model *m, const char *dir)
{
	struct exp e = { .m = m };
	struct side s[2];
	struct sbuf yml = { 0 }, dec = { 0 };
	struct file_set fs;
	struct zip_writer z;
	char vname[2][32];
	struct stat st;
	int made = 0, rc = -1, i, iz;

	file_set_init(&fs);
	zip_writer_init(&z, -1, "model.npz");
	memset(s, 0, sizeof s);
	/* the architecture, then the vocabularies Marian must read, then
	 * the settings: the first refusal names the deepest difference */
	if (strcmp(m->arch->name, "transformer")) {
		err_set("arch=%s: only a Transformer exports to Marian",
			m->arch->name);
		goto out;
	}
	if (side_read(&s[0], m->vocab_src, m->vocab_src_len, "source") < 0 ||
	    side_read(&s[1], m->vocab_tgt, m->vocab_tgt_len, "target") < 0 ||
	    check_model(&e) < 0)
		goto out;
	for (i = 0; i < 2; i++)
		if (s[i].eos != m->eos_id || s[i].unk != m->unk_id) {
			err_set("eos_id=%d, unk_id=%d: the %s vocabulary's "
				"</s> and <unk>, which Marian uses, are %d and "
				"%d", m->eos_id, m->unk_id,
				i ? "target" : "source", s[i].eos, s[i].unk);
			goto out;
		}
	model_yml(&e, &yml);
	if (yml.oom) {
		err_set("out of memory");
		goto out;
	}
	/* the refusals are behind: now the directory, then the files */
	if (stat(dir, &st) == 0) {
		if (!S_ISDIR(st.st_mode)) {
			err_set("%s exists and is not a directory", dir);
			goto out;
		}
	} else if (errno != ENOENT || mkdir(dir, 0777) < 0) {
		err_set("%s: cannot make the directory: %s", dir,
			strerror(errno));
		goto out;
	} else {
		made = 1;
	}
	if ((iz = open_in(&fs, dir, "model.npz")) < 0)
		goto out;
	z.fd = file_set_fd(&fs, iz);
	if (write_npz(&e, &z, &yml) < 0 || zip_writer_finish(&z) < 0 ||
	    put_vocabs(&fs, dir, s, vname) < 0)
		goto out;
	decoder_yml(m, &dec, vname[0], vname[1]);
	if (dec.oom) {
		err_set("out of memory");
		goto out;
	}
	if (put_file(&fs, dir, "decoder.yml", dec.s, dec.n) < 0)
		goto out;
	rc = file_set_commit(&fs);
out:
	if (rc < 0) {
		file_set_abort(&fs);
		if (made)
			rmdir(dir);
	}
	zip_writer_free(&z);
	side_free(&s[0]);
	side_free(&s[1]);
	free(yml.s);
	free(dec.s);
	return rc;
}
