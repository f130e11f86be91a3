#!/bin/sh
# examples/markup.awk and translate-markup.sh: tags out of lines and back
# into their translations.  strip's plain text and tag positions, and
# project's output, on hand-made lines, exactly (reordering, an element
# split, words without a link, the deepest of several links, empty and
# lone elements, a line without links); the refusals; and the whole
# script on a tiny model: every line kept, every tag kept, the output's
# elements nested, its text beam's.  Under mawk and gawk alike (CI runs
# both as awk).
set -eu
. "$(dirname "$0")/lib/cli.sh"
mk="$root/examples/markup.awk"
# same_tags: awk reading lines in pairs, a line then what became of it,
# and exiting 1 unless each pair has the same set of tags (an element
# split repeats its tags)
same_tags='
	function tags(s, set,    n) {
		split("", set)
		while (match(s, /<[^<>]*>/)) {
			set[substr(s, RSTART, RLENGTH)] = 1
			n++
			s = substr(s, RSTART + RLENGTH)
		}
		return n
	}
	NR % 2 { tags($0, want); next }
	{ tags($0, got)
	  for (t in want) if (!(t in got)) { print NR / 2 ": " t; bad = 1 }
	  for (t in got) if (!(t in want)) { print NR / 2 ": +" t; bad = 1 } }
	END { exit bad }'

# strip: lines in; their plain text and TAGS out
printf '%s\n' \
	'Dio<b>s</b> es <i>bueno</i>.' \
	'  a	<b> b </b>  ' \
	'a < b' \
	'' \
	'<p>a <b>b</b><br/> c<em></em></p><!-- n -->' \
	'<B>x</b><BR> <a href="u v">y</a>' > in.txt
awk -v mode=strip -v tags=tags -f "$mk" < in.txt > plain ||
	fail "strip: status $?"
printf '%s\n' 'Dios es bueno.' 'a b' 'a < b' '' 'a b c' 'x y' |
	cmp -s - plain || fail "strip's text: $(cat plain)"
printf '%s\n' \
	'3	o 0 <b>	c 1 </b>	o 2 <i>	c 3 </i>' \
	'2	o 1 <b>	c 2 </b>' \
	'3' \
	'0' \
	'3	o 0 <p>	o 1 <b>	c 2 </b>	v 2 <br/>	o 3 <em>	c 3 </em>	c 3 </p>	v 3 <!-- n -->' \
	'2	o 0 <B>	c 1 </b>	v 1 <BR>	o 1 <a href="u v">	c 2 </a>' |
	cmp -s - tags || fail "strip's tags: $(cat tags)"

# project: TAGS and beam -A's lines in, the marked translation out
printf '%s\n' \
	'3	o 0 <b>	c 2 </b>' \
	'3	o 0 <i>	c 2 </i>' \
	'3	o 0 <p>	o 1 <b>	c 2 </b>	v 2 <br/>	o 3 <em>	c 3 </em>	c 3 </p>	v 3 <!-- n -->' \
	'2	o 0 <b>	c 1 </b>' \
	'2	o 0 <a>	o 0 <b>	c 1 </b>	c 1 </a>' \
	'0' \
	'0	v 0 <br/>' \
	'3	o 0 <i>	o 0 <b>	c 1 </b>	c 2 </i>' > ptags
# 1: a and b bold, reordered round c: the element split in two
# 2: P, before the first link, takes X's elements; Q, between X (in <i>)
#    and Y (in none), those they share; R, after the last, Y's
# 3: X is linked to a (in <p>) and b (in <p> and <b>): b's; <br/> goes
#    before Y, where c went; the empty <em> and the comment at the end
# 4: no links: the element empty at the end
# 5: the words of <a> and <b> have no link: both, nested, where y went
# 8: Q, between X (in <i> and <b>) and Y (in <i>), in <i>
printf '%s\n' \
	'X Y Z ||| 0-0 2-1 1-2' \
	'P X Q Y R ||| 0-1 2-3' \
	'X Y ||| 0-0 1-0 2-1' \
	'X Y ||| ' \
	'Y ||| 1-0' \
	' ||| ' \
	' ||| ' \
	'X Q Y ||| 0-0 1-2' > hyp
