/*
 * train-step: makes a model (--init), trains it on sentence pairs (the
 * stream of tokenize --pairs), averages its last checkpoints
 * (--average), or exports it for translation only (--export: f16, bf16
 * or int8 parameters, no optimiser state).  Training saves the model, with its
 * optimiser's and generator's state, atomically every --save-every updates
 * and at the end, and on SIGINT or SIGTERM; a resumed run gives the model
 * an unbroken one gives.  --shortlist learns from the pairs the
 * vocabulary shortlist (run/lexicon.h) that decode and beam --shortlist
 * use, and writes it into the model.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "text/vocab.h"
#include "base/errmsg.h"
#include "base/outfile.h"
#include "common/filter.h"
#include "common/marian_cmd.h"
#include "common/modellock.h"
#include "common/modelid.h"
#include "common/opt.h"
#include "kernels/kernels.h"
#include "common/prog.h"
#include "common/vocab.h"
#include "models/shortlist.h"
#include "run/lexicon.h"
#include "run/train.h"

enum {	/* long options without a letter */
	OPT_DTYPE = 256, OPT_IMPORT, OPT_DECODER_CONFIG, OPT_MATMUL, OPT_LOG_TIME, OPT_DEV_LINES, OPT_PATIENCE,
	OPT_BATCH_TOKENS, OPT_CPU_TIME, OPT_SHORTLIST, OPT_FREQUENT,
	OPT_TRANSLATIONS, OPT_LEX, OPT_EXPORT_MARIAN,
};

/* --shortlist's sizes, chosen on the Bible's dev set (doc/decoding.md) */
#define FREQUENT_DEFAULT 256
#define TRANSLATIONS_DEFAULT 16	/* long options without a letter */

