#!/bin/sh
# train-step --import marian --lex: Marian's lexical shortlist kept in the
# imported model, and used by decode and beam without a flag.  The
# fixture's hand-made lex.s2t (FIRST 4, BEST 3, THRESHOLD 0), the same
# gzipped, and native Marian's marian-conv of it (lex.bin) give one
# table: ids 0-3, each source unit's best 3 and itself (one vocab.spm
# for both sides: Marian's shared vocabulary), Marian's filling to a
# multiple of 8 from id 4.  With it, attn translates shortlist.in as
# native Marian's marian-decoder did with --shortlist lex.bin
# (tools/marian-ref/make_shortlist.sh), and as it did with the text
# table itself (FIRST 2, BEST 1, THRESHOLD 0.3, on the lines Marian's
# text reader does not crash on): the same text, greedy and beam,
# and log p within float32's error of Marian's 6 printed digits (but
# for the empty line, whose forced </s> is search_rules.c's); --no-shortlist
# gives the full softmax (other text: the shortlist matters), as an
# import without --lex does.  Refused: --lex without
# --import, numbers with a binary, bad numbers, a corrupt or truncated
# binary, a table of another vocabulary (test_marian_shortlist.c has
# every refusal of the readers).
set -eu
. "$(dirname "$0")/lib/cli.sh"
F=$root/tests/fixtures/marian

imp() {	# imp MODEL LEX: post.npz with decoder.yml (and --lex LEX)
	_m=$1
	shift
	train-step --import marian -m "$_m" --decoder-config "$F/decoder.yml" \
		${1:+--lex "$1"} "$F/post.npz" "$F/vocab.spm"
}
table() {
	tensordump -H -n shortlist.frequent -n shortlist.translations \
		-n shortlist.pad --values=all "$1" |
		awk 'NR % 2 == 0 { $1 = $1; print }'
}

imp text.tsr "$F/lex.s2t,4,3,0"
if command -v gzip > /dev/null; then
	gzip -c "$F/lex.s2t" > lex.s2t.gz
	imp gz.tsr lex.s2t.gz,4,3,0
else	# (test_marian_shortlist.c reads gzip without it)
	cp text.tsr gz.tsr
fi
imp bin.tsr "$F/lex.bin"
imp full.tsr
table text.tsr > t.text
table gz.tsr > t.gz
table bin.tsr > t.bin
[ "$(wc -l < t.text)" -eq 3 ] || fail "table: $(cat t.text)"
cmp -s t.text t.gz || fail "gzip: $(diff t.text t.gz)"
cmp -s t.text t.bin || fail "text and binary differ: $(diff t.text t.bin)"
# frequent 0-3; </s> (0): "</s> </s>" and itself; <unk> (1): "▁mar ▁xyz"
# (an unknown source word) and itself; the filling: 8 from 4
[ "$(sed -n 1p t.text)" = "0 1 2 3" ] || fail "frequent: $(sed -n 1p t.text)"
sed -n 2p t.text | awk '{ r0 = $1 " " $2 " " $3 " " $4
	r1 = $5 " " $6 " " $7 " " $8 }
	r0 != "0 -1 -1 -1" || r1 != "1 3 -1 -1" { print r0 ", " r1; exit 1 }' ||
	fail "rows of </s> and <unk>: $(sed -n 2p t.text)"
[ "$(sed -n 3p t.text)" = "8 4" ] || fail "pad: $(sed -n 3p t.text)"
tensordump -t -n model.config bin.tsr | grep -qF '"dec_shortlist=1\n"' ||
	fail "no dec_shortlist=1"
tensordump -t -n model.config full.tsr | grep -q dec_shortlist &&
	fail "dec_shortlist without --lex"

# Marian's translations, without a flag: MODEL INPUT, Marian's outputs
# FIXTURE.greedy and FIXTURE.beam
agree() {
	tokenize -m "$1" "$2" | stages "$1" > mem
	n=$(wc -l < "$2")
	for mode in greedy beam; do
		case $mode in greedy) p=decode ;; *) p=beam ;; esac
		$p -m "$1" --min-len 0 --scores < mem > got
		[ "$(wc -l < got)" -eq "$n" ] ||
			fail "$1 $mode: $(wc -l < got) lines"
		sed 's/ ||| [^|]*$//' got > got.txt
		sed 's/ ||| [^|]*$//' "$3.$mode" > want.txt
		cmp -s got.txt want.txt ||
			fail "$1 $mode: not Marian's: $(diff got.txt want.txt | head -5)"
		# (not the empty line's: Marian's forced </s>, search_rules.c's)
		paste -d '\t' got "$3.$mode" "$2" |
		awk -F '\t' -v m="$1 $mode" '$3 != "" {
			a = $1; sub(/.* [|][|][|] /, "", a)
			b = $2; sub(/.* [|][|][|] /, "", b)
			d = a - b; if (d < 0) d = -d
			if (d > 1e-4 + 1e-5 * (b < 0 ? -b : b)) {
				print m ": line " NR ": " a ", Marian " b
				bad = 1 }
		} END { exit bad }' || fail "$1 $mode: scores off"
		$p -m "$1" --min-len 0 --no-shortlist < mem > nosl
		cmp -s nosl got.txt &&
			fail "$1 $mode: the shortlist changes nothing"
		$p -m full.tsr --min-len 0 < mem > full
		cmp -s nosl full ||
			fail "$1 $mode: --no-shortlist is not the full softmax"
	done
}
agree bin.tsr "$F/shortlist.in" "$F/shortlist"
# marian-decoder's own text reader: a probability threshold, FIRST 2
imp text2.tsr "$F/lex.s2t,2,1,0.3"
head -n 31 "$F/shortlist.in" > in31
agree text2.tsr in31 "$F/shortlist.text"

# refusals
exits 2 train-step -m x.tsr --lex "$F/lex.bin"
err_has "--lex goes with --import"
exits 1 imp x.tsr "$F/lex.bin,4"
err_has "holds its own numbers"
exits 2 imp x.tsr "$F/lex.s2t,4,x"
err_has "is not FIRST[,BEST[,THRESHOLD]]"
head -c 300 "$F/lex.bin" > short.bin
exits 1 imp x.tsr short.bin
err_has "short.bin: its header's 37 offsets"
{ head -c 100 "$F/lex.bin"; printf 'Z'; tail -c +102 "$F/lex.bin"; } > bad.bin
exits 1 imp x.tsr bad.bin
err_has "bad.bin: checksum mismatch"
exits 1 train-step --import marian -m x.tsr --lex "$F/lex.bin" \
	"$F/wasm/post-swish-all.bin" "$F/wasm/words.spm"
err_has "a shortlist for a source vocabulary of 36 units, not the model's 42"
[ -e x.tsr ] && fail "a refused import left x.tsr"
exit 0
