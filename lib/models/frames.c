/* frames.c: frames to padded batches and back; see frames.h. */
#include <stdlib.h>
#include <string.h>
#include "base/errmsg.h"
#include "frames.h"

const float *frame_rows(const struct frame *f, const char *name, int width,
			const char *stage, int *S)
{
	const struct tensor *t = frame_need(f, name, DT_F32, 2, stage);

	if (!t)
		return NULL;
	if (t->dim[1] != (uint64_t)width || t->dim[0] == 0 ||
	    t->dim[0] > FRAME_ROWS_MAX) {
		err_set("frame %llu: record \"%s\" is [%llu, %llu]; the model "
			"wants [S, %d] with 1 <= S <= %d",
			(unsigned long long)f->number, name,
			(unsigned long long)t->dim[0],
			(unsigned long long)t->dim[1], width, FRAME_ROWS_MAX);
		return NULL;
	}
	*S = (int)t->dim[0];
	return t->data;
}

int frames_gather(struct frame **f, int nf, const char *name, int width,
		  const char *stage, float **x, int **len)
{
	int i, S = 0;

	*x = NULL;
	*len = malloc(sizeof(int) * (nf ? nf : 1));
	if (!*len)
		goto oom;
	for (i = 0; i < nf; i++) {
		if (!frame_rows(f[i], name, width, stage, &(*len)[i]))
			goto fail;
		if ((*len)[i] > S)
			S = (*len)[i];
	}
	*x = calloc((size_t)nf * S * width + 1, sizeof(float));
	if (!*x)
		goto oom;
	for (i = 0; i < nf; i++)
		memcpy(*x + (size_t)i * S * width, frame_find(f[i], name)->data,
		       sizeof(float) * (*len)[i] * width);
	return S;
oom:
	err_set("out of memory for %d frames of %s", nf, name);
fail:
	free(*x);
	free(*len);
	*x = NULL;
	*len = NULL;
	return -1;
}

float *frame_put_rows(struct frame *f, const char *name, int rows, int width,
		      const float *x)
{
	uint64_t dim[2] = { (uint64_t)rows, (uint64_t)width };
	struct tensor t, *r;

	if (tensor_init(&t, name, DT_F32, width ? 2 : 1, dim) < 0)
		return NULL;
	if (x)
		memcpy(t.data, x, t.nbytes);
	r = frame_put(f, &t);
	if (!r) {
		tensor_free(&t);
		return NULL;
	}
	return r->data;
}

int frames_put(struct frame **f, int nf, const char *name, int width,
	       const float *x, int S, const int *len)
{
	int i;

	for (i = 0; i < nf; i++)
		if (!frame_put_rows(f[i], name, len[i], width,
				    x + (size_t)i * S * width))
			return -1;
	return 0;
}