static void usage(void)
{
	printf("usage: %s --init -m MODEL --arch ARCH --src-vocab FILE "
	       "--tgt-vocab FILE\n"
	       "          [--set KEY=VALUE]... [--force] [PAIRS]\n"
	       "       %s -m MODEL [--steps N] [--epochs N] [--time SECONDS]\n"
	       "          [--save-every N] [--keep K] [--log-every N] "
	       "[--log-time SECONDS]\n"
	       "          [--batch-tokens N]"
	       " [--dev FILE] [--dev-every N] [--dev-lines N]\n"
	       "          [--patience N] [-b N] [--set KEY=VALUE]..."
	       " [--matmul f32|bf16] [--limit BYTES]\n"
	       "          [--unterminated] [-q] [PAIRS]\n"
	       "       %s --average K -m MODEL -o OUT [MODEL...]\n"
	       "       %s --export OUT -m MODEL [--dtype f16|bf16|int8]\n"
	       "       %s --import marian -m MODEL [--decoder-config FILE] "
	       "[--force]\n"
	       "          [--lex LEX[,FIRST,BEST,THRESHOLD]]\n"
	       "          MARIAN.npz|MARIAN.bin SRC.spm [TGT.spm]\n"
	       "       %s --shortlist -m MODEL [--frequent N] "
	       "[--translations K] [PAIRS]\n"
	       "Makes, trains, averages or exports a translation model.\n\n"
	       "  -m, --model=FILE       the model file\n"
	       "  -i, --init             make a fresh model\n"
	       "  -f, --force            with --init: replace an existing "
	       "file\n"
	       "  -a, --arch=ARCH        rnnsearch, rnnencdec, seq2seq or transformer\n"
	       "  -s, --src-vocab=FILE   the source vocabulary "
	       "(made by tokenize)\n"
	       "  -t, --tgt-vocab=FILE   the target vocabulary\n"
	       "  -S, --set=KEY=VALUE    a config key of the new model, "
	       "or of the one trained\n"
	       "                         (train-step(1))\n"
	       "  -n, --steps=N          stop after N updates\n"
	       "  -e, --epochs=N         stop after N passes over the pairs\n"
	       "  -T, --time=SECONDS     stop after this long\n"
	       "      --cpu-time         time is CPU time, not the wall "
	       "clock's\n"
	       "  -E, --save-every=N     save every N updates (default 1000)\n"
	       "  -k, --keep=K           keep the last K saves as "
	       "MODEL.ckpt.STEP\n"
	       "  -L, --log-every=N      progress every N updates (default "
	       "100) ...\n"
	       "      --log-time=SECONDS ... or this often (default 30; 0: "
	       "never)\n"
	       "      --batch-tokens=N   target tokens a training batch "
	       "(default: the model's)\n"
	       "  -d, --dev=FILE         pairs to evaluate on: dev loss, "
	       "BLEU, MODEL.best\n"
	       "  -D, --dev-every=N      evaluate every N updates (default: "
	       "as saves)\n"
	       "      --dev-lines=N      evaluate on the first N pairs "
	       "(default 500)\n"
	       "      --patience=N       stop after N evaluations without a "
	       "better one\n"
	       "  -b, --batch=N          sentences a batch on the dev pairs "
	       "(default 32)\n"
	       "      --matmul=PREC      f32 (default) or bf16: the matrix "
	       "products' inputs\n"
	       "                         rounded to bfloat16, their sums in "
	       "f32 (AVX512_BF16)\n"
	       "  -A, --average=K        average the last K checkpoints (or "
	       "the MODELs given)\n"
	       "  -o, --output=FILE      where --average writes\n"
	       "  -x, --export=OUT       write MODEL for translation only: "
	       "f16, bf16\n"
	       "                         or int8 parameters, no optimiser "
	       "state\n"
	       "      --dtype=TYPE       f16 (default), bf16 or int8, with "
	       "--export\n"
	       "      --export-marian=DIR  write MODEL as a Marian model: "
	       "DIR/model.npz, its\n"
	       "                         vocabularies and decoder.yml\n"
	       "      --import=marian    make MODEL from a Marian Transformer "
	       "(its .npz or\n"
	       "                         .bin, and its vocabularies: .spm or "
	       "vocab.yml)\n"
	       "      --decoder-config=FILE  with --import: Marian's "
	       "decoder.yml, whose\n"
	       "                         beam-size, normalize and "
	       "max-length-factor the\n"
	       "                         model keeps\n"
	       "      --lex=LEX[,FIRST,BEST,THRESHOLD]  with --import: "
	       "Marian's lexical\n"
	       "                         shortlist (lex.s2t[.gz], or "
	       "marian-conv's .bin),\n"
	       "                         which decode and beam then use\n"
	       "      --shortlist        learn the vocabulary shortlist "
	       "from PAIRS into MODEL\n"
	       "      --frequent=N       its most frequent target units "
	       "(default %d)\n"
	       "      --translations=K   its target units per source unit "
	       "(default %d)\n"
	       "      --limit=BYTES      largest record of the pairs accepted "
	       "(default 4G)\n"
	       "      --unterminated     take pairs without the stream's end "
	       "mark (older files)\n"
	       "      --threads=N        threads of the kernels (default: "
	       "ATTN_THREADS, else\n"
	       "                         one per core); resuming gives the "
	       "same bits with the same N\n"
	       "  -q, --quiet            no progress\n"
	       "  -h, --help             this help\n"
	       "  -V, --version          the version\n",
	       progname, progname, progname, progname, progname, progname,
	       FREQUENT_DEFAULT, TRANSLATIONS_DEFAULT);
	prog_help_exit();
}

/* A frame of pairs made with the vocabularies of id (modelid.h). */
static int same_vocab(struct frame *f, void *id)
{
	return model_id_frame(f, id);
}

/*
 * Reads the pairs at path ("-": stdin) into c, refusing ids beyond m's
 * vocabularies (m NULL: none) and frames made with vocabularies other
 * than id's (NULL: any); dies on an error.
 */
static void pairs_read(struct corpus *c, const char *path,
		       const struct model *m, const struct model_id *id)
{
	struct tsr_reader *r = filter_reader(path);

	if (!r || corpus_read(c, r, m, id ? same_vocab : NULL,
			      (void *)id) < 0)
		die_err();
	tsr_reader_free(r);
}

/* A vocabulary file as a model holds it: its bytes (attn-bpe text or a
 * SentencePiece model), its size and its special ids. */
struct vocab_bytes {
	char *bytes;
	size_t len;
	int size;
	int32_t special[4];	/* text/vocab.h's VOCAB_PAD .. VOCAB_UNK */
};

/* The vocabulary at path, checked by loading it. */
static void vocab(const char *path, struct vocab_bytes *vb)
{
	struct vocab *v = vocab_file(path, &vb->bytes, &vb->len);

	vb->size = vocab_size(v);
	memcpy(vb->special, v->special, sizeof vb->special);
	vocab_free(v);
}

