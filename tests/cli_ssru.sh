#!/bin/sh
# train-step --import marian of Bergamot's students, whose decoder has an
# SSRU in place of self-attention (transformer-decoder-autoreg: rnn,
# dec-cell: ssru): tools/marian-ref's two fixtures (ssru: post-norm, relu,
# every embedding tied, as the students; ssru-pre: pre-norm, swish,
# target tying) import as dec_self=ssru and translate greedily through
# embed | encode | attend | decode to exactly the ids of the float64
# numpy reference written from Marian's source (which never picks
# <unk> and may end at once: --min-len 0), scores within 1e-4 nats.
# score gives the reference's scores of those ids; beam -k 1 is the
# greedy search, and beam -k 4 gives hypotheses whose scores score
# computes again (the cells follow their hypotheses through the beam).
# Text goes through the whole pipeline; the model fine-tunes (the
# teacher-forced pass and its gradients) and exports to int8.
set -eu
. "$(dirname "$0")/lib/cli.sh"
F=$root/tests/fixtures/marian

# src.ids frames from lines of ids, and with tgt.ids from a second file
awk 'BEGIN { print "tsr-text 1" }
     { printf "record src.ids i32 [%d] frame %d end\n%s\n", NF, NR - 1, $0 }' \
	"$F/input.ids" | tensordump -r > src.tsr
pairs_of() {	# ids file, "ids<TAB>score" file: frames of src.ids, tgt.ids
	cut -f1 "$2" | paste -d '\t' "$1" - | awk -F '\t' '
	BEGIN { print "tsr-text 1" }
	{ n = split($1, a, " "); m = split($2, b, " ")
	  printf "record src.ids i32 [%d] frame %d\n%s\n", n, NR - 1, $1
	  printf "record tgt.ids i32 [%d] frame %d end\n%s\n", m, NR - 1, $2 }' |
	tensordump -r
}
# columns 2 and 4 of each line (got, want) within the tolerance
close_scores() {	# what, file of got<TAB>want lines, tolerance
	awk -F "\t" -v w="$1" -v tol="$3" '{
		d = $2 - $4; if (d < 0) d = -d
		if (d > tol) { print w ": line " NR ": " $2 ", want " $4; bad = 1 }
	} END { exit bad }' "$2"
}
hyps() {	# frames with hyp.ids and hyp.score -> "ids<TAB>score" lines
	tensordump -H -n hyp.ids -n hyp.score --values=all |
		awk 'NR % 4 == 2 { $1 = $1; ids = $0 } NR % 4 == 0 { print ids "\t" $1 }'
}

for v in ssru ssru-pre; do
	train-step --import marian -m $v.tsr "$F/$v.npz" "$F/vocab.spm" ||
		fail "$v: import"
	tensordump -t -n model.config $v.tsr > cfg
	grep -qF '"dec_self=ssru\n"' cfg || fail "$v: no dec_self=ssru"
	tensordump -H $v.tsr | awk '{ print $2 }' > names
	grep -qx dec.1.ssru.Wf names || fail "$v: no dec.1.ssru.Wf"
	grep -q 'dec\.[0-9]*\.self' names && fail "$v: a decoder self-attention"
	embed -m $v.tsr < src.tsr | encode -m $v.tsr | attend -m $v.tsr > mem
	decode -m $v.tsr -t --min-len 0 -a 0 -c 12 < mem | hyps > got
	[ "$(wc -l < got)" -eq 6 ] || fail "$v: $(wc -l < got) translations"
	cut -f1 got > got.ids
	cut -f1 "$F/$v.expected" > want.ids
	cmp -s got.ids want.ids ||
		fail "$v: ids differ from the reference: $(diff got.ids want.ids)"
	paste got "$F/$v.expected" > both
	close_scores "$v" both 1e-4 || fail "$v: scores off"

	# the forced path: score of the reference's ids
	pairs_of "$F/input.ids" "$F/$v.expected" > st.tsr
	embed -m $v.tsr < st.tsr | encode -m $v.tsr | attend -m $v.tsr |
		score -m $v.tsr > scores
	cut -f2 "$F/$v.expected" | paste want.ids scores want.ids - > both
	close_scores "$v score" both 1e-4 || fail "$v: score(1) off"

	# beam: -k 1 is the greedy search; -k 4's best, scored again
	beam -m $v.tsr -k 1 -l 0 --min-len 0 -a 0 -c 12 -t < mem | hyps | cut -f1 > b1.ids
	cmp -s b1.ids want.ids || fail "$v: beam -k 1 is not greedy"
	beam -m $v.tsr -k 4 -l 0 --min-len 0 -a 0 -c 12 -t < mem | hyps > b4
	[ "$(wc -l < b4)" -eq 6 ] || fail "$v: beam -k 4: $(wc -l < b4) lines"
	cmp -s b4 got && fail "$v: beam -k 4 found nothing better than greedy"
	pairs_of "$F/input.ids" b4 > b4.tsr
	embed -m $v.tsr < b4.tsr | encode -m $v.tsr | attend -m $v.tsr |
		score -m $v.tsr > scores
	cut -f1 b4 | paste - scores > rescored
	paste b4 rescored > both
	close_scores "$v beam" both 1e-4 || fail "$v: beam's scores are not score's"
done

# text through the whole pipeline, one line per line
printf 'la luna come\n\nverde mar el gato\n' > text.in
tokenize -m ssru.tsr text.in | embed -m ssru.tsr | encode -m ssru.tsr |
	attend -m ssru.tsr | beam -m ssru.tsr > text.out
[ "$(wc -l < text.out)" -eq 3 ] || fail "$(wc -l < text.out) lines for 3"
tokenize -m ssru.tsr text.in | embed -m ssru.tsr | encode -m ssru.tsr |
	attend -m ssru.tsr | decode -m ssru.tsr > text.out
[ "$(wc -l < text.out)" -eq 3 ] || fail "decode: $(wc -l < text.out) lines"

# fine-tuning: 40 steps on three pairs raise their log-probability
printf 'la luna come\tel sol\nverde mar\tun perro rojo\nel gato\tla casa\n' \
	> pairs.txt
tokenize -m ssru.tsr -p pairs.txt > pairs.tsr
cp ssru.tsr ft.tsr
embed -m ft.tsr < pairs.tsr | encode -m ft.tsr | attend -m ft.tsr |
	score -m ft.tsr > before
train-step -q -m ft.tsr -n 40 pairs.tsr || fail "fine-tuning"
embed -m ft.tsr < pairs.tsr | encode -m ft.tsr | attend -m ft.tsr |
	score -m ft.tsr > after
paste before after | awk '$2 <= $1 + 1 { bad = 1 } END { exit bad }' ||
	fail "fine-tuning did not learn: $(paste before after | tr '\n' ' ')"

# int8: the SSRU's matrices as i8 with their scales, its bias f32; the
# export translates
train-step -x q.tsr --dtype int8 -m ssru.tsr
tensordump -H q.tsr | awk '{ print $2, $3 }' > dt
for kv in "dec.0.ssru.W i8" "dec.0.ssru.W.scale f32" "dec.1.ssru.Wf i8" \
    "dec.1.ssru.bf f32"; do
	grep -qx "$kv" dt || fail "q.tsr: not $kv"
done
embed -m q.tsr < src.tsr | encode -m q.tsr | attend -m q.tsr |
	decode -m q.tsr -t -a 0 -c 12 | hyps > q.got
[ "$(wc -l < q.got)" -eq 6 ] || fail "int8: $(wc -l < q.got) translations"
exit 0
