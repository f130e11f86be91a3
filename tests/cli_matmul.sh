#!/bin/sh
# decode and beam --matmul bf16: a Transformer's decoder with bf16
# products gives each sentence the output it gets alone whatever its batch
# (-b 1, 5 and 64 the same bytes), beam -k 1 is decode, and the scores are
# not f32's (the option does something); --matmul f32 is the default.
# Refused (exit 1) for a recurrent model, below the AVX-512 kernels, and
# on a CPU without AVX512_BF16 (there, only the refusals can be checked);
# a precision other than f32 and bf16 is a usage error (exit 2).
set -eu
. "$(dirname "$0")/lib/cli.sh"

sentences 5 40 1 5 "s r" "ab cd ef gh ij kl" > pairs.txt
trained m.tsr pairs.txt 10 d_model=32 ffn=64 dec_layers=2 warmup=10
tokenize -m m.tsr src.txt | stages m.tsr > mem.tsr

exits 2 decode -m m.tsr --matmul f16 < mem.tsr
err_has f16
exits 2 beam -m m.tsr --matmul= < mem.tsr
exits 1 env ATTN_KERNELS=avx2 decode -m m.tsr --matmul bf16 < mem.tsr
err_has AVX512_BF16

decode -m m.tsr < mem.tsr > f32.default
decode -m m.tsr --matmul f32 < mem.tsr > f32.opt
cmp -s f32.default f32.opt || fail "--matmul f32 is not the default"

if ! grep -qw avx512_bf16 /proc/cpuinfo ||
   ! grep -qw avx512f /proc/cpuinfo; then
	exits 1 decode -m m.tsr --matmul bf16 < mem.tsr
	err_has AVX512_BF16
	exits 1 beam -m m.tsr --matmul bf16 < mem.tsr
	err_has AVX512_BF16
	exit 0
fi

for b in 1 5 64; do
	decode -m m.tsr -b $b --matmul bf16 < mem.tsr > greedy.$b
	beam -m m.tsr -k 1 -b $b --matmul bf16 < mem.tsr > beam1.$b
	beam -m m.tsr -k 3 -b $b --matmul bf16 < mem.tsr > beam3.$b
done
[ "$(wc -l < greedy.1)" -eq 40 ] || fail "$(wc -l < greedy.1) lines, not 40"
for b in 5 64; do
	cmp -s greedy.1 greedy.$b || fail "decode -b $b differs from -b 1"
	cmp -s beam3.1 beam3.$b || fail "beam -k 3 -b $b differs from -b 1"
done
for b in 1 5 64; do
	cmp -s greedy.1 beam1.$b || fail "beam -k 1 -b $b is not decode"
done

# hyp.score of every frame in f32 and in bf16: some differ
hyp_scores m.tsr mem.tsr > s.f32
hyp_scores m.tsr mem.tsr --matmul bf16 > s.bf16
[ "$(wc -l < s.bf16)" -eq 40 ] || fail "$(wc -l < s.bf16) scores, not 40"
cmp -s s.f32 s.bf16 && fail "bf16 scores are f32's"

# a recurrent model: refused, naming its architecture
new_model r.tsr rnnsearch vocab vocab
tokenize -m r.tsr src.txt | stages r.tsr > mem.tsr
exits 1 beam -m r.tsr --matmul bf16 < mem.tsr
err_has rnnsearch
exit 0
