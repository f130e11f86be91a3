#!/bin/sh
# tokenize --links maps word links on the input's own words (runs of
# bytes between spaces, tabs, CRs), each unit by the bytes it stands for,
# not on the units' decoded text: an <unk> (decoded " ⁇ ") does not split
# its word, nor does NFKC or byte fallback move one; spaces in a row, at
# the start, the dummy prefix are no word.  A link past the pair's words
# is refused naming the file and line; a links file with CRLF endings
# reads as with LF, and so does a pair whose target ends with a CR.  The
# expected links are worked out by hand below: pairs (source unit,
# target unit), by target unit; an unlinked target unit to the source's
# </s> (its last unit).
set -eu
. "$(dirname "$0")/lib/cli.sh"
M=$root/tests/fixtures/spm

# links MODEL PAIRS LINKS: align.links's values on one line
links() {
	tokenize -p -v "$1" --links "$3" "$2" |
		tensordump -n align.links --values=all | tail -n 1 |
		tr -s ' ' ' ' | sed 's/^ //'
}
# expect WHAT WANT GOT
expect() {
	[ "$2" = "$3" ] || fail "$1: got '$3', want '$2'"
}

# uni_id_300 lacks "c": units t h e ▁ <unk> a t ▁ s a t </s> (0..11) and
# e l ▁ ga to ▁ s e ▁ s e n to </s> (0..13).  "cat" is source word 1
# (units 4 5 6), "sat" word 2 (8 9 10); "gato" target word 1 (3 4),
# "se" word 2 (6 7).
printf 'the cat sat\tel gato se sento\n' > p
echo '1-1 2-2' > l
tokenize -p -v "$M/uni_id_300.model" -f ids p | cut -f1 |
	grep -qx '290 286 297 2 1 298 290 2 293 298 290' ||
	fail "the source is not t h e ▁ <unk> (id 1) a t ▁ s a t"
want='11 0 11 1 11 2 4 3 5 3 6 3 4 4 5 4 6 4 11 5 8 6 9 6 10 6 8 7 9 7 10 7 11 8 11 9 11 10 11 11 11 12 11 13'
expect "<unk> in a word" "$want" "$(links "$M/uni_id_300.model" p l)"

# CRLF: the links file's, the same; the pair's, a CR unit (13) of no word
printf '1-1 2-2\r\n' > crlf
expect "a CRLF links file" "$want" "$(links "$M/uni_id_300.model" p crlf)"
printf 'the cat sat\tel gato se sento\r\n' > pcr
expect "a CRLF pair" "$want 11 14" "$(links "$M/uni_id_300.model" pcr crlf)"

# NFKC (uni_nfkc_400): "  the  ﬁsh  cat" is ▁ t h e ▁ f i s h ▁ c a t
# </s> (the dummy prefix 0, the runs of spaces 4 and 9 no word; ﬁ is f
# i, 5 6, of word 1), "x y" ▁ x ▁ y </s> (x 1, y 3)
printf '  the  \357\254\201sh  cat\tx y\n' > p2
echo '2-1 1-0' > l2
expect "NFKC" '13 0 5 1 6 1 7 1 8 1 13 2 10 3 11 3 12 3 13 4' \
	"$(links "$M/uni_nfkc_400.model" p2 l2)"
# byte fallback (uni_denorm_400): ▁ t h e ▁ <0xEF> <0xAC> <0x81> s h ▁
# <0x63> a t </s>: ﬁ's three bytes 5 6 7 of word 1
expect "byte fallback" '14 0 5 1 6 1 7 1 8 1 9 1 14 2 11 3 12 3 13 3 14 4' \
	"$(links "$M/uni_denorm_400.model" p2 l2)"
# every space kept (bpe_rules_1000): ▁ ▁ ▁ t h e ▁ ▁ <0x66> i s h ▁ ▁
# <0x63> a t </s>
expect "spaces kept" '17 0 8 1 9 1 10 1 11 1 17 2 14 3 15 3 16 3 17 4' \
	"$(links "$M/bpe_rules_1000.model" p2 l2)"

# attn-bpe: "la  comida" is ▁ l a ▁ ▁com i d a </s> (▁com, of word 1),
# "the food" + CR ▁ <t> <h> e ▁ <f> o o d <0x0D> </s>
echo 'el perro come la comida' > c
tokenize -l 300 c > bv 2>/dev/null
printf 'la  comida\tthe food\r\n' > p3
echo '1-1 0-0' > l3
expect "attn-bpe" '8 0 1 1 2 1 1 2 2 2 1 3 2 3 8 4 4 5 5 5 6 5 7 5 4 6 5 6 6 6 7 6 4 7 5 7 6 7 7 7 4 8 5 8 6 8 7 8 8 9 8 10' \
	"$(links bv p3 l3)"

# past the words: the pair's 3 source words (not 4 units' words), on
# the line that says so
printf 'the cat sat\tel gato se sento\nthe cat sat\tel gato se sento\n' > pp
printf '0-0\n3-0\n' > past
exits 1 tokenize -p -v "$M/uni_id_300.model" --links past pp
err_has "tokenize: past:2: link 3-0: the pair has 3 source and 4 target words"
printf '0-4\n' > past
exits 1 tokenize -p -v "$M/uni_id_300.model" --links past p
err_has "tokenize: past:1: link 0-4: the pair has 3 source and 4 target words"
exit 0
