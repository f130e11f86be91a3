/*
 * annex.c: the records a model file carries for others (a shortlist's
 * table): kept by loading, written back by saving, read by their owners;
 * see model.h.  The model knows their names' prefixes, not what they
 * mean, so that no part of a model reaches up to the parts that use it.
 */
#include <stdlib.h>
#include <string.h>
#include "base/errmsg.h"
#include "model_parts.h"

/* marian.: an imported intgemm8 model's multipliers (import/marian_int8.h) */
const char *const model_annex_prefixes[] = { "shortlist.", "marian.", NULL };

int model_is_annex(const char *name)
{
	for (const char *const *p = model_annex_prefixes; *p; p++)
		if (strncmp(name, *p, strlen(*p)) == 0)
			return 1;
	return 0;
}

int model_annex_add(struct model *m, const struct tensor *t)
{
	struct tensor *a = realloc(m->annex, (m->nannex + 1) * sizeof *a);

	if (!a) {
		err_set("out of memory for record '%s'", t->name);
		return -1;
	}
	m->annex = a;
	if (tensor_init_copy(&a[m->nannex], t->name, t->dtype, t->rank,
			     t->dim, t->data) < 0)
		return -1;
	m->nannex++;
	return 0;
}

const struct tensor *model_annex(const struct model *m, const char *name)
{
	for (int i = 0; i < m->nannex; i++)
		if (strcmp(m->annex[i].name, name) == 0)
			return &m->annex[i];
	return NULL;
}

void model_annex_free(struct model *m)
{
	for (int i = 0; i < m->nannex; i++)
		tensor_free(&m->annex[i]);
	free(m->annex);
	m->annex = NULL;
	m->nannex = 0;
}

int model_file_set_annexes(const char *path, const char *prefix,
			   const struct tensor *rec, int n)
{
	size_t np = strlen(prefix);
	struct tsr_map *map;
	struct tsr_writer *w = NULL;
	int i, known = 0, k = 0, total = n;

	for (const char *const *p = model_annex_prefixes; *p; p++)
		known |= strcmp(*p, prefix) == 0;
	for (i = 0; known && i < n; i++)
		known = strncmp(rec[i].name, prefix, np) == 0;
	if (!known) {
		err_set("%s: '%s' records are no model file's annexes", path,
			n && i ? rec[i - 1].name : prefix);
		return -1;
	}
	if (!(map = tsr_map_open(path)))	/* every record checked */
		return -1;
	if (!(w = tsr_writer_atomic(path, 0)))
		goto fail;
	for (i = 0; i < map->f.n; i++)
		total += strncmp(map->f.rec[i].name, prefix, np) != 0;
	for (i = 0; i < map->f.n; i++)
		if (strncmp(map->f.rec[i].name, prefix, np) != 0 &&
		    tsr_write(w, &map->f.rec[i], 0, ++k == total) < 0)
			goto fail;
	for (i = 0; i < n; i++)
		if (tsr_write(w, &rec[i], 0, ++k == total) < 0)
			goto fail;
	tsr_map_close(map);
	return tsr_writer_commit(w);
fail:
	if (w)
		tsr_writer_abort(w);
	tsr_map_close(map);
	return -1;
}
