#!/bin/sh
# spm-fixtures.sh [DIR]: makes the SentencePiece fixtures of tests/cli_spm.sh
# and tests/test_spm.c in DIR (default tests/fixtures/spm) with Debian's
# sentencepiece (spm_train, spm_encode, spm_decode; apt-get install
# sentencepiece), which the tests themselves never need.
#
# It writes a training text of its own (made-up words in several scripts,
# nothing from a corpus), trains small models on it (unigram and BPE,
# several sizes, nmt_nfkc, identity and a rule table of our own, with and
# without the dummy prefix, byte fallback, user-defined symbols, other
# special ids), and for each MODEL.model the reference outputs on
# input.txt (ordinary lines, then edge cases: empty lines, whitespace runs,
# tabs, NUL bytes, invalid UTF-8, combining and full-width characters,
# characters never seen in training, CJK, a long word):
#
#	MODEL.ids      spm_encode --output_format=id
#	MODEL.pieces   spm_encode --output_format=piece
#	MODEL.decoded  spm_decode --input_format=id of MODEL.ids
#	MODEL.pdecoded spm_decode --input_format=piece of MODEL.pieces
#	MODEL.rids     150 lines of random ids (specials, bytes, spaces)
#	MODEL.rdecoded spm_decode --input_format=id of MODEL.rids
#
# Run it again after changing the models' list; commit the result.  Only the nmt_nfkc model carries NFKC's big table (240 kB); the
# others stay small.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/tests/fixtures/spm}
for p in spm_train spm_encode spm_decode; do
	command -v $p >/dev/null ||
		{ echo "spm-fixtures: no $p (apt-get install sentencepiece)" >&2; exit 1; }
done
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export LC_ALL=C

# ---- the training text: 4000 lines of made-up words --------------------
awk 'BEGIN {
	srand(7)
	n = split("ka to ri na me su lo pe da vi ra ne shi mo tu ga be zo " \
		  "lé ñu ço ün àr ßi", syl, " ")
	m = split("αλ φα βη τα γρ ομ ικ ος", gr, " ")
	c = split("日 本 語 中 文 字 学 生 大 人 山 川", cj, " ")
	p = split(", . ; : ! ? ( ) \" -", pu, " ")
	for (i = 0; i < 4000; i++) {
		k = 3 + int(rand() * 10); s = ""
		for (j = 0; j < k; j++) {
			r = rand(); w = ""
			if (r < 0.75) {
				l = 1 + int(rand() * 3 + rand() * 2)
				for (q = 0; q < l; q++)
					w = w syl[1 + int(rand() * (q ? n : 8))]
				if (rand() < 0.1)
					w = toupper(substr(w, 1, 1)) substr(w, 2)
			} else if (r < 0.83) {
				w = gr[1 + int(rand() * m)] gr[1 + int(rand() * m)]
			} else if (r < 0.91) {
				l = 1 + int(rand() * 4)
				for (q = 0; q < l; q++)
					w = w cj[1 + int(rand() * c)]
			} else {
				w = int(rand() * 2000)
			}
			s = s (j ? " " : "") w
			if (rand() < 0.08)
				s = s pu[1 + int(rand() * p)]
		}
		print s
	}
}' >"$tmp/train.txt"

# ---- the input: 60 ordinary lines (not from the training text), then the
# edge cases, one a line --------------------------------------------------
{
	awk 'BEGIN {
		srand(11)
		n = split("ka to ri na me su lo pe da vi ra ne shi mo tu ga " \
			  "lé ñu ço ün", syl, " ")
		for (i = 0; i < 60; i++) {
			k = 1 + int(rand() * 12); s = ""
			for (j = 0; j < k; j++) {
				l = 1 + int(rand() * 4); w = ""
				for (q = 0; q < l; q++)
					w = w syl[1 + int(rand() * n)]
				s = s (j ? " " : "") w
			}
			print s
		}
	}'
	printf '\n'
	printf '\n'
	printf '   \n'
	printf '\t\t\n'
	printf '  kato  rina   mesu  \n'
	printf 'kato\trina\t\tmesu\n'
	printf ' \t kato \t \n'
	printf 'bad \377 byte\n'
	printf 'lone lead \303 and \342\202 cut\n'
	printf 'overlong \300\257 surrogate \355\240\200 big \364\220\200\200\n'
	printf '\377\376\375\n'
	printf 'combining e\314\201 A\314\212 n\314\203 decomposed\n'
	printf 'precomposed \303\251 \303\205 \303\261\n'
	printf 'full-width \357\274\241\357\274\242\357\274\243 \357\274\221\357\274\222\357\274\223 \357\274\201\n'
	printf 'ideographic\343\200\200space\n'
	printf 'half-width \357\275\266\357\276\200\357\276\266\357\276\205\n'
	printf 'ligature \357\254\201nal \342\204\242 \342\221\240 \302\275\n'
	printf 'unseen \320\277\321\200\320\270\320\262\320\265\321\202 \330\263\331\204\330\247\331\205 \360\237\230\200 \342\202\254\n'
	printf '\346\227\245\346\234\254\350\252\236\343\201\256\343\203\206\343\202\255\343\202\271\343\203\210 \344\270\255\346\226\207\345\255\227\n'
	printf '\345\255\246\347\224\237\345\244\247\344\272\272\345\261\261\345\267\235\n'
	printf 'numbers 12345 3.14 2026-12-04\n'
	printf 'control <s> </s> <unk> <pad> as text\n'
	printf 'user <sep> symbols a<sep>b HTTPserver @@ x@@y\n'
	printf 'lower \342\226\201 block \342\226\201\342\226\201 itself\n'
	printf 'replacement \357\277\275 char\n'
	printf 'carriage return\r\n'
	printf 'nul\000byte \000\n'
	printf 'nbsp\302\240here and\342\200\202en space\n'
	printf '%s\n' "$(awk 'BEGIN { for (i = 0; i < 300; i++) printf "a"; }')"
	printf '%s\n' "$(awk 'BEGIN { srand(3); split("ka to ri na me su lo pe lé ñu", s, " "); for (i = 0; i < 120; i++) printf "%s", s[1 + int(rand() * 10)] }')"
	printf 'x\n'
	printf '\342\226\201\n'
	printf ' \n'
} >"$out/input.txt"

