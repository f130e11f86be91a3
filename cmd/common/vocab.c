/* vocab.c: loading the programs' vocabularies (vocab.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prog.h"
#include "stream/stream.h"
#include "text/vocab.h"
#include "vocab.h"

struct vocab *vocab_file(const char *path, char **bytes, size_t *len)
{
	FILE *f = fopen(path, "r");
	size_t cap = 1 << 16, n = 0, k;
	char *buf = NULL;
	struct vocab *v;

	if (!f)
		die("%s: %s", path, strerror(errno));
	do {
		if (!(buf = realloc(buf, (cap *= 2) + 1)))
			die("out of memory");
		n += k = fread(buf + n, 1, cap - n, f);
	} while (k && n == cap);
	if (ferror(f))
		die("%s: %s", path, strerror(errno));
	fclose(f);
	if (!(v = vocab_load(buf, n)))
		die("%s: %s", path, err_msg());
	if (bytes) {
		*bytes = buf;
		*len = n;
	} else {
		free(buf);
	}
	return v;
}

const struct tensor *vocab_model_record(const char *path, int target)
{
	static struct tsr_map *model;
	static struct tensor *side[2];
	const char *name = target ? "vocab.tgt" : "vocab.src";

	if (side[target])
		return side[target];
	if (!model && !(model = tsr_map_open_lazy(path)))
		die_err();
	if (!(side[target] = frame_need(&model->f, name, DT_U8, 1,
					"train-step --init")))
		die("%s: %s", path, err_msg());
	if (tsr_map_verify(model, side[target]) < 0)
		die_err();
	return side[target];
}

struct vocab *vocab_model(const char *path, int target)
{
	static struct vocab *side[2];
	const struct tensor *t;

	if (side[target])
		return side[target];
	t = vocab_model_record(path, target);
	if (!(side[target] = vocab_load(t->data, t->nbytes)))
		die("%s: %s: %s", path, t->name, err_msg());
	return side[target];
}
