/*
 * vmath_avx2.c: vexp, vtanh and vsigmoid over arrays (vmath_avx2.h has the
 * functions of 8 floats); tails through masked loads and stores.
 */
#include "kernels/kern_impl.h"
#include "vmath_avx2.h"

#define ARRAY_FN(name, f)						\
void name(float *y, const float *x, size_t n)				\
{									\
	size_t i = 0;							\
	for (; i + 8 <= n; i += 8)					\
		_mm256_storeu_ps(y + i, f(_mm256_loadu_ps(x + i)));	\
	if (i < n)							\
		str(y + i, (long)(n - i), f(ldr(x + i, (long)(n - i))));	\
}

ARRAY_FN(vexp_avx2, exp256)
ARRAY_FN(vtanh_avx2, tanh256)
ARRAY_FN(vsigmoid_avx2, sigmoid256)