/*
 * The special ids of a model of vocabularies s and t, as config
 * settings into kv [4] (text/vocab.h's order; the keys of doc/MODELS.md);
 * how many.  attn-bpe's 0 1 2 3 need none.  The two must agree, have
 * </s> and <unk>; no <pad> pads with </s>, no <s> starts from a zero
 * vector (bos_id=-1, which the architecture may refuse).
 */
static int special_settings(const struct vocab_bytes *s,
			    const struct vocab_bytes *t, const char *sv,
			    const char *tv, char kv[4][32])
{
	static const char *const key[] = { "pad_id", "bos_id", "eos_id",
					   "unk_id" };
	int32_t id[4];
	int i, n = 0;

	if (memcmp(s->special, t->special, sizeof s->special) != 0)
		die("%s and %s: the vocabularies' special ids differ (<pad> "
		    "<s> </s> <unk>: %d %d %d %d and %d %d %d %d); a model's "
		    "are the same on both sides", sv, tv, s->special[0],
		    s->special[1], s->special[2], s->special[3],
		    t->special[0], t->special[1], t->special[2],
		    t->special[3]);
	memcpy(id, s->special, sizeof id);
	if (id[2] < 0 || id[3] < 0)
		die("%s: no </s> or no <unk>: a model needs both", sv);
	if (id[0] < 0)
		id[0] = id[2];
	for (i = 0; i < 4; i++)
		if (id[i] != i)
			snprintf(kv[n++], sizeof kv[0], "%s=%d", key[i],
				 (int)id[i]);
	return n;
}

/*
 * Makes a fresh model at path, refusing an existing file unless force,
 * and settings that are not the architecture's keys and values.  With
 * pairs (NULL: none), an rnnsearch also gets diag_ratio measured from
 * them, unless --set gives it.
 */
static void init(const char *model, const char *arch, const char *sv,
		 const char *tv, char **set, int nset, int force,
		 const char *pairs)
{
	char ssize[32], tsize[32], ratio[48], special[4][32];
	struct vocab_bytes src, tgt;
	const char **all;
	const struct arch *a;
	struct model *m;
	struct stat st;
	int i, k = 2, ns;

	if (!arch || !sv || !tv)
		usage_error("--init needs --arch, --src-vocab and --tgt-vocab");
	if (!(a = arch_find(arch)))
		usage_error("--arch: %s (rnnsearch, rnnencdec, seq2seq or transformer)",
			    err_msg());
	for (i = 0; i < nset; i++)
		if (model_check_setting(a, set[i]) < 0)
			usage_error("--set: %s", err_msg());
	if (lstat(model, &st) == 0) {
		if (!force)
			die("%s exists: --init replaces a model only with "
			    "--force", model);
		if (outfile_check(model) < 0)	/* not a link, a device */
			die_err();
		lock_model(model);
	}
	/* allocated after the refusals, which exit: nothing to leak */
	if (!(all = calloc(nset + 7, sizeof *all)))
		die("out of memory");
	vocab(sv, &src);
	vocab(tv, &tgt);
	snprintf(ssize, sizeof ssize, "src_vocab=%d", src.size);
	snprintf(tsize, sizeof tsize, "tgt_vocab=%d", tgt.size);
	all[0] = ssize;
	all[1] = tsize;
	ns = special_settings(&src, &tgt, sv, tv, special);
	for (i = 0; i < ns; i++)
		all[k++] = special[i];
	if (pairs && strcmp(a->name, "rnnsearch") == 0) {
		struct corpus c;
		struct model_id id;

		model_id_vocab(&id, src.bytes, src.len, tgt.bytes, tgt.len,
			       model);
		pairs_read(&c, pairs, NULL, &id);
		snprintf(ratio, sizeof ratio, "diag_ratio=%.6g",
			 corpus_length_ratio(&c));
		corpus_free(&c);
		all[k++] = ratio;
	}
	for (i = 0; i < nset; i++)
		all[k + i] = set[i];
	/* the vocabularies as bytes: a SentencePiece model's hold NULs */
	m = model_create(arch, all, nset + k, "", "");
	if (!m || model_set_vocab(m, 0, src.bytes, src.len) < 0 ||
	    model_set_vocab(m, 1, tgt.bytes, tgt.len) < 0 ||
	    model_save(m, model, NULL, 0) < 0)
		die_err();
	model_free(m);
	free(src.bytes);
	free(tgt.bytes);
	free(all);
}

