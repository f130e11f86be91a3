/* frames.c: frames to padded batches and back; see frames.h. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "base/errmsg.h"
#include "frames.h"
#include "model_parts.h"

int frame_check_input(const struct frame *f, const struct tensor *t)
{
	const struct tensor *ids = frame_head(f, "src.ids");
	unsigned long long fn = f->number, i, n, cols;
	const float *x = t->data;

	if (t->dtype != DT_F32 || t->rank < 1)
		return 0;
	n = t->nbytes / sizeof(float);
	/* the vectors' check first, the place of a bad value after */
	for (i = floats_finite(x, n) ? n : 0; i < n && isfinite(x[i]); i++)
		;
	cols = t->rank == 2 ? t->dim[1] : 0;
	if (i < n && cols)
		err_set("frame %llu: %s[%llu, %llu] is %g: a model's input "
			"is finite", fn, t->name, i / cols, i % cols, x[i]);
	else if (i < n)
		err_set("frame %llu: %s[%llu] is %g: a model's input is "
			"finite", fn, t->name, i, x[i]);
	else if (t->rank == 2 && ids && ids->rank == 1 &&
		 t->dim[0] != ids->dim[0])
		err_set("frame %llu: %s has %llu rows and src.ids %llu "
			"tokens: a row for each token", fn, t->name,
			(unsigned long long)t->dim[0],
			(unsigned long long)ids->dim[0]);
	else
		return 0;
	return -1;
}

const float *frame_rows(const struct frame *f, const char *name, int width,
			const char *stage, int *S)
{
	const struct tensor *t = frame_need(f, name, DT_F32, 2, stage);

	if (!t || frame_check_input(f, t) < 0)
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
