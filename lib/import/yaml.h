/*
 * yaml.h: the subset of YAML that Marian's configurations use (the
 * special:model.yml inside a model, decoder.yml beside it): one mapping
 * of keys, each with a scalar (plain, 'single-' or "double-quoted") or a
 * list, in flow style ([a, b]) or in block style (lines "- item" after
 * the key, indented or not); a scalar may also stand on the next,
 * indented line (yaml-cpp writes "key:\n  []").  Comments, blank lines
 * and the document markers --- and ... are skipped.  What this subset
 * does not hold is refused, naming the line: a nested mapping, a list of
 * lists or of mappings, block scalars (| >), anchors, aliases and tags,
 * tabs in indentation, a repeated key.
 *
 * Marian's vocab.yml (OPUS-MT's have 50,000-65,000 keys, one a piece) is
 * such a mapping too: keys are looked up through a hash table, so time
 * and memory are linear in the text, with no cap on the keys; a quoted
 * key takes every escape of YAML 1.2's double-quoted scalars (\x41,
 * \u00e9, \U0001F600, \N, \_, \L, \P, \e ...) as yaml-cpp writes
 * them, and a plain key may begin with '-', '?' or ':' when a non-blank
 * follows ("-ing": 7 is the key "-ing").
 */
#ifndef ATTN_YAML_H
#define ATTN_YAML_H

#include <stddef.h>
#include "text/strmap.h"

struct yaml_entry {
	char *key;
	int list;		/* 1: a list of n items; 0: a scalar, n 1 */
	int n;
	char **v;		/* [n], unquoted; a null (key:) is "" */
	int line;		/* where the key is, from 1 */
};

struct yaml {
	int n, cap;
	struct yaml_entry *e;	/* in the text's order */
	struct strmap index;	/* key -> its entry */
};

/*
 * Parses len bytes of text into y (empty first); text may end in NULs
 * (Marian stores its model.yml with one), a NUL before other bytes is
 * refused.  label names the text in errors: "label:LINE: what".  0, or
 * -1 with err_msg() set and y empty.
 */
int yaml_parse(struct yaml *y, const char *text, size_t len,
	       const char *label);
/* The entry of key, or NULL (a hash look-up). */
const struct yaml_entry *yaml_get(const struct yaml *y, const char *key);
/* key's scalar, or NULL when it is absent or a list. */
const char *yaml_str(const struct yaml *y, const char *key);
/*
 * key as a boolean (true/false, yes/no, on/off in any case, 1/0) into
 * *out; def when absent.  -1 with err_msg() naming the key otherwise.
 */
int yaml_bool(const struct yaml *y, const char *key, int def, int *out);
void yaml_free(struct yaml *y);

#endif
