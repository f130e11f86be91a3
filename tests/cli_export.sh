#!/bin/sh
# train-step --export: a trained model written for translation only holds
# its config, vocabularies and f16 (or bf16) parameters and nothing of the
# optimiser; every program of the pipeline reads it; it translates exactly
# as the f32 model of the same (rounded) weights does, and that model
# exports to the same file byte for byte; training refuses it, and trains
# that f32 copy (a fine-tune of an export).
set -eu
. "$(dirname "$0")/lib/cli.sh"

sentences 3 200 1 4 "s r" "ab cd ef gh ij kl" > pairs.txt
trained m.tsr pairs.txt 30

train-step -x e.tsr -m m.tsr
train-step --export b.tsr --dtype bf16 -m m.tsr

# what the files hold
kinds() { tensordump -H "$1" | awk '{ print $2, $3 }' | sort; }
kinds m.tsr | grep -q '^optim\.m\.' || fail "the trained model has no optim.m.*"
kinds e.tsr | grep '^optim\.' && fail "the export holds optimiser state"
kinds e.tsr | awk '$1 !~ /^(model\.config|vocab\.)/ && $2 != "f16"' |
	grep . && fail "the export holds parameters that are not f16"
kinds b.tsr | awk '$1 !~ /^(model\.config|vocab\.)/ && $2 != "bf16"' |
	grep . && fail "the bf16 export holds other parameters"
kinds m.tsr | awk '$2 == "f32" && $1 !~ /^optim\./ { print $1 }' > want
kinds e.tsr | awk '$2 == "f16" { print $1 }' > got
cmp -s want got || fail "the export's parameters are not the model's"
for r in model.config vocab.src vocab.tgt; do
	tensordump -n "$r" -t m.tsr > a
	tensordump -n "$r" -t e.tsr > b
	cmp -s a b || fail "$r differs in the export"
done
[ "$(wc -c < e.tsr)" -lt "$(wc -c < m.tsr)" ] || fail "the export is not smaller"

# the f32 model of the rounded weights (an average of one model is that
# model, saved as f32) translates as the export and exports to it again
train-step -A 1 -o r.tsr e.tsr
train-step -x e2.tsr -m r.tsr
cmp e.tsr e2.tsr || fail "f16 -> f32 -> f16 is not the same file"
translate() {
	cut -f1 pairs.txt | tokenize -m "$1" | stages "$1" > mem.tsr
	decode -m "$1" < mem.tsr
	beam -m "$1" -k 3 < mem.tsr
}
translate e.tsr > out.e
translate r.tsr > out.r
[ "$(wc -l < out.e)" -eq 400 ] || fail "$(wc -l < out.e) lines, not 400"
cmp -s out.e out.r || fail "the export translates otherwise than its f32 model"
translate b.tsr > out.b
[ "$(wc -l < out.b)" -eq 400 ] || fail "bf16: $(wc -l < out.b) lines"
tokenize -p -m e.tsr pairs.txt | stages e.tsr | score -m e.tsr > scores
[ "$(wc -l < scores)" -eq 200 ] || fail "score: $(wc -l < scores) lines"

# training refuses the export; bad options are usage errors
if train-step -q -m e.tsr -n 1 pairs.tsr 2> err; then
	fail "trained an exported model"
fi
grep -q "exported model" err || fail "no reason given: $(cat err)"
cmp -s e.tsr e2.tsr || fail "the refused training changed the export"
grep -q "average of it alone" err || fail "no way out given: $(cat err)"

# its f32 copy (the average of it alone) holds no optimiser state and
# trains on from the export's step
kinds r.tsr | grep '^optim\.[mv]\.' && fail "the f32 copy holds Adam's moments"
step() { tensordump -n model.config -t "$1" | sed -n 's/^"step=\([0-9]*\).*/\1/p'; }
[ "$(step r.tsr)" -eq 30 ] || fail "the f32 copy is at step $(step r.tsr)"
train-step -q -m r.tsr -n 2 pairs.tsr || fail "the f32 copy does not train"
[ "$(step r.tsr)" -eq 32 ] || fail "after 2 updates: step $(step r.tsr)"
kinds r.tsr | grep -q '^optim\.m\.' || fail "the trained copy has no optim.m.*"
rc=0
train-step -x x.tsr --dtype f8 -m m.tsr 2> err || rc=$?
[ "$rc" -eq 2 ] || fail "--dtype f8 exited $rc"
rc=0
train-step --dtype f16 -m m.tsr 2> err || rc=$?
[ "$rc" -eq 2 ] || fail "--dtype without --export exited $rc"
rc=0
train-step -x x.tsr -m missing.tsr 2> err || rc=$?
[ "$rc" -eq 1 ] || fail "a missing model exited $rc"
[ ! -e x.tsr ] || fail "a failed export left x.tsr"
exit 0
