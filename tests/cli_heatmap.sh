#!/bin/sh
# tensordump --svg: attention written by hand as a recurrent model's
# [T,S] and a Transformer's [L,H,T,S] drawn with the greys worked out
# here (the last layer's mean by default, --layer, --head), labels from
# the ids or from a model's vocabularies (escaped), one file per frame
# with '#', standard output with '-', and the refusals.
set -eu
. "$(dirname "$0")/lib/cli.sh"
# cells FILE: the fills of the cells, row by row; cols/rows FILE: labels
cells() {
	sed -n '/<g id="cells">/,/<\/g>/p' "$1" |
		sed -n 's/.*fill="\(#[0-9a-f]*\)".*/\1/p' | tr '\n' ' '
}
texts() {
	sed -n "/<g id=\"$2\"/,/<\/g>/p" "$1" |
		sed -n 's/.*>\([^<]*\)<\/text>.*/\1/p' | tr '\n' '|'
}
expect() {	# expect WHAT GOT WANT
	[ "$2" = "$3" ] || fail "$1: got '$2', want '$3'"
}

# Greys: round(255 (1 - w)): 0.5 -> 80, 0.25 -> bf, 0.75 -> 40,
# 0.125 -> df, 0.375 -> 9f, 0.625 -> 60, 0.875 -> 20.
cat >a.txt <<'END'
tsr-text 1
record src.ids i32 [3]
5 6 2
record hyp.ids i32 [2]
7 2
record att.weights f32 [2,3] end
0 1 0.5
0.25 0.75 0
record src.ids i32 [3] frame 1
9 10 2
record tgt.ids i32 [2] frame 1
11 2
record att.weights f32 [2,2,2,3] frame 1 end
0.875 0.625 0.375  0.125 0 1
0.125 0.375 0.625  0.875 1 0
0     0.5   1      1     0 0.5
1     0.5   0      0.5   0 0.25
record src.ids i32 [2] frame 2 end
4 2
END
tensordump -r a.txt >a.tsr

tensordump --svg r.svg -f 0 a.tsr || fail "--svg: status $?"
head -n 1 r.svg | grep -q '^<?xml version="1.0"' || fail "no XML declaration"
tail -n 1 r.svg | grep -qx '</svg>' || fail "r.svg does not end"
expect "[T,S] cells" "$(cells r.svg)" \
	"#ffffff #000000 #808080 #bfbfbf #404040 #ffffff "
expect "[T,S] source labels" "$(texts r.svg cols)" "5|6|2|"
expect "[T,S] target labels" "$(texts r.svg rows)" "7|2|"
grep -q '<title>frame 0</title>' r.svg || fail "no title"

# The Transformer: the mean of the last layer's heads, a layer's mean, a
# head of the last layer, a head of a layer.
tensordump --svg t.svg -f 1 a.tsr
expect "default" "$(cells t.svg)" \
	"#808080 #808080 #808080 #404040 #ffffff #9f9f9f "
expect "tgt.ids labels" "$(texts t.svg rows)" "11|2|"
grep -q '<title>frame 1, layer 1, mean of 2 heads</title>' t.svg ||
	fail "transformer title"
tensordump --svg t.svg -f 1 --layer 0 a.tsr
expect "--layer 0" "$(cells t.svg)" \
	"#808080 #808080 #808080 #808080 #808080 #808080 "
tensordump --svg t.svg -f 1 --head 0 a.tsr
expect "--head 0" "$(cells t.svg)" \
	"#ffffff #808080 #000000 #000000 #ffffff #808080 "
tensordump --svg t.svg -f 1 --layer 0 --head 1 a.tsr
expect "--layer 0 --head 1" "$(cells t.svg)" \
	"#dfdfdf #9f9f9f #606060 #202020 #000000 #ffffff "
grep -q '<title>frame 1, layer 0, head 1</title>' t.svg || fail "head title"

