#!/bin/sh
# decode and beam --kv f16: a Transformer's decoder keeping its attention's
# keys and values in f16 gives each sentence the output it gets alone
# whatever its batch (-b 1, 5 and 64 the same bytes), greedy and with
# beams; its scores are not f32's (the option does something); --kv f32
# is the default.  Refused (exit 1) for a recurrent model; a precision
# other than f32 and f16 is a usage error (exit 2).
set -eu
. "$(dirname "$0")/lib/cli.sh"

sentences 5 40 1 5 "s r" "ab cd ef gh ij kl" > pairs.txt
trained m.tsr pairs.txt 10 d_model=32 ffn=64 dec_layers=2 warmup=10
tokenize -m m.tsr src.txt | stages m.tsr > mem.tsr

exits 2 decode -m m.tsr --kv bf16 < mem.tsr
err_has bf16
exits 2 beam -m m.tsr --kv= < mem.tsr

decode -m m.tsr < mem.tsr > f32.default
decode -m m.tsr --kv f32 < mem.tsr > f32.opt
cmp -s f32.default f32.opt || fail "--kv f32 is not the default"

for b in 1 5 64; do
	decode -m m.tsr -b $b --kv f16 < mem.tsr > greedy.$b
	beam -m m.tsr -k 3 -b $b --kv f16 < mem.tsr > beam3.$b
done
[ "$(wc -l < greedy.1)" -eq 40 ] || fail "$(wc -l < greedy.1) lines, not 40"
for b in 5 64; do
	cmp -s greedy.1 greedy.$b || fail "decode -b $b differs from -b 1"
	cmp -s beam3.1 beam3.$b || fail "beam -k 3 -b $b differs from -b 1"
done

# hyp.score of every frame with f32 and f16 keys and values: some differ
hyp_scores m.tsr mem.tsr > s.f32
hyp_scores m.tsr mem.tsr --kv f16 > s.f16
[ "$(wc -l < s.f16)" -eq 40 ] || fail "$(wc -l < s.f16) scores, not 40"
cmp -s s.f32 s.f16 && fail "f16 keys and values give f32's scores"

# a recurrent model: refused, naming its architecture
new_model r.tsr rnnsearch vocab vocab
tokenize -m r.tsr src.txt | stages r.tsr > mem.tsr
exits 1 decode -m r.tsr --kv f16 < mem.tsr
err_has rnnsearch
exit 0
