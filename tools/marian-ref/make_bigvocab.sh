#!/bin/sh
# make_bigvocab.sh: tests/fixtures/marian/bigvocab/, an OPUS-MT-shaped
# model small enough to commit with a vocab.yml of published size's kind:
# source.spm and target.spm (spm_train, unigram, about 2,600 pieces each)
# on made-up text of two made-up languages with disjoint alphabets (so
# the joint vocab.yml has over 5,000 entries), pieces that YAML must quote
# (yes, no, null, #, :, &, *, -x, "", \, %s, {name}), and a character the
# source model does not cover (its coverage 0.9995) that the target's
# text holds often: OPUS-MT's pipeline finds it in the joint vocab.yml.
# The model is fullsize.py's tiny copying Transformer; native Marian
# translates input.txt as OPUS-MT's pipeline does (spm_encode with
# source.spm, marian-decoder with decoder.yml's settings and the
# vocab.yml, the postprocessing sed), beam and greedy.  cli_marian.sh
# holds attn's import of the directory to those outputs.  Needs native
# Marian (native.sh), Debian's sentencepiece and python3-numpy.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/native.sh"
marian_native
D=$here/../../tests/fixtures/marian/bigvocab
mkdir -p "$D"
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT

# two made-up languages: source words of Latin letters with accents,
# target words of Greek letters; a rare source character (ø, once in
# 4,000 lines: below the source model's coverage) common in the target
/usr/bin/python3 - "$t" <<'PY'
import random, sys
r = random.Random(5)
t = sys.argv[1]
lat = "abcdefghijklmnoprstuvzáéíóúñü"
gre = "αβγδεζηθικλμνξοπρστυφχψωøø"
odd = ["yes", "no", "null", "true", "#", ":", "&", "*", "-x", '"', "\\",
       "%s", "{name}", "a:b", "'q'", "~"]
def words(alpha, n):
    return ["".join(r.choice(alpha) for _ in range(r.randint(2, 9)))
            for _ in range(n)]
ls, lt = words(lat, 6000), words(gre, 6000)
def line(lex):
    w = [r.choice(lex) for _ in range(r.randint(3, 12))]
    if r.random() < 0.3:
        w.insert(r.randrange(len(w) + 1), r.choice(odd))
    return " ".join(w)
with open(t + "/src.txt", "w") as f:
    for i in range(40000):
        f.write(line(ls) + ("" if i % 4000 else " ø") + "\n")
with open(t + "/tgt.txt", "w") as f:
    for _ in range(40000):
        f.write(line(lt) + "\n")
with open(t + "/input.txt", "w") as f:
    for i in range(60):
        s = line(ls)
        if i % 7 == 3:
            s += " ø"
        f.write(("" if i == 10 else s) + "\n")
PY
for side in src tgt; do
	spm_train --input="$t/$side.txt" --model_prefix="$t/$side" \
		--vocab_size=2600 --model_type=unigram --bos_id=-1 --eos_id=0 \
		--unk_id=1 --pad_id=-1 --character_coverage=0.9995 \
		--normalization_rule_name=identity \
		--num_threads=2 --minloglevel=2 > /dev/null 2>&1
done
cp "$t/src.model" "$D/source.spm"
cp "$t/tgt.model" "$D/target.spm"
cp "$t/input.txt" "$D/input.txt"
{ spm_encode --model="$D/source.spm" < "$t/src.txt"
  spm_encode --model="$D/target.spm" < "$t/tgt.txt"; } |
	tr ' ' '\n' | grep -v '^$' | LC_ALL=C sort | LC_ALL=C uniq -c |
	LC_ALL=C sort -s -k1,1nr > "$t/counts"
V=$(/usr/bin/python3 "$here/fullsize.py" vocab "$D/vocab.yml" "$t/counts")
/usr/bin/python3 "$here/fullsize.py" tiny "$t" "$V"
# Marian reads the float32 copy; the committed one is its float16 twin
# (the same values), deflated: a third of the size
cp "$t/model.f16.npz" "$D/model.npz"
cat > "$t/decoder.yml" <<EOF
models:
  - $t/model.npz
vocabs:
  - $D/vocab.yml
  - $D/vocab.yml
beam-size: 6
normalize: 0.6
word-penalty: 0
max-length-factor: 1.5
mini-batch: 1
maxi-batch: 1
maxi-batch-sort: src
EOF
grep -v '^  - /' "$t/decoder.yml" | sed 's/^models:$/models: [model.npz]/;
	s/^vocabs:$/vocabs: [vocab.yml, vocab.yml]/' > "$D/decoder.yml"
spm_encode --model="$D/source.spm" < "$D/input.txt" > "$t/in.pieces"
for s in beam greedy; do
	[ $s = greedy ] && b="-b 1" || b=
	# shellcheck disable=SC2086
	(cd "$D" && "$MARIAN_BIN/marian-decoder" -c "$t/decoder.yml" \
		--cpu-threads 1 --quiet $b) < "$t/in.pieces" |
		sed 's/ //g;s/▁/ /g;s/^ *//;s/ *$//' > "$D/marian.$s"
done
echo "$D: vocab.yml of $V entries; $(ls "$D" | wc -l) files" >&2
