#!/bin/sh
# Paragraphs against verses (doc/results.md, "Sentences inside a line"):
# every 3 consecutive lines of SRC joined into one line (a paragraph),
# translated (a) whole, (b) split by tokenize (sentences, and clauses of
# sentences of more than 40 words); the verses translated (c) as given
# and (d) split, their translations joined 3 by 3 likewise; (e) is (b)
# with the abbreviations of no language (tokenize's default), (f) is (b)
# with sentences only (--clause-words 0).  BLEU of each against the
# references joined 3 by 3, with paired approximate randomisation
# against (c); then (c) and (d) verse by verse against REF.
#
#   tools/paragraph-bleu.sh [SRC REF MODEL OUT]
#
# Defaults: the Bible dev set, the shipped model, build/paragraph.  The
# programs come from build/bin; each stage runs one thread under nice.
# Environment: SPLIT_LANG (default es), the source's language for --lang.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
data=/work/shared/data/bible-es-en
src=${1:-$data/dev.es}
ref=${2:-$data/dev.en}
M=${3:-$root/models/bible-es-en.tsr}
out=${4:-$root/build/paragraph}
lang=${SPLIT_LANG:-es}
PATH=$root/build/bin:$PATH
mkdir -p "$out"

# lines joined 3 by 3 with a space; a last short group stays one line
join3() {
	awk 'NR % 3 == 1 { l = $0; next }
	     { l = l " " $0 } NR % 3 == 0 { print l }
	     END { if (NR % 3) print l }'
}

# standard input translated; tokenize's options are the arguments
translate() {
	nice tokenize -m "$M" "$@" | nice embed -m "$M" --threads 1 |
		nice encode -m "$M" --threads 1 |
		nice attend -m "$M" --threads 1 |
		nice beam -m "$M" --threads 1
}

join3 < "$src" > "$out/par.src"
join3 < "$ref" > "$out/par.ref"
translate --no-split < "$out/par.src" > "$out/a.whole"
translate --lang "$lang" < "$out/par.src" > "$out/b.split"
translate --no-split < "$src" > "$out/c.lines"
translate --lang "$lang" < "$src" > "$out/d.lines"
join3 < "$out/c.lines" > "$out/c.verses"
join3 < "$out/d.lines" > "$out/d.verses-split"
translate < "$out/par.src" > "$out/e.split-none"
translate --lang "$lang" --clause-words 0 < "$out/par.src" > "$out/f.sentences"
for f in par.src a.whole b.split c.verses d.verses-split e.split-none \
	f.sentences; do
	[ "$(wc -l < "$out/$f")" -eq "$(wc -l < "$out/par.ref")" ] || {
		echo "$0: $out/$f: not one line a paragraph" >&2
		exit 1
	}
done
# sentences per paragraph, as tokenize cut them
echo "frames: $(tokenize -m "$M" --lang "$lang" < "$out/par.src" |
	tensordump | grep -c ' src.text ') for $(wc -l < "$out/par.src")" \
	"paragraphs, $(tokenize -m "$M" --lang "$lang" < "$src" |
	tensordump | grep -c ' src.text ') for $(wc -l < "$src") verses"
cd "$out"
SACREBLEU_SEED=12345 bleu -f text -par par.ref -i c.verses a.whole \
	b.split d.verses-split e.split-none f.sentences
SACREBLEU_SEED=12345 bleu -f text -par "$ref" -i c.lines d.lines
