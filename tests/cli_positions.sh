#!/bin/sh
# The Transformer's positions, pos=sinusoidal (the default), rope and
# learned: each learns to reverse up to five of eight two-letter words
# (at least 90 of 100 held-out sequences exactly right after 1500
# updates, where the untrained model gets at most 5; 96, 100 and 96 in
# a trial); N updates in one run and N/2 + N/2 give the same file byte
# for byte; greedy and beam output do not depend on the batch size; a model without the key is
# sinusoidal; pos=learned refuses, naming the frame or pair and the
# limit, a sentence longer than its table.
set -eu
. "$(dirname "$0")/lib/cli.sh"

sentences 5 4000 1 5 "s r" > pairs.txt
sentences 9 100 1 5 "s r" > test.txt
cut -f1 pairs.txt > src.txt
tokenize -l 300 src.txt > vocab 2>/dev/null
for pos in default sinusoidal rope learned; do
	set -- -S d_model=32 -S heads=4 -S ffn=64 -S enc_layers=1 \
		-S dec_layers=1 -S dropout=0 -S label_smoothing=0 \
		-S schedule=constant -S lr=0.003 -S clip=1 -S batch_tokens=200
	case $pos in
	default) ;;
	learned) set -- "$@" -S pos=learned -S max_pos=32 ;;
	*) set -- "$@" -S pos=$pos ;;
	esac
	train-step -i -m $pos.tsr -a transformer -s vocab -t vocab "$@"
done
tokenize -p -m rope.tsr pairs.txt > pairs.tsr
cut -f1 test.txt > test.src

# the default writes no key: its files are those of before the key
tensordump -t default.tsr | grep -q '^"pos=' && fail "default wrote pos"
tensordump -t learned.tsr | grep -q '^"max_pos=32\\n"$' ||
	fail "no max_pos=32 in the learned model"

# resuming: 30 updates, and 12 + 18
for pos in default rope learned; do
	cp $pos.tsr a.tsr
	cp $pos.tsr b.tsr
	train-step -q -m a.tsr -n 30 pairs.tsr
	train-step -q -m b.tsr -n 12 pairs.tsr
	cmp -s a.tsr b.tsr && fail "$pos: 12 updates gave the model of 30"
	train-step -q -m b.tsr -n 18 pairs.tsr
	cmp a.tsr b.tsr || fail "$pos: 12 + 18 updates differ from 30"
done

memory() {	# MODEL BATCH < text
	tokenize -m "$1" | embed -b "$2" -m "$1" | encode -b "$2" -m "$1" |
		attend -b "$2" -m "$1"
}
right() {	# hypotheses: how many of test.txt's references
	cut -f2 test.txt | paste - "$1" | awk -F'\t' '$1 == $2' | wc -l
}
for pos in default rope learned; do
	memory $pos.tsr 64 < test.src | decode -m $pos.tsr > out.txt
	before=$(right out.txt)
	[ "$before" -le 5 ] || fail "$pos: untrained, $before of 100 right"
	train-step -q -m $pos.tsr -n 1500 pairs.tsr
	for b in 1 7 64; do
		memory $pos.tsr $b < test.src > mem.$b
		decode -b $b -m $pos.tsr < mem.$b > greedy.$b
		beam -k 3 -b $b -m $pos.tsr < mem.$b > beam.$b
	done
	for b in 1 7; do
		cmp mem.$b mem.64 || fail "$pos: memory of -b $b differs"
		cmp greedy.$b greedy.64 || fail "$pos: decode -b $b differs"
		cmp beam.$b beam.64 || fail "$pos: beam -b $b differs"
	done
	after=$(right greedy.64)
	[ "$after" -ge 90 ] || fail "$pos: trained, only $after of 100 right"
done

# pos=sinusoidal given is the default
train-step -q -m sinusoidal.tsr -n 30 pairs.tsr
cp sinusoidal.tsr s.tsr
memory s.tsr 64 < test.src | decode -m s.tsr > s.out
train-step -i -m d.tsr -a transformer -s vocab -t vocab -S d_model=32 \
	-S heads=4 -S ffn=64 -S enc_layers=1 -S dec_layers=1 -S dropout=0 \
	-S label_smoothing=0 -S schedule=constant -S lr=0.003 -S clip=1 \
	-S batch_tokens=200
train-step -q -m d.tsr -n 30 pairs.tsr
memory d.tsr 64 < test.src | decode -m d.tsr > d.out
cmp s.out d.out || fail "pos=sinusoidal translates otherwise than no key"

# longer than the learned table: refused, exit 1
awk 'BEGIN { for (i = 0; i < 40; i++) printf "ab "; print "cd" }' > long.txt
rc=0
tokenize -m learned.tsr long.txt | embed -m learned.tsr > /dev/null \
	2> err || rc=$?
[ "$rc" -eq 1 ] || fail "embed of 41 words exited $rc"
grep -q '^embed: .*frame 0: src.ids has [0-9]* tokens, more than max_pos=32' \
	err || fail "embed: $(cat err)"
printf '%s\tab\n' "$(cat long.txt)" | tokenize -p -m learned.tsr > long.tsr
rc=0
train-step -q -m learned.tsr -n 1 long.tsr 2> err || rc=$?
[ "$rc" -eq 1 ] || fail "training on 41 words exited $rc"
grep -q '^train-step: .*pair 0 .* more than max_pos=32' err ||
	fail "train-step: $(cat err)"
exit 0
