/*
 * attend: with a model, the pipeline's stage that turns enc.out into the
 * decoder's memory (att.keys and att.init for rnnsearch, att.ctx and
 * att.init for rnnencdec, att.{l}.k and att.{l}.v for the Transformer).
 * Without one, scaled dot-product attention of the records q [H, T, d],
 * k and v [H, S, d] and an optional additive mask [T, S]: out [H, T, d]
 * (and weights [H, T, S] with --weights), by the library's kernel; with
 * --act, --no-norm and --scale, the other weights the kernel has (an MLP
 * is attention with relu, no normalisation and scale 1: attend(1)).
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/errmsg.h"
#include "common/filter.h"
#include "kernels/kernels.h"
#include "common/opt.h"
#include "common/prog.h"

/* The general mode's weights: kernels.h's act and no_norm, and the scale
 * (NAN: 1 / sqrt(d)). */
struct weighting {
	int act, no_norm;
	float scale;
};

enum { OPT_ACT = 0x4200, OPT_NO_NORM };

static void usage(void)
{
	printf("usage: %s -m MODEL [-b N]\n"
	       "       " FILTER_USAGE " < enc.tsr > memory.tsr\n"
	       "       %s [-w] [--act F] [--no-norm] [--scale X] < qkv.tsr > out.tsr\n"
	       "With a model, adds the decoder's memory (att.*) to every "
	       "frame, from enc.out.\n"
	       "Without, attention of q [H,T,d] over k, v [H,S,d] with an "
	       "optional additive\nmask [T,S]: out [H,T,d] (weights F(q k^T scale + mask), "
	       "normalised).\n\n"
	       "  -m, --model=FILE   the model file\n"
	       "  -b, --batch=N      sentences per batch (default 64; results "
	       "do not depend on it)\n"
	       "  -w, --weights      also write the attention weights [H,T,S]\n"
	       "      --act=F        the weights' function: softmax (the "
	       "default), relu, gelu\n"
	       "      --no-norm      the weights not divided by their sum\n"
	       "  -s, --scale=X      the scores' factor (default 1/sqrt(d))\n"
	       FILTER_HELP
	       "  -h, --help         this help\n"
	       "  -V, --version      the version\n", progname, progname);
	prog_help_exit();
}

/*
 * The attention of one frame by the library's kernel (kernels.h), the
 * heads as its batch: out [H, T, d] = act(q k^T scale + mask) v, the
 * weights act(...) normalised over the keys unless wt->no_norm, and the
 * weights [H, T, S] when wanted.
 */
static int general_frame(struct frame *f, const struct weighting *wt,
			 int want_weights)
{
	struct tensor *q = frame_need(f, "q", DT_F32, 3, "the caller");
	struct tensor *k = q ? frame_need(f, "k", DT_F32, 3, "the caller") :
			   NULL;
	struct tensor *v = k ? frame_need(f, "v", DT_F32, 3, "the caller") :
			   NULL;
	struct tensor *mask = frame_head(f, "mask"), out, wts;
	int H, T, S, d;
	uint64_t od[3], wd[3];

	if (!v || (mask && tsr_inflate(mask) < 0))
		return -1;
	H = q->dim[0], T = q->dim[1], d = q->dim[2], S = k->dim[1];
	if (k->dim[0] != (uint64_t)H || k->dim[2] != (uint64_t)d ||
	    memcmp(k->dim, v->dim, sizeof k->dim[0] * 3) != 0) {
		err_set("frame %llu: q [H, T, d], k and v [H, S, d] disagree",
			(unsigned long long)f->number);
		return -1;
	}
	if (mask && (mask->dtype != DT_F32 || mask->rank != 2 ||
		     mask->dim[0] != (uint64_t)T ||
		     mask->dim[1] != (uint64_t)S)) {
		err_set("frame %llu: mask is not f32 [T, S] = [%d, %d]",
			(unsigned long long)f->number, T, S);
		return -1;
	}
	od[0] = H, od[1] = T, od[2] = d;
	wd[0] = H, wd[1] = T, wd[2] = S;
	if (tensor_init(&out, "out", DT_F32, 3, od) < 0 ||
	    (want_weights && tensor_init(&wts, "weights", DT_F32, 3, wd) < 0))
		return -1;
	if (H && T && S && d) {
		struct attn_args a = {
			.B = H, .H = 1, .T = T, .S = S, .dk = d,
			.scale = isnan(wt->scale) ? 1.0f / sqrtf(d) : wt->scale,
			.q = q->data, .q_bs = (long)T * d, .q_rs = d,
			.k = k->data, .v = v->data,
			.kv_bs = (long)S * d, .kv_rs = d,
			.out = out.data, .o_bs = (long)T * d, .o_rs = d,
			.mask = mask ? mask->data : NULL,
			.weights = want_weights ? wts.data : NULL,
			.act = wt->act, .no_norm = wt->no_norm,
		};

		attention_forward(&a);
	}
	if (!frame_put(f, &out))
		return -1;
	return !want_weights || frame_put(f, &wts) ? 0 : -1;
}

static void general(const struct weighting *wt, int want_weights)
{
	struct tsr_reader *r = filter_reader("-");
	struct tsr_writer *w = r ? filter_writer() : NULL;
	struct frame f = { 0 };
	int rc;

	if (!r || !w)
		die_err();
	while ((rc = tsr_read_frame(r, &f)) == 1) {
		if (general_frame(&f, wt, want_weights) < 0)
			die_err();
		check_write(tsr_write_frame(w, &f));
	}
	if (rc < 0)
		die_err();
	check_write(tsr_writer_finish(w));
	tsr_reader_free(r);
	frame_free(&f);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "model", required_argument, NULL, 'm' },
		{ "batch", required_argument, NULL, 'b' },
		{ "weights", no_argument, NULL, 'w' },
		{ "act", required_argument, NULL, OPT_ACT },
		{ "no-norm", no_argument, NULL, OPT_NO_NORM },
		{ "scale", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		FILTER_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	const char *model = NULL;
	static const char *const acts[] = { "softmax", "relu", "gelu" };
	struct weighting wt = { ATTN_SOFTMAX, 0, NAN };
	int batch = 64, weights = 0, general_opt = 0, c;

	prog_init(argc, argv);
	while ((c = filter_getopt(argc, argv, "m:b:ws:hV", longopts, usage,
				  &model, &batch, 0)) != -1) {
		general_opt = 1;
		if (c == 'w') {
			weights = 1;
		} else if (c == OPT_NO_NORM) {
			wt.no_norm = 1;
		} else if (c == 's') {
			wt.scale = (float)opt_number(optarg, "--scale");
		} else if (c == OPT_ACT) {
			for (wt.act = 0; wt.act < 3; wt.act++)
				if (strcmp(optarg, acts[wt.act]) == 0)
					break;
			if (wt.act == 3)
				usage_error("option --act: '%s' is not softmax, "
					    "relu or gelu", optarg);
		}
	}
	if (model && general_opt)
		usage_error("--weights, --act, --no-norm and --scale are for "
			    "the general mode, without -m");
	if (!model)
		general(&wt, weights);
	else
		check_write(filter_stage(model, STAGE_ATTEND, batch));
	return 0;
}
