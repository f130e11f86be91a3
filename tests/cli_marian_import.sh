#!/bin/sh
# examples/marian-import.sh on the two directories a user downloads, laid
# out here from the small fixtures: an OPUS-MT zip's (the .npz, a
# *.vocab.yml, source.spm and target.spm, decoder.yml) and a Firefox
# Translations folder (every file gzipped: an int8 model with alphas, a
# shared vocab.*.spm, a lex.50.50.*.s2t shortlist, no configuration).
# Each gives the model that train-step --import gives from the same files
# with the right flags (Firefox's: its translator worker's settings and
# the shortlist), byte for byte, and translates standard input with it as
# that model does.  Usage and a missing directory are refused plainly.
set -eu
. "$(dirname "$0")/lib/cli.sh"
F=$root/tests/fixtures/marian
S=$root/examples/marian-import.sh

stages() { embed -m "$1" | encode -m "$1" | attend -m "$1"; }

# usage: exit 2, the script's name, no shell line number
exits 2 sh "$S"
err_has "usage: marian-import.sh DIR [OUT.tsr]"
grep -q "marian-import.sh: [0-9]" err && fail "a shell line number: $(cat err)"
exits 1 sh "$S" no-such-dir x.tsr
err_has "marian-import.sh: no-such-dir: no such directory"

# OPUS-MT's names
mkdir opus-mt-xx-yy
cp "$F/post.npz" \
  opus-mt-xx-yy/opus.spm32k-spm32k.transformer-align.model1.npz.best-perplexity.npz
cp "$F/vocab.yml" opus-mt-xx-yy/opus.spm32k-spm32k.vocab.yml
cp "$F/vocab.spm" opus-mt-xx-yy/source.spm
cp "$F/vocab.spm" opus-mt-xx-yy/target.spm
cp "$F/decoder.yml" opus-mt-xx-yy/decoder.yml
printf 'la luna come\n\nverde mar el gato\n' > in.txt
sh "$S" opus-mt-xx-yy opus.tsr < in.txt > opus.out
train-step --import marian -m want.tsr --decoder-config "$F/decoder.yml" \
	"$F/post.npz" "$F/vocab.yml" "$F/vocab.spm" "$F/vocab.spm"
cmp -s opus.tsr want.tsr || fail "the OPUS-MT directory's model differs"
tokenize -m want.tsr in.txt | stages want.tsr | beam -m want.tsr > want.out
cmp -s opus.out want.out || fail "OPUS-MT: $(paste opus.out want.out)"
[ "$(wc -l < opus.out)" -eq 3 ] || fail "$(wc -l < opus.out) lines for 3"
exits 1 sh "$S" opus-mt-xx-yy opus.tsr < /dev/null
err_has "opus.tsr exists"

# Firefox's: gzipped, int8 with alphas, a text shortlist named as
# Firefox names them; no configuration
I=$F/int8
mkdir firefox-xxyy
gzip -c "$I/student.intgemm8.alphas.bin" \
	> firefox-xxyy/model.xxyy.intgemm.alphas.bin.gz
gzip -c "$I/vocab.spm" > firefox-xxyy/vocab.xxyy.spm.gz
printf '▁come ▁come 0.9\n▁nube ▁azul 0.4\n▁pan ▁bajo 0.3\n' |
	gzip -c > firefox-xxyy/lex.50.50.xxyy.s2t.gz
head -5 "$I/input.txt" > fin.txt
sh "$S" firefox-xxyy ff.tsr < fin.txt > ff.out 2> err
err_has "Firefox Translations' settings"
printf '%s\n' 'beam-size: 1' 'normalize: 1.0' 'word-penalty: 0' \
	'max-length-factor: 2.0' 'gemm-precision: int8shiftAlphaAll' > firefox.yml
gzip -dc firefox-xxyy/lex.50.50.xxyy.s2t.gz > lex.s2t
train-step --import marian -m ffwant.tsr --decoder-config firefox.yml \
	--lex lex.s2t,50,50,0 "$I/student.intgemm8.alphas.bin" "$I/vocab.spm"
cmp -s ff.tsr ffwant.tsr || fail "the Firefox directory's model differs"
tensordump -t -n model.config ff.tsr > cfg
for kv in dec_beam_size=1 dec_normalize=1.0 dec_max_length_factor=2.0 \
    dec_shortlist=1; do
	grep -qF "\"$kv\\n\"" cfg || fail "ff.tsr's config lacks $kv"
done
tokenize -m ffwant.tsr fin.txt | stages ffwant.tsr | beam -m ffwant.tsr \
	> ffwant.out
cmp -s ff.out ffwant.out || fail "Firefox: $(paste ff.out ffwant.out)"
[ "$(wc -l < ff.out)" -eq 5 ] || fail "$(wc -l < ff.out) lines for 5"
# a file that says .gz and is not
echo x > firefox-xxyy/bad.gz
exits 1 sh "$S" firefox-xxyy ff2.tsr < /dev/null
err_has "bad.gz: not a gzip file"
exit 0
