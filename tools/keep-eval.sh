#!/bin/sh
# keep-eval.sh: what is kept as written (tokenize's masking, issue 47),
# measured for doc/results.md ("Kept as written").  Needs the programs
# on PATH (or built in ../build/bin) and, for the last two parts, the
# data beside the repository (../shared/data).
#
#   sh tools/keep-eval.sh [MODEL] > table.txt
#
# 1. examples/everyday.es (Spanish everyday lines) through MODEL (the
#    shipped Bible model by default), beam's defaults: of the spans
#    listed by hand in examples/everyday.spans, how many tokenize finds,
#    and how many come out verbatim exactly once in their line, for
#    --no-keep, each masking (--keep-as name, drop), each with -A.
# 2. The UI sets' English (ui-en-de, ui-en-fr dev.en): the spans found,
#    the share of them that the human translation (dev.de, dev.fr) also
#    holds verbatim, and their survival through MODEL with and without
#    masking (MODEL reads Spanish: the text it makes is noise, the spans
#    must come through all the same).
# 3. The Bible dev set: BLEU with masking and with --no-keep, and bleu's
#    paired approximate randomisation between them.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
M=${1:-$here/models/bible-es-en.tsr}
data=${DATA:-$here/../shared/data}
command -v beam >/dev/null 2>&1 || PATH=$here/build/bin:$PATH
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT TERM
ex=$here/examples

# translate OPTS... : stdin through MODEL with tokenize's OPTS, beam's in
# $B; the text alone on stdout
translate() {
	tokenize -m "$M" "$@" | embed -m "$M" | encode -m "$M" |
		attend -m "$M" | beam -m "$M" $B | sed 's/ ||| .*//'
}

# survive SPANS OUT [any]: "ok total" over the lines: the spans of line
# N (tab-separated) found in line N of OUT as many times as they are
# listed (with any: at least once): keep-count.awk's
survive() {
	paste -d '\n' "$1" "$2" |
		awk -v any="${3-}" -f "$here/tools/keep-count.awk" | tail -n 1
}

# appended SPANS SRC OUT: the spans that restoring could not place and
# put at the end of their line: those that end line N of OUT (after
# its last word), less those that end line N of SRC
appended() {
	paste "$1" "$2" "$3" | awk -F '\t' '
		function tail(t,    k, i, again) {
			k = 0
			do {
				again = 0
				sub(/[ \t]+$/, "", t)
				for (i = 1; i < NF - 1; i++)
					if ($i != "" && length(t) >= length($i) &&
					    substr(t, length(t) - length($i) + 1) == $i) {
						t = substr(t, 1, length(t) - length($i))
						k++; again = 1; break
					}
			} while (again)
			return k
		}
		{ n += tail($NF) - tail($(NF - 1)) }
		END { print n }'
}

pct() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%d/%d (%.1f%%)", a, b, b ? 100 * a / b : 0 }'; }

echo "## everyday.es ($(wc -l < "$ex/everyday.es") lines), $(basename "$M")"
tokenize -m "$M" --spans < "$ex/everyday.es" > "$tmp/found"
set -- $(survive "$ex/everyday.spans" "$tmp/found")
echo "spans found by tokenize: $(pct "$1" "$2") of those listed by hand," \
     "$(tr '\t' '\n' < "$tmp/found" | grep -c .) found in all"
for way in "--no-keep|" "--keep-as=name|" "--keep-as=drop|" \
	   "--keep-as=name|-A" "--keep-as=drop|-A"; do
	B=${way#*|}
	translate ${way%|*} < "$ex/everyday.es" > "$tmp/out"
	set -- $(survive "$ex/everyday.spans" "$tmp/out")
	echo "verbatim, once, tokenize ${way%|*} beam $B: $(pct "$1" "$2");" \
	     "put at the line's end: $(appended "$ex/everyday.spans" \
				      "$ex/everyday.es" "$tmp/out")"
	cp "$tmp/out" "$tmp/everyday.${way%|*}$B"
done
[ -z "${KEEP_OUT-}" ] || cp "$tmp"/everyday.* "$KEEP_OUT"

for pair in de fr; do
	d=$data/ui-en-$pair
	[ -r "$d/dev.en" ] || continue
	echo "## ui-en-$pair dev.en ($(wc -l < "$d/dev.en") lines)"
	tokenize -m "$M" --spans < "$d/dev.en" > "$tmp/found"
	n=$(tr '\t' '\n' < "$tmp/found" | grep -c . || true)
	echo "lines with a span: $(grep -c . "$tmp/found" || true); spans: $n"
	set -- $(survive "$tmp/found" "$d/dev.$pair" any)
	echo "found spans the human translation holds verbatim:" \
	     "$(pct "$1" "$2")"
	B=
	for way in --no-keep --keep-as=name; do
		translate $way < "$d/dev.en" > "$tmp/out"
		set -- $(survive "$tmp/found" "$tmp/out")
		echo "verbatim, once, through the model, tokenize $way:" \
		     "$(pct "$1" "$2")"
	done
done

d=$data/bible-es-en
[ -r "$d/dev.es" ] || exit 0
echo "## Bible dev ($(wc -l < "$d/dev.es") verses), beam's defaults"
tokenize -m "$M" --spans < "$d/dev.es" > "$tmp/found"
echo "spans found: $(tr '\t' '\n' < "$tmp/found" | grep -c . || true)"
B=
translate --no-keep < "$d/dev.es" > "$tmp/base"
translate < "$d/dev.es" > "$tmp/keep"
echo "lines that differ: $(paste "$tmp/base" "$tmp/keep" |
	awk -F '\t' '$1 != $2' | wc -l)"
bleu -f text -par "$d/dev.en" -i "$tmp/base" "$tmp/keep"
