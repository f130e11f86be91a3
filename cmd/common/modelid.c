/* modelid.c: a model's identity in its streams; see modelid.h. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/errmsg.h"
#include "modelid.h"

static void set_file(struct model_id *id, const char *file)
{
	snprintf(id->file, sizeof id->file, "%s", file);
}

void model_id_vocab(struct model_id *id, const char *src, size_t nsrc,
		    const char *tgt, size_t ntgt, const char *file)
{
	memset(id, 0, sizeof *id);
	id->vocab = model_vocab_hash(src, nsrc, tgt, ntgt);
	set_file(id, file);
}

void model_id_model(struct model_id *id, const struct model *m,
		    const char *file)
{
	model_id_vocab(id, m->vocab_src, m->vocab_src_len, m->vocab_tgt,
		       m->vocab_tgt_len, file);
	id->params = model_hash(m);
	id->has_params = 1;
}

size_t model_id_text(const struct model_id *id, char *text)
{
	if (id->has_params)
		return snprintf(text, MODEL_ID_TEXT, "vocab=%016" PRIx64
				" params=%016" PRIx64 " model=%s", id->vocab,
				id->params, id->file);
	return snprintf(text, MODEL_ID_TEXT, "vocab=%016" PRIx64 " model=%s",
			id->vocab, id->file);
}

/* Parses "vocab=V[ params=P] model=FILE"; 0 or -1. */
static int parse(const struct tensor *t, struct model_id *id)
{
	char buf[MODEL_ID_TEXT], *p;
	size_t n = t->nbytes;

	memset(id, 0, sizeof *id);
	if (t->dtype != DT_U8 || t->rank != 1 || n >= sizeof buf)
		return -1;
	memcpy(buf, t->data, n);
	buf[n] = 0;
	if (sscanf(buf, "vocab=%16" SCNx64, &id->vocab) != 1)
		return -1;
	p = strstr(buf, " params=");
	if (p && sscanf(p, " params=%16" SCNx64, &id->params) == 1)
		id->has_params = 1;
	if (!(p = strstr(buf, " model=")))
		return -1;
	set_file(id, p + 7);
	return 0;
}

int model_id_frame(struct frame *f, const struct model_id *id)
{
	struct tensor *t = frame_head(f, "model.id");
	char text[MODEL_ID_TEXT];
	struct model_id old;
	struct tensor rec;
	uint64_t len;

	if (t && tsr_inflate(t) < 0)
		return -1;
	if (t && parse(t, &old) < 0) {
		err_set("frame %llu: model.id is not 'vocab=HEX [params=HEX] "
			"model=FILE'", (unsigned long long)f->number);
		return -1;
	}
	if (t && old.vocab != id->vocab) {
		err_set("frame %llu: made with the vocabulary of %s "
			"(vocab=%016" PRIx64 "), not that of %s (vocab=%016"
			PRIx64 ")", (unsigned long long)f->number, old.file,
			old.vocab, id->file, id->vocab);
		return -1;
	}
	if (t && old.has_params && id->has_params &&
	    old.params != id->params) {
		err_set("frame %llu: made with the model %s (params=%016"
			PRIx64 "), not %s (params=%016" PRIx64 ")",
			(unsigned long long)f->number, old.file, old.params,
			id->file, id->params);
		return -1;
	}
	if (t && (old.has_params || !id->has_params))
		return 0;	/* as complete already */
	len = model_id_text(id, text);
	if (tensor_init_copy(&rec, "model.id", DT_U8, 1, &len, text) < 0 ||
	    !frame_put(f, &rec))
		return -1;
	return 0;
}
