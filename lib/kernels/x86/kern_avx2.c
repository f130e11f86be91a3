/*
 * kern_avx2.c: the AVX2+FMA table (kern_impl.h); its kernels live in the
 * *_avx2.c files by family.
 */
#include "kernels/attn_step.h"
#include "kernels/gemm_packed.h"
#include "kernels/kern_impl.h"

const struct kern_ops kern_ops_avx2 = {
	.name = "avx2",
	.gemm = &gemm_ukr_avx2,
	.wpack_panel = wpack_panel_avx2,
	.wpack_rmax = WPACK_RMAX_AVX2,
	.vexp = vexp_avx2,
	.vtanh = vtanh_avx2,
	.vsigmoid = vsigmoid_avx2,
	.bias_forward = bias_forward_avx2,
	.relu_forward = relu_forward_avx2,
	.relu_backward = relu_backward_avx2,
	.softmax_rows = softmax_rows_avx2,
	.log_softmax_rows = log_softmax_rows_avx2,
	.softmax_backward = softmax_backward_avx2,
	.softmax_xent_row = softmax_xent_row_avx2,
	.layernorm_forward = layernorm_forward_avx2,
	.layernorm_marian = layernorm_marian_avx2,
	.attn_marian_row = attn_marian_row_avx2,
	.attn_marian_head = attn_marian_head_avx2,
	.layernorm_backward_dx = layernorm_backward_dx_avx2,
	.adam_update = adam_update_avx2,
	.gru_gates_forward = gru_gates_forward_avx2,
	.gru_state_forward = gru_state_forward_avx2,
	.gru_state_backward = gru_state_backward_avx2,
	.gru_gates_backward = gru_gates_backward_avx2,
	.lstm_cell_forward = lstm_cell_forward_avx2,
	.lstm_cell_backward = lstm_cell_backward_avx2,
	.additive_forward = additive_forward_avx2,
	.additive_backward = additive_backward_avx2,
	.attn_step_row = attn_step_row_avx2,
	.kv_to_f16 = kv_to_f16_avx2,
	.attn_head_forward = attn_head_forward_avx2,
	.attn_head_backward = attn_head_backward_avx2,
};
