#!/bin/sh
# tools/names.sh -l and tools/subwords.sh on a text worked out by hand,
# with a vocabulary of characters alone (no merges: a unit a character,
# the space ▁), of version 2 (the dummy prefix) and the same units as
# version 1.
set -u
. "$(dirname "$0")/lib/cli.sh"
errors=0

# Names: capitalised, not first, nor after a word ending in ; (Juan).
printf 'Pablo dijo a Pablo.\nY Pablo vio a Pedro; Juan dijo.\n' >es
printf '1\tPablo\n2\tPablo\n2\tPedro\n' >want
sh "$root/tools/names.sh" -l es >got || fail "names.sh -l failed"
cmp -s got want || fail "names.sh -l: $(cat got)"

# One unit per character: 260 + the distinct characters (the space too).
chars=$(tr -d '\n' <es | fold -w1 | sort -u | wc -l)
tokenize -l $((260 + chars)) es >v2 2>/dev/null || fail "tokenize -l"
grep -q '	merge	' v2 && fail "the vocabulary has merges"
sed '1s/^attn-bpe 2 /attn-bpe 1 /' v2 >v1

# subwords VOCAB LINE FIRST SAME: tools/subwords.sh with VOCAB on es says
# LINE units a line, FIRST units a first word, and SAME of the first words
# cut into the same units as in the middle of a line; names are 6 units
# (▁ and 5 letters) whatever the version.
subwords() {
	sh "$root/tools/subwords.sh" "$1" es >got ||
		fail "subwords.sh $1 failed"
	cat >want <<EOF
es: $2 units a line (2 lines)
names: 3, 6.00 units a name, 0.0% in one unit
distinct names: 2, 6.00 units a name, 0.0% in one unit
first words: 2, $3 units at the start of a line
first words cut as in the middle: 100.0%, the same units: $4
EOF
	cmp -s got want || fail "subwords.sh $1: $(cat got)"
}

# Version 2: lines of 19 and 31 characters and the ▁ of the prefix are
# 20 and 32 units; a name is ▁ and 5 letters, 6 units ("a Pablo" is 8,
# "a" 2); the first words "Pablo" and "Y" are 6 and 2 units, as in the
# middle of a line.
subwords v2 26.00 4.00 100.0%

# Version 1: 19 and 31 units; names still 6 ("a Pablo" 7, "a" 1); first
# words 5 and 1 units, cut as in the middle ("P a b l o" and
# "▁ P a b l o" with its marker aside) but never the same units.
subwords v1 25.00 3.00 0.0%

# A text without a name (nor lines): counts of 0, not a division by zero.
printf 'hola y adios\n' >plain
sh "$root/tools/subwords.sh" v2 plain >got || fail "subwords.sh: no names"
grep -qx 'names: 0, 0.00 units a name, 0.0% in one unit' got ||
	fail "subwords.sh, no names: $(cat got)"
: >nothing
sh "$root/tools/subwords.sh" v2 nothing >got || fail "subwords.sh: no lines"
grep -qx 'nothing: 0.00 units a line (0 lines)' got ||
	fail "subwords.sh, no lines: $(cat got)"

exit $((errors > 0))
