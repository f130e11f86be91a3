#!/bin/sh
# The programs' one vocabulary loader (cmd/common/vocab.c): tokenize -v
# and train-step --init read the same file the same way (a missing file,
# a NUL byte and a broken header refused with exit 1 and the file named,
# by both); tokenize -m reads a model's vocabularies through it (the
# same ids and units as from the file), as tensordump -g -m does
# (cli_heatmap.sh).
set -u
. "$(dirname "$0")/lib/cli.sh"
errors=0

printf 'ab cd ab\ncd ef\n' >src.txt
tokenize -l 270 src.txt >vocab 2>/dev/null || fail "tokenize -l"
train-step -i -m m.tsr -a rnnsearch -s vocab -t vocab -S emb=8 \
	-S hidden=8 -S att=8 2>/dev/null || fail "train-step -i"

# status and first line of stderr
run() {
	"$@" </dev/null >/dev/null 2>err
	echo "$?: $(head -1 err)"
}
printf 'attn-bpe 1 3\n0\t<pad>\tspecial\0\n' >nul
printf 'attn-bpe 9 1\n' >badhead
for f in missing nul badhead; do
	a=$(run tokenize -v $f src.txt)
	b=$(run train-step -i -m x.tsr -a rnnsearch -s $f -t vocab)
	case $a in "1: tokenize: $f: "*) ;; *) fail "tokenize -v $f: $a" ;; esac
	case $b in "1: train-step: $f: "*) ;; *) fail "train-step -s $f: $b" ;; esac
	[ "${a#*: tokenize: }" = "${b#*: train-step: }" ] ||
		fail "$f: tokenize says '$a', train-step '$b'"
done
case $(run tokenize -v nul src.txt) in
*"not a vocabulary (a NUL byte)") ;; *) fail "NUL byte: not named" ;; esac

# From the file and from the model: the same ids and units.
tokenize -v vocab -f units src.txt >u.file || fail "tokenize -v"
tokenize -m m.tsr -f units src.txt >u.model || fail "tokenize -m"
cmp -s u.file u.model || fail "units of -v and -m differ"
tokenize -m m.tsr src.txt | tensordump -H -n src.ids -vall |
	awk 'NR % 2 == 0' >ids.model
tokenize -v vocab src.txt | tensordump -H -n src.ids -vall |
	awk 'NR % 2 == 0' >ids.file
cmp -s ids.file ids.model || fail "ids of -v and -m differ"

exit $((errors > 0))
