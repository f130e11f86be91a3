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

exit $((errors > 0))
