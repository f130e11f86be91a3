#!/bin/sh
# Sentences of one to three words translate with the shipped model
# (models/bible-es-en.tsr), greedy and beam: exact lines, none empty but
# the empty source's.  The model, trained on Bible verses, puts </s> first
# for "Hola." (more than any word; "Ok." for the first model of guided
# alignment, doc/alignment.md): the contract's search
# (--min-len 0) gives it an empty line, the default (--min-len 1) a
# translation, the model's best after </s> (doc/decoding.md).
set -u
. "$(dirname "$0")/lib/cli.sh"
errors=0
m=$root/models/bible-es-en.tsr

printf 'Hola.\nDios.\nJesús lloró.\nEn el principio.\n\n' >src
tokenize -m "$m" src | embed -m "$m" | encode -m "$m" | attend -m "$m" \
	>mem.tsr || fail "the memory of src"

# run WANT PROG ARGS...: PROG -m MODEL ARGS < mem.tsr prints WANT
run() {
	want=$1
	shift
	"$@" -m "$m" <mem.tsr >got || fail "$*: exit $?"
	printf "$want" >want
	cmp -s got want || fail "$*: $(tr '\n' '|' <got), not" \
		"$(tr '\n' '|' <want)"
}

run 'I have burnt.\nGod.\nJesus wept.\nIn the beginning.\n\n' decode
run 'I have burnt.\nGod.\nJesus wept.\nIn the beginning.\n\n' beam
# --min-len 1 is the default; 0 is the contract's search, and its empty
# line for "Hola."
run 'I have burnt.\nGod.\nJesus wept.\nIn the beginning.\n\n' \
	decode --min-len 1
run '\nGod.\nJesus wept.\nIn the beginning.\n\n' decode --min-len 0
run '\nGod.\nJesus wept.\nIn the beginning.\n\n' beam --min-len=0
# at least 3 units before </s>: "God." is "▁God ." and goes on
decode -m "$m" --min-len 3 <mem.tsr >got || fail "--min-len 3: exit $?"
[ "$(sed -n 2p got)" != God. ] && [ -n "$(sed -n 2p got)" ] &&
	[ -z "$(sed -n 5p got)" ] || fail "--min-len 3: $(tr '\n' '|' <got)"

for bad in -1 1001 x; do
	rc=0
	decode -m "$m" --min-len=$bad <mem.tsr >/dev/null 2>err || rc=$?
	[ $rc = 2 ] || fail "--min-len=$bad: exit $rc, not 2"
	grep -q -- '--min-len' err || fail "--min-len=$bad: $(cat err)"
done

exit $((errors > 0))
