#!/bin/sh
# Programs that stop early free what they hold: a reader that goes away
# (decode -t | head -c 50) and an error in the middle of the work
# (tensordump -g with no such --layer) end with their usual status and
# message, and in the sanitizer build with no leak report.
set -u
. "$(dirname "$0")/lib/cli.sh"
errors=0
# no_leak WHAT: stderr (in err) holds no sanitizer report
no_leak() {
	if grep -q 'Sanitizer' err; then
		fail "$1: a sanitizer report:"
		cat err >&2
	fi
}

awk 'BEGIN { for (i = 0; i < 200; i++) print "ab cd ef gh ij kl" }' > src.txt
tokenize -l 270 src.txt > vocab 2>/dev/null
new_model tf.tsr transformer vocab vocab d_model=8 ffn=8 || fail "init"
tokenize -m tf.tsr src.txt | stages tf.tsr > att.tsr || fail "the pipeline"

# the reader of decode's output takes 50 bytes and goes away
decode -m tf.tsr -t -b 4 < att.tsr 2>err | head -c 50 > head.out
[ "$(wc -c < head.out)" -eq 50 ] || fail "decode -t | head -c 50: no 50 bytes"
no_leak "decode -t | head -c 50"

# a picture of a layer the model does not have
decode -m tf.tsr -t < att.tsr > dec.tsr || fail "decode -t"
tensordump -g - --layer=99 dec.tsr > /dev/null 2>err
st=$?
[ $st -eq 1 ] || fail "tensordump --layer=99: exit $st, not 1"
grep -q "no layer 99" err || { fail "tensordump --layer=99:"; cat err >&2; }
no_leak "tensordump -g - --layer=99"

# every frame lacks what a stage needs: the error names the first frame
# of the input (batches go by length; before, decode named frame 2 and
# score a later one), and the stage writes nothing
awk 'BEGIN { for (i = 1; i <= 40; i++) { s = "ab"
	for (j = 0; j < i % 9; j++) s = s " cd"; print s } }' > var.txt
tokenize -m tf.tsr var.txt | embed -m tf.tsr > emb.tsr
decode -m tf.tsr < emb.tsr > out.txt 2>err
grep -q 'decode: frame 0 has no record "att.0.k" (written by attend), nor has any of the 40 frames read$' err ||
	{ fail "decode without attend:"; cat err >&2; }
[ -s out.txt ] && fail "decode wrote lines it could not translate"
tokenize -m tf.tsr var.txt | stages tf.tsr > mem.tsr
score -m tf.tsr < mem.tsr > out.txt 2>err
grep -q 'score: frame 0 has no record "tgt.ids"' err ||
	{ fail "score without pairs:"; cat err >&2; }
no_leak "score without pairs"
# one frame without it among others that have it: that frame is named
{ head -3 var.txt | tokenize -m tf.tsr | stages tf.tsr
  printf 'ab\n' | tokenize -m tf.tsr | embed -m tf.tsr; } > mix.tsr
decode -m tf.tsr < mix.tsr > out.txt 2>err
grep -q "has no record \"att.0.k\"" err && ! grep -q "nor has any" err ||
	{ fail "decode, one frame without: $(cat err)"; }

exit $((errors > 0))
