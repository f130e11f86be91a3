#!/bin/sh
# tokenize: learning about 8000 merges and applying them, on the Spanish
# side of the Bible corpus when it is there (skipped when not).  Times are
# CPU seconds (user + system, so that other work on the machine does not
# count), the best of 3, next to a baseline from the same run: counting the
# pieces alone (--learn 260: no merges) for learning, wc -w for applying.
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/lib.sh"
data=$data/train.es
need "$data"
in_tmp

bytes=$(wc -c <"$data")
words=$(wc -w <"$data")
echo "corpus: $data, $bytes bytes, $words words"

count=$(best tokenize -l 260 "$data")
learn=$(best tokenize -l 8400 "$data")
cp "$tmp/out" "$tmp/vocab"
summary=$(sed 's/^tokenize: //; s/ in [0-9.]* s$//' "$tmp/err")
echo "learn:  $summary"
echo "$learn $count" | awk '{ printf "learn:  %.2f s; counting the pieces alone %.2f s (ratio %.1f)\n", $1, $2, $1 / $2 }'

wc=$(best wc -w "$data")
apply=$(best tokenize -v "$tmp/vocab" "$data")
ids=$(best tokenize -v "$tmp/vocab" -f ids "$data")
detok=$(best sh -c "tokenize -v '$tmp/vocab' '$data' | tokenize -d -v '$tmp/vocab'")
cmp -s "$tmp/out" "$data" || { echo "bench_tokenize: round trip differs"; exit 1; }
echo "$bytes $apply $ids $detok $wc" | awk '{
	printf "apply:  %.1f MB/s to a stream (%.3f s), %.1f MB/s to ids text; wc -w %.1f MB/s (ratio %.2f)\n",
		$1 / $2 / 1e6, $2, $1 / $3 / 1e6, $1 / $5 / 1e6, $2 / $5
	printf "round trip (tokenize | tokenize -d): %.1f MB/s\n", $1 / $4 / 1e6 }'
