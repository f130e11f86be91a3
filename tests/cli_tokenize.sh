#!/bin/sh
# tokenize: learning, text to frames and back byte for byte, --pairs,
# --target, the text formats, vocabularies from a model file, bad input.
set -u
. "$(dirname "$0")/lib/cli.sh"
errors=0

# ---- a corpus, and the text of the round trip ----------------------------
i=0
while [ $i -lt 20 ]; do
	printf 'el perro come la comida del perro, y el gato come.\n'
	printf 'the dog eats the food of the dog, and the cat eats.\n'
	i=$((i + 1))
done >corpus
printf 'Привет мир\n日本語のテキスト\n' >>corpus

# Several scripts, emoji, combining marks, control characters, invalid
# bytes, the marker itself, spaces, CRLF, NUL, empty lines, and a last line
# with no newline.
{
	printf 'el perro come, y el gato.\n'
	printf '\302\277Qu\303\251 tal? \302\241S\303\255!  two  spaces \n'
	printf 'Привет, мир! 日本語のテキスト。 مرحبا بالعالم שלום\n'
	printf 'emoji \360\237\221\215\360\237\217\275 \360\237\221\250\342\200\215\360\237\221\251 flag \360\237\207\252\360\237\207\270\n'
	printf 'combining e\314\201 a\314\210\314\243 \340\244\250\340\244\256\340\244\270\340\245\215\340\244\244\340\245\207\n'
	printf 'controls \001\002\033[0m\177 tab\there\n'
	printf 'invalid \377\376 \300\200 \355\240\200 cut \342\226\n'
	printf 'the marker \342\226\201 itself \342\226\201\342\226\201x\n'
	printf '\n'
	printf '   \n'
	printf 'crlf line\r\n'
	printf 'nul\000in\000line\n'
	printf '\t\n'
	printf 'no final newline'
} >text
printf 'no final newline\n' >last
{ head -n 13 text; cat last; } >text.want       # what comes back
nlines=14

# ---- help, version, usage ------------------------------------------------
exits 0 tokenize --help
grep -q '^usage: tokenize' out || fail "--help: no usage on stdout"
exits 0 tokenize --version
grep -q '^tokenize (attn) ' out || fail "--version: $(cat out)"
exits 2 tokenize --bogus
exits 2 tokenize corpus
err_has "give a vocabulary"
exits 2 tokenize -l 100 corpus
err_has "--learn"
exits 2 tokenize -l 1000 -v x corpus
exits 2 tokenize -v x -p -d
exits 2 tokenize -v x -f words
exits 2 tokenize -l 1000 -c 1.5 corpus

# ---- learning ----------------------------------------------------------
exits 0 tokenize -l 400 corpus
mv out vocab
head -n 1 vocab | grep -qx 'attn-bpe 2 [0-9]*' ||
	fail "vocab header: $(head -n 1 vocab)"
[ "$(sed -n 2p vocab)" = "$(printf '0\t<pad>\tspecial')" ] || fail "vocab id 0"
[ "$(sed -n 262p vocab)" = "$(printf '260\t\342\226\201\tchar')" ] ||
	fail "the space is the most frequent character: $(sed -n 262p vocab)"
grep -q "$(printf '\tmerge\t\342\226\201 perro$')" vocab ||
	grep -q "$(printf '\t\342\226\201perro\tmerge')" vocab ||
	fail "no unit for ' perro'"
err_has "units"
exits 0 tokenize --learn=400 - <corpus
cmp -s out vocab || fail "learning twice (stdin) gave another vocabulary"
# A joint vocabulary from two files is the vocabulary of both together.
head -n 20 corpus >part1
tail -n +21 corpus >part2
exits 0 tokenize -l 400 part1 part2
cmp -s out vocab || fail "a joint vocabulary of two files differs"

# ---- round trip ----------------------------------------------------------
# (lines split into sentences, the default, come back too: cli_split;
# and the spans kept as written: --no-keep below for the records)
tokenize -v vocab text | tokenize -d -v vocab | cmp -s - text.want ||
	fail "stream round trip of split lines, spans kept, differs"
