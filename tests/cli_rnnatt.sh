#!/bin/sh
# rnnsearch's attention=diagonal and attention=window (doc/MODELS.md)
# on copying and reversing up to four of eight two-letter words: train-step
# --init measures diag_ratio from the pairs; each learns to the accuracy
# stated below (measured: window 100 and 100 of 100 after 2000 updates;
# diagonal 100 copied, 65 reversed after 1000: its one annotation a step
# is a bidirectional GRU's, which knows some of the sentence); resuming is
# bit-identical; decode and beam give the same bytes at -b 1, 7 and 64;
# a model without the key is additive, as every model made before it.
set -eu
. "$(dirname "$0")/lib/cli.sh"

sentences 5 600 1 4 "s r s" > all.txt
cut -f1,2 all.txt > rev.txt
cut -f1,3 all.txt > copy.txt
cut -f1 all.txt > src.txt
tokenize -l 300 src.txt > vocab 2>/dev/null
SIZES="-S emb=16 -S hidden=24 -S maxout=8 -S optim=adam -S lr=0.01
	-S batch_tokens=200"
new() {	# new MODEL ATTENTION [PAIRS]
	# shellcheck disable=SC2086
	train-step -i -f -m "$1" -a rnnsearch -s vocab -t vocab $SIZES \
		-S attention="$2" ${3:-}
}
new m.tsr additive
tokenize -p -m m.tsr copy.txt > copy.tsr
tokenize -p -m m.tsr rev.txt > rev.tsr
# 5 words of source to 3 of target (</s> included): ratio 5/3
printf 'ab cd ef gh\tab cd\n' | tokenize -p -m m.tsr > ratio.tsr

# diag_ratio: measured from the pairs, --set wins, needed
ratio() { tensordump -t "$1" | sed -n 's/^"diag_ratio=\(.*\)\\n"$/\1/p'; }
new r.tsr diagonal ratio.tsr
[ "$(ratio r.tsr)" = 1.66667 ] || fail "diag_ratio $(ratio r.tsr), not 5/3"
new r.tsr diagonal "-S diag_ratio=0.5 ratio.tsr"
[ "$(ratio r.tsr)" = 0.5 ] || fail "--set diag_ratio=0.5 gave $(ratio r.tsr)"
new r.tsr diagonal 2> err && fail "diagonal without diag_ratio accepted"
grep -q 'attention=diagonal needs diag_ratio' err || fail "$(cat err)"
new r.tsr diagonal "-S diag_ratio=0" 2> err && fail "diag_ratio=0 accepted"
grep -q 'diag_ratio=0: diag_ratio is a number above 0' err ||
	fail "$(cat err)"
new r.tsr cursor 2> err && fail "attention=cursor accepted"
grep -q 'attention=cursor: attention is one of additive|diagonal|window' \
	err || fail "$(cat err)"

head -100 all.txt > test.txt
decode_() {	# decode_ MODEL [OPTION...]: ids in, text (or -t frames) out
	embed -m "$1" | encode -m "$1" | attend -m "$1" | decode -m "$@"
}
accuracy() {	# accuracy MODEL COLUMN: exact outputs of 100
	cut -f1 test.txt | tokenize -m "$1" | decode_ "$1" > out.txt
	cut -f"$2" test.txt | paste - out.txt | awk -F'\t' '$1 == $2' | wc -l
}
learn() {	# learn ATTENTION TASK COLUMN UPDATES AT-LEAST
	new "$1.$2.tsr" "$1" "$2.tsr"
	nice train-step -q -m "$1.$2.tsr" -n "$4" "$2.tsr"
	n=$(accuracy "$1.$2.tsr" "$3")
	[ "$n" -ge "$5" ] || fail "$1: only $n of 100 in $2 (want $5)"
}
learn window copy 3 2000 95
learn window rev 2 2000 95
learn diagonal copy 3 1000 95
learn diagonal rev 2 1000 50

# resuming: 30 updates, and 12 + 18 (across a pass's end)
for a in window diagonal; do
	new a.tsr $a copy.tsr
	cp a.tsr b.tsr
	train-step -q -m a.tsr -n 30 rev.tsr
	train-step -q -m b.tsr -n 12 rev.tsr
	cmp -s a.tsr b.tsr && fail "$a: 12 updates gave the model of 30"
	train-step -q -m b.tsr -n 18 rev.tsr
	cmp a.tsr b.tsr || fail "$a: 12 + 18 updates differ from 30"
done

# any batch size, greedy and beam, with the reference kernels (whose
# rounding does not depend on the rows of a product); the weights are
# written as att.weights
export ATTN_KERNELS=reference
for a in window diagonal; do
	m=$a.rev.tsr
	cut -f1 test.txt | tokenize -m $m | embed -m $m | encode -m $m |
		attend -m $m > mem.tsr
	for b in 1 7 64; do
		decode -m $m -t -b $b < mem.tsr > d.$b
		beam -m $m -k 3 -t -b $b < mem.tsr > k.$b
	done
	for b in 7 64; do
		cmp d.1 d.$b || fail "$a: decode -b $b differs from -b 1"
		cmp k.1 k.$b || fail "$a: beam -b $b differs from -b 1"
	done
	tensordump d.1 | grep -q ' att.weights ' || fail "$a: no att.weights"
done
# the diagonal's weights: row i one-hot at min(S-1, round(i r)), with
# r = 0.5 rounding halves up: 0 1 1 2 2 3 3 4 4 4 ...
new d.tsr diagonal "-S diag_ratio=0.5"
printf 'ab cd ef gh\n' | tokenize -m d.tsr | decode_ d.tsr -t |
	tensordump -t -n att.weights > w.txt
awk 'NR > 2 { want = int(r / 2 + 0.5); if (want > NF - 1) want = NF - 1
	for (j = 1; j <= NF; j++) if ($j != (j - 1 == want)) bad = 1; r++ }
	END { exit bad || r < 9 }' w.txt || fail "diagonal weights: $(cat w.txt)"
unset ATTN_KERNELS

# a model without the key (made before it) is additive: m.tsr with
# attention, window_k and diag_ratio taken out of its config decodes
# byte for byte as m.tsr (the config's size counted in bytes: LC_ALL=C)
nice train-step -q -m m.tsr -n 20 copy.tsr
tensordump -t m.tsr |
	grep -v -e '^"attention=' -e '^"window_k=' -e '^"diag_ratio=' > o.txt
n=$(LC_ALL=C awk '/^record model.config / { c = 1; next } /^record/ { c = 0 }
	c { n += length($0) - 3 } END { print n }' o.txt)
sed "s/^record model.config u8 \[[0-9]*\]/record model.config u8 [$n]/" \
	o.txt | tensordump -r > old.tsr
tensordump -t old.tsr | grep -q '^"attention=' && fail "old: a key"
# (the streams' model.id, of the model file, differs: the rest compared)
for m in old m; do
	cut -f1 test.txt | tokenize -m $m.tsr | decode_ $m.tsr -t |
		tensordump -t -n hyp.ids -n att.weights -n hyp.score > $m.out
done
cmp old.out m.out || fail "a model without attention= decodes unlike additive"
grep -q '^record att.weights ' old.out || fail "old: no att.weights"
exit 0