static void average(const char *model, int k, const char *out, char **files,
		    int nfiles)
{
	char **last = files;
	int n = nfiles, i;

	if (!out)
		usage_error("--average needs -o OUT");
	if (nfiles == 0) {
		if (!model)
			usage_error("--average needs -m MODEL or model files");
		last = checkpoints_last(model, k, &n);
		if (!last)
			die_err();
		if (n < k)
			die("%s: %d checkpoints %s.ckpt.STEP, not %d", model, n,
			    model, k);
	}
	if (model_average(out, last, n) < 0)
		die_err();
	if (last != files) {
		for (i = 0; i < n; i++)
			free(last[i]);
		free(last);
	}
}

/* Writes the f16, bf16 or int8 copy of model for translation, without
 * the optimiser's state. */
static void export(const char *model, const char *out, const char *dtype)
{
	struct model *m;
	int dt;

	if (strcmp(dtype, "f16") == 0)
		dt = DT_F16;
	else if (strcmp(dtype, "bf16") == 0)
		dt = DT_BF16;
	else if (strcmp(dtype, "int8") == 0)
		dt = DT_I8;
	else
		usage_error("--dtype: '%s' is not f16, bf16 or int8", dtype);
	if (!model)
		usage_error("--export needs -m MODEL");
	m = model_load(model, 0, NULL);
	if (!m || model_export(m, out, dt) < 0)
		die_err();
	model_free(m);
}

/*
 * Learns the shortlist of nfreq frequent target units and k translations
 * of each source unit from pairs, and writes it into model (locked,
 * atomically, every other record kept as it is).
 */
static void shortlist(const char *model, const char *pairs, int nfreq,
		      int k, int quiet)
{
	struct model_id id;
	struct corpus c;
	struct model *m;
	int32_t *freq, *trans, special[4];
	struct sl_table *t;
	int found, s, j, nsrc = 0, nspecial;

	lock_model(model);
	if (!(m = model_load(model, MODEL_LOAD_MAPPED, NULL)))
		die_err();
	if (nfreq > m->tgt_vocab || k > m->tgt_vocab)
		die("%s: --frequent %d and --translations %d: the target "
		    "vocabulary has %d units", model, nfreq, k, m->tgt_vocab);
	model_id_vocab(&id, m->vocab_src, m->vocab_src_len, m->vocab_tgt,
		       m->vocab_tgt_len, model);
	pairs_read(&c, pairs, m, &id);
	freq = malloc(sizeof *freq * (nfreq ? nfreq : 1));
	trans = malloc(sizeof *trans * m->src_vocab * k);
	if (!freq || !trans)
		die("out of memory");
	nspecial = shortlist_specials(m, special);
	if (lexicon_learn(&c, m->src_vocab, m->tgt_vocab, special, nspecial,
			  nfreq, k, freq, &found, trans, NULL) < 0 ||
	    !(t = shortlist_table_new(m, freq, found, trans, k)) ||
	    shortlist_table_save(t, model) < 0)
		die_err();
	for (s = 0; s < m->src_vocab; s++)
		for (j = 0; j < k && trans[(size_t)s * k + j] >= 0; j++)
			nsrc += j == 0;
	if (!quiet)
		fprintf(stderr, "%s: %s: shortlist of %d frequent target units "
			"and up to %d translations for each of %d source "
			"units, from %d pairs\n", progname, model, found, k,
			nsrc, c.n);
	free(freq);
	free(trans);
	shortlist_table_free(t);
	corpus_free(&c);
	model_free(m);
}

