/* average.c: checkpoint averaging; see train.h. */
#include <dirent.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/errmsg.h"
#include "train.h"

int model_average(const char *out, char *const *paths, int n)
{
	struct model *first = NULL, *m = NULL;
	double *sum = NULL;
	size_t i;
	int k, p, rc = -1;

	if (n < 1) {
		err_set("no models to average");
		return -1;
	}
	for (k = 0; k < n; k++) {
		m = model_load(paths[k], 0, NULL);
		if (!m)
			goto out;
		if (!first) {
			first = m;
			sum = calloc(m->nw ? m->nw : 1, sizeof *sum);
			if (!sum) {
				err_set("out of memory");
				goto out;
			}
		} else {
			int same = m->arch == first->arch &&
				   m->nparam == first->nparam &&
				   m->nw == first->nw;

			for (p = 0; same && p < m->nparam; p++)
				same = strcmp(m->param[p].name,
					      first->param[p].name) == 0 &&
				       m->param[p].n == first->param[p].n;
			if (!same) {
				err_set("%s: not the shape of %s", paths[k],
					paths[0]);
				goto out;
			}
		}
		for (i = 0; i < m->nw; i++)
			sum[i] += m->w[i];
		if (m != first)
			model_free(m);
		m = NULL;
	}
	/* the last model carries the config, vocabularies and generator */
	m = n > 1 ? model_load(paths[n - 1], 0, NULL) : first;
	if (!m)
		goto out;
	for (i = 0; i < m->nw; i++)
		m->w[i] = sum[i] / n;
	rc = model_save(m, out, NULL, 0);
out:
	if (m != first)
		model_free(m);
	model_free(first);
	free(sum);
	return rc;
}

static int step_cmp(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	return x < y ? -1 : x > y;
}

char **checkpoints_last(const char *path, int k, int *n)
{
	char *dcopy = strdup(path), *bcopy = strdup(path), **out = NULL;
	const char *dir, *base;
	size_t blen;
	long *steps = NULL;
	int cap = 0, cnt = 0, i, first;
	struct dirent *e;
	DIR *d;

	*n = 0;
	if (!dcopy || !bcopy)
		goto oom;
	dir = dirname(dcopy);
	base = basename(bcopy);
	blen = strlen(base);
	d = opendir(dir);
	if (!d) {
		err_set("%s: cannot read the directory", dir);
		goto fail;
	}
	while ((e = readdir(d))) {
		char *end;
		long s;

		if (strncmp(e->d_name, base, blen) != 0 ||
		    strncmp(e->d_name + blen, ".ckpt.", 6) != 0)
			continue;
		s = strtol(e->d_name + blen + 6, &end, 10);
		if (*end || end == e->d_name + blen + 6)
			continue;
		if (cnt == cap) {
			long *t = realloc(steps, (cap = cap ? 2 * cap : 16) *
					  sizeof *t);

			if (!t) {
				closedir(d);
				goto oom;
			}
			steps = t;
		}
		steps[cnt++] = s;
	}
	closedir(d);
	qsort(steps, cnt, sizeof *steps, step_cmp);
	first = cnt > k ? cnt - k : 0;
	out = calloc(cnt - first + 1, sizeof *out);
	if (!out)
		goto oom;
	for (i = first; i < cnt; i++) {
		if (asprintf(&out[i - first], "%s.ckpt.%ld", path, steps[i]) < 0)
			goto oom;
		(*n)++;
	}
	free(steps);
	free(dcopy);
	free(bcopy);
	return out;
oom:
	err_set("out of memory");
fail:
	for (i = 0; out && i < *n; i++)
		free(out[i]);
	free(out);
	*n = 0;
	free(steps);
	free(dcopy);
	free(bcopy);
	return NULL;
}
