#!/bin/sh
# train-step --import marian: the fixtures of tools/marian-ref (two small
# random Marian Transformers as numpy writes .npz files, one also as
# Marian's binary .bin, post-norm swish
# with every embedding tied, pre-norm relu with target-output tying; an
# SPM vocabulary with </s> 0 and <unk> 1) import, and translate greedily
# through embed | encode | attend | decode to exactly the ids of the
# float64 numpy reference written from Marian's equations, with scores
# within 5e-5 nats a target id (float32's error, amplified by pre-norm's
# large attention logits: 1.1e-5 a target id measured with the SIMD
# kernels).  The settings of decoder.yml land in the config.
# Refused, by name: a type, a decoder (rnn of Marian's default cell, a
# GRU: cli_ssru.sh has the SSRU's) and tied layers attn lacks, a
# parameter missing, a corrupt or truncated archive, an existing
# model without --force.  A vocab.yml with its .spm tokenises text with
# the yml's ids.  The reference's sources are ids (a stream of
# src.ids built with tensordump -r); text goes through the model's own
# SentencePiece vocabulary too.
set -eu
. "$(dirname "$0")/lib/cli.sh"
F=$root/tests/fixtures/marian
stages() { embed -m "$1" | encode -m "$1" | attend -m "$1"; }

# src.ids frames from lines of ids
awk 'BEGIN { print "tsr-text 1" }
     { printf "record src.ids i32 [%d] frame %d end\n%s\n", NF, NR - 1, $0 }' \
	"$F/input.ids" | tensordump -r > src.tsr

# pre.bin: the pre model's arrays in Marian's binary layout
for v in post pre pre.bin; do
	case $v in
	post)	train-step --import marian -m $v.tsr \
		    --decoder-config "$F/decoder.yml" "$F/$v.npz" "$F/vocab.spm" ;;
	pre)	train-step --import=marian -m $v.tsr "$F/$v.npz" \
		    "$F/vocab.spm" "$F/vocab.spm" ;;
	*)	train-step --import=marian -m $v.tsr "$F/$v" "$F/vocab.spm" ;;
	esac
	embed -m $v.tsr < src.tsr | encode -m $v.tsr | attend -m $v.tsr > mem
	decode -m $v.tsr -t -a 0 -c 12 < mem |
		tensordump -H -n hyp.ids -n hyp.score --values=all |
		awk 'NR % 4 == 2 { $1 = $1; ids = $0 } NR % 4 == 0 { print ids "\t" $1 }' \
		> got
	[ "$(wc -l < got)" -eq 6 ] || fail "$v: $(wc -l < got) translations"
	cut -f1 got > got.ids
	e=${v%.bin}.expected
	cut -f1 "$F/$e" > want.ids
	cmp -s got.ids want.ids ||
		fail "$v: ids differ from the reference: $(diff got.ids want.ids)"
	paste got "$F/$e" | awk -F "\t" -v v=$v '{
		d = $2 - $4; if (d < 0) d = -d
		if (d > 5e-5 * split($1, ids, " ")) { print v ": line " NR ": score " $2 ", reference " $4; bad = 1 }
	} END { exit bad }' || fail "$v: scores off"
done

# decoder.yml as post.tsr's decoding defaults: at most
# max-length-factor * S ids rounded up, as Marian's search stops (the
# random model runs to it: exactly ceil(2.5 S), which the recorded
# WASM Marian's outputs show too) instead of 2 S + 10, and beam-size 4
# for beam's n-best; the user's options win.
embed -m post.tsr < src.tsr | encode -m post.tsr | attend -m post.tsr > mem
decode -m post.tsr -t < mem | tensordump -n hyp.ids > lens
awk '{ n = 2.5 * NF; print n == int(n) ? n : int(n) + 1 }' "$F/input.ids" \
	> want.lens
awk '$2 == "hyp.ids" { gsub(/[][]/, "", $4); print $4 }' lens > got.lens
cmp -s got.lens want.lens ||
	fail "decoder.yml's length: $(paste got.lens want.lens | tr '\n' ' ')"
embed -m pre.tsr < src.tsr | encode -m pre.tsr | attend -m pre.tsr |
	decode -m pre.tsr -t | tensordump -n hyp.ids |
	awk '$2 == "hyp.ids" { gsub(/[][]/, "", $4); print $4 }' > pre.lens
[ "$(wc -l < pre.lens)" -eq 6 ] || fail "pre.tsr: $(wc -l < pre.lens) lengths"
cmp -s pre.lens want.lens && fail "pre.tsr has post.tsr's length factor"
exits 1 beam -m post.tsr -n 5 < mem
err_has "post.tsr: --nbest 5 is more than the model's beam of 4"
beam -m post.tsr -k 5 -t < mem > /dev/null || fail "beam -k 5 of post.tsr"