exits 0 tokenize -v vocab --no-split --no-keep text
mv out text.tsr
exits 0 tokenize -d -v vocab text.tsr
cmp -s out text.want || fail "stream round trip differs"
[ "$(wc -l <out)" -eq $nlines ] || fail "$(wc -l <out) lines back, not $nlines"
# with --no-split, frames 0..13, each model.id, src.ids, then src.text
# with the end flag
tensordump -H -n model.id text.tsr | awk '$1 == NR - 1' >list
[ "$(wc -l <list)" -eq $nlines ] || fail "model.id records: $(cat list)"
tensordump -H text.tsr | grep -v '^#' |
	awk 'NR % 3 == 1 && $2 != "model.id"' >list
[ -s list ] && fail "model.id not first: $(cat list)"
tensordump -H -n 'src.*' text.tsr >list
[ "$(wc -l <list)" -eq $((2 * nlines)) ] || fail "records: $(cat list)"
awk 'NR % 2 == 1 && ($1 != (NR - 1) / 2 || $2 != "src.ids" || $3 != "i32") ||
     NR % 2 == 0 && ($1 != NR / 2 - 1 || $2 != "src.text" || $NF != "end") {
	bad = 1 } END { exit bad }' list || fail "frames: $(cat list)"
# src.text is the line as read, CR included, newline not
tensordump -t -n src.text -f 10 text.tsr | tail -n +2 | tr -s ' \n' '  ' >crlf
[ "$(cat crlf)" = 'record src.text u8 [10] frame 10 end 99 114 108 102 32 108 105 110 101 13 ' ] ||
	fail "CRLF text: $(cat crlf)"
# the text formats go back too
exits 0 tokenize -v vocab -f units text
mv out text.units
exits 0 tokenize -d -v vocab -f units text.units
cmp -s out text.want || fail "units round trip differs"
exits 0 tokenize -v vocab -f ids text
mv out text.ids
exits 0 tokenize -d -v vocab -f ids text.ids
cmp -s out text.want || fail "ids round trip differs"
[ "$(wc -l <text.ids)" -eq $nlines ] || fail "ids: not one line per line"

# ---- bad input, line by line ---------------------------------------------
# an empty line: a frame with </s> alone, and an empty line back
printf '\n' | tokenize -v vocab -f ids >out
[ "$(cat out)" = 2 ] || fail "empty line: '$(cat out)'"
printf '\n\n' | tokenize -v vocab | tokenize -d -v vocab >out
[ "$(od -An -c out | tr -d ' ')" = '\n\n' ] || fail "empty lines back"
# invalid UTF-8 and NUL: byte units, never <unk> (after the ▁ of the
# dummy prefix)
printf '\377\000a\n' | tokenize -v vocab -f units >out
[ "$(cat out)" = "$(printf '\342\226\201 <0xFF> <0x00> a </s>')" ] ||
	fail "bytes: $(cat out)"
# a line of a megabyte, no spaces and with them
head -c 1048576 /dev/zero | tr '\0' a >big
printf '\n' >>big
head -c 524288 /dev/zero | tr '\0' ' ' >>big
printf 'x\n' >>big
exits 0 tokenize -v vocab big
tokenize -d -v vocab out >back
cmp -s back big || fail "megabyte lines differ"
# no final newline: the last line is still a frame
printf 'a\nb' | tokenize -v vocab | tokenize -d -v vocab >out
[ "$(cat out)" = "$(printf 'a\nb')" ] && [ "$(wc -l <out)" -eq 2 ] ||
	fail "no final newline: $(cat out)"
# no input: no frames, and the end mark that says so
exits 0 tokenize -v vocab /dev/null
tensordump -c <out >list || fail "empty input: $(cat list)"
[ "$(cat list)" = "<stdin>: 0 records in 0 frames, ok, 1 end mark" ] ||
	fail "empty input made $(cat list)"

# ---- the dummy prefix ------------------------------------------------------
# A line's first word has the units it has in the middle of a line.
echo 'perro come el perro' | tokenize -v vocab -f units >out
set -- $(cat out)
[ "$1" = "$4" ] && [ "$1" = "$(printf '\342\226\201perro')" ] ||
	fail "first word: $(cat out)"
