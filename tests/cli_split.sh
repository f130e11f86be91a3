#!/bin/sh
# Sentences inside a line (tokenize's split, cmd/common/linejoin.c): a
# line of several sentences becomes one frame a sentence under the line's
# number (line.part, line.gap); tokenize -d, decode and beam put the line
# back, so output line N is input line N, empty lines included, and a
# split line's output is its sentences' outputs, translated alone, joined
# by the spaces between them (alignments moved, scores summed).
set -u
. "$(dirname "$0")/lib/cli.sh"
errors=0

casa_pairs 200 5 9 > pairs.txt
trained m.tsr pairs.txt 30
# by hand: line 1 three sentences, 2 empty, 3 one, 4 spaces only, 5 two
# with their own spaces around, 6 a URL and an abbreviation (one), 7
# punctuation only (one), 8 inverted marks (three)
printf '%s\n' 'El perro come. La casa verde! El gato negro?' '' \
	'el perro come pan' '   ' '  Come el perro.   Come el gato.  ' \
	'Ve a www.perro.es y al Sr. Gato.' '!!! ... ???' \
	'¡Come pan! ¿Quién come? Él.' > in
want_parts='3 1 1 1 2 1 1 3'

# (--no-keep: the sentences' src.text below are translated alone, as
# written; with the spans kept, "www.perro.es", the line comes back too)
tokenize -m m.tsr --lang es < in | tokenize -d -m m.tsr | cmp -s - in ||
	fail "split, spans kept as written: the lines do not come back"
tokenize -m m.tsr --lang es --no-keep < in > split.tsr ||
	fail "tokenize --lang es"
# frames per line: one per sentence, each numbered with its line
got=$(tensordump -H -n src.text < split.tsr |
	awk '{ n[$1]++ } END { for (i = 0; i < 8; i++) printf "%s%d",
	      i ? " " : "", n[i] }')
[ "$got" = "$want_parts" ] || fail "sentences per line: $got, not $want_parts"
# line.part {k, n} in order; the gaps are the spaces between sentences
parts=$(tensordump -H -v -n line.part < split.tsr | awk 'NR % 2 == 0' |
	tr -s ' \n' '  ')
[ "$parts" = " 0 3 1 3 2 3 0 2 1 2 0 3 1 3 2 3 " ] ||
	[ "$parts" = "0 3 1 3 2 3 0 2 1 2 0 3 1 3 2 3 " ] ||
	fail "line.part values: '$parts'"
tensordump -t < split.tsr > split.txt
grep -c '^record line.gap' split.txt | grep -qx 5 ||
	fail "line.gap records: $(grep -c '^record line.gap' split.txt), not 5"
grep -A1 '^record line.gap u8 \[3\]' split.txt | grep -qx '"   "' ||
	fail "the gap of three spaces (line 5) is not kept"

# the line back byte for byte, empty and blank lines included
tokenize -d -m m.tsr < split.tsr > back || fail "tokenize -d"
cmp -s in back || fail "tokenize | tokenize -d: $(diff in back)"
# --no-split: one frame a line, as before
n=$(tokenize -m m.tsr --no-split < in | tensordump -H -n src.text | wc -l)
[ "$n" -eq 8 ] || fail "--no-split: $n frames, not 8"
# without --lang, only titles before a name hold: "Sr." does, "etc."
# ends a sentence; with --lang es both hold
n=$(sed -n 6p in | tokenize -m m.tsr | tensordump -H -n src.text | wc -l)
[ "$n" -eq 1 ] || fail "'Sr. Gato' without --lang: $n frames, not 1"
n=$(echo 'Perros, gatos, etc. Gato vino.' | tokenize -m m.tsr |
	tensordump -H -n src.text | wc -l)
[ "$n" -eq 2 ] || fail "'etc. Gato' without --lang: $n frames, not 2"
n=$(echo 'Perros, gatos, etc. Gato vino.' | tokenize -m m.tsr --lang es |
	tensordump -H -n src.text | wc -l)
