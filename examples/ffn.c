/*
 * ffn: one feed-forward layer of a model, run as the Transformer runs it
 * (ffn_forward of lib/nn, the function encode and decode call), for
 * examples/mlp-as-attention.sh.
 *
 *   ffn MODEL LAYER < x.tsr > y.tsr
 *
 * Reads LAYER.W1 [f, d], LAYER.b1 [f], LAYER.W2 [d, f] and LAYER.b2 [d]
 * from MODEL (f32, f16 or bf16, as the model's loader widens them), then
 * for every frame of standard input with a record x f32 [T, d] adds
 * y [T, d] = relu(x W1^T + b1) W2^T + b2.  Built by make into
 * build/examples/ffn; not installed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/errmsg.h"
#include "nn/layers.h"
#include "stream/stream.h"
#include "stream/tensor.h"

static const char *prog = "ffn";

static void die(const char *what)
{
	fprintf(stderr, "%s: %s\n", prog, what ? what : err_msg());
	exit(1);
}

/* The record PREFIX.name of the model, as f32 [n0] or [n0, n1] (n1 0 for
 * a vector); *n0 and *n1 are set from it when 0 on entry, else checked. */
static float *param(const char *path, const char *prefix, const char *name,
		    uint64_t *n0, uint64_t *n1)
{
	struct tsr_reader *r = tsr_reader_path(path);
	struct tensor t = { 0 };
	char want[256], msg[512];
	float *x = NULL;
	int rc;

	if (!r)
		die(NULL);
	tsr_reader_set_unterminated(r, 1);	/* a model file has no end mark */
	snprintf(want, sizeof want, "%s.%s", prefix, name);
	while (!x && (rc = tsr_read(r, &t, NULL)) == 1) {
		if (strcmp(t.name, want) == 0) {
			if (t.rank != (*n1 || name[0] == 'W' ? 2 : 1) ||
			    (t.dtype != DT_F32 && t.dtype != DT_F16 &&
			     t.dtype != DT_BF16) ||
			    (*n0 && t.dim[0] != *n0) ||
			    (t.rank == 2 && *n1 && t.dim[1] != *n1)) {
				snprintf(msg, sizeof msg, "%s: %s: not the "
					 "layer's shape or a float type", path,
					 want);
				die(msg);
			}
			*n0 = t.dim[0];
			if (t.rank == 2)
				*n1 = t.dim[1];
			x = malloc(sizeof(float) * tensor_numel(&t));
			if (!x)
				die("out of memory");
			to_f32(x, t.data, tensor_numel(&t), t.dtype);
		}
		tensor_free(&t);
	}
	if (!x && rc < 0)
		die(NULL);
	if (!x) {
		snprintf(msg, sizeof msg, "%s: no record %s", path, want);
		die(msg);
	}
	tsr_reader_free(r);
	return x;
}

int main(int argc, char **argv)
{
	struct ffn_w w;
	uint64_t f = 0, d = 0, one = 0, d2 = 0, f2 = 0;
	struct tsr_reader *r;
	struct tsr_writer *o;
	struct frame fr = { 0 };
	int rc;

	if (argc != 3) {
		fprintf(stderr, "usage: %s MODEL LAYER < x.tsr > y.tsr\n",
			prog);
		return 2;
	}
	w.W1 = param(argv[1], argv[2], "W1", &f, &d);
	w.b1 = param(argv[1], argv[2], "b1", &f, &one);
	w.W2 = param(argv[1], argv[2], "W2", &d2, &f2);
	w.b2 = param(argv[1], argv[2], "b2", &d2, &one);
	if (d2 != d || f2 != f)
		die("W1 and W2 disagree in shape");
	r = tsr_reader_fd(0, "<stdin>");
	o = tsr_writer_fd(1, "<stdout>", 0);
	if (!r || !o)
		die(NULL);
	while ((rc = tsr_read_frame(r, &fr)) == 1) {
		struct tensor *x = frame_need(&fr, "x", DT_F32, 2, "the caller");
		struct tensor y;
		float *h;

		if (!x)
			die(NULL);
		if (x->dim[1] != d)
			die("x is not [T, d] with the layer's d");
		h = malloc(sizeof(float) * (x->dim[0] * f + 1));
		if (!h || tensor_init(&y, "y", DT_F32, 2, x->dim) < 0)
			die("out of memory");
		ffn_forward(y.data, h, x->data, &w, (int)x->dim[0], (int)d,
			    (int)f);
		free(h);
		if (!frame_put(&fr, &y) || tsr_write_frame(o, &fr) < 0)
			die(NULL);
	}
	/* the end mark: the next program knows this one finished */
	if (rc < 0 || tsr_writer_finish(o) < 0)
		die(NULL);
	tsr_reader_free(r);
	frame_free(&fr);
	free(w.W1);
	free(w.b1);
	free(w.W2);
	free(w.b2);
	return 0;
}