# A vocabulary of version 1 (made before the prefix) has none: with the
# same units, the first word is spelt without the space, and the text
# still comes back byte for byte.
sed '1s/^attn-bpe 2 /attn-bpe 1 /' vocab >vocab1
echo 'perro come el perro' | tokenize -v vocab1 -f units >out
m=$(printf '\342\226\201')
[ "$(cat out)" = "p e r r o ${m}come ${m}el ${m}perro </s>" ] ||
	fail "version 1: $(cat out)"
exits 0 tokenize -v vocab1 text
tokenize -d -v vocab1 out >back
cmp -s back text.want || fail "version 1: round trip differs"

# ---- pairs and the target side -------------------------------------------
printf 'el perro\tthe dog\n\tonly target\nsrc only\t\na\tb\tc\n' >pairs
exits 0 tokenize -v vocab -p pairs
mv out pairs.tsr
tensordump -H -n '*' pairs.tsr | awk '{ print $1, $2, $NF }' >list
printf '%s\n' '0 model.id -' '0 src.ids -' '0 src.text -' '0 tgt.ids -' \
	'0 tgt.text end' \
	'1 model.id -' '1 src.ids -' '1 src.text -' '1 tgt.ids -' \
	'1 tgt.text end' \
	'2 model.id -' '2 src.ids -' '2 src.text -' '2 tgt.ids -' \
	'2 tgt.text end' \
	'3 model.id -' '3 src.ids -' '3 src.text -' '3 tgt.ids -' \
	'3 tgt.text end' >want
cmp -s list want || fail "pairs records: $(cat list)"
tokenize -d -v vocab pairs.tsr >out        # tgt.ids before src.ids
printf 'the dog\nonly target\n\nb\tc\n' >want
cmp -s out want || fail "pairs, target side: $(cat out)"
tokenize -d -v vocab -n src.ids pairs.tsr >out
printf 'el perro\n\nsrc only\na\n' >want
cmp -s out want || fail "pairs, source side: $(cat out)"
exits 0 tokenize -v vocab -p -f units pairs
[ "$(head -n 1 out)" = "$(printf '%s\t%s' "$(echo 'el perro' |
	tokenize -v vocab -f units)" "$(echo 'the dog' |
	tokenize -v vocab -f units)")" ] || fail "pairs as units: $(head -n 1 out)"
printf 'fine\tok\nno tab here\n' >badpairs
exits 1 tokenize -v vocab -p badpairs
err_has "tokenize: badpairs:2: no tab between source and target"
echo 'the cat' | tokenize -v vocab -T >out
tensordump -H -n '*' out | awk '{ print $2 }' | tr '\n' ' ' >list
[ "$(cat list)" = 'model.id tgt.ids tgt.text ' ] ||
	fail "--target records: $(cat list)"

# ---- a model file holds both vocabularies --------------------------------
tokenize -l 300 part2 >vocab.tgt 2>/dev/null
# the text form of a stream: each vocabulary as a quoted string
quote() {
	awk '{ gsub(/\\/, "\\\\"); gsub(/"/, "\\\""); gsub(/\t/, "\\t");
	       printf "\"%s\\n\"\n", $0 }' "$1"
}
{
	echo 'tsr-text 1'
	echo 'record model.config u8 [11]'
	printf '%s\n' '"arch=fake\n\n"'
	echo "record vocab.src u8 [$(wc -c <vocab)]"
	quote vocab
	echo "record vocab.tgt u8 [$(wc -c <vocab.tgt)] end"
	quote vocab.tgt
} >model.txt
tensordump -r model.txt >model || fail "tensordump -r: could not make a model"
echo 'el perro' | tokenize -m model -f ids >a
echo 'el perro' | tokenize -v vocab -f ids >b
cmp -s a b || fail "-m: vocab.src differs from the file"
echo 'el perro' | tokenize -m model -T -f ids >a
echo 'el perro' | tokenize -v vocab.tgt -f ids >b
cmp -s a b || fail "-m -T: vocab.tgt differs from the file"
printf 'el perro\tthe dog\n' | tokenize -m model -p >p.tsr
tokenize -d -m model p.tsr >out                 # tgt.ids with vocab.tgt
[ "$(cat out)" = 'the dog' ] || fail "-m -d: $(cat out)"
printf 'el perro\tthe dog\n' | tokenize -v vocab --tgt-vocab vocab.tgt -p >q.tsr
# the same records, and the same vocabularies' hash in model.id
tensordump -t -n '[st][rg][ct].*' p.tsr >p.txt
tensordump -t -n '[st][rg][ct].*' q.tsr >q.txt
cmp -s p.txt q.txt || fail "--tgt-vocab differs from the model's vocab.tgt"
tensordump -t -n model.id p.tsr | grep -o 'vocab=[0-9a-f]*' >p.id
tensordump -t -n model.id q.tsr | grep -o 'vocab=[0-9a-f]*' >q.id
[ -s p.id ] && cmp -s p.id q.id ||
	fail "model.id: -m $(cat p.id), -v --tgt-vocab $(cat q.id)"