[ "$n" -eq 1 ] || fail "'etc. Gato' with --lang es: $n frames, not 1"
# a SentencePiece model's lines stay whole (Marian's), unless --split
spm=$root/tests/fixtures/spm/uni_id_300.model
n=$(echo 'Hola. Adiós.' | tokenize -v "$spm" | tensordump -H -n src.text |
	wc -l)
[ "$n" -eq 1 ] || fail "SentencePiece, no --split: $n frames, not 1"
n=$(echo 'Hola. Adiós.' | tokenize -v "$spm" --split |
	tensordump -H -n src.text | wc -l)
[ "$n" -eq 2 ] || fail "SentencePiece, --split: $n frames, not 2"

# Each frame of the split stream: its line, gap and text, one a line.
tensordump -t < split.tsr | awk '
	/^record / { name = $2; num = $6; next }
	name == "line.gap" { gap = substr($0, 2, length($0) - 2); name = "" }
	name == "src.text" { print num "\t" gap "\t" substr($0, 2,
				length($0) - 2); gap = ""; name = "" }' > frames
[ "$(wc -l < frames)" -eq 13 ] || fail "13 frames: $(wc -l < frames)"
cut -f 3 frames > sentences

for prog in decode beam; do
	stages m.tsr < split.tsr > mem.tsr || fail "stages"
	$prog -m m.tsr -c 3 < mem.tsr > out || fail "$prog"
	[ "$(wc -l < out)" -eq 8 ] || fail "$prog: $(wc -l < out) lines, not 8"
	$prog -m m.tsr -c 3 -A --scores < mem.tsr > out2 || fail "$prog -A"
	# each sentence alone, a whole line, then joined by hand: texts with
	# their gaps, alignments moved past the words before, scores summed
	tokenize -m m.tsr --no-split --no-keep < sentences | stages m.tsr |
		$prog -m m.tsr -c 3 -A --scores > alone || fail "$prog alone"
	paste frames alone | awk -F '\t' '
	function flush() {
		if (have) printf "%s ||| %s ||| %.6f\n", text, al, sc
	}
	{
		split($4, p, / \|\|\| /)
		if ($1 != cur || !have) {
			flush(); cur = $1; have = 1
			text = ""; al = ""; sc = 0; sw = tw = 0
		}
		text = text $2 p[1]
		n = split(p[2], a, " ")
		for (i = 1; i <= n; i++) {
			split(a[i], ij, "-")
			al = al (al == "" ? "" : " ") ij[1] + sw "-" ij[2] + tw
		}
		sw += split($3, w, " "); tw += split(p[1], w, " ")
		sc += p[3]
	}
	END { flush() }' > joined
	[ "$(wc -l < out2)" -eq 8 ] || fail "$prog -A: $(wc -l < out2) lines"
	awk -F ' [|][|][|] ' '{ print $1 }' out2 | cmp -s - out ||
		fail "$prog: -A changed the text: $(cat out2)"
	# texts and alignments exactly; scores within the rounding of three
	paste -d '\n' out2 joined | awk -F ' [|][|][|] ' '
		NR % 2 { t = $1; a = $2; s = $3; next }
		t != $1 || a != $2 || s - $3 > 2e-5 || $3 - s > 2e-5 {
			print "line " NR / 2 ": \"" t " ||| " a " ||| " s \
			      "\" not \"" $0 "\""; bad = 1 }
		END { exit bad }' > diff || fail "$prog: $(cat diff)"
	# --tensors passes the sentences on; tokenize -d joins them as the
	# text was
	$prog -m m.tsr -c 3 -t < mem.tsr | tokenize -d -m m.tsr > viatsr ||
		fail "$prog -t | tokenize -d"
	cmp -s viatsr out || fail "$prog -t | tokenize -d: $(diff viatsr out)"
done