# ---- a normalisation rule table of our own (source and target code
# points, in hex): full-width letters and digits, a decomposed e-acute,
# a ligature, the ideographic space, one rule to nothing ----------------
{
	i=0
	for c in 41 42 43 44 45 46 47 48 49 4A 4B 4C 4D 4E 4F 50; do
		printf 'FF%X\t%s\n' $((0x21 + i)) "$c"
		i=$((i + 1))
	done
	for d in 0 1 2 3 4 5 6 7 8 9; do
		printf 'FF%X\t%X\n' $((0x10 + d)) $((0x30 + d))
	done
	printf '65 301\tE9\n'
	printf '41 30A\tC5\n'
	printf 'FB01\t66 69\n'
	printf '3000\t20\n'
	printf '2122\t54 4D\n'
} >"$tmp/rules.tsv"

# train NAME OPTION...: NAME.model in $out, with the outputs on input.txt
train() {
	name=$1
	shift
	# (relative names: the model keeps them, and stays the same)
	(cd "$tmp" && spm_train --input=train.txt --model_prefix="$name" \
		--hard_vocab_limit=false --num_threads=1 \
		--minloglevel=2 "$@" >log 2>&1) ||
		{ cat "$tmp/log" >&2; exit 1; }
	cp "$tmp/$name.model" "$out/$name.model"
	spm_encode --model="$out/$name.model" --output_format=id \
		<"$out/input.txt" >"$out/$name.ids"
	spm_encode --model="$out/$name.model" --output_format=piece \
		<"$out/input.txt" >"$out/$name.pieces"
	spm_decode --model="$out/$name.model" --input_format=id \
		<"$out/$name.ids" >"$out/$name.decoded"
	spm_decode --model="$out/$name.model" --input_format=piece \
		<"$out/$name.pieces" >"$out/$name.pdecoded"
	# ids no encoder makes: specials, bytes in any order, spaces first
	spm_export_vocab --model="$out/$name.model" >"$tmp/$name.pieces"
	awk -v n="$(wc -l <"$tmp/$name.pieces")" 'BEGIN {
		srand(13)
		for (i = 0; i < 150; i++) {
			k = int(rand() * 10); s = ""
			for (j = 0; j < k; j++) {
				r = rand()
				if (r < 0.4)
					id = int(rand() * 12)
				else if (r < 0.6)
					id = 3 + int(rand() * 260)
				else
					id = int(rand() * n)
				s = s (j ? " " : "") (id < n ? id : n - 1)
			}
			print s
		}
	}' >"$out/$name.rids"
	spm_decode --model="$out/$name.model" --input_format=id \
		<"$out/$name.rids" >"$out/$name.rdecoded"
	echo "$name: $* ($(wc -l <"$tmp/$name.vocab") pieces)" >&2
}

train uni_nfkc_400 --model_type=unigram --vocab_size=400 \
	--character_coverage=0.995
train uni_id_300 --model_type=unigram --vocab_size=300 \
	--normalization_rule_name=identity --add_dummy_prefix=false \
	--character_coverage=0.99 --unk_id=1 --eos_id=0 --bos_id=-1
train uni_rules_600 --model_type=unigram --vocab_size=600 \
	--normalization_rule_tsv=rules.tsv --byte_fallback=true \
	--user_defined_symbols='<sep>,@@,HTTP' --character_coverage=0.98 \
	--pad_id=3 --unk_id=0 --bos_id=1 --eos_id=2
train bpe_id_300 --model_type=bpe --vocab_size=300 \
	--normalization_rule_name=identity --character_coverage=0.99
train bpe_rules_1000 --model_type=bpe --vocab_size=1000 \
	--normalization_rule_tsv=rules.tsv --byte_fallback=true \
	--user_defined_symbols='<sep>,@@,HTTP' --remove_extra_whitespaces=false \
	--character_coverage=0.98
train bpe_id_500_nopfx --model_type=bpe --vocab_size=500 \
	--normalization_rule_name=identity --add_dummy_prefix=false \
	--byte_fallback=true --character_coverage=0.995
# a denormaliser: decoding writes "ka" as "KA" and "▁" (U+2581) as "_"
printf '6B 61\t4B 41\n2581\t5F\n' >"$tmp/denorm.tsv"
train uni_denorm_400 --model_type=unigram --vocab_size=400 \
	--normalization_rule_name=identity \
	--denormalization_rule_tsv=denorm.tsv --byte_fallback=true
train word_id_400 --model_type=word --vocab_size=400 \
	--normalization_rule_name=identity
train char_id_100 --model_type=char --vocab_size=100 \
	--normalization_rule_name=identity --character_coverage=0.99
du -sh "$out" >&2
