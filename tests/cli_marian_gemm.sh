#!/bin/sh
# A configuration's gemm-precision (decoder.yml or Bergamot's config, or
# one of its aliases, int8shiftAll: true and the like) chooses Marian's
# int8 arithmetic for an imported intgemm8 model, as marian-decoder reads
# it: the model is marked with it (config marian_int8); with int8 and
# float32 (Marian's default when the configuration names none) the
# intgemm8 matrices' products are neither shifted nor with alphas, and
# the tied output layer's is int8 with the first, float with the second.
# attn then translates as Marian does (fixtures/marian/int8/signed.*
# and float32.*, tools/marian-ref/int8_modes.sh; multipliers per call:
# -b 1): the words of at least 98 of 100 greedy lines, and 90
# log-probabilities within 1e-3 (measured: 100 and 98, 100 and 100).
# Refused, one line naming the file, its line and the value, exit 1, no
# model: a name Marian does not have, int16, alphas the model lacks, int8
# for a float model, a list.  Without a configuration, an int8 model
# keeps Firefox's setting (int8shiftAlphaAll with alphas).
set -eu
. "$(dirname "$0")/lib/cli.sh"
F=$root/tests/fixtures/marian/int8
A=$F/student.intgemm8.alphas.bin
n=$(wc -l < "$F/input.txt")

# import CONFIG-TEXT FILE [VOCAB]: m.tsr from FILE with that
# configuration
import() {
	printf '%s\n' "$1" > config.yml
	rm -f m.tsr
	train-step --import marian -m m.tsr --decoder-config config.yml "$2" \
		"${3:-$F/vocab.spm}"
}
marked() {
	tensordump -t -n model.config m.tsr | grep -qF "\"marian_int8=$1\\n\"" ||
		fail "$2: not marked marian_int8=$1"
}

import 'beam-size: 1' "$A" || fail "no gemm-precision: import"
marked float32 "no gemm-precision"
for c in 'gemm-precision: int8' 'int8: true'; do
	import "$c" "$A" || fail "$c: import"
	marked int8 "$c"
done
import 'gemm-precision: int8shiftAll' "$A" || fail "int8shiftAll: import"
marked int8shiftAll "gemm-precision: int8shiftAll"
# an alias set true wins over gemm-precision; one set false is no choice
import "$(printf 'gemm-precision: int8\nint8shiftAlphaAll: true\nint8shift: false')" \
	"$A" || fail "alias: import"
marked int8shiftAlphaAll "the alias int8shiftAlphaAll"
rm -f m.tsr
train-step --import marian -m m.tsr "$A" "$F/vocab.spm" || fail "no config"
marked int8shiftAlphaAll "without a configuration"

# as Marian's --gemm-precision int8 (signed.*) and float32 (float32.*:
# the tied output layer's product float)
for g in int8 float32; do
	import "gemm-precision: $g" "$A" || fail "$g: import"
	tokenize -m m.tsr "$F/input.txt" | embed -m m.tsr -b 1 |
		encode -m m.tsr -b 1 | attend -m m.tsr -b 1 > mem
	decode -m m.tsr --min-len 0 -b 1 < mem > got
	decode -m m.tsr --min-len 0 -b 1 -t < mem |
		tensordump -H -n hyp.score --values=all |
		awk 'NR % 2 == 0 { print $1 }' > scores.$g
	k=$g
	[ $g = int8 ] && k=signed
	words=$(paste -d '\t' got "$F/$k.greedy" | awk -F '\t' '$1 == $2' |
		wc -l)
	close=$(paste got "$F/$k.greedy" scores.$g "$F/$k.scores" |
		awk -F '\t' '{ d = $3 - $4; if (d < 0) d = -d }
			$1 == $2 && d <= 1e-3 { k++ } END { print k + 0 }')
	echo "$name: $g: $words of $n lines as Marian's, $close scores" \
	     "within 1e-3" >&2
	[ "$words" -ge $((n * 98 / 100)) ] && [ "$close" -ge 90 ] ||
		fail "$g: $words lines, $close scores"
done
# (the two modes' scores differ: the test tells them apart)
far=$(paste "$F/signed.scores" "$F/float32.scores" | awk '{ d = $1 - $2
	if (d < 0) d = -d } d > 1e-3 { k++ } END { print k + 0 }')
[ "$far" -ge 50 ] || fail "Marian's int8 and float32 scores alike ($far)"

# refusals
refused() {	# refused WHAT WANT CONFIG-TEXT FILE [VOCAB]
	if import "$3" "$4" ${5:+"$5"} 2> err; then
		fail "$1: imported"
	fi
	[ "$(wc -l < err)" -eq 1 ] || fail "$1: $(cat err)"
	grep -q "$2" err || fail "$1: $(cat err)"
	[ ! -e m.tsr ] || fail "$1: a model was written"
}
refused bogus 'config.yml:2: gemm-precision int4: not one of' \
	"$(printf 'beam-size: 1\ngemm-precision: int4')" "$A"
refused int16 'config.yml:1: gemm-precision int16: attn has no 16-bit' \
	'gemm-precision: int16' "$A"
refused alphas 'config.yml:1: gemm-precision int8shiftAlphaAll takes' \
	'gemm-precision: int8shiftAlphaAll' "$F/student.intgemm8.bin"
refused alias 'config.yml:1: gemm-precision int8Alpha takes' \
	'int8Alpha: true' "$F/student.intgemm8.bin"
refused float 'config.yml:1: gemm-precision int8shiftAll: the model is float' \
	'gemm-precision: int8shiftAll' "$root/tests/fixtures/marian/post.npz" \
	"$root/tests/fixtures/marian/vocab.spm"
import 'gemm-precision: float32' "$root/tests/fixtures/marian/post.npz" \
	"$root/tests/fixtures/marian/vocab.spm" || fail "float32, float: import"
refused list 'config.yml:1: gemm-precision is a list' \
	'gemm-precision: [int8, int8shift]' "$A"
refused notbool 'int8shift (line 1) is not true or false' \
	'int8shift: maybe' "$A"
exit 0
