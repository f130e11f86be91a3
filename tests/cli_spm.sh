#!/bin/sh
# tokenize -v with SentencePiece models: the same ids, pieces and decoded
# text as Debian's spm_encode and spm_decode (0.1.97) on every line of
# tests/fixtures/spm/input.txt, and the same text from random ids, for
# every model there (tools/spm-fixtures.sh
# made them: unigram, BPE, word and char; nmt_nfkc, identity and a rule
# table of our own; with and without the dummy prefix; byte fallback;
# user-defined symbols; other special ids; a denormaliser).  The stream
# ends each line with the model's own </s>; text round trips; malformed
# and truncated models are refused with exit 1 and a message naming the
# file and what.
set -u
. "$(dirname "$0")/lib/cli.sh"
errors=0
F=$root/tests/fixtures/spm
in=$F/input.txt
[ -r "$in" ] || { fail "no $in"; exit 1; }

# same WANT GOT WHAT: the files are equal, else the first difference
same() {
	cmp -s "$1" "$2" ||
		fail "$3: differs from $(basename "$1"): $(diff "$1" "$2" |
			head -4 | tr '\n' '|')"
}

n=0
for model in "$F"/*.model; do
	m=$(basename "$model" .model)
	n=$((n + 1))
	tokenize -v "$model" -f ids "$in" >"$m.ids" 2>err ||
		fail "$m: tokenize -f ids: $(cat err)"
	same "$F/$m.ids" "$m.ids" "$m: -f ids"
	tokenize -v "$model" -f units "$in" >"$m.pieces" 2>err ||
		fail "$m: tokenize -f units: $(cat err)"
	same "$F/$m.pieces" "$m.pieces" "$m: -f units"
	tokenize -d -v "$model" -f ids "$F/$m.ids" >"$m.decoded" 2>err ||
		fail "$m: tokenize -d -f ids: $(cat err)"
	same "$F/$m.decoded" "$m.decoded" "$m: -d -f ids"
	tokenize -d -v "$model" -f units "$F/$m.pieces" >"$m.pdecoded" 2>err ||
		fail "$m: tokenize -d -f units: $(cat err)"
	same "$F/$m.pdecoded" "$m.pdecoded" "$m: -d -f units"
	tokenize -d -v "$model" -f ids "$F/$m.rids" >"$m.rdecoded" 2>err ||
		fail "$m: tokenize -d -f ids of random ids: $(cat err)"
	same "$F/$m.rdecoded" "$m.rdecoded" "$m: -d -f ids of random ids"

	# the stream: spm_encode's ids and the model's </s>, one frame a
	# line; and back to spm_decode's text
	tokenize -v "$model" "$in" >"$m.tsr" 2>err ||
		fail "$m: tokenize: $(cat err)"
	tensordump -H -n src.ids -vall <"$m.tsr" |
		awk 'NR % 2 == 0 { $1 = $1; print }' >"$m.stream"
	eos=2
	[ "$m" = uni_id_300 ] && eos=0          # --eos_id=0 (Marian's)
	awk -v eos="$eos" '{ print ($0 == "" ? "" : $0 " ") eos }' \
		"$F/$m.ids" >want.stream
	same want.stream "$m.stream" "$m: the stream's src.ids"
	tokenize -d -v "$model" <"$m.tsr" >"$m.back" 2>err ||
		fail "$m: tokenize -d of the stream: $(cat err)"
	same "$F/$m.decoded" "$m.back" "$m: -d of the stream"
done
[ "$n" -ge 8 ] || fail "only $n models in $F"
[ "$(wc -l <"$in")" -eq "$(wc -l <"$F/uni_nfkc_400.ids")" ] ||
	fail "a line lost: input and ids have different line counts"

# Pieces read back as units: the same text as from the ids (a model with
# byte fallback has no unknown piece, whose text shows instead).
same "$F/uni_rules_600.decoded" uni_rules_600.pdecoded "-d -f units"

# Round trip: identity, byte fallback, single spaces: decoding gives the
# text back byte for byte.
head -60 "$in" >plain
for m in bpe_id_500_nopfx uni_rules_600; do
	tokenize -v "$F/$m.model" plain | tokenize -d -v "$F/$m.model" \
		>plain.back 2>err || fail "$m: round trip: $(cat err)"
	same plain plain.back "$m: round trip"
done

# -T and --pairs: each side its own model
printf 'kato rina\tmesu lo\n' >pair
tokenize -p -v "$F/uni_id_300.model" --tgt-vocab "$F/bpe_id_300.model" \
	-f ids pair >pair.ids 2>err || fail "--pairs: $(cat err)"
a=$(printf 'kato rina\n' | tokenize -v "$F/uni_id_300.model" -f ids)
b=$(printf 'mesu lo\n' | tokenize -v "$F/bpe_id_300.model" -f ids)
[ "$(cat pair.ids)" = "$(printf '%s\t%s' "$a" "$b")" ] ||
	fail "--pairs: '$(cat pair.ids)', not '$a<TAB>$b'"

# ---- refusals ------------------------------------------------------------
model=$F/bpe_id_300.model
size=$(wc -c <"$model")
for cut in 1 2 5 40 1000 $((size - 1)); do
	head -c "$cut" "$model" >cut.model
	exits 1 tokenize -v cut.model -f ids plain
	err_has "tokenize: cut.model: neither an attn-bpe vocabulary nor a SentencePiece model"
	[ -s out ] && fail "cut at $cut: output before the refusal"
done
: >empty.model
exits 1 tokenize -v empty.model -f ids plain
err_has "no pieces"
printf '\012\377' >varint.model        # field 1, a length cut short
exits 1 tokenize -v varint.model -f ids plain
err_has "truncated varint at byte 1"
printf '\012\005\012\003abc' >nounk.model       # one piece, no <unk>
exits 1 tokenize -v nounk.model -f ids plain
err_has "no unknown piece"
printf '\015\000\000\000\000' >wire.model       # field 1 as a fixed32
exits 1 tokenize -v wire.model -f ids plain
err_has "field 1 of the model"
err_has "wire type 5, not 2"
printf 'hello world\n' >text.model
exits 1 tokenize -v text.model -f ids plain
err_has "text.model: neither an attn-bpe vocabulary nor a SentencePiece model"

# A model with no </s> (just <unk> and ▁a, made here) has ids, but no
# stream: its frames could not end with </s>.
printf '\012\011\012\005<unk>\030\002\012\006\012\004\342\226\201a' \
	>noeos.model
[ "$(echo 'a b' | tokenize -v noeos.model -f ids)" = "1 0" ] ||
	fail "noeos.model: 'a b' is not ids 1 0"
exits 1 tokenize -v noeos.model --force plain
err_has "noeos.model: the vocabulary has no </s> to end a line with"
[ -s out ] && fail "noeos.model: a stream begun before the refusal"

# A BPE model whose "▁" is a control piece (forged): spm_encode fails
# ("all normalized characters are not consumed"); so does tokenize,
# naming the line.
printf '\012\011\012\005<unk>\030\002\012\007\012\003\342\226\201\030\003' \
	>ctrl.model
printf '\012\003\012\001a\022\002\030\002' >>ctrl.model
exits 1 tokenize -v ctrl.model -f ids plain
err_has "plain:1: the text '▁' segments into control piece 1"

# --dropout is attn-bpe's; --learn stays attn-bpe's own
exits 1 tokenize -v "$model" --dropout 0.1 plain
err_has "BPE-dropout needs an attn-bpe vocabulary"
# A model of SentencePiece vocabularies: train-step -i keeps the model's
# bytes as vocab.src and vocab.tgt and its special ids in the config (no
# <pad>: </s> pads); the model then tokenises as the .model file does,
# round trips, trains, and translates one line per line, empty included.
awk 'BEGIN { split("loraga dame datomepe pe megana vi tutoda napepevi", w)
	for (i = 0; i < 40; i++) { s = w[1 + i % 8]
		for (j = 0; j < 1 + i % 5; j++) s = s " " w[1 + (i * 7 + j * 3) % 8]
		print s "\t" s } }' > copy.tsv
cut -f1 copy.tsv > copy.txt
[ "$(wc -l < copy.txt)" -ge 10 ] || fail "too few copy pairs"
new_model spm.tsr transformer "$model" "$model" tie=all warmup=10 \
	batch_tokens=300 || fail "train-step -i with a SentencePiece model"
tensordump -t -n model.config spm.tsr > cfg
for kv in pad_id=2 unk_id=0; do
	grep -qF "\"$kv\\n\"" cfg || fail "spm.tsr's config lacks $kv"
done
grep -q 'bos_id\|eos_id' cfg && fail "spm.tsr sets ids that are 1 and 2"
tokenize -m spm.tsr -f ids copy.txt > a.ids
tokenize -v "$model" -f ids copy.txt > b.ids
cmp -s a.ids b.ids || fail "the model's vocabulary tokenises otherwise"
tokenize -m spm.tsr copy.txt | tokenize -d -m spm.tsr > back.txt
cmp -s back.txt copy.txt || fail "the model's round trip: $(diff back.txt copy.txt | head -3)"
tokenize -p -m spm.tsr copy.tsv > pairs.tsr
train-step -q -m spm.tsr -n 20 pairs.tsr || fail "training on SentencePiece ids"
{ head -3 copy.txt; echo; head -1 copy.txt; } > in.txt
tokenize -m spm.tsr in.txt | stages spm.tsr | decode -m spm.tsr > out.txt ||
	fail "translating with a SentencePiece model"
[ "$(wc -l < out.txt)" -eq 5 ] || fail "$(wc -l < out.txt) lines for 5"
# Marian's kind (</s> 0, <unk> 1, no <s>): a Transformer starts from a zero
# vector, a recurrent model refuses to
new_model marian.tsr transformer "$F/uni_id_300.model" \
	"$F/uni_id_300.model" || fail "a Transformer of Marian's ids"
tensordump -t -n model.config marian.tsr > cfg
for kv in bos_id=-1 eos_id=0 unk_id=1; do
	grep -qF "\"$kv\\n\"" cfg || fail "marian.tsr's config lacks $kv"
done
exits 1 new_model x.tsr rnnsearch "$F/uni_id_300.model" "$F/uni_id_300.model"
err_has "the rnnsearch decoder starts from <s>, not from a zero vector"
[ -e x.tsr ] && fail "an rnnsearch of a vocabulary without <s>"
exits 1 new_model x.tsr transformer "$model" "$F/uni_id_300.model"
err_has "the vocabularies' special ids differ"

exit $((errors > 0))
