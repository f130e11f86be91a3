#!/bin/sh
# tokenize -v with a SentencePiece model against Debian's spm_encode and
# spm_decode (0.1.97) on the same lines: the first 100000 lines of the
# German side of the ui-en-de training split, with a unigram and a BPE
# model of 8000 pieces that spm_train learns from the next 50000.  The
# outputs must be identical; the times are CPU seconds (user + system),
# the best of 3, printed as ratios spm / attn (above 1: attn is faster).
# Skipped when sentencepiece (spm_train, spm_encode, spm_decode) or the
# corpus is missing: benchmarks are not tests.
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/lib.sh"
corpus=${ATTN_DATA:-/work/shared/data}/ui-en-de/train.de
need "$corpus"
for p in spm_train spm_encode spm_decode; do
	command -v $p >/dev/null ||
		{ echo "bench_spm: no $p (apt-get install sentencepiece); skipped"; exit 0; }
done
in_tmp

head -100000 "$corpus" >text
sed -n '100001,150000p' "$corpus" >train
echo "text: $(wc -l <text) lines, $(wc -c <text) bytes of $corpus"
for type in unigram bpe; do
	spm_train --input=train --model_prefix=$type --model_type=$type \
		--vocab_size=8000 --minloglevel=2 >/dev/null 2>&1 ||
		{ echo "bench_spm: spm_train failed"; exit 1; }
	spm=$(best spm_encode --model=$type.model --output_format=id text)
	cp out spm.ids
	attn=$(best tokenize -v $type.model -f ids text)
	cmp -s out spm.ids ||
		{ echo "bench_spm: $type: ids differ from spm_encode's"; exit 1; }
	sdec=$(best spm_decode --model=$type.model --input_format=id spm.ids)
	cp out spm.txt
	adec=$(best tokenize -d -v $type.model -f ids spm.ids)
	cmp -s out spm.txt ||
		{ echo "bench_spm: $type: text differs from spm_decode's"; exit 1; }
	echo "$type $spm $attn $sdec $adec" | awk '{
		printf "%-7s encode: spm_encode %.3f s, tokenize %.3f s (ratio %.2f); ", $1, $2, $3, $2 / $3
		printf "decode: spm_decode %.3f s, tokenize -d %.3f s (ratio %.2f)\n", $4, $5, $4 / $5 }'
done
