/*
 * kern_avx2.c: the AVX2+FMA table (kern_impl.h); its kernels live in the
 * *_avx2.c files by family.
 */
#include "kern_impl.h"

const struct kern_ops kern_ops_avx2 = {
	.name = "avx2",
};
