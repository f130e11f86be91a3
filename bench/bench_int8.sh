#!/bin/sh
# int8 translation against f16 (read as f32) in the same run: the shipped
# Transformer (models/bible-es-en.tsr) and its int8 export (train-step
# --dtype int8), greedy decode and beam -k 4 of the first 500 Spanish
# dev verses of the Bible corpus (skipped when it is not there), one
# thread, CPU time (user + system, so that a shared machine's other work
# is not counted), target tokens a second of the decoding stage, and the
# time of encode + attend (int8 too), and their ratios; the kernels in
# force and the CPU named first.  BENCH_LINES changes the 500.
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/lib.sh"
model=$root/models/bible-es-en.tsr
lines=${BENCH_LINES:-500}
need "$data/dev.es" "$model"
in_tmp
export ATTN_THREADS=1
vnni=no
grep -qw avx512_vnni /proc/cpuinfo && vnni=AVX512_VNNI
echo "$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //');" \
	"ATTN_KERNELS=${ATTN_KERNELS:-(highest)}, VNNI: $vnni;" \
	"1 thread; $lines sentences"
train-step -x m8.tsr --dtype int8 -m "$model" || exit 1
# cpu IN OUT CMD...: runs CMD < IN > OUT, prints its user + system seconds
# (called within $(...): times counts the subshell's children, CMD alone)
cpu() {
	i=$1 o=$2
	shift 2
	times > c0
	"$@" < "$i" > "$o" || exit 1
	times > c1
	cputime c0 c1 | awk '{ printf "%.2f", $1 }'
}
toks() {
	tensordump -n hyp.ids "$1" | awk 'NR > 1 { gsub(/[][]/, "", $4);
		s += $4 } END { print s }'
}
for m in f16:$model int8:m8.tsr; do
	n=${m%%:*} f=${m#*:}
	head -"$lines" "$data/dev.es" | tokenize -m "$f" |
		embed -m "$f" > emb.$n.tsr || exit 1
	e=$(cpu emb.$n.tsr enc.$n.tsr encode -m "$f")
	a=$(cpu enc.$n.tsr mem.$n.tsr attend -m "$f")
	g=$(cpu mem.$n.tsr g.$n.tsr decode -m "$f" -t)
	b=$(cpu mem.$n.tsr b.$n.tsr beam -m "$f" -k 4 -t)
	echo "$n $g $(toks g.$n.tsr) $b $(toks b.$n.tsr) $e $a"
done | awk '{ gr[$1] = $3 / $2; br[$1] = $5 / $4; ea[$1] = $6 + $7
	printf "%-4s greedy %6.0f target tokens/s (%s s)  beam 4 %6.0f " \
	       "tokens/s (%s s)  encode + attend %.2f s\n", $1, gr[$1], $2,
	       br[$1], $4, ea[$1] }
	END { printf "int8 / f16: greedy %.2f x, beam 4 %.2f x, encode + " \
	      "attend %.2f x\n", gr["int8"] / gr["f16"], br["int8"] / br["f16"],
	      ea["f16"] / ea["int8"] }'
