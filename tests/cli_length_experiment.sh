#!/bin/sh
# examples/length-experiment.sh on ten sentences of 1 to 10 words: a tiny
# untrained model translated greedily and with beam search, and two
# systems given as text whose BLEU per bucket is known (a perfect one, and
# one that is perfect on the short half and empty on the long one); the
# buckets and their ranges, the table's shape in TSV and Markdown, one
# polyline per model in the plot at the heights the scores give; equal
# lengths kept in one bucket; and the refusals.
set -eu
. "$(dirname "$0")/lib/cli.sh"
run() { sh "$root/examples/length-experiment.sh" "$@"; }
export ATTN_THREADS=1

# line i: i words of source; a reference of at least four words
awk 'BEGIN { split("la casa es muy grande el perro come pan agua", w, " ")
	for (i = 1; i <= 10; i++) { s = ""
		for (j = 1; j <= i; j++) s = s (j > 1 ? " " : "") w[(i + j) % 10 + 1]
		print s } }' >src.txt
awk 'BEGIN { for (i = 1; i <= 10; i++)
	print "this is the reference of line " i " ." }' >ref.txt
cp ref.txt perfect.txt
awk 'NR <= 4 { print; next } { print "" }' ref.txt >short.txt

tokenize -l 300 src.txt >vocab 2>/dev/null
new_model m.tsr rnnsearch vocab vocab

run -o out -k 2 -t 'a <test> & more' src.txt ref.txt greedy=m.tsr \
	beam=m.tsr:beam perfect=perfect.txt short=short.txt \
	>out.md 2>err || fail "status $?: $(cat err)"

# the table: a header, five buckets of two sentences, and "all"
cat >want <<'END'
bucket	words	sentences	greedy	beam	perfect	short
1	1-2	2
2	3-4	2
3	5-6	2
4	7-8	2
5	9-10	2
all	1-10	10
END
{ head -n 1 out/table.tsv; tail -n +2 out/table.tsv | cut -f 1-3; } >got
cmp -s got want || { diff want got >&2; fail "buckets differ"; }
awk -F '\t' 'NF != 7 { exit 1 }
	NR > 1 { for (i = 4; i <= 7; i++) if ($i !~ /^[0-9]+\.[0-9][0-9]$/) exit 1 }' \
	out/table.tsv || fail "a row without 7 columns or a score"
# perfect: 100 everywhere; short: 100 on buckets 1-2 (lines 1-4), then 0
sed -n 2,6p out/table.tsv | cut -f 6,7 | tr '\t\n' '  ' >got
printf "100.00 100.00 100.00 100.00 100.00 0.00 100.00 0.00 100.00 0.00 " >want
cmp -s got want || fail "scores: $(cat got)"
# the overall score of short is bleu's on the whole set
printf '%s\n' "$(bleu -b -w 2 ref.txt -i short.txt 2>/dev/null)" >want
awk -F '\t' '$1 == "all" { print $7 }' out/table.tsv >got
cmp -s got want || fail "overall: $(cat got), bleu says $(cat want)"

# the Markdown table, also on stdout
cmp -s out.md out/table.md || fail "stdout is not table.md"
[ "$(wc -l <out/table.md)" -eq 8 ] || fail "table.md: not 8 lines"
awk -F '|' 'NF != 9 || $1 != "" || $9 != "" { exit 1 }' out/table.md ||
	fail "table.md: not 7 columns between bars"
for m in greedy beam perfect short; do
	[ "$(wc -l <out/$m.hyp)" -eq 10 ] || fail "$m.hyp: not 10 lines"
done
cmp -s out/perfect.hyp perfect.txt || fail "perfect.hyp differs"

# the plot: one polyline of five points per model; perfect level, short
# level on buckets 1-2 and lower (greater y) on 3-5; the title escaped
[ "$(grep -c '<polyline' out/plot.svg)" -eq 4 ] || fail "not 4 polylines"
tail -n 1 out/plot.svg | grep -qx '</svg>' || fail "plot.svg does not end"
grep -q '>a &lt;test&gt; &amp; more<' out/plot.svg || fail "title not escaped"
grep '<polyline' out/plot.svg | sed 's/.*points="//; s/".*//' |
	awk '{ if (NF != 5) exit 1; for (i = 1; i <= 5; i++) { split($i, p, ",")
		y[NR, i] = p[2] } }
	END { for (i = 2; i <= 5; i++) if (y[3, i] != y[3, 1]) exit 1
		if (y[4, 2] != y[4, 1] || y[4, 1] != y[3, 1]) exit 1
		for (i = 4; i <= 5; i++) if (y[4, i] != y[4, 3]) exit 1
		if (!(y[4, 3] > y[4, 1])) exit 1 }' ||
	fail "polylines not at the scores' heights"
grep -q '>1-2<' out/plot.svg && grep -q '>9-10<' out/plot.svg ||
	fail "x labels missing"

# equal lengths stay together: six of one word, then 2 and 3 words, in
# four buckets, make two
printf 'a\nb\nc\nd\ne\nf\ng h\ni j k\n' >src2.txt
awk '{ print "reference sentence number " NR " here" }' src2.txt >ref2.txt
run -o out2 -b 4 src2.txt ref2.txt same=ref2.txt >/dev/null 2>err ||
	fail "ties: status $?: $(cat err)"
printf '1\t1-1\t6\t100.00\n2\t2-3\t2\t100.00\nall\t1-3\t8\t100.00\n' >want
tail -n +2 out2/table.tsv >got
cmp -s got want || { diff want got >&2; fail "ties"; }
[ "$(grep -c '<polyline' out2/plot.svg)" -eq 1 ] || fail "ties: not 1 polyline"

# refusals
run --help | grep -q '^usage:' || fail "--help"
st=0; run src.txt ref.txt >/dev/null 2>&1 || st=$?
[ "$st" -eq 2 ] || fail "too few arguments: status $st"
st=0; run -b x src.txt ref.txt a=perfect.txt >/dev/null 2>&1 || st=$?
[ "$st" -eq 2 ] || fail "-b x: status $st"
head -n 9 ref.txt >ref9.txt
for args in "src.txt ref9.txt a=perfect.txt" "src.txt ref.txt perfect.txt" \
	"src.txt ref.txt a=ref9.txt" "src.txt ref.txt a/b=perfect.txt" \
	"src.txt ref.txt a=perfect.txt a=short.txt" "src.txt ref.txt a=nothere" \
	"-b 11 src.txt ref.txt a=perfect.txt"; do
	st=0
	# shellcheck disable=SC2086
	run -o bad $args >/dev/null 2>err || st=$?
	[ "$st" -eq 1 ] || fail "$args: status $st"
	grep -q '^length-experiment.sh: ' err || fail "$args: no message"
done
echo "ok"