echo x | tokenize -v vocab >one.tsr
exits 1 tokenize -m one.tsr
err_has 'tokenize: one.tsr: frame 0 has no record "vocab.src"'

# ---- bad vocabularies and ids --------------------------------------------
exits 1 tokenize -v missing text
err_has "tokenize: missing: "
sed '5s/special/speciel/' vocab >badvocab
exits 1 tokenize -v badvocab text
err_has "badvocab: vocabulary line 5"
echo '5 99999 2' | tokenize -d -f ids -v vocab >out 2>err
[ $? -eq 1 ] || fail "an id outside the vocabulary was taken"
err_has "<stdin>:1: '99999' is not an id"
echo '<0x41> nosuchunit' | tokenize -d -f units -v vocab >out 2>err
[ $? -eq 1 ] || fail "an unknown unit was taken"
err_has "<stdin>:1: 'nosuchunit' is not a unit"
printf 'tsr-text 1\nrecord hyp.ids i32 [2] frame 7 end\n5 100000\n' |
	tensordump -r >hyp.tsr
exits 1 tokenize -d -v vocab hyp.tsr
err_has "frame 7: hyp.ids: id 100000"
printf 'tsr-text 1\nrecord other u8 [1] end\n"x"\n' | tensordump -r >other.tsr
exits 1 tokenize -d -v vocab other.tsr
err_has "no hyp.ids, tgt.ids or src.ids"
exits 1 tokenize -d -v vocab text
err_has "tokenize: text"

# ---- --dropout: cuts that vary, the same text back -------------------------
tokenize -f units -v vocab corpus >units.0
tokenize -f units -v vocab --dropout 0 corpus >units.d0
cmp -s units.0 units.d0 || fail "--dropout 0 changed the units"
tokenize -f ids -v vocab --dropout 0.3 --seed 5 text >ids.a ||
	fail "--dropout 0.3 failed"
tokenize -f ids -v vocab --dropout 0.3 --seed 5 text >ids.b
tokenize -f ids -v vocab --dropout 0.3 --seed 6 text >ids.c
cmp -s ids.a ids.b || fail "--dropout: one seed, two results"
cmp -s ids.a ids.c && fail "--dropout: two seeds, one result"
tokenize -d -f ids -v vocab ids.a >back
cmp -s back text.want || fail "--dropout: the round trip changed the text"
# more units than without, fewer than characters
tokenize -f units -v vocab --dropout 0.3 corpus >units.3
n0=$(wc -w <units.0) n3=$(wc -w <units.3)
[ "$n3" -gt "$n0" ] || fail "--dropout 0.3: $n3 units, not more than $n0"
paste corpus corpus | tokenize -p -v vocab --dropout 0.2 >pairs.tsr ||
	fail "--pairs --dropout failed"
exits 2 tokenize -v vocab --dropout 1 corpus
err_has "--dropout: '1' is not at least 0 and below 1"
exits 2 tokenize -v vocab --dropout x corpus
exits 2 tokenize -d -v vocab --dropout 0.1 hyp.tsr
err_has "--dropout goes with encoding"
exits 2 tokenize -l 1000 --dropout 0.1 corpus

# A last line without a newline is a line, and comes back with one: the
# round trip's one difference (tokenize(1), -d).
printf 'el perro\n\nla casa' > nonl.txt
tokenize -v vocab nonl.txt | tokenize -d -v vocab > back.txt
printf 'el perro\n\nla casa\n' > want.txt
cmp -s back.txt want.txt || fail "a last line without a newline: $(od -c back.txt | head -3)"

[ "$errors" -eq 0 ] || { echo "$errors failed"; exit 1; }
echo "all passed"
