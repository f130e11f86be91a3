#!/bin/sh
# An imported Marian model is an ordinary attn model (the fixtures of
# tools/marian-ref, imported as cli_marian.sh does: post-norm swish tied
# all, pre-norm relu tied target-output): it passes tensordump -c; its
# f16 and int8 exports translate text, one line per line (the empty one
# too), greedy and beam; f16 mostly as f32 does, and both score pairs
# close to f32 (int8 not to the digit); score does not depend on the batch;
# decode, beam and score -A give every line links inside its sentences;
# a shortlist of every unit gives the full softmax's bytes, and its
# special units are the model's (</s> 0, <unk> 1: 34 frequent units of
# 36, where ids 0-3 would leave 32); train-step fine-tunes it on the
# user's pairs (their log-probability rises; Marian's settings stay),
# and the result exports and translates.
set -eu
. "$(dirname "$0")/lib/cli.sh"
F=$root/tests/fixtures/marian

stages() { embed -m "$1" | encode -m "$1" | attend -m "$1"; }
sentences 5 40 1 4 "s r" "la luna come verde mar el gato casa perro una" \
	> pairs.txt
{ cut -f1 pairs.txt; echo; } > src.txt
n=$(wc -l < src.txt)

# links LINES SOURCE: every link i-j of each line of LINES ("text |||
# links", or links alone) inside its source's words and its own text's
links() {
	paste -d '\t' "$2" "$1" | awk -F '\t' '{
		ns = split($1, s, " ")
		if (index($2, " ||| ")) {
			nt = split(substr($2, 1, index($2, " ||| ") - 1), t, " ")
			nl = split(substr($2, index($2, " ||| ") + 5), l, " ")
		} else { nt = 1e9; nl = split($2, l, " ") }
		for (k = 1; k <= nl; k++) {
			if (split(l[k], ij, "-") != 2 || ij[1] !~ /^[0-9]+$/ ||
			    ij[2] !~ /^[0-9]+$/ || ij[1] >= ns || ij[2] >= nt) {
				print "line " NR ": link " l[k]; exit 1 }
			links++
		}
	} END { if (!links) { print "no links"; exit 1 } }'
}

train-step --import marian -m post.tsr "$F/post.npz" "$F/vocab.spm"
train-step --import marian -m pre.tsr "$F/pre.npz" "$F/vocab.spm" \
	"$F/vocab.spm"