awk -v mode=project -v tags=ptags -f "$mk" < hyp > got ||
	fail "project: status $?"
printf '%s\n' \
	'<b>X</b> Y <b>Z</b>' \
	'<i>P X</i> Q Y R' \
	'<p><b>X</b> <br/>Y</p><em></em><!-- n -->' \
	'X Y<b></b>' \
	'<a><b></b></a>Y' \
	'' \
	'<br/>' \
	'<i><b>X</b> Q Y</i>' | cmp -s - got || fail "project: $(cat got)"

# 300 random lines: random elements (nested, empty, lone tags) over
# random words, random alignments to random translations; the output's
# text is the translation's, its elements nest, its tags are the line's
awk 'BEGIN { srand(11)
	for (n = 0; n < 300; n++) {
		sw = int(rand() * 8); line = ""; depth = 0; ne = 0
		for (i = 0; i <= sw; i++) {
			while (rand() < .3) {
				r = rand()
				if (r < .4) { e = "e" (++ne)
					line = line "<" e " n=\"" n "\">"
					st[++depth] = e }
				else if (r < .7 && depth)
					line = line "</" st[depth--] ">"
				else line = line "<br id=" (++ne) "/>"
			}
			if (i < sw) line = line (rand() < .2 ? "" : " ") "w" i
		}
		while (depth) line = line "</" st[depth--] ">"
		print line > "r.marked"
		tw = int(rand() * 8); t = ""
		for (j = 0; j < tw; j++) t = t (j ? " " : "") "T" j
		print t > "r.text"
	} }'
awk -v mode=strip -v tags=r.tags -f "$mk" < r.marked > r.plain ||
	fail "random lines: strip, status $?"
awk 'BEGIN { srand(12); while ((getline t < "r.text") > 0) {
	getline p < "r.plain"; sw = split(p, x, " "); tw = split(t, x, " ")
	a = ""
	for (i = 0; i < sw; i++) for (j = 0; j < tw; j++)
		if (rand() < .25) a = a (a == "" ? "" : " ") i "-" j
	print t " ||| " a } }' | awk -v mode=project -v tags=r.tags -f "$mk" \
	> r.out || fail "random lines: project, status $?"
[ "$(wc -l < r.out)" -eq 300 ] || fail "random lines: $(wc -l < r.out) out"
sed 's/<[^<>]*>//g' r.out | cmp -s - r.text ||
	fail "random lines: the text changed"
awk -v mode=strip -v tags=r.t2 -f "$mk" < r.out > /dev/null ||
	fail "random lines: the output's elements do not nest"
paste -d '\n' r.marked r.out | awk "$same_tags" ||
	fail "random lines: tags lost or made"

# the refusals: the line, what is wrong, exit 1
refused() {	# refused MODE TAGS-LINES INPUT-LINE MESSAGE
	printf '%s\n' "$2" > rtags
	printf '%s\n' "$3" > rin
	rc=0
	awk -v mode="$1" -v tags=rtags -f "$mk" < rin > /dev/null 2> err ||
		rc=$?
	[ "$rc" -eq 1 ] && grep -qF "markup.awk: $4" err ||
		fail "$1 '$3': exit $rc, $(cat err)"
}
refused strip '' 'x <b>y' 'line 1: <b> is not closed on its line'
refused strip '' 'x</b>' 'line 1: </b> closes no element'
refused strip '' '<b><i>x</b></i>' 'line 1: </b> closes <i>'
refused project '1' 'X ||| 0-1' 'line 1: "0-1" is not a link of its 1 source'
refused project '1' 'X ||| 1-0' 'line 1: "1-0" is not a link'
refused project '1' 'X ||| 0:0' 'line 1: "0:0" is not a link'
refused project '1' 'X' 'line 1: no " ||| "'
refused project "$(printf '1\n1')" 'X ||| 0-0' 'rtags has more lines than'
printf 'X ||| 0-0\nY ||| 0-0\n' > rin
printf '1\n' > rtags
rc=0
awk -v mode=project -v tags=rtags -f "$mk" < rin > /dev/null 2> err || rc=$?
[ "$rc" -eq 1 ] && grep -qF 'line 2: no line of rtags' err ||
	fail "project, TAGS short: exit $rc, $(cat err)"
