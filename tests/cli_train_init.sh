#!/bin/sh
# train-step --init protects and explains: an existing file is replaced
# only with --force; --set takes the architecture's keys with values of
# their kind, and refuses others (exit 2) listing the keys, which are the
# keys train-step(1) documents; the defaults are the recipes'.  A refusal
# leaves the model file's bytes as they were.
set -eu
. "$(dirname "$0")/lib/cli.sh"
man=$root/man/man1/train-step.1
cfg() { tensordump -n model.config -t "$1" | sed -n 's/^"\(.*\)\\n"$/\1/p'; }

printf 'ab cd ef\ngh ij\n' > text
tokenize -l 270 text > vocab 2>/dev/null
init() { train-step -i -a transformer -s vocab -t vocab -S d_model=16 \
	-S heads=2 -S ffn=32 -S enc_layers=1 -S dec_layers=1 "$@"; }
init -m m.tsr -S seed=1
cp m.tsr before.tsr

# an existing file: refused, named, unchanged; replaced with --force
rc=0
init -m m.tsr -S seed=2 2> err || rc=$?
[ "$rc" -eq 1 ] || fail "--init over a model: exit $rc"
grep -q '^train-step: m.tsr exists: .*--force' err || fail "$(cat err)"
cmp m.tsr before.tsr || fail "--init changed an existing model"
init -m m.tsr -S seed=2 --force
cmp -s m.tsr before.tsr && fail "--force did not replace the model"
cfg m.tsr | grep -qx 'seed=2' || fail "--force: not the new model"
cp m.tsr before.tsr

# settings refused: exit 2, the keys listed, nothing written
for s in bogus=1 d_modle=16 heads=2.5 heads=0 norm=mid tie=some \
	dropout=1 dropout=-0.1 lr=abc warmup=0 batch_tokens=1e3x \
	step=5 src_vocab=9 arch=rnnsearch novalue; do
	for f in m.tsr new.tsr; do
		rc=0
		init -m "$f" --force -S "$s" 2> err || rc=$?
		[ "$rc" -eq 2 ] || fail "--set $s: exit $rc"
		grep -q "^train-step: --set: " err || fail "$s: $(cat err)"
	done
	cmp m.tsr before.tsr || fail "--set $s changed the model"
	[ ! -e new.tsr ] || fail "--set $s made a model"
done
init -m new.tsr -S bogus=1 2> err || :
keys="the keys are: .*d_model.*norm"
grep -q "no key 'bogus' can be set for transformer; $keys" err ||
	fail "no list of keys: $(cat err)"
rc=0
train-step -i -m new.tsr -a rnnsearch -s vocab -t vocab -S dropout=0.1 \
	2> err || rc=$?
[ "$rc" -eq 2 ] || fail "rnnsearch took dropout: exit $rc"
grep -q "the keys are: .*hidden" err || fail "$(cat err)"
rc=0
train-step -i -m new.tsr -a lstm -s vocab -t vocab 2> err || rc=$?
[ "$rc" -eq 2 ] || fail "-a lstm: exit $rc"

# the keys listed are the keys the manual's tables give, for each arch
key='\([a-z_0-9]*\)'
documented=$(sed -n "s/^\.It Li $key\( , $key\)* Ta.*/\1 \3/p" "$man" |
	tr ' ' '\n' | grep . | sort -u)
all=
for a in transformer rnnsearch rnnencdec seq2seq; do
	train-step -i -m new.tsr -a $a -s vocab -t vocab -S bogus=1 2> err || :
	keys=$(sed -n 's/.*the keys are: //p' err | sed "s/ (try .*//")
	[ -n "$keys" ] || fail "$a: $(cat err)"
	for k in $keys; do
		echo "$documented" | grep -qx "$k" ||
			fail "$a: $k not in train-step(1)"
	done
	all="$all $keys"
done
for k in $documented; do
	echo " $all " | grep -q " $k " ||
		fail "train-step(1) documents $k, no arch takes it"
done

# every key accepted with a value of its kind; the defaults are the recipes'
init -m t.tsr -S norm=post -S tie=tgt -S ln_eps=1e-6 -S dropout=0 \
	-S optim=adadelta -S schedule=constant -S warmup=10 -S lr=0.5 \
	-S beta1=0 -S beta2=0.5 -S adam_eps=1 -S rho=0.5 \
	-S adadelta_eps=1e-8 -S clip=5 -S label_smoothing=0 \
	-S batch_tokens=100 -S seed=3
cfg t.tsr | grep -qx 'norm=post' || fail "norm=post not stored"
train-step -i -m d.tsr -a transformer -s vocab -t vocab
for kv in norm=pre tie=all warmup=300 batch_tokens=2000 optim=adam \
	schedule=noam lr=1 dropout=0.1 label_smoothing=0.1 d_model=256; do
	cfg d.tsr | grep -qx "$kv" || fail "transformer default: not $kv"
done
new_model r.tsr rnnsearch vocab vocab
for kv in optim=adam lr=0.001 batch_tokens=2000 clip=1; do
	cfg r.tsr | grep -qx "$kv" || fail "rnnsearch default: not $kv"
done
exit 0