# One file per frame with '#' (frame 2 has no attention), or stdout.
tensordump --svg 'p-#.svg' a.tsr
cmp -s p-0.svg r.svg || fail "p-0.svg is not frame 0's picture"
[ -f p-1.svg ] && [ ! -e p-2.svg ] || fail "p-#.svg: wrong files"
tensordump --svg - -f 0 <a.tsr >s.svg
cmp -s s.svg r.svg || fail "--svg - differs"

# Labels from a model's vocabularies, escaped: the source's units as
# tokenize shows them, and </s>.
printf 'la casa es grande\nel perro come\n' >text
tokenize -l 300 text >vocab 2>/dev/null
new_model m.tsr rnnsearch vocab vocab emb=4 hidden=4 att=4 maxout=2
echo "la casa" | tokenize -m m.tsr | tensordump -t | sed 's/ end$//' >b.txt
src_units=$(echo "la casa" | tokenize -m m.tsr -f units)
tgt_ids=$(echo "perro" | tokenize -m m.tsr -T -f ids)
tgt_units=$(echo "perro" | tokenize -m m.tsr -T -f units)
# units by fields: wc -w in the C locale counts no word of "▁" alone
S=$(echo "$src_units" | awk '{ print NF }')
N=$(echo "$tgt_ids" | awk '{ print NF }')
{
	echo "record hyp.ids i32 [$N]"
	echo "$tgt_ids"
	echo "record att.weights f32 [$N,$S] end"
	awk -v n="$N" -v s="$S" 'BEGIN { for (i = 0; i < n; i++)
		for (j = 0; j < s; j++) printf "%s%s", j == i ? 1 : 0,
		j == s - 1 ? "\n" : " " }'
} >>b.txt
tensordump -r b.txt >b.tsr
tensordump --svg m.svg -m m.tsr b.tsr || fail "-m: status $?"
escape() { echo "$1" | sed 's/&/\&amp;/g; s/</\&lt;/g; s/>/\&gt;/g' | tr ' ' '|'; }
expect "model source labels" "$(texts m.svg cols)" "$(escape "$src_units")|"
expect "model target labels" "$(texts m.svg rows)" "$(escape "$tgt_units")|"
case $(texts m.svg cols) in *'&lt;/s&gt;|') ;; *) fail "no </s> label" ;; esac

# Refusals: status 1 with a message, or 2 for usage.
refuse() {	# refuse STATUS WORDS ARGS...: tensordump ARGS must fail so
	want=$1 words=$2
	shift 2
	st=0
	tensordump "$@" >/dev/null 2>err || st=$?
	[ "$st" -eq "$want" ] || fail "$*: status $st, not $want"
	grep -q "^tensordump: .*$words" err || fail "$*: message: $(cat err)"
}
refuse 1 "second picture" --svg x.svg a.tsr
refuse 1 "no layer 2" --svg x.svg -f 1 --layer 2 a.tsr
refuse 1 "head 2" --svg x.svg -f 1 --head 2 a.tsr
refuse 1 "no --layer or --head" --svg x.svg -f 0 --head 0 a.tsr
refuse 1 "no frame with att.weights" --svg x.svg -f 2 a.tsr
sed 's/^9 10 2$/9 99999 2/' a.txt | tensordump -r >d.tsr
refuse 1 "frame 1: src.ids: id 99999 is not in m.tsr's source vocabulary" \
	--svg x.svg -m m.tsr -f 1 d.tsr
refuse 1 "nothere.tsr" --svg x.svg -m nothere.tsr -f 0 a.tsr
refuse 1 "x/y.svg" --svg x/y.svg -f 0 a.tsr
sed 's/^9 10 2$/9 10 11 2/; s/src.ids i32 \[3\] frame 1/src.ids i32 [4] frame 1/' \
	a.txt | tensordump -r >c.tsr
refuse 1 "frame 1: src.ids is not i32 \[3\]" --svg x.svg -f 1 c.tsr
refuse 2 "--layer" --layer 0 a.tsr
refuse 2 "--model" -m m.tsr a.tsr
refuse 2 "--svg" --svg x.svg -t a.tsr
refuse 2 "--layer" --svg x.svg --layer x a.tsr
refuse 2 "--head" --svg x.svg --head -1 a.tsr
exit 0
