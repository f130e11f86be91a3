/*
 * kern_avx2.c: the AVX2+FMA table (kern_impl.h); its kernels live in the
 * *_avx2.c files by family.
 */
#include "kern_impl.h"

const struct kern_ops kern_ops_avx2 = {
	.name = "avx2",
	.gemm = &gemm_ukr_avx2,
	.gemm_small_nt = gemm_small_nt_avx2,
	.gemm_small_nn = gemm_small_nn_avx2,
};