for m in post pre; do
	tensordump -c $m.tsr > /dev/null || fail "$m: tensordump -c"
	train-step -x $m.f16.tsr -m $m.tsr
	train-step -x $m.i8.tsr --dtype int8 -m $m.tsr
	tensordump -H $m.f16.tsr | grep -q ' f16 ' || fail "$m: no f16 in f16"
	tensordump -H $m.i8.tsr | grep -q ' i8 ' || fail "$m: no i8 in int8"
	for v in $m $m.f16 $m.i8; do
		tokenize -m $v.tsr src.txt | stages $v.tsr > mem.$v
		decode -m $v.tsr < mem.$v > out.$v
		beam -m $v.tsr < mem.$v > beam.$v
		for o in out beam; do
			[ "$(wc -l < $o.$v)" -eq "$n" ] ||
				fail "$v: $o: $(wc -l < $o.$v) lines for $n"
		done
		tokenize -p -m $v.tsr pairs.txt | stages $v.tsr > pmem.$v
		score -m $v.tsr < pmem.$v > s.$v
		score -m $v.tsr -b 1 < pmem.$v > s1.$v
		[ "$(wc -l < s.$v)" -eq 40 ] || fail "$v: $(wc -l < s.$v) scores"
		cmp -s s.$v s1.$v || fail "$v: score -b 1 differs from -b 64"
	done
	# a random model has near ties, which f16's rounding may flip
	same=$(paste -d '\n' out.$m out.$m.f16 | awk 'NR % 2 { a = $0; next }
		$0 == a { n++ } END { print n + 0 }')
	[ "$same" -ge $((n * 3 / 4)) ] ||
		fail "$m: f16 translates $same of $n lines as f32 does"
	# (this random model's logits are large: int8 moves a score by 1.3%
	# of it on average, 10% at most; f16 by 0.24% at most)
	paste s.$m s.$m.f16 s.$m.i8 | awk '
		function off(a, b, tol) { d = a - b; if (d < 0) d = -d
			return d > tol * (a < 0 ? -a : a) + tol }
		{ r = ($3 - $1) / $1; mean += (r < 0 ? -r : r) / 40 }
		off($1, $2, 0.01) || off($1, $3, 0.2) { bad++ }
		END { exit bad > 0 || mean > 0.04 }' ||
		fail "$m: f16 or int8 scores far from f32: $(paste s.$m s.$m.f16 s.$m.i8 | head -3)"
	cmp -s s.$m s.$m.i8 && fail "$m: int8 scores are f32's to the digit"

	# alignments
	decode -m $m.tsr -A < mem.$m > al.decode
	beam -m $m.tsr -A < mem.$m > al.beam
	for o in decode beam; do
		[ "$(wc -l < al.$o)" -eq "$n" ] || fail "$m: $o -A: lines"
		links al.$o src.txt > why || fail "$m: $o -A: $(cat why)"
	done
	sed 's/ ||| .*//' al.decode | cmp -s - out.$m ||
		fail "$m: decode -A translates otherwise"
	score -m $m.tsr -A < pmem.$m > al.score
	[ "$(wc -l < al.score)" -eq 40 ] || fail "$m: score -A: lines"
	cut -f1 pairs.txt > psrc.txt
	links al.score psrc.txt > why || fail "$m: score -A: $(cat why)"
done

# the shortlist: every unit, the full softmax's bytes; the model's own
# special units
V=$(tensordump -t -n model.config post.tsr | sed -n 's/^"tgt_vocab=\([0-9]*\)\\n"$/\1/p')
[ "$V" = 36 ] || fail "the fixture's vocabulary has ${V:-no} units, not 36"
cp post.tsr sl.tsr
tokenize -p -m sl.tsr pairs.txt > pairs.tsr
train-step --shortlist -m sl.tsr --frequent $V --translations 1 pairs.tsr \
	2> log
grep -q "shortlist of 34 frequent target units" log ||
	fail "specials of the model: $(cat log)"
decode -m sl.tsr -t < mem.post > full
decode -m sl.tsr -t --shortlist < mem.post > short
cmp -s full short || fail "decode --shortlist of every unit differs"
beam -m sl.tsr -t < mem.post > full
beam -m sl.tsr -t --shortlist < mem.post > short
cmp -s full short || fail "beam --shortlist of every unit differs"

# fine-tuning on the user's pairs
cp post.tsr ft.tsr
train-step -q -m ft.tsr -n 30 pairs.tsr
tokenize -p -m ft.tsr pairs.txt | stages ft.tsr | score -m ft.tsr > s.ft
paste s.post s.ft | awk '{ a += $1; b += $2 } END { exit !(b > a + NR) }' ||
	fail "fine-tuning did not raise the pairs' log p: $(paste s.post s.ft | head -3)"
tensordump -t -n model.config ft.tsr > cfg
for kv in step=30 pos=marian tie=all norm=post ffn_act=swish bos_id=-1 \
    eos_id=0 unk_id=1; do
	grep -qF "\"$kv\\n\"" cfg || fail "ft.tsr's config lacks $kv"
done
train-step -x ft.i8.tsr --dtype int8 -m ft.tsr
tokenize -m ft.i8.tsr src.txt | stages ft.i8.tsr | beam -m ft.i8.tsr > out.ft
[ "$(wc -l < out.ft)" -eq "$n" ] || fail "fine-tuned int8: lines"
exit 0
