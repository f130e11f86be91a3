#!/bin/sh
# mlp-as-attention.sh: a feed-forward layer of a trained Transformer is
# attention over a memory that does not depend on the input, with relu
# weights, no normalisation and scale 1.  Takes the layer LAYER of MODEL
# (W1 [f, d], b1, W2 [d, f], b2), runs it on the embedded units of
# SENTENCE once as the model's FFN (build/examples/ffn: ffn_forward, the
# function encode calls) and once as
#   attend --act relu --no-norm --scale 1
# with the inputs as queries, a 1 appended to each; W1's rows as keys,
# b1[j] appended to key j (so that its score is W1[j] x + b1[j]); W2's
# columns as values (a 0 appended: attend's values are as wide as its
# keys); and one key more, zeros and a 1, whose score is 1 for every
# input and whose value is b2.  Prints the largest difference between
# the two outputs.  attend(1), THE MLP AS ATTENTION, says why this
# reading of the analogy.
#
#   sh examples/mlp-as-attention.sh [MODEL]
#
# Settings (environment): LAYER (enc.0.ffn; dec.L.ffn and enc.L.ffn are
# the others: doc/MODELS.md), SENTENCE (a Spanish verse), BUILD (the
# build directory, build).  MODEL defaults to models/bible-es-en.tsr.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
case ${BUILD:=build} in /*) ;; *) BUILD=$top/$BUILD ;; esac
command -v attend >/dev/null || PATH=$BUILD/bin:$PATH
M=${1:-$top/models/bible-es-en.tsr}
LAYER=${LAYER:-enc.0.ffn}
SENTENCE=${SENTENCE:-En el principio creó Dios los cielos y la tierra.}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

echo "$SENTENCE" | tokenize -m "$M" | embed -m "$M" |
	tensordump -t -n src.emb > "$T/emb.txt"
tensordump -t -n "$LAYER.*" "$M" > "$T/ffn.txt"
[ -s "$T/ffn.txt" ] && grep -q "^record $LAYER.W1 " "$T/ffn.txt" || {
	echo "mlp-as-attention.sh: $M has no $LAYER.W1" >&2
	exit 1
}

# From the text forms: x [T, d] (mode x), or q [1, T, d+1], k and v
# [1, f+1, d+1] (mode qkv).  The values of f16 records are rounded to
# f16 again (their text is the shortest that reads back as f16, not as
# f32) and printed with 9 digits, which read back as the same f32.
cat > "$T/build.awk" <<'END'
function f16(x,   a, e, q) {
	a = x < 0 ? -x : x
	if (a == 0)
		return x
	for (e = 0; 2 ^ e > a; e--)
		;
	for (; 2 ^ (e + 1) <= a; e++)
		;
	if (e < -14)
		e = -14
	q = 2 ^ (e - 10)
	a = int(a / q + 0.5) * q
	return x < 0 ? -a : a
}
$1 == "record" {
	name = $2; half = $3 == "f16"; n[name] = 0
	shape[name] = $4
	next
}
$1 != "tsr-text" {
	for (i = 1; i <= NF; i++)
		val[name, n[name]++] = half ? f16($i) : $i
}
function row(s) { printf "%s\n", s }
END {
	split(substr(shape["src.emb"], 2), sz, /[],]/)
	T = sz[1]; d = sz[2]
	split(substr(shape[layer ".W1"], 2), sz, /[],]/)
	f = sz[1]
	if (mode == "x") {
		print "tsr-text 1"
		print "record x f32 [" T "," d "] end"
		for (t = 0; t < T; t++) {
			s = ""
			for (c = 0; c < d; c++)
				s = s sprintf("%.9g ", val["src.emb", t * d + c])
			row(s)
		}
		exit
	}
	print "tsr-text 1"
	print "record q f32 [1," T "," d + 1 "]"
	for (t = 0; t < T; t++) {
		s = ""
		for (c = 0; c < d; c++)
			s = s sprintf("%.9g ", val["src.emb", t * d + c])
		row(s "1")
	}
	print "record k f32 [1," f + 1 "," d + 1 "]"
	for (j = 0; j < f; j++) {
		s = ""
		for (c = 0; c < d; c++)
			s = s sprintf("%.9g ", val[layer ".W1", j * d + c])
		row(s sprintf("%.9g", val[layer ".b1", j]))
	}
	s = ""
	for (c = 0; c < d; c++)
		s = s "0 "
	row(s "1")
	print "record v f32 [1," f + 1 "," d + 1 "] end"
	for (j = 0; j < f; j++) {
		s = ""
		for (c = 0; c < d; c++)
			s = s sprintf("%.9g ", val[layer ".W2", c * f + j])
		row(s "0")
	}
	s = ""
	for (c = 0; c < d; c++)
		s = s sprintf("%.9g ", val[layer ".b2", c])
	row(s "0")
}
END
for mode in x qkv; do
	cat "$T/emb.txt" "$T/ffn.txt" |
		awk -v mode=$mode -v layer="$LAYER" -f "$T/build.awk" |
		tensordump -r > "$T/$mode.tsr"
done

# The values of record $1, one a line.
values() {
	tensordump -H -n "$1" -vall | sed -n '2,$p' | tr ' ' '\n' | grep .
}
"$BUILD/examples/ffn" "$M" "$LAYER" < "$T/x.tsr" | values y > "$T/ffn.out"
# attend's rows without their last column (the 0 appended to the values)
d=$(awk 'NR == 2 { print $4 }' "$T/emb.txt" | tr -d '[]' | cut -d, -f2)
attend --act relu --no-norm --scale 1 < "$T/qkv.tsr" | values out |
	awk -v w=$((d + 1)) 'NR % w != 0' > "$T/att.out"
[ "$(wc -l < "$T/ffn.out")" -eq "$(wc -l < "$T/att.out")" ] || {
	echo "mlp-as-attention.sh: the outputs differ in size" >&2
	exit 1
}
paste "$T/ffn.out" "$T/att.out" | awk -v layer="$LAYER" '
	{ e = $1 - $2; e = e < 0 ? -e : e; if (e > max) max = e
	  a = $1 < 0 ? -$1 : $1; if (a > big) big = a }
	END { printf "%s: %d outputs, largest |FFN(x)| %.4g, " \
		     "largest difference %.3g\n", layer, NR, big, max }'