static void hms(char *buf, size_t size, double s)
{
	long t = s > 0 && s < 1e9 ? (long)s : 0;

	snprintf(buf, size, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
}

/* Prints train_run's reports on stderr (ctx: the model's path). */
static void print_report(const struct train_report *r, void *ctx)
{
	char left[40] = "", el[32], t[32], bleu[32] = "", guide[40] = "";

	hms(el, sizeof el, r->elapsed);
	switch (r->event) {
	case TRAIN_PROGRESS:
		if (r->guide >= 0)
			snprintf(guide, sizeof guide, "  align %.4f",
				 r->guide);
		if (r->left >= 0) {
			hms(t, sizeof t, r->left);
			snprintf(left, sizeof left, "  left %s", t);
		}
		fprintf(stderr, "%s: %s  step %ld  epoch %ld (%.0f%%)  "
			"loss %.4f  ppl %.2f%s  lr %.3g  %.0f tok/s%s%s\n",
			progname, el, r->step, r->epoch, 100 * r->epoch_done,
			r->loss, r->ppl, guide, r->lr, r->tok_per_s, left,
			r->skipped ? "  (batches skipped)" : "");
		break;
	case TRAIN_DEV:
		if (r->dev_bleu >= 0)
			snprintf(bleu, sizeof bleu, "  dev BLEU %.2f",
				 r->dev_bleu);
		fprintf(stderr, "%s: %s  step %ld  dev loss %.4f  dev ppl "
			"%.2f%s (%d pairs)%s%s%s\n", progname, el, r->step,
			r->dev_nll, r->dev_ppl, bleu, r->dev_lines,
			r->best ? "  best: saved as " : "",
			r->best ? (const char *)ctx : "",
			r->best ? ".best" : "");
		break;
	case TRAIN_PATIENCE:
		fprintf(stderr, "%s: %ld evaluations without a better one "
			"(the best at step %ld): stopping\n", progname,
			r->since_best, r->best_step);
		break;
	case TRAIN_SKIPPED:
		warnx_("step %ld: batch of %d pairs skipped: its %s is not "
		       "finite", r->step + 1, r->pairs, r->nonfinite_loss ?
		       "loss" : "gradient");
		break;
	case TRAIN_REORDERED:
		warnx_("the corpus differs from the one this pass began "
		       "with: the pass goes on in a different order");
		break;
	case TRAIN_STOPPING:
		fprintf(stderr, "%s: %s: saving at step %ld\n", progname,
			strsignal(r->signal), r->step);
		break;
	case TRAIN_SAVED:
		fprintf(stderr, "%s: saved %s at step %ld, epoch %ld, %.0f "
			"target tokens/s\n", progname, (const char *)ctx,
			r->step, r->epoch, r->tok_per_s);
		break;
	}
}

/* The warnings alone, for --quiet. */
static void print_warnings(const struct train_report *r, void *ctx)
{
	if (r->event == TRAIN_SKIPPED || r->event == TRAIN_REORDERED)
		print_report(r, ctx);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "model", required_argument, NULL, 'm' },
		{ "init", no_argument, NULL, 'i' },
		{ "force", no_argument, NULL, 'f' },
		{ "arch", required_argument, NULL, 'a' },
		{ "src-vocab", required_argument, NULL, 's' },
		{ "tgt-vocab", required_argument, NULL, 't' },
		{ "set", required_argument, NULL, 'S' },
		{ "steps", required_argument, NULL, 'n' },
		{ "epochs", required_argument, NULL, 'e' },
		{ "time", required_argument, NULL, 'T' },
		{ "cpu-time", no_argument, NULL, OPT_CPU_TIME },
		{ "save-every", required_argument, NULL, 'E' },
		{ "keep", required_argument, NULL, 'k' },
		{ "log-every", required_argument, NULL, 'L' },
		{ "dev", required_argument, NULL, 'd' },
		{ "dev-every", required_argument, NULL, 'D' },
		{ "batch", required_argument, NULL, 'b' },
		{ "average", required_argument, NULL, 'A' },
		{ "output", required_argument, NULL, 'o' },
		{ "export", required_argument, NULL, 'x' },
		{ "export-marian", required_argument, NULL, OPT_EXPORT_MARIAN },
		{ "dtype", required_argument, NULL, OPT_DTYPE },
		{ "import", required_argument, NULL, OPT_IMPORT },
		{ "decoder-config", required_argument, NULL,
		  OPT_DECODER_CONFIG },
		{ "shortlist", no_argument, NULL, OPT_SHORTLIST },
		{ "frequent", required_argument, NULL, OPT_FREQUENT },
		{ "translations", required_argument, NULL, OPT_TRANSLATIONS },
		{ "lex", required_argument, NULL, OPT_LEX },
		{ "matmul", required_argument, NULL, OPT_MATMUL },
		{ "log-time", required_argument, NULL, OPT_LOG_TIME },
		{ "dev-lines", required_argument, NULL, OPT_DEV_LINES },
		{ "patience", required_argument, NULL, OPT_PATIENCE },
		{ "batch-tokens", required_argument, NULL, OPT_BATCH_TOKENS },
		{ "limit", required_argument, NULL, OPT_LIMIT },
		UNTERMINATED_LONGOPT,
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		PROG_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	struct train_opts o = {
		.save_every = 1000, .log_every = 100, .log_seconds = 30,
		.dev_lines = 500, .dev_bleu = 1, .batch = 32,
	};
	const char *model = NULL, *arch = NULL, *sv = NULL, *tv = NULL;
	const char *dev_path = NULL, *out = NULL, *pairs = "-";
	const char *export_path = NULL, *dtype = NULL, *matmul = NULL;
	const char *import = NULL, *decoder_cfg = NULL, *lex = NULL;
	const char *marian_dir = NULL;
	char **set = NULL;
	int nset = 0, do_init = 0, force = 0, avg = 0, quiet = 0;
	int dev_lines_given = 0, do_sl = 0, nfreq = -1, ntrans = -1;
	int train_only = 0;
	int c;
	struct corpus train, dev;
	struct model_id id;
	struct model *m;

	prog_init(argc, argv);
	set = calloc(argc, sizeof *set);
	if (!set)
		die("out of memory");
	while ((c = prog_getopt(argc, argv, "m:ifa:s:t:S:n:e:T:E:k:L:d:D:b:A:"
				"o:x:qhV", longopts, 0)) != -1) {
		/* the options of training alone */
		if ((c > 0 && c < 256 && strchr("neTEkLDb", c)) ||
		    c == OPT_CPU_TIME || c == OPT_LOG_TIME ||
		    c == OPT_DEV_LINES || c == OPT_PATIENCE ||
		    c == OPT_BATCH_TOKENS || c == OPT_LIMIT)
			train_only = 1;
		switch (c) {
		case 'm': model = optarg; break;
		case 'i': do_init = 1; break;
		case 'f': force = 1; break;
		case 'a': arch = optarg; break;
		case 's': sv = optarg; break;
		case 't': tv = optarg; break;
		case 'S': set[nset++] = optarg; break;
		case 'n': o.steps = opt_positive(optarg, "--steps"); break;
		case 'e': o.epochs = opt_positive(optarg, "--epochs"); break;
		case 'T': o.seconds = opt_number(optarg, "--time"); break;
		case 'E': o.save_every = opt_positive(optarg, "--save-every"); break;
		case 'k': o.keep = opt_positive(optarg, "--keep"); break;
		case 'L': o.log_every = opt_positive(optarg, "--log-every"); break;
		case 'd': dev_path = optarg; break;
		case 'D': o.dev_every = opt_positive(optarg, "--dev-every"); break;
		case 'b': o.batch = opt_positive(optarg, "--batch"); break;
		case 'A': avg = opt_positive(optarg, "--average"); break;
		case 'o': out = optarg; break;
		case 'x': export_path = optarg; break;
		case OPT_DTYPE: dtype = optarg; break;
		case OPT_IMPORT: import = optarg; break;
		case OPT_EXPORT_MARIAN: marian_dir = optarg; break;
		case OPT_DECODER_CONFIG: decoder_cfg = optarg; break;
		case OPT_LEX: lex = optarg; break;
		case OPT_SHORTLIST: do_sl = 1; break;
		case OPT_FREQUENT:
			nfreq = opt_int(optarg, "--frequent", 0, 1 << 20);
			break;
		case OPT_TRANSLATIONS:
			ntrans = opt_int(optarg, "--translations", 1, 1 << 20);
			break;
		case OPT_CPU_TIME: o.cpu_time = 1; break;
		case OPT_MATMUL: matmul = optarg; break;
		case OPT_LOG_TIME:
			o.log_seconds = opt_number(optarg, "--log-time");
			if (o.log_seconds < 0)
				usage_error("--log-time: a negative time");
			break;
		case OPT_DEV_LINES:
			o.dev_lines = opt_positive(optarg, "--dev-lines");
			dev_lines_given = 1;
			break;
		case OPT_PATIENCE:
			o.patience = opt_positive(optarg, "--patience");
			break;
		case OPT_BATCH_TOKENS:
			o.batch_tokens = opt_positive(optarg, "--batch-tokens");
			break;
		case OPT_UNTERMINATED:
			filter_lim.unterminated = 1;
			break;
		case OPT_LIMIT:
			filter_lim.limit = opt_bytes(optarg, "--limit");
			break;
		case 'q': quiet = 1; break;
		case 'h': usage(); break;
		case 'V': prog_version(); break;
		}
	}
	if (dtype && !export_path)
		usage_error("--dtype goes with --export");
	if (decoder_cfg && !import)
		usage_error("--decoder-config goes with --import");
	if (lex && !import)
		usage_error("--lex goes with --import");
	if (marian_dir) {
		if (export_path || import || avg || do_init || nset || matmul ||
		    arch || sv || tv || force || dev_path || train_only ||
		    do_sl || optind < argc)
			usage_error("--export-marian takes only -m MODEL");
		free(set);
		marian_export_cmd(model, marian_dir);
		return 0;
	}
	if (import) {
		if (export_path || avg || do_init || nset || matmul || arch ||
		    sv || tv || dev_path || train_only || do_sl)
			usage_error("--import takes only -m MODEL, "
				    "--decoder-config, --force and its files");
		if (strcmp(import, "marian"))
			usage_error("--import: '%s' is not marian", import);
		if (!model)
			usage_error("no model: -m MODEL");
		if (argc - optind < 2 || argc - optind > 5)
			usage_error("--import marian needs MARIAN.npz (or .bin) "
				    "and one or two vocabularies (and with a "
				    "vocab.yml, the .spm files that segment "
				    "it)");
		free(set);
		marian_import_cmd(model, argv + optind, argc - optind, decoder_cfg,
			      force, lex);
		return 0;
	}
	if ((nfreq >= 0 || ntrans >= 0) && !do_sl)
		usage_error("--frequent and --translations go with "
			    "--shortlist");
	if (do_sl) {
		if (export_path || avg || do_init || nset || matmul || arch ||
		    sv || tv || force || dev_path || train_only)
			usage_error("--shortlist takes only -m MODEL, "
				    "--frequent, --translations, -q and "
				    "PAIRS");
		if (!model)
			usage_error("no model: -m MODEL");
		if (optind + 1 < argc)
			usage_error("unexpected argument '%s'",
				    argv[optind + 1]);
		free(set);
		shortlist(model, optind < argc ? argv[optind] : "-",
			  nfreq >= 0 ? nfreq : FREQUENT_DEFAULT,
			  ntrans >= 0 ? ntrans : TRANSLATIONS_DEFAULT, quiet);
		return 0;
	}
	if (matmul && (export_path || avg || do_init))
		usage_error("--matmul goes with training");
	if (export_path) {
		if (avg || do_init || nset || optind < argc)
			usage_error("--export takes only -m MODEL and --dtype");
		free(set);
		export(model, export_path, dtype ? dtype : "f16");
		return 0;
	}
	if (avg) {
		free(set);
		average(model, avg, out, argv + optind, argc - optind);
		return 0;
	}
	if (!model)
		usage_error("no model: -m MODEL");
	if (matmul && opt_half(matmul, "--matmul", "bf16") &&
	    kern_set_matmul(KERN_MATMUL_BF16) < 0)
		die("--matmul bf16: %s", err_msg());
	if (do_init) {
		if (optind + 1 < argc)
			usage_error("unexpected argument '%s'",
				    argv[optind + 1]);
		init(model, arch, sv, tv, set, nset, force,
		     optind < argc ? argv[optind] : NULL);
		free(set);
		return 0;
	}
	if (arch || sv || tv || force)
		usage_error("--arch, --force and the vocabularies go with "
			    "--init");
	o.set = (const char *const *)set;
	o.nset = nset;
	if (optind + 1 < argc)
		usage_error("unexpected argument '%s'", argv[optind + 1]);
	if (optind < argc)
		pairs = argv[optind];
	if (o.seconds < 0)
		usage_error("--time: a negative time");
	if (!dev_path && (o.patience || dev_lines_given))
		usage_error("--patience and --dev-lines go with --dev");
	if (!o.dev_every)
		o.dev_every = o.save_every;
	o.report = quiet ? print_warnings : print_report;
	o.ctx = (void *)model;
	/* the vocabularies, to check the pairs against */
	if (!(m = model_load(model, 0, NULL)))
		die_err();
	model_id_vocab(&id, m->vocab_src, m->vocab_src_len, m->vocab_tgt,
		       m->vocab_tgt_len, model);
	pairs_read(&train, pairs, m, &id);
	if (dev_path)
		pairs_read(&dev, dev_path, m, &id);
	model_free(m);
	if (train_run(model, &train, dev_path ? &dev : NULL, &o) < 0)
		die_err();
	corpus_free(&train);
	if (dev_path)
		corpus_free(&dev);
	free(set);
	return 0;
}
