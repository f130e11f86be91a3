/*
 * config.h: the model.config record of doc/MODELS.md: key=value lines; spaces
 * around key and value are ignored, blank lines and lines starting with '#'
 * are skipped, a repeated key is an error, unknown keys are kept (and
 * written back in their order).
 */
#ifndef ATTN_CONFIG_H
#define ATTN_CONFIG_H

#include <stddef.h>

/* Keys in a config, at most (so that finding a key stays cheap). */
#define CONFIG_MAX_KEYS 1024

struct config {
	int n, cap;
	char **key, **val;
};

/* Parses text (len bytes) into c (appending); label names it in errors.
 * More than CONFIG_MAX_KEYS keys are refused. */
int config_parse(struct config *c, const char *text, size_t len,
		 const char *label);
/* Sets key (replacing its value if present). */
int config_set(struct config *c, const char *key, const char *val);
/* Parses one "key=value" (a --set option). */
int config_set_kv(struct config *c, const char *kv);
const char *config_get(const struct config *c, const char *key);
/* The typed getters fail (-1, with a message naming the key) if the key is
 * missing or not a number of that kind. */
int config_int(const struct config *c, const char *key, long *out);
int config_double(const struct config *c, const char *key, double *out);
/* "key=value\n" lines, malloc'ed; *len its length. */
char *config_format(const struct config *c, size_t *len);
void config_free(struct config *c);

#endif
