#!/bin/sh
# Programs that stop early free what they hold: a reader that goes away
# (decode -t | head -c 50) and an error in the middle of the work
# (tensordump -g with no such --layer) end with their usual status and
# message, and in the sanitizer build with no leak report.
set -u
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cd "$T"
errors=0
fail() {
	echo "cli_error_exits: $*" >&2
	errors=$((errors + 1))
}
# no_leak WHAT: stderr (in err) holds no sanitizer report
no_leak() {
	if grep -q 'Sanitizer' err; then
		fail "$1: a sanitizer report:"
		cat err >&2
	fi
}

awk 'BEGIN { for (i = 0; i < 200; i++) print "ab cd ef gh ij kl" }' > src.txt
tokenize -l 270 src.txt > vocab 2>/dev/null
train-step -i -m tf.tsr -a transformer -s vocab -t vocab -S d_model=8 \
	-S heads=2 -S ffn=8 -S enc_layers=1 -S dec_layers=1 || fail "init"
tokenize -m tf.tsr src.txt | embed -m tf.tsr | encode -m tf.tsr |
	attend -m tf.tsr > att.tsr || fail "the pipeline"

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
