/*
 * marian_cmd.c: train-step's Marian commands (marian_cmd.h): the files
 * read (whole, checked as regular files), --lex's shortlist, the import
 * written atomically with its shortlist records, the export.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "base/errmsg.h"
#include "base/outfile.h"
#include "import/marian_export.h"
#include "import/marian_import.h"
#include "import/marian_shortlist.h"
#include "import/spm_ids.h"
#include "marian_cmd.h"
#include "modellock.h"
#include "models/shortlist.h"
#include "opt.h"
#include "prog.h"

void marian_export_cmd(const char *model, const char *dir)
{
	struct model *m;

	if (!model)
		usage_error("--export-marian needs -m MODEL");
	m = model_load(model, MODEL_LOAD_COPY, NULL);
	if (!m || marian_export(m, dir) < 0)
		die_err();
	model_free(m);
}

/* The bytes of file path, malloc'ed, or exit 1 naming it. */
static char *read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	struct stat st;
	char *p;

	if (!f || fstat(fileno(f), &st) < 0)
		die("%s: %s", path, strerror(errno));
	if (!S_ISREG(st.st_mode))
		die("%s: not a regular file", path);
	if (!(p = malloc((size_t)st.st_size + 1)))
		die("%s: out of memory", path);
	if (fread(p, 1, (size_t)st.st_size, f) != (size_t)st.st_size ||
	    ferror(f))
		die("%s: read error", path);
	fclose(f);
	p[st.st_size] = 0;
	*len = (size_t)st.st_size;
	return p;
}

/* --lex LEX[,NUMBERS]: Marian's shortlist (marian_shortlist.h), read
 * before the model is made; then m's table (lex_t), its records in
 * lex_rec for model_save. */
static struct tensor lex_rec[3];
static int lex_n;
static struct sl_table *lex_t;
static struct marian_lex_opts lex_o;
static char *lex_path, *lex_data;
static size_t lex_len;

static void lex_read(const char *arg)
{
	const char *base = strrchr(arg, '/');
	const char *comma = strchr(base ? base : arg, ',');

	lex_path = strndup(arg, comma ? (size_t)(comma - arg) : strlen(arg));
	if (!lex_path ||
	    marian_lex_opts_parse(&lex_o, comma ? comma + 1 : NULL) < 0)
		usage_error("--lex: %s", lex_path ? err_msg() : "out of memory");
	lex_data = read_all(lex_path, &lex_len);
}

static void lex_table(struct model *m)
{
	if (!(lex_t = marian_shortlist_import(m, lex_data, lex_len, &lex_o))) {
		err_prefix("%s", lex_path);
		model_free(m);
		die_err();
	}
	lex_n = shortlist_table_records(lex_t, lex_rec);
	free(lex_data);
	free(lex_path);
}

void marian_import_cmd(const char *out, char **f, int nf,
		       const char *decoder_cfg, int force, const char *lex)
{
	struct marian_import_in in = { 0 };
	char *mb, *file[4] = { NULL }, *dc = NULL;
	size_t len[4] = { 0 };
	int yml[4], ny = 0, ns = 0, size, eos, unk, i;
	const char *v[2] = { NULL }, *sg[2] = { NULL }, *vn[2] = { NULL };
	size_t vl[2] = { 0 }, sl[2] = { 0 };
	struct model *m;
	struct stat st;

	if (lstat(out, &st) == 0) {
		if (!force)
			die("%s exists: --import replaces a model only with "
			    "--force", out);
		if (outfile_check(out) < 0)	/* not a link, a device */
			die_err();
		lock_model(out);
	}
	if (lex)
		lex_read(lex);
	mb = read_all(f[0], &in.model_len);
	/* the vocabularies: .spm files, or vocab.yml files (their ids)
	 * and then the .spm files that segment them, source first */
	for (i = 1; i < nf; i++) {
		file[i - 1] = read_all(f[i], &len[i - 1]);
		yml[i - 1] = spm_special_ids(file[i - 1], len[i - 1], &size,
					     &eos, &unk) < 0 || size <= 0;
		ny += yml[i - 1];
	}
	for (i = 0; i < nf - 1; i++) {
		if (ny && !yml[i]) {
			if (ns == 2)
				usage_error("--import: at most two .spm files "
					    "to segment the vocab.yml");
			sg[ns] = file[i];
			sl[ns++] = len[i];
		} else if (!ny || yml[i]) {
			if (v[1])
				usage_error("--import: at most two "
					    "vocabularies");
			vl[v[0] ? 1 : 0] = len[i];
			vn[v[0] ? 1 : 0] = f[i + 1];
			v[v[0] ? 1 : 0] = file[i];
		}
	}
	in.vsrc = v[0];
	in.vsrc_len = vl[0];
	in.vtgt = v[1] ? v[1] : v[0];
	in.vtgt_len = v[1] ? vl[1] : vl[0];
	in.vsrc_name = vn[0];
	in.vtgt_name = v[1] ? vn[1] : vn[0];
	in.decoder_name = decoder_cfg;
	in.ssrc = sg[0];
	in.ssrc_len = sl[0];
	in.stgt = sg[1];
	in.stgt_len = sl[1];
	if (decoder_cfg)
		dc = read_all(decoder_cfg, &in.decoder_len);
	in.model = mb;
	in.decoder = dc;
	if (!(m = marian_import(&in))) {
		err_prefix("%s", f[0]);
		die_err();
	}
	if (lex)
		lex_table(m);
	if (model_save(m, out, lex_rec, lex_n) < 0)
		die_err();
	shortlist_table_free(lex_t);
	model_free(m);
	free(mb);
	for (i = 0; i < 4; i++)
		free(file[i]);
	free(dc);
}
