/*
 * kern_avx512.c: the AVX-512 table (kern_impl.h); its kernels live in the
 * *_avx512.c files by family.  What it lacks comes from the AVX2 table.
 */
#include "kernels/gemm_packed.h"
#include "kernels/kern_impl.h"

const struct kern_ops kern_ops_avx512 = {
	.name = "avx512",
	.gemm = &gemm_ukr_avx512,
	.wpack_panel = wpack_panel_avx512,
	.wpack_rmax = WPACK_RMAX_AVX512,
	.attn_head_forward = attn_head_forward_avx512,
	.attn_head_backward = attn_head_backward_avx512,
};
