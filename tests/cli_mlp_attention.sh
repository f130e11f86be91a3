#!/bin/sh
# examples/mlp-as-attention.sh on a tiny random Transformer (train-step
# --init, d 8, ffn 16) whose FFN biases are made non-zero here (--init
# makes them 0, which would hide a wrong bias term): the model's FFN and
# attend --act relu --no-norm --scale 1 agree to within float rounding on
# every output of a sentence's rows (its units and </s>), in both layers
# asked for; the outputs are not all 0; a layer the model lacks is an
# error naming it.
# (The example with b1 or b2 left out differs by 0.9 and 0.8 here.)
set -u
. "$(dirname "$0")/lib/cli.sh"
errors=0

printf 'ab cd ef\ngh ij\n' >"$T/text"
tokenize -l 270 "$T/text" >"$T/vocab" 2>/dev/null
train-step -i -a transformer -s "$T/vocab" -t "$T/vocab" -S d_model=8 \
	-S heads=2 -S ffn=16 -S enc_layers=1 -S dec_layers=1 \
	-m "$T/init.tsr" || fail "train-step --init: status $?"
# b1 and b2 of every FFN: multiples of 0.1 in [-0.8, 0.8]
tensordump -t "$T/init.tsr" | awk '
	/^record/ { r = $2 }
	r ~ /ffn\.b[12]$/ && !/^record/ {
		for (i = 1; i <= NF; i++)
			$i = ((NR * 7 + i * 13) % 17 - 8) / 10 }
	{ print }' | tensordump -r >"$T/m.tsr"
tensordump -s -n '*.ffn.b1' "$T/m.tsr" | awk 'NR > 1 && $10 == 0 {
	exit 1 }' || fail "the biases are still 0"

for layer in enc.0.ffn dec.0.ffn; do
	LAYER=$layer SENTENCE="ab cd ef gh" \
		sh "$root/examples/mlp-as-attention.sh" "$T/m.tsr" \
		>"$T/out" 2>"$T/err" || fail "$layer: status $?"
	# "enc.0.ffn: 96 outputs, largest |FFN(x)| 2.1, largest difference 0"
	awk -v layer=$layer '
		$1 != layer ":" || $2 % 8 || $2 < 32 {
			print "not rows of 8 outputs"; exit 1 }
		{ big = $6 + 0; diff = $NF + 0
		  if (!(big > 0.1)) { print "outputs all about 0"; exit 1 }
		  # the sums have 9 or 17 terms of size below big: a few
		  # float roundings, 2^-24 each
		  if (!(diff <= 1e-6 * big)) {
			print "largest difference " diff; exit 1 } }
	' "$T/out" >"$T/why" ||
		fail "$layer: $(cat "$T/why"): $(cat "$T/out" "$T/err")"
done

LAYER=enc.7.ffn sh "$root/examples/mlp-as-attention.sh" "$T/m.tsr" \
	>/dev/null 2>"$T/err" && fail "a missing layer: status 0"
grep -q "has no enc.7.ffn.W1" "$T/err" ||
	fail "a missing layer: $(cat "$T/err")"

exit $((errors > 0))
