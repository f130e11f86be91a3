/*
 * marian_cmd.h: train-step's Marian commands, on files named on the
 * command line (import/marian_import.h, marian_export.h,
 * marian_shortlist.h do the work); each dies (exit 1, 2 for a usage
 * error) with a message naming the file.
 */
#ifndef ATTN_CMD_MARIAN_CMD_H
#define ATTN_CMD_MARIAN_CMD_H

/*
 * --import marian: the Marian Transformer of files f [nf] (the model,
 * then the vocabularies: .spm files, or vocab.yml files and the .spm
 * files that segment them, source first) as model out, with
 * decoder_cfg's settings (NULL: none) and lex, Marian's lexical
 * shortlist "FILE[,FIRST,BEST,THRESHOLD]" (NULL: none); written
 * atomically, an existing out only with force (and locked meanwhile).
 */
void marian_import_cmd(const char *out, char **f, int nf,
		       const char *decoder_cfg, int force, const char *lex);
/* --export-marian: model as native Marian loads it, into directory dir. */
void marian_export_cmd(const char *model, const char *dir);

#endif
