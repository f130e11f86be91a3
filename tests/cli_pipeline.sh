#!/bin/sh
# The translation pipeline tokenize | embed | encode | attend | decode on a
# small rnnsearch model trained here: the same output through one pipe or
# through files and for any batch size; decode's choice scored by score;
# beam -k 1 as decode; line N for input line N (an empty one too); and the
# refusals: a stream that lacks a stage's record, ids outside the
# vocabulary, a model whose parameters disagree with its config.
set -eu
. "$(dirname "$0")/lib/cli.sh"

# a copying task over eight two-letter words
sentences 3 400 1 5 "s s" > pairs.txt
cut -f1 pairs.txt > src.txt
tokenize -l 300 src.txt > vocab 2>/dev/null
new_model m.tsr rnnsearch vocab vocab emb=16 hidden=16 att=16 maxout=8 \
	optim=adam lr=0.01 batch_tokens=200
tokenize -p -m m.tsr pairs.txt > pairs.tsr
train-step -q -m m.tsr -n 1500 pairs.tsr

# input: 60 lines and an empty one in the middle
{ head -30 src.txt; echo; sed -n 31,60p src.txt; } > in.txt
pipe() {
	tokenize -m m.tsr in.txt | embed -m m.tsr "$@" | encode -m m.tsr "$@" |
		attend -m m.tsr "$@"
}
pipe > mem.tsr
decode -m m.tsr < mem.tsr > out.txt
[ "$(wc -l < out.txt)" -eq 61 ] || fail "61 lines in, $(wc -l < out.txt) out"
# the model has learned to copy: most lines come back
same=$(paste in.txt out.txt | awk -F'\t' '$1 == $2' | wc -l)
[ "$same" -ge 40 ] || fail "only $same of 61 lines copied"

# through files, stage by stage
tokenize -m m.tsr in.txt > a.tsr
embed -m m.tsr < a.tsr > b.tsr
encode -m m.tsr < b.tsr > c.tsr
attend -m m.tsr < c.tsr > d.tsr
cmp d.tsr mem.tsr || fail "files and a pipe differ"

# batch sizes: the same text, and the same bytes at every stage
for b in 1 5 64; do
	pipe -b "$b" > mem$b.tsr
	cmp mem$b.tsr mem.tsr || fail "attend -b $b differs"
	decode -m m.tsr -b "$b" < mem$b.tsr > out$b.txt
	cmp out$b.txt out.txt || fail "decode -b $b differs"
done
decode -m m.tsr -t -b 1 < mem1.tsr > r1.tsr
decode -m m.tsr -t -b 64 < mem64.tsr > r64.tsr
cmp r1.tsr r64.tsr || fail "the frames of batch 1 and 64 differ"

# beam -k 1 is decode; a wider beam finds a score at least as good
beam -m m.tsr -k 1 < mem.tsr > beam1.txt
cmp beam1.txt out.txt || fail "beam -k 1 differs from decode"
beam -m m.tsr -k 4 -n 2 < mem.tsr > nbest.txt
[ "$(wc -l < nbest.txt)" -eq 122 ] || fail "beam -n 2: $(wc -l < nbest.txt) lines"
grep -q '^60 ||| ' nbest.txt || fail "beam -n: no sentence 60"

# decode's choice, scored by score: the sum of log-probs decode chose
decode -m m.tsr -t < mem.tsr > dec.tsr
tensordump -t dec.tsr | sed -e 's/^record hyp\.ids /record tgt.ids /' \
	-e '/^record hyp\.score/,/^record/{/^record hyp\.score/d;/^record/!d;}' |
	tensordump -r > forced.tsr
tensordump -t dec.tsr | awk '/^record hyp\.score/ { getline; print }' > s1
score -m m.tsr < forced.tsr > s2
paste s1 s2 | awk '{ d = $1 - $2; if (d < 0) d = -d;
	if (d > 1e-4 * (1 - $2)) { print "line " NR ": " $0; bad = 1 } }
	END { exit bad }' || fail "score disagrees with decode"
[ "$(wc -l < s2)" -eq 61 ] || fail "score: $(wc -l < s2) lines"
score -m m.tsr -A < forced.tsr | sed -n 1p | grep -Eq '^([0-9]+-[0-9]+ ?)+$' ||
	fail "score -A: not Pharaoh"

# refusals
if tokenize -m m.tsr in.txt | encode -m m.tsr > /dev/null 2> err; then
	fail "encode without src.emb succeeded"
fi
grep -q 'src.emb' err && grep -q 'embed' err || fail "encode: $(cat err)"
printf 'tsr-text 1\nrecord src.ids i32 [2] frame 0 end\n5000 2\n' |
	tensordump -r > big.tsr.ids
if embed -m m.tsr < big.tsr.ids > /dev/null 2> err; then
	fail "ids outside the vocabulary accepted"
fi
grep -q 'id 5000' err || fail "embed: $(cat err)"
tensordump -t m.tsr | sed 's/^"hidden=16\\n"$/"hidden=17\\n"/' | tensordump -r > bad.tsr
if decode -m bad.tsr < mem.tsr > /dev/null 2> err; then
	fail "a model that disagrees with its config accepted"
fi
grep -q 'disagrees with the config' err || fail "decode: $(cat err)"
exit 0
