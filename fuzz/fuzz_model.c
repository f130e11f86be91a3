/*
 * fuzz_model.c: libFuzzer target for the model loader (make fuzz), fed
 * mutated model files (the seeds: tiny models of each architecture that
 * make fuzz writes with train-step).  Any file must load or be refused,
 * in each of model_load's modes, without a crash, a leak, undefined
 * behaviour or a long stall; a model that loads has the parameters its
 * config declares, each a record of the file.
 *
 * Mutations of a stream mostly break a checksum, which is refused before
 * the config is read; so an input that does not start with the stream's
 * magic is taken as a config instead, and put in place of the config of
 * a tiny transformer written at start-up: that reaches the config's
 * checks and the parameters' declaration.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "base/errmsg.h"
#include "fuzz_util.h"
#include "models/model.h"

static struct model *tiny;	/* the model whose config inputs replace */

static void tiny_model(void)
{
	const char *set[] = {
		"src_vocab=6", "tgt_vocab=6", "d_model=2", "heads=1",
		"ffn=2", "enc_layers=1", "dec_layers=1",
	};

	tiny = model_create("transformer", set, 7, "", "");
	if (!tiny)
		abort();
}

/* The file of the tiny model with text as its config, in a memory file. */
static int with_config(const uint8_t *text, size_t n)
{
	int fd = fuzz_mem_file(NULL, 0);
	struct tsr_writer *w = tsr_writer_fd(fd, "seed", 0);
	struct tensor t;
	uint64_t dim;
	int i;

	dim = n;
	if (!w || tensor_init_copy(&t, "model.config", DT_U8, 1, &dim,
				   text) < 0 ||
	    tsr_write(w, &t, 0, 0) < 0)
		abort();
	tensor_free(&t);
	dim = 0;
	if (tensor_init(&t, "vocab.src", DT_U8, 1, &dim) < 0 ||
	    tsr_write(w, &t, 0, 0) < 0 ||
	    !strcpy(t.name, "vocab.tgt") || tsr_write(w, &t, 0, 0) < 0)
		abort();
	tensor_free(&t);
	for (i = 0; i < tiny->nparam; i++) {
		const struct param *p = &tiny->param[i];
		uint64_t d[2] = { p->dim[0], p->dim[1] };

		if (tensor_init_copy(&t, p->name, DT_F32, p->rank, d,
				     p->w) < 0 ||
		    tsr_write(w, &t, 0, i + 1 == tiny->nparam) < 0)
			abort();
		tensor_free(&t);
	}
	if (tsr_writer_close(w) < 0)
		abort();
	return fd;
}

static void load(const char *path, int mode)
{
	struct tsr_map *map = NULL;
	struct model *m;
	int i;

	m = model_load(path, mode, mode == MODEL_LOAD_TRAIN ? &map : NULL);
	if (!m) {
		if (!*err_msg())
			abort();
		return;
	}
	for (i = 0; i < m->nparam; i++)
		if (!m->param[i].w || model_param(m, m->param[i].name) !=
				      &m->param[i])
			abort();
	model_free(m);
	tsr_map_close(map);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64];
	int fd;

	if (!tiny)
		tiny_model();
	if (size >= 4 && memcmp(data, "TNSR", 4) == 0)
		fd = fuzz_mem_file(data, size);
	else
		fd = with_config(data, size);
	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	err_clear();
	load(path, MODEL_LOAD_MAPPED);
	load(path, MODEL_LOAD_COPY);
	load(path, MODEL_LOAD_TRAIN);
	close(fd);
	return 0;
}
