/* config.c: the model.config record, key=value lines; see config.h. */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "config.h"
#include "errmsg.h"

static int find(const struct config *c, const char *key)
{
	int i;

	for (i = 0; i < c->n; i++)
		if (strcmp(c->key[i], key) == 0)
			return i;
	return -1;
}

/* Appends a key known to be new; key and val are taken over. */
static int append(struct config *c, char *key, char *val)
{
	if (c->n == c->cap) {
		int cap = c->cap ? 2 * c->cap : 16;
		char **k = realloc(c->key, cap * sizeof *k);
		char **v;

		if (k)
			c->key = k;
		v = k ? realloc(c->val, cap * sizeof *v) : NULL;
		if (!v) {
			err_set("out of memory");
			free(key);
			free(val);
			return -1;
		}
		c->val = v;
		c->cap = cap;
	}
	c->key[c->n] = key;
	c->val[c->n] = val;
	c->n++;
	return 0;
}

/* A copy of s[0..n) without the spaces at either end. */
static char *trimdup(const char *s, size_t n)
{
	while (n > 0 && isspace((unsigned char)*s))
		s++, n--;
	while (n > 0 && isspace((unsigned char)s[n - 1]))
		n--;
	return strndup(s, n);
}

static int key_ok(const char *k)
{
	if (!*k)
		return 0;
	for (; *k; k++)
		if (!isalnum((unsigned char)*k) && !strchr("._-:/", *k))
			return 0;
	return 1;
}

/* Parses one line (no newline); blank and comment lines are skipped. */
static int parse_line(struct config *c, const char *s, size_t n,
		      const char *label, int lineno)
{
	const char *eq;
	char *key, *val;
	size_t i = 0;

	while (i < n && isspace((unsigned char)s[i]))
		i++;
	if (i == n || s[i] == '#')
		return 0;
	eq = memchr(s, '=', n);
	if (!eq) {
		err_set("%s: line %d: no '=' in a key=value line", label,
			lineno);
		return -1;
	}
	key = trimdup(s, eq - s);
	val = trimdup(eq + 1, s + n - eq - 1);
	if (!key || !val) {
		free(key);
		free(val);
		err_set("out of memory");
		return -1;
	}
	if (!key_ok(key) || strchr(val, '\n')) {
		err_set("%s: line %d: bad key '%s'", label, lineno, key);
		free(key);
		free(val);
		return -1;
	}
	if (c->n == CONFIG_MAX_KEYS) {
		err_set("%s: line %d: more than %d keys", label, lineno,
			CONFIG_MAX_KEYS);
		free(key);
		free(val);
		return -1;
	}
	if (find(c, key) >= 0) {
		err_set("%s: line %d: key '%s' given twice", label, lineno,
			key);
		free(key);
		free(val);
		return -1;
	}
	return append(c, key, val);
}

int config_parse(struct config *c, const char *text, size_t len,
		 const char *label)
{
	size_t i = 0;
	int lineno = 0;

	if (memchr(text, '\0', len)) {
		err_set("%s: a NUL byte in the text", label);
		return -1;
	}
	while (i < len) {
		const char *nl = memchr(text + i, '\n', len - i);
		size_t end = nl ? (size_t)(nl - text) : len;

		lineno++;
		if (parse_line(c, text + i, end - i, label, lineno) < 0)
			return -1;
		i = end + 1;
	}
	return 0;
}

int config_set(struct config *c, const char *key, const char *val)
{
	int i = find(c, key);
	char *k, *v;

	if (!key_ok(key) || strchr(val, '\n')) {
		err_set("config: bad key or value '%s=%s'", key, val);
		return -1;
	}
	v = strdup(val);
	if (!v) {
		err_set("out of memory");
		return -1;
	}
	if (i >= 0) {
		free(c->val[i]);
		c->val[i] = v;
		return 0;
	}
	k = strdup(key);
	if (!k) {
		free(v);
		err_set("out of memory");
		return -1;
	}
	return append(c, k, v);
}

int config_set_kv(struct config *c, const char *kv)
{
	const char *eq = strchr(kv, '=');
	char *key, *val;
	int rc;

	if (!eq) {
		err_set("'%s' is not key=value", kv);
		return -1;
	}
	key = trimdup(kv, eq - kv);
	val = trimdup(eq + 1, strlen(eq + 1));
	rc = key && val ? config_set(c, key, val) : -1;
	free(key);
	free(val);
	return rc;
}

const char *config_get(const struct config *c, const char *key)
{
	int i = find(c, key);

	return i >= 0 ? c->val[i] : NULL;
}

int config_int(const struct config *c, const char *key, long *out)
{
	const char *v = config_get(c, key);
	char *end;
	long x;

	if (!v) {
		err_set("config: no key '%s'", key);
		return -1;
	}
	errno = 0;
	x = strtol(v, &end, 10);
	if (!*v || *end || errno) {
		err_set("config: %s=%s is not an integer", key, v);
		return -1;
	}
	*out = x;
	return 0;
}

int config_double(const struct config *c, const char *key, double *out)
{
	const char *v = config_get(c, key);
	char *end;
	double x;

	if (!v) {
		err_set("config: no key '%s'", key);
		return -1;
	}
	errno = 0;
	x = strtod(v, &end);
	if (!*v || *end || errno) {
		err_set("config: %s=%s is not a number", key, v);
		return -1;
	}
	*out = x;
	return 0;
}

char *config_format(const struct config *c, size_t *len)
{
	size_t n = 1, off = 0;
	char *s;
	int i;

	for (i = 0; i < c->n; i++)
		n += strlen(c->key[i]) + strlen(c->val[i]) + 2;
	s = malloc(n);
	if (!s) {
		err_set("out of memory");
		return NULL;
	}
	for (i = 0; i < c->n; i++) {
		size_t kl = strlen(c->key[i]), vl = strlen(c->val[i]);

		memcpy(s + off, c->key[i], kl);
		s[off + kl] = '=';
		memcpy(s + off + kl + 1, c->val[i], vl);
		s[off + kl + 1 + vl] = '\n';
		off += kl + vl + 2;
	}
	s[off] = 0;
	*len = off;
	return s;
}

void config_free(struct config *c)
{
	int i;

	for (i = 0; i < c->n; i++) {
		free(c->key[i]);
		free(c->val[i]);
	}
	free(c->key);
	free(c->val);
	memset(c, 0, sizeof *c);
}
