/*
 * linear.c: the linear map y = x W^T + b and its gradients, and the
 * registry of int8 packs; see layers.h.  The registry is a short list (a
 * model's matrices, a few dozen) under a lock: a lookup per product costs
 * nothing beside the product.
 */
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include "base/errmsg.h"
#include "kernels/gemm_packed.h"
#include "kernels/kernels.h"
#include "layers.h"

struct int8_entry {
	const float *W;
	const struct wpack *p;
};

static struct int8_entry *int8_list;
static _Atomic int int8_n;
static int int8_cap;
static pthread_mutex_t int8_lock = PTHREAD_MUTEX_INITIALIZER;

int linear_int8_add(const float *W, const struct wpack *p)
{
	int rc = 0;

	pthread_mutex_lock(&int8_lock);
	if (int8_n == int8_cap) {
		int cap = int8_cap ? 2 * int8_cap : 64;
		struct int8_entry *l = realloc(int8_list, sizeof *l * cap);
		if (!l) {
			err_set("out of memory for the int8 registry");
			rc = -1;
			goto out;
		}
		int8_list = l;
		int8_cap = cap;
	}
	int8_list[int8_n++] = (struct int8_entry){ W, p };
out:
	pthread_mutex_unlock(&int8_lock);
	return rc;
}

void linear_int8_remove(const float *W)
{
	pthread_mutex_lock(&int8_lock);
	for (int i = 0; i < int8_n; i++)
		if (int8_list[i].W == W) {
			int8_list[i] = int8_list[--int8_n];
			break;
		}
	if (int8_n == 0) {
		free(int8_list);
		int8_list = NULL;
		int8_cap = 0;
	}
	pthread_mutex_unlock(&int8_lock);
}

static const struct wpack *int8_find(const float *W, int in, int out)
{
	const struct wpack *p = NULL;

	pthread_mutex_lock(&int8_lock);
	for (int i = 0; i < int8_n && !p; i++)
		if (int8_list[i].W == W && int8_list[i].p->N == out &&
		    int8_list[i].p->K == in)
			p = int8_list[i].p;
	pthread_mutex_unlock(&int8_lock);
	return p;
}

/* y = x W^T + b (then max(y, 0) if relu) by W's int8 pack: 0, or -1
 * where W has none.  Out of memory for its rows (rare), -1 too: the f32
 * product of the dequantised weights, a result as good, not one of
 * int8's bits. */
static int linear_int8(float *y, const float *x, const float *W,
		       const float *b, int N, int in, int out, int relu)
{
	const struct wpack *p = int8_n ? int8_find(W, in, out) : NULL;

	return p ? linear_packed(y, x, N, p, b, relu) : -1;
}

static void linear_f32(float *y, const float *x, const float *W,
		       const float *b, int N, int in, int out)
{
	/* y [N, out] = x [N, in] . W^T, W stored [out, in] */
	sgemm(0, 1, N, out, in, 1.0f, x, in, W, in, 0.0f, y, out);
	if (b)
		bias_forward(y, b, N, out);
}

void linear_forward(float *y, const float *x, const float *W, const float *b,
		    int N, int in, int out)
{
	if (linear_int8(y, x, W, b, N, in, out, 0) < 0)
		linear_f32(y, x, W, b, N, in, out);
}

void linear_relu_forward(float *y, const float *x, const float *W,
			 const float *b, int N, int in, int out)
{
	if (linear_int8(y, x, W, b, N, in, out, 1) == 0)
		return;
	linear_f32(y, x, W, b, N, in, out);
	relu_forward(y, y, (size_t)N * out);
}

void linear_backward(float *dx, float *dW, float *db, const float *dy,
		     const float *x, const float *W, int N, int in, int out)
{
	if (dx)		/* dx [N, in] += dy [N, out] . W [out, in] */
		sgemm(0, 0, N, in, out, 1.0f, dy, out, W, in, 1.0f, dx, in);
	if (dW)		/* dW [out, in] += dy^T [out, N] . x [N, in] */
		sgemm(1, 0, out, in, N, 1.0f, dy, out, x, in, 1.0f, dW, in);
	if (db)
		bias_backward(db, dy, N, out);
}
