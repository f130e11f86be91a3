/*
 * keepopt.h: what must not be translated, for the programs (text/keep.h
 * does the work).  tokenize masks each line's spans and writes them in
 * src.keep and src.keep.pos; decode, beam and tokenize -d put them back,
 * frame by frame, into the text they print (keepopt_restore).
 */
#ifndef ATTN_KEEPOPT_H
#define ATTN_KEEPOPT_H

#include "stream/stream.h"
#include "text/keep.h"

/* tokenize's settings: the kinds looked for (all by default), the
 * --keep regexes, how spans are masked; what its options asked. */
extern struct keep keepopt;
extern enum keep_mode keepopt_mode;
extern int keepopt_given;	/* --keep, --keep-as or --no-keep=KINDS */
extern int keepopt_none;	/* --no-keep */
extern int keepopt_print;	/* --spans */

/* tokenize's options, for its getopt_long table and --help */
enum { KEEPOPT_KEEP = 0x4500, KEEPOPT_NO_KEEP, KEEPOPT_AS, KEEPOPT_SPANS };
#define KEEPOPT_LONGOPTS \
	{ "keep", required_argument, NULL, KEEPOPT_KEEP }, \
	{ "no-keep", optional_argument, NULL, KEEPOPT_NO_KEEP }, \
	{ "keep-as", required_argument, NULL, KEEPOPT_AS }, \
	{ "spans", no_argument, NULL, KEEPOPT_SPANS }
#define KEEPOPT_HELP \
	"      --keep=REGEX      also keep as written what this POSIX " \
	"extended regex\n" \
	"                        matches (repeatable; see below)\n" \
	"      --no-keep[=KINDS] mask nothing, or not these KINDS " \
	"(commas: url,\n" \
	"                        email,number,path,code,placeholder," \
	"regex); with -d,\n" \
	"                        print the spans' placeholders\n" \
	"      --spans           print each line's spans, tab-separated: " \
	"no ids\n" \
	"      --keep-as=HOW     a span masked by a name the model copies " \
	"(name,\n" \
	"                        the default) or dropped (drop)\n"
#define KEEPOPT_NOTE \
	"URLs, e-mail addresses, numbers, paths, `code` and placeholders " \
	"(%%s, {name},\n$VAR) are masked and put back as written by " \
	"decode, beam and -d (src.keep).\n"

/* One of the KEEPOPT_ options, with its argument (exit 2 on a bad one). */
void keepopt_option(int c, const char *arg);

/* --keep REGEX: one more pattern; refused (exit 2) when it does not
 * compile or matches the empty string. */
void keepopt_regex(const char *arg);
/* --no-keep[=KINDS]: every kind off, or those named, joined by commas
 * (exit 2 on another name). */
void keepopt_off(const char *arg);
/* --keep-as=name|drop */
void keepopt_as(const char *arg);

/*
 * tokenize: the line [len] with its spans masked (*mlen bytes, valid
 * until the next call); when it has any, src.keep and src.keep.pos of
 * that frame are written to w first.  Dies on an error (exit 1).
 */
const char *keepopt_mask(struct tsr_writer *w, const char *line, size_t len,
			 size_t *mlen, uint64_t frame);

/* tokenize --spans: the line's spans, tab-separated, appended to out. */
void keepopt_spans(const char *line, size_t len, struct bpe_text *out);

/*
 * The frame's spans put back into text (keep_restore), links the
 * translation's word links to the masked source (NULL: none); tmp is
 * room that is swapped with text; source: text is the masked source
 * (tokenize -d of src.ids), not a translation.  A frame without
 * src.keep.pos is left alone.  0, or -1 (err_msg()): the records are
 * malformed.
 */
int keepopt_restore(const struct frame *f, struct bpe_text *text,
		    struct bpe_text *tmp, const char *links, size_t nlinks,
		    int source);

#endif