# and from text: the model's own SentencePiece vocabulary tokenises (its
# </s> is 0) and detokenises, one line per line (the empty one is the
# model's to translate: this random one says more than </s>)
printf 'hello world\n\nthe cat\n' > text.in
tokenize -m post.tsr text.in | tensordump -n src.ids --values=all |
	awk '$2 == "src.ids" { getline; print $NF }' > last
[ "$(sort -u last)" = 0 ] || fail "src.ids do not end with the model's </s> 0"
tokenize -m post.tsr text.in | embed -m post.tsr | encode -m post.tsr |
	attend -m post.tsr | beam -m post.tsr > text.out
[ "$(wc -l < text.out)" -eq 3 ] || fail "$(wc -l < text.out) lines for 3"
[ -n "$(sed -n 1p text.out)" ] || fail "no text for line 1"

# A Marian vocab.yml (OPUS-MT's kind: its ids are not the .spm's; here
# </s> 0, <unk> 1, then the .spm's other pieces in reverse, so the yml's
# id is 37 - the .spm's) with the .spm that segments it: tokenize cuts
# with the .spm and gives the yml's ids, and detokenises back.
train-step --import marian -m y.tsr "$F/post.npz" "$F/vocab.yml" \
	"$F/vocab.spm" || fail "import with a vocab.yml and its .spm"
printf 'la luna come\nverde mar\n\n' > t.txt
tokenize -m post.tsr -f ids t.txt |
	awk '{ for (i = 1; i <= NF; i++) $i = $i < 2 ? $i : 37 - $i; print }' \
	> want.ids
tokenize -m y.tsr -f ids t.txt > got.ids
cmp -s got.ids want.ids || fail "the yml's ids: $(paste got.ids want.ids)"
tokenize -m y.tsr t.txt | tokenize -d -m y.tsr > back.txt
cmp -s back.txt t.txt || fail "the yml's round trip: $(cat back.txt)"
tokenize -m y.tsr -f units t.txt | head -1 > units
[ "$(cat units)" = "▁la ▁luna ▁come" ] || fail "the yml's pieces: $(cat units)"
tokenize -m y.tsr t.txt | embed -m y.tsr | encode -m y.tsr |
	attend -m y.tsr | beam -m y.tsr > y.out
[ "$(wc -l < y.out)" -eq 3 ] || fail "$(wc -l < y.out) lines for 3"
# OPUS-MT's kind at a size of its kind (tools/marian-ref/
# make_bigvocab.sh): a joint vocab.yml of 5,138 entries, keys YAML must
# quote among them, separate source.spm and target.spm; text in and out as
# OPUS-MT's pipeline makes it, against native Marian's, beam and greedy.
# "ø" is no piece of source.spm (spm_encode prints it whole) but the
# vocab.yml's id 3: OPUS-MT's pipeline gives 3, not <unk>.
B=$F/bigvocab
train-step --import marian -m bv.tsr --decoder-config "$B/decoder.yml" \
	"$B/model.npz" "$B/vocab.yml" "$B/source.spm" "$B/target.spm"
tokenize -m bv.tsr "$B/input.txt" | stages bv.tsr > bvmem
beam -m bv.tsr < bvmem > bv.beam
decode -m bv.tsr < bvmem > bv.greedy
for s in beam greedy; do
	cmp -s bv.$s "$B/marian.$s" ||
		fail "5,138 pieces, $s: $(diff bv.$s "$B/marian.$s" | head -5)"
done
[ "$(tokenize -m bv.tsr -f ids "$B/input.txt" | sed -n 4p |
     awk '{ print $NF }')" = 3 ] || fail "ø is not the vocab.yml's 3"

# a vocab.yml alone imports (its models take ids), and one whose ids
# are not each piece's own is refused
train-step --import marian -m yonly.tsr "$F/post.npz" "$F/vocab.yml" ||
	fail "import with a vocab.yml alone"
sed 's/: 3$/: 2/' "$F/vocab.yml" > dup.yml
exits 1 train-step --import marian -m x.tsr "$F/post.npz" dup.yml \
	"$F/vocab.spm"
err_has "dup.yml:4: id 2 is given twice: to 'una' (line 3) and to 'e'"
sed '1s/: 0$/: x/' "$F/vocab.yml" > bad.yml
exits 1 train-step --import marian -m x.tsr "$F/post.npz" bad.yml
err_has "bad.yml:1: piece '</s>': its id x is not from 0 to"
head -20 "$F/vocab.yml" > short.yml
exits 1 train-step --import marian -m x.tsr "$F/post.npz" short.yml \
	"$F/vocab.spm"
err_has "the vocabularies have 20 and 20 pieces, the model's dim-vocabs"
[ ! -e x.tsr ] || fail "a refused import left x.tsr"