rc=0
awk -v mode=cut -v tags=x -f "$mk" < /dev/null 2> err || rc=$?
[ "$rc" -eq 2 ] || fail "mode=cut: exit $rc"

# tools/markup-eval.sh: five one-to-one sure links; a, its word alone;
# b, B and C; c, no link, nowhere; d and e, the other word
printf 'a b c\nd e\n' > es
printf 'A B C\nD E\n' > en
printf '0-0 1-1 2-2\n0-1 1-0\n' > sure
printf '0-0 1-1 1-2\n0-0 1-1\n' > hyp.al
echo 'cases 5 exact 20.0 more 20.0 wrong 40.0 none 20.0' > want
sh "$root/tools/markup-eval.sh" es en sure hyp.al > got ||
	fail "markup-eval.sh: status $?"
cmp -s want got || fail "markup-eval.sh: $(cat got)"
# a word with two sure links is no case
printf '0-0 1-1 2-2 2-1\n0-1 1-0\n' > sure
echo 'cases 3 exact 33.3 more 0.0 wrong 66.7 none 0.0' > want
sh "$root/tools/markup-eval.sh" es en sure hyp.al > got ||
	fail "markup-eval.sh: status $?"
cmp -s want got || fail "markup-eval.sh, two links: $(cat got)"
printf '0-0\n0-0\n0-0\n' > three.al
exits 1 sh "$root/tools/markup-eval.sh" es en sure three.al
err_has 'three.al has 3 lines, es 2'
exits 2 sh "$root/tools/markup-eval.sh" es en sure

# the whole script, on a tiny model of pairs that reverse
sentences 5 200 2 5 "s r" > pairs.txt
trained m.tsr pairs.txt 30
printf '%s\n' '<b>ab</b> cd ef' '' 'gh <i>ij <b>kl</b></i> ab<br/>' \
	'<a href="x">cd</a>' 'ef gh' > marked.txt
sh "$root/examples/translate-markup.sh" -m m.tsr -- -k 2 < marked.txt > out.txt ||
	fail "translate-markup.sh: status $?"
awk -v mode=strip -v tags=t2 -f "$mk" < marked.txt | tokenize -m m.tsr |
	stages m.tsr | beam -m m.tsr -k 2 > want.txt
awk -v mode=strip -v tags=t3 -f "$mk" < out.txt > /dev/null ||
	fail "the output's elements do not nest: $(cat out.txt)"
sed 's/<[^<>]*>//g' out.txt | cmp -s - want.txt ||
	fail "the output's text is not beam's: $(paste out.txt want.txt)"
paste -d '\n' marked.txt out.txt | awk "$same_tags" ||
	fail "tags lost or made: $(cat out.txt)"

# -t: the tags into translations given, by score -A's alignment
printf '%s\n' 'ef cd ab' '' 'ab kl ij gh' 'cd' 'gh  ef ' > given.txt
sh "$root/examples/translate-markup.sh" -m m.tsr -t given.txt \
	< marked.txt > out.txt || fail "-t: status $?"
sed 's/<[^<>]*>//g' out.txt | cmp -s - given.txt ||
	fail "-t: the text is not the translation given: $(cat out.txt)"
paste -d '\n' marked.txt out.txt | awk "$same_tags" ||
	fail "-t: tags lost or made: $(cat out.txt)"
head -4 given.txt > short.txt
exits 1 sh "$root/examples/translate-markup.sh" -m m.tsr -t short.txt \
	< marked.txt
err_has 'translate-markup.sh: short.txt has 4 lines, the input 5'
printf 'a\nb\tc\nd\ne\nf\n' > tab.txt
exits 1 sh "$root/examples/translate-markup.sh" -m m.tsr -t tab.txt \
	< marked.txt
err_has 'translate-markup.sh: tab.txt:2: a tab'

exits 2 sh "$root/examples/translate-markup.sh" < marked.txt
exits 1 sh "$root/examples/translate-markup.sh" -m nothing.tsr < marked.txt
err_has 'translate-markup.sh: nothing.tsr: cannot read'
exits 0 sh "$root/examples/translate-markup.sh" --help
