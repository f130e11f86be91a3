#!/bin/sh
# The trained model in the repository (models/bible-es-en.tsr, exported by
# examples/bible-transformer.sh) loads and translates examples/sample.es,
# as `make demo` does: one line per input line, none empty, greedy and
# beam; its parameters are f16, without optimiser state.
set -eu
. "$(dirname "$0")/lib/cli.sh"
m=$root/models/bible-es-en.tsr
text=$root/examples/sample.es

tensordump -c "$m" > /dev/null || fail "$m is damaged"
tensordump -H "$m" | awk '$2 ~ /^optim\./ ||
	($2 !~ /^(model\.config|vocab\.)/ && $3 != "f16")' > bad
[ ! -s bad ] || fail "not an f16 export: $(head -3 bad)"
tokenize -m "$m" "$text" | embed -m "$m" | encode -m "$m" |
	attend -m "$m" > mem.tsr
decode -m "$m" < mem.tsr > greedy.en
beam -m "$m" < mem.tsr > beam.en
n=$(wc -l < "$text")
[ "$n" -ge 3 ] || fail "$text has $n lines"
for f in greedy.en beam.en; do
	[ "$(wc -l < $f)" -eq "$n" ] || fail "$f: $(wc -l < $f) lines, not $n"
	! grep -n '^$' $f || fail "$f: an empty translation"
done
# a trained model's output is English: it has a few of the commonest words
grep -qiw -e the -e and -e of beam.en || fail "no English: $(head -2 beam.en)"
