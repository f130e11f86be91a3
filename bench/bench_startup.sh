#!/bin/sh
# Start-up: how long the programs take to load a model of tens of MB, per
# run, against the same runs with a tiny model (the cost of starting the
# processes): the ratio, and the milliseconds the model's size adds.  For
# scale, reading the file (cat) and checking every record of it
# (tensordump -c), against tokenize | embed on the tiny model.  This is the price of each block when parallel(1)
# cuts a file into blocks, and of each sentence typed at an interactive
# pipeline.  Models are untrained (train-step -i); the page cache is warm.
set -u
N=${N:-10}
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/lib.sh"
in_tmp

awk 'BEGIN { srand(1)
	for (i = 0; i < 3000; i++) {
		s = ""; n = 5 + int(rand() * 10)
		for (j = 0; j < n; j++) {
			w = ""; l = 2 + int(rand() * 7)
			for (k = 0; k < l; k++) w = w sprintf("%c", 97 + int(rand() * 26))
			s = s (j ? " " : "") w
		}
		print s
	}
}' >words
tokenize -l 2000 words >vocab 2>/dev/null || exit 1
init() {
	f=$1 a=$2
	shift 2
	train-step -i -m "$f" -a "$a" -s vocab -t vocab "$@" || exit 1
}
init tiny.tsr rnnsearch -S emb=8 -S hidden=8 -S att=8 -S maxout=4
init rnn.tsr rnnsearch -S emb=256 -S hidden=500 -S att=500 -S maxout=250
init tf.tsr transformer -S d_model=512 -S heads=8 -S ffn=2048 \
    -S enc_layers=3 -S dec_layers=3
mb() { echo $(($(wc -c <"$1") / 1000000)); }

# ms CMD: mean wall-clock milliseconds of N runs of CMD (sh -c), to 0.1 ms.
ms() {
	s=$(date +%s%N)
	i=0
	while [ $i -lt "$N" ]; do
		sh -c "$1" || exit 1
		i=$((i + 1))
	done
	e=$(date +%s%N)
	echo $(((e - s) / N / 100000)) | sed 's/.$/.&/; s/^\./0./'
}
# row NAME CMD BASE: one line: the mean time of CMD, its ratio to BASE
# (the same command on the tiny model) and how much longer it takes.
row() {
	t=$(ms "$2")
	echo "$t $3" | awk -v name="$1" '{ printf "%-44s %8s ms %6.1fx %+7.1f ms\n",
	    name, $1, $1 / $2, $1 - $2 }'
}
base() {
	printf '%-44s %8s ms %6s  (baseline)\n' "$1" "$2" 1.0x
}

one='tokenize -m M </dev/null'
two='echo hola | tokenize -m M | embed -m M >/dev/null'
five='echo hola | tokenize -m M | embed -m M | encode -m M | attend -m M | decode -m M >/dev/null'
echo "start-up, mean of $N runs, ATTN_THREADS=${ATTN_THREADS:-all}; tiny model $(wc -c <tiny.tsr) bytes"
base1=$(ms "$(echo "$one" | sed s/M/tiny.tsr/g)")
base2=$(ms "$(echo "$two" | sed s/M/tiny.tsr/g)")
base5=$(ms "$(echo "$five" | sed s/M/tiny.tsr/g)")
base "tokenize -m, tiny model" "$base1"
for m in rnn.tsr tf.tsr; do
	row "tokenize -m, $(mb $m) MB" "$(echo "$one" | sed s/M/$m/g)" "$base1"
done
base "tokenize | embed, tiny model" "$base2"
for m in rnn.tsr tf.tsr; do
	row "tokenize | embed, $(mb $m) MB" "$(echo "$two" | sed s/M/$m/g)" "$base2"
done
for m in rnn.tsr tf.tsr; do
	row "cat, $(mb $m) MB" "cat $m >/dev/null" "$base2"
	row "tensordump -c (every checksum), $(mb $m) MB" \
	    "tensordump -c $m >/dev/null" "$base2"
done
base "five-stage pipeline, tiny model" "$base5"
row "five-stage pipeline, $(mb rnn.tsr) MB rnnsearch" \
    "$(echo "$five" | sed s/M/rnn.tsr/g)" "$base5"
