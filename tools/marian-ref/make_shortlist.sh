#!/bin/sh
# make_shortlist.sh: native Marian's side of tests/cli_marian_shortlist.sh.
# From tests/fixtures/marian/lex.s2t (a hand-made lexical table over the
# fixture's vocab.spm: ties, NULL lines, a word the vocabulary lacks),
# marian-conv writes lex.bin (FIRST 4, BEST 3, THRESHOLD 0), and
# marian-decoder translates shortlist.in with post.npz and that binary
# shortlist, greedily (-b 1) and with beam 4, normalize 0.6,
# max-length-factor 2.5 (decoder.yml's), one sentence a batch (Marian's
# shortlist is its batch's, attn's its sentence's): shortlist.greedy and
# shortlist.beam hold the best of each, "TEXT ||| log p"; and with the
# text table itself, FIRST 2, BEST 1, THRESHOLD 0.3, shortlist.text.*.
#
# Usage: tools/marian-ref/make_shortlist.sh  (MARIAN=DIR: the folder of
# marian-decoder and marian-conv, as /work/shared/tools/marian-native's
# build.sh prints it).  make check does not run it: its outputs are
# committed.  The binary is loaded with check "false", as Firefox's
# configs do: marian-dev 2781d735 refuses its own file otherwise when
# the last source units have empty lists (shortlist.cpp:148-149 wants
# every offset below the list's end).
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
F=$root/tests/fixtures/marian
M=${MARIAN:-/work/shared/tools/marian-native/prebuilt}
for p in marian-conv marian-decoder; do
	if [ ! -x "$M/$p" ]; then
		echo "make_shortlist.sh: native Marian is absent: no $M/$p" \
			"(set MARIAN=DIR); nothing made" >&2
		exit 1
	fi
done
# (Marian reads a vocabulary as SentencePiece only by its .spm name)
"$M/marian-conv" --shortlist "$F/lex.s2t" 4 3 0 \
	-V "$F/vocab.spm" "$F/vocab.spm" -d "$F/lex.bin" 2> /dev/null
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
# The text table read by marian-decoder itself (FIRST 2, BEST 1,
# THRESHOLD 0.3: a probability threshold there) on the first 31 lines:
# the 32nd has pieces past the table's last source unit, which crash
# Marian's LexicalShortlistGenerator::generate (data_[i] beyond its
# end, shortlist.cpp:126).
head -n 31 "$F/shortlist.in" > "$t/in31"
for mode in greedy beam text.greedy text.beam; do
	case $mode in
	*greedy) b="-b 1" ;;
	*) b="-b 4 --normalize 0.6" ;;
	esac
	case $mode in
	text.*) sl="$F/lex.s2t 2 1 0.3" in=$t/in31 ;;
	*) sl="$F/lex.bin false" in=$F/shortlist.in ;;
	esac
	# shellcheck disable=SC2086
	"$M/marian-decoder" -m "$F/post.npz" -v "$F/vocab.spm" "$F/vocab.spm" \
		$b --n-best --cpu-threads 1 --mini-batch 1 --maxi-batch 1 \
		--max-length-factor 2.5 --shortlist $sl < "$in" 2> /dev/null |
		awk -F ' [|][|][|] ' '!($1 in seen) { seen[$1]
			sub(/^F0= /, "", $3); print $2 " ||| " $3 }' \
		> "$F/shortlist.$mode"
done
echo "make_shortlist.sh: wrote $F/lex.bin, shortlist.{,text.}{greedy,beam}"