# Imported without a decoder.yml, a model decodes as Marian does with no
# option at all: beam 12, normalize 0, max-length-factor 3, no <unk>, no
# minimum length, an empty or blank line translated to nothing.  The
# reference is native Marian's output (tools/marian-ref/make_defaults.sh)
# for each fixture, greedy (-b 1) and beam; attn runs with no flag.
D=$F/defaults
for m in post pre ssru ssru-pre; do
	train-step --import marian -m d$m.tsr "$F/$m.npz" "$F/vocab.spm"
	tokenize -m d$m.tsr "$D/input.txt" | stages d$m.tsr > dmem
	beam -m d$m.tsr < dmem > d.beam
	decode -m d$m.tsr < dmem > d.greedy
	for s in beam greedy; do
		cmp -s d.$s "$D/$m.$s" ||
			fail "$m $s: not Marian's: $(diff d.$s "$D/$m.$s")"
	done
done
# a decoder.yml's word-penalty (and normalize, beam-size) as Marian
# takes them: the score of a finished hypothesis less the penalty times
# its length, over its length to the power normalize
train-step --import marian -m wp.tsr --decoder-config "$D/decoder-wp.yml" \
	"$F/post.npz" "$F/vocab.spm"
tokenize -m wp.tsr "$D/input.txt" | stages wp.tsr | beam -m wp.tsr > d.wp
cmp -s d.wp "$D/post.wp" || fail "word-penalty: $(diff d.wp "$D/post.wp")"
cmp -s d.wp "$D/post.beam" && fail "the fixture's word penalty changes nothing"
# with attn's own defaults (the user's flags win) the empty lines say
# words: the defaults above are what made them empty
tokenize -m dpost.tsr "$D/input.txt" | stages dpost.tsr |
	beam -m dpost.tsr -k 5 --min-len 1 > d.k5
[ "$(sed -n 2p d.k5)" != "" ] || [ "$(sed -n 5p d.k5)" != "" ] ||
	fail "--min-len 1 changed nothing"

# the config: Marian's settings as attn's keys
tensordump -t -n model.config post.tsr > cfg
for kv in pos=marian tie=all norm=post ffn_act=swish bos_id=-1 eos_id=0 \
    unk_id=1 pad_id=0 ln_eps=1e-06 d_model=16 dec_beam_size=4 \
    dec_normalize=0.6 dec_max_length_factor=2.5 dec_allow_unk=0; do
	grep -qF "\"$kv\\n\"" cfg || fail "post.tsr's config lacks $kv"
done
tensordump -t -n model.config pre.tsr > cfg
for kv in tie=tgt norm=pre pre_kv=input ffn_act=relu; do
	grep -qF "\"$kv\\n\"" cfg || fail "pre.tsr's config lacks $kv"
done
# without a decoder.yml, Marian's own defaults
for kv in dec_beam_size=12 dec_normalize=0 dec_word_penalty=0 \
    dec_max_length_factor=3 dec_allow_unk=0 dec_min_len=0 \
    dec_empty_source=1; do
	grep -qF "\"$kv\\n\"" cfg || fail "pre.tsr's config lacks $kv"
done
# the vocabulary is the .spm file's bytes
tensordump -n vocab.tgt -H pre.tsr | awk '{ print $5 }' > n
[ "$(cat n)" -eq "$(wc -c < "$F/vocab.spm")" ] || fail "vocab.tgt is not vocab.spm"

# refusals, naming what
exits 1 train-step --import marian -m x.tsr "$F/bad-rnn.npz" "$F/vocab.spm"
err_has "dec-cell: gru is not supported with transformer-decoder-autoreg: rnn"
exits 1 train-step --import marian -m x.tsr "$F/bad-s2s.npz" "$F/vocab.spm"
err_has "type: s2s is not supported"
exits 1 train-step --import marian -m x.tsr "$F/bad-tied-layers.npz" \
    "$F/vocab.spm"
err_has "transformer-tied-layers is not supported"
exits 1 train-step --import marian -m x.tsr "$F/missing.npz" "$F/vocab.spm"
err_has "has no decoder_l2_ffn_b2"
# a flipped byte in the middle of the archive: a member's CRC
cp "$F/post.npz" bad.npz
printf '\377' | dd of=bad.npz bs=1 seek=30000 conv=notrunc 2>/dev/null
exits 1 train-step --import marian -m x.tsr bad.npz "$F/vocab.spm"
err_has "CRC-32 mismatch"
head -c 50000 "$F/post.npz" > cut.npz
exits 1 train-step --import marian -m x.tsr cut.npz "$F/vocab.spm"
err_has "no end of central directory"
exits 1 train-step --import marian -m x.tsr "$F/post.npz" "$F/decoder.yml"
err_has "vocabular"
[ -e x.tsr ] && fail "a refused import left x.tsr"
exits 1 train-step --import marian -m post.tsr "$F/post.npz" "$F/vocab.spm"
err_has "exists"
exits 0 train-step --import marian --force -m post.tsr "$F/post.npz" \
    "$F/vocab.spm"
exits 2 train-step --import opennmt -m y.tsr "$F/post.npz" "$F/vocab.spm"
exits 2 train-step --import marian -m y.tsr "$F/post.npz"
exits 2 train-step --decoder-config "$F/decoder.yml" -m y.tsr
ls | grep -q '\.tmp' && fail "temporary files left"
exit 0
