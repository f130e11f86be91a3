#!/bin/sh
# Streams know their model: tokenize records the vocabularies' hash in
# model.id, the first stage with parameters adds theirs, and every later
# stage (and tokenize -d) refuses frames made with another model or
# vocabulary, naming both files, writing nothing.
set -u
. "$(dirname "$0")/lib/cli.sh"
errors=0
nothing_out() { [ -s out ] && fail "$1 wrote output"; }

perro_corpus > corpus
tokenize -l 300 corpus > v1 2>/dev/null
echo "otra cosa" >> corpus
tokenize -l 320 corpus > v2 2>/dev/null
cmp -s v1 v2 && { fail "the vocabularies are the same"; exit 1; }
mk() {	# mk MODEL VOCAB HIDDEN
	new_model $1 rnnsearch $2 $2 hidden=$3 || exit 1
}
mk A.tsr v1 8
mk B.tsr v1 6		# A's vocabulary, other parameters
mk C.tsr v2 8		# another vocabulary
printf 'el perro\nel gato come\n' > in.txt
tokenize -m A.tsr in.txt > a.ids || exit 1
tokenize -v v1 in.txt > v.ids || exit 1
embed -m A.tsr < a.ids > a.emb && encode -m A.tsr < a.emb > a.enc &&
	attend -m A.tsr < a.enc > a.mem || fail "A's own pipeline failed"
decode -m A.tsr -c 3 < a.mem > a.txt || fail "decode -m A failed"
[ "$(wc -l < a.txt)" -eq 2 ] || fail "decode -m A: $(cat a.txt)"

# what the records say
tensordump -t -n model.id a.ids | sed -n 3p > id1
grep -qE '^"vocab=[0-9a-f]{16} model=A\.tsr"$' id1 ||
	fail "tokenize: $(cat id1)"
tensordump -t -n model.id a.emb | sed -n 3p > id2
grep -qE '^"vocab=[0-9a-f]{16} params=[0-9a-f]{16} model=A\.tsr"$' id2 ||
	fail "embed: $(cat id2)"
vA=$(grep -o 'vocab=[0-9a-f]*' id1)
[ "$(grep -o 'vocab=[0-9a-f]*' id2)" = "$vA" ] || fail "embed changed vocab="
# tokenize -v with the vocabulary file the model was made from: the same
[ "$(tensordump -t -n model.id v.ids | sed -n 3p | grep -o 'vocab=[0-9a-f]*')" \
	= "$vA" ] || fail "tokenize -v v1 and -m A differ"
embed -m A.tsr < v.ids > /dev/null || fail "embed -m A refused tokenize -v v1"

# another model's parameters: refused by every stage after the first
pA=$(grep -o 'params=[0-9a-f]*' id2)
for st in "encode -m B.tsr < a.emb" "attend -m B.tsr < a.enc" \
	  "decode -m B.tsr < a.mem" "beam -m B.tsr < a.mem" \
	  "score -m B.tsr < a.mem"; do
	exits 1 sh -c "$st"
	err_has "frame 0: made with the model A.tsr ($pA), not B.tsr (params="
	nothing_out "$st"
	[ "$(wc -l < err)" -eq 1 ] || fail "$st: $(cat err)"
done
# another vocabulary: refused from the first stage on, and by tokenize -d
for st in "embed -m C.tsr < a.ids" "encode -m C.tsr < a.emb" \
	  "tokenize -d -m C.tsr < a.ids"; do
	exits 1 sh -c "$st"
	err_has "frame 0: made with the vocabulary of A.tsr ($vA), not that"
	err_has " of C.tsr (vocab="
	nothing_out "$st"
done
# training pairs made with another vocabulary: refused by train-step
# (training, --dev and --init's pairs), naming the pairs file and both
# vocabularies, the model left as it was
printf 'el perro\tel perro\nel gato\tel gato\n' > p.txt
tokenize -p -m A.tsr p.txt > pA.tsr || fail "tokenize -p -m A"
tokenize -p -m C.tsr p.txt > pC.tsr || fail "tokenize -p -m C"
vC=$(tensordump -t -n model.id pC.tsr | sed -n 3p | grep -o 'vocab=[0-9a-f]*')
cp A.tsr A0.tsr
other="train-step: pC.tsr: frame 0: made with the vocabulary of C.tsr ($vC),"
exits 1 train-step -q -m A.tsr -n 1 pC.tsr
err_has "$other not that of A.tsr ($vA)"
cmp -s A.tsr A0.tsr || fail "train-step changed A.tsr"
exits 1 train-step -q -m A.tsr -n 1 --dev pC.tsr pA.tsr
err_has "$other not that of A.tsr ($vA)"
cmp -s A.tsr A0.tsr || fail "train-step --dev changed A.tsr"
exits 1 train-step -i -m N.tsr -a rnnsearch -s v1 -t v1 -S emb=8 \
	-S hidden=8 -S att=8 -S maxout=4 pC.tsr
err_has "$other not that of N.tsr ($vA)"
[ -e N.tsr ] && fail "train-step --init made N.tsr from pC.tsr"
train-step -q -m A.tsr -n 1 pA.tsr 2>err || fail "A's own pairs: $(cat err)"
train-step -q -m A.tsr -n 1 < pA.tsr 2>err || fail "pairs on stdin: $(cat err)"
# --limit: the pairs' records above it are refused
exits 1 train-step -q -m A.tsr -n 1 --limit 8 pA.tsr
err_has "train-step: pA.tsr: byte "
err_has "exceeds the limit of 8 bytes"

# a stream with no model.id (made by hand, or by an older toolkit) is taken
tensordump -t a.ids |
	awk '/^record model.id/ { skip = 2 } skip-- > 0 { next } 1' |
	tensordump -r > bare.ids
tensordump -n model.id bare.ids | grep -q model.id &&
	fail "model.id not dropped"
embed -m B.tsr < bare.ids > b.emb || fail "embed -m B refused a bare stream"
tensordump -t -n model.id b.emb | grep -q 'model=B.tsr' ||
	fail "embed did not add model.id to a bare stream"
[ $errors -eq 0 ]