# n-best lists and score take whole lines: refused, naming the frame
stages m.tsr < split.tsr > mem.tsr
exits 1 beam -m m.tsr -k 2 -n 2 < mem.tsr
err_has "beam: frame 0: a sentence of a line (line.part): --nbest takes whole lines"
# A stream whose line stops short, or skips a sentence, is refused:
# each frame of the text form is a paragraph (the first after the header)
drop_frame() {
	awk -v skip="$1" 'BEGIN { RS = ""; ORS = "\n\n" } NR != skip' split.txt |
		tensordump -r > cut.tsr || fail "tensordump -r"
}
drop_frame 13
exits 1 tokenize -d -m m.tsr cut.tsr
err_has "the stream ends after 2 of the 3 sentences of frame 7 (line.part)"
stages m.tsr < cut.tsr > mem.tsr
exits 1 decode -m m.tsr < mem.tsr
err_has "decode: the stream ends after 2 of the 3 sentences of frame 7"
drop_frame 2
exits 1 tokenize -d -m m.tsr cut.tsr
err_has "frame 0: the sentences of frame 0 stop after 1 of 3 (line.part)"
# the first sentence gone (and the text form's header line with it,
# which tensordump -r does without)
drop_frame 1
exits 1 tokenize -d -m m.tsr cut.tsr
err_has "frame 0: line.part {1, 3} where a line starts"
# a gap on a whole line (line 3's frame given one)
awk '/^record src.ids i32 \[[0-9]*\] frame 2$/ {
	print "record line.gap u8 [1] frame 2"; print "\" \"" } { print }' \
	split.txt | tensordump -r > cut.tsr || fail "tensordump -r, a gap"
exits 1 tokenize -d -m m.tsr cut.tsr
err_has "frame 2: line.gap without line.part"
# a bad line.part: {3, 2}
sed '0,/^0 3$/s//3 2/' split.txt | tensordump -r > cut.tsr
exits 1 tokenize -d -m m.tsr cut.tsr
err_has "frame 0: line.part {3, 2} is not part k of n, 0 <= k < n, n >= 2"

# clauses: a sentence of more than --clause-words words (default 40) is
# cut after ';' and after ':' before a capital
words46=$(awk 'BEGIN { for (i = 0; i < 22; i++) printf "casa "; printf "verde;";
	for (i = 0; i < 21; i++) printf " pan"; printf ": Come gato." }')
nframes() {
	tokenize -m m.tsr "$@" | tensordump -H -n src.text | wc -l
}
[ "$(echo "$words46" | nframes)" -eq 3 ] || fail "46 words: not 3 clauses"
[ "$(echo "$words46" | nframes --clause-words 46)" -eq 1 ] ||
	fail "46 words, --clause-words 46: cut"
[ "$(echo "$words46" | nframes --clause-words 0)" -eq 1 ] ||
	fail "46 words, --clause-words 0: cut"
[ "$(echo "Uno dos; tres: Cuatro." | nframes --clause-words 3)" -eq 3 ] ||
	fail "4 words, --clause-words 3: not 3 clauses"
[ "$(echo "$words46" | tokenize -m m.tsr | tokenize -d -m m.tsr)" = \
	"$words46" ] || fail "clauses not joined back"

# usage errors
exits 2 tokenize -m m.tsr --lang xx < in
err_has "--lang: 'xx' is not one of en, es, de, fr, pt, it, none"
exits 2 tokenize -m m.tsr --lang es --no-split < in
exits 2 tokenize -m m.tsr --lang es -d < split.tsr
exits 2 tokenize -l 300 --no-split in
exits 2 tokenize -m m.tsr --clause-words 3 -f ids < in
exits 2 tokenize -m m.tsr --clause-words -1 < in

# Long lines, bounded: 100,000 bytes without a stop are one frame; 25,000
# sentences of 4 bytes are 25,000 frames and come back whole
awk 'BEGIN { for (i = 0; i < 20000; i++) printf "casa "; print "" }' > long
awk 'BEGIN { for (i = 0; i < 25000; i++) printf "Ab. "; print "" }' >> long
tokenize -m m.tsr --lang es < long > long.tsr || fail "long lines"
n=$(tensordump -H -n src.text < long.tsr | wc -l)
[ "$n" -eq 25001 ] || fail "long lines: $n frames, not 25001"
tokenize -d -m m.tsr < long.tsr | cmp -s - long ||
	fail "long lines: not given back"
[ "$errors" -eq 0 ]
