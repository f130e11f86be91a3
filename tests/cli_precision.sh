#!/bin/sh
# decode and beam's lower precisions of a Transformer's decoder, each
# checked alike: --kv f16 (attention's keys and values kept in f16) and
# --matmul bf16 (bf16 products).  With either, each sentence gets the
# output it gets alone whatever its batch (-b 1, 5 and 64 the same bytes),
# greedy and with beams, and beam -k 1 is decode; the scores are not
# f32's (the option does something); f32 is the default of an f32 model.  Refused (exit 1)
# for a recurrent model, naming it; a precision the option does not take
# is a usage error (exit 2).  --matmul bf16 is refused too below the
# AVX-512 kernels and on a CPU without AVX512_BF16 (there, only the
# refusals can be checked).  An int8 export's default is --kv f16.
set -eu
. "$(dirname "$0")/lib/cli.sh"

sentences 5 40 1 5 "s r" "ab cd ef gh ij kl" > pairs.txt
trained m.tsr pairs.txt 10 d_model=32 ffn=64 dec_layers=2 warmup=10
tokenize -m m.tsr src.txt | stages m.tsr > mem.tsr
new_model r.tsr rnnsearch vocab vocab
tokenize -m r.tsr src.txt | stages r.tsr > rmem.tsr

# check OPTION VALUE WRONG: the checks above for --OPTION VALUE, with
# WRONG a precision it refuses
check() {
	exits 2 decode -m m.tsr --$1 $3 < mem.tsr
	err_has $3
	exits 2 beam -m m.tsr --$1= < mem.tsr

	decode -m m.tsr < mem.tsr > f32.default
	decode -m m.tsr --$1 f32 < mem.tsr > f32.opt
	cmp -s f32.default f32.opt || fail "--$1 f32 is not the default"

	for b in 1 5 64; do
		decode -m m.tsr -b $b --$1 $2 < mem.tsr > greedy.$b
		beam -m m.tsr -k 1 -b $b --$1 $2 < mem.tsr > beam1.$b
		beam -m m.tsr -k 3 -b $b --$1 $2 < mem.tsr > beam3.$b
	done
	[ "$(wc -l < greedy.1)" -eq 40 ] ||
		fail "--$1 $2: $(wc -l < greedy.1) lines, not 40"
	for b in 5 64; do
		cmp -s greedy.1 greedy.$b ||
			fail "--$1 $2: decode -b $b differs from -b 1"
		cmp -s beam3.1 beam3.$b ||
			fail "--$1 $2: beam -k 3 -b $b differs from -b 1"
	done
	for b in 1 5 64; do
		cmp -s greedy.1 beam1.$b ||
			fail "--$1 $2: beam -k 1 -b $b is not decode"
	done

	# hyp.score of every frame in f32 and in the other precision
	hyp_scores m.tsr mem.tsr > s.f32
	hyp_scores m.tsr mem.tsr --$1 $2 > s.$2
	[ "$(wc -l < s.$2)" -eq 40 ] || fail "$(wc -l < s.$2) scores, not 40"
	cmp -s s.f32 s.$2 && fail "--$1 $2 gives f32's scores"

	exits 1 decode -m r.tsr --$1 $2 < rmem.tsr
	err_has rnnsearch
	exits 1 beam -m r.tsr --$1 $2 < rmem.tsr
	err_has rnnsearch
}

check kv f16 bf16

# An int8 export keeps f16 keys and values unless --kv says otherwise:
# its default scores are --kv f16's, not --kv f32's (which differ)
train-step -x m8.tsr --dtype int8 -m m.tsr 2>/dev/null
tokenize -m m8.tsr src.txt | stages m8.tsr > mem8.tsr
hyp_scores m8.tsr mem8.tsr > s8.default
hyp_scores m8.tsr mem8.tsr --kv f16 > s8.f16
hyp_scores m8.tsr mem8.tsr --kv f32 > s8.f32
[ "$(wc -l < s8.default)" -eq 40 ] || fail "int8: not 40 scores"
cmp -s s8.default s8.f16 || fail "int8: the default is not --kv f16"
cmp -s s8.default s8.f32 && fail "int8: --kv f32 gives the default's scores"

exits 1 env ATTN_KERNELS=avx2 decode -m m.tsr --matmul bf16 < mem.tsr
err_has AVX512_BF16
if grep -qw avx512_bf16 /proc/cpuinfo && grep -qw avx512f /proc/cpuinfo; then
	check matmul bf16 f16
else
	exits 1 decode -m m.tsr --matmul bf16 < mem.tsr
	err_has AVX512_BF16
	exits 1 beam -m m.tsr --matmul bf16 < mem.tsr
	err_has AVX512_BF16
fi
exit 0
