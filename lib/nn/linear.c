/* linear.c: the linear map y = x W^T + b and its gradients; see layers.h. */
#include <stddef.h>
#include "kernels/kernels.h"
#include "layers.h"

void linear_forward(float *y, const float *x, const float *W, const float *b,
		    int N, int in, int out)
{
	/* y [N, out] = x [N, in] . W^T, W stored [out, in] */
	sgemm(0, 1, N, out, in, 1.0f, x, in, W, in, 0.0f, y, out);
	if (b)
		bias_forward(y, b, N, out);
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
