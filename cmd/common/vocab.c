/* vocab.c: loading the programs' vocabularies (vocab.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "prog.h"
#include "stream/stream.h"
#include "text/vocab.h"
#include "vocab.h"

struct vocab *vocab_file(const char *path, char **bytes, size_t *len)
{
	FILE *f = fopen(path, "r");
	size_t cap = 1 << 16, n = 0, k;
	char *buf = NULL, *p;
	struct stat st;
	struct vocab *v;

	if (!f)
		die("%s: %s", path, strerror(errno));
	/* at most VOCAB_FILE_MAX bytes, and one more to see the end: a
	 * file too large is refused before it is read, a pipe or a device
	 * (/dev/zero) when it passes the bound */
	if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) &&
	    st.st_size > VOCAB_FILE_MAX)
		die("%s: %lld bytes: a vocabulary is at most %d MiB",
		    path, (long long)st.st_size, VOCAB_FILE_MAX >> 20);
	do {
		cap = cap * 2 > VOCAB_FILE_MAX + 1 ? VOCAB_FILE_MAX + 1
						   : cap * 2;
		if (!(p = realloc(buf, cap + 1)))
			die("%s: out of memory", path);
		buf = p;
		n += k = fread(buf + n, 1, cap - n, f);
	} while (k && n == cap && n <= VOCAB_FILE_MAX);
	if (ferror(f))
		die("%s: %s", path, strerror(errno ? errno : EIO));
	if (n > VOCAB_FILE_MAX)
		die("%s: more than %d MiB: a vocabulary is at most %d MiB",
		    path, VOCAB_FILE_MAX >> 20, VOCAB_FILE_MAX >> 20);
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
