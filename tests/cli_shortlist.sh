#!/bin/sh
# The vocabulary shortlist: train-step --shortlist writes
# shortlist.frequent and shortlist.translations into the model, keeping
# every other record (the optimiser's state) as it was, and training and
# export keep them.  decode and beam --shortlist with a shortlist of every
# unit give the full softmax's bytes (--tensors: ids, scores, attention),
# for the Transformer (f32, bf16 products, int8 export) and the recurrent
# models (f32, int8); with a short one, other output, only units of the
# shortlist, and the same bytes at any batch size.
# A model without a shortlist is refused naming the model and the
# command that makes one; misused options are usage errors.
set -eu
. "$(dirname "$0")/lib/cli.sh"

sentences 9 40 1 6 "s R" > pairs.txt
cut -f1 pairs.txt > src.txt
tokenize -l 300 pairs.txt > vocab 2>/dev/null
V=$(awk 'END { print NR - 1 }' vocab)

new() {	# new MODEL ARCH SETTINGS...
	m=$1 a=$2
	shift 2
	train-step -i -m $m -a $a -s vocab -t vocab "$@"
	tokenize -p -m $m pairs.txt > pairs.tsr
	train-step -q -m $m -n 8 pairs.tsr
}
new tf.tsr transformer -S d_model=32 -S heads=2 -S ffn=64 -S enc_layers=1 \
	-S dec_layers=2 -S warmup=10 -S batch_tokens=200
new rs.tsr rnnsearch -S emb=16 -S hidden=16 -S att=16 -S maxout=8
new s2s.tsr seq2seq -S emb=16 -S hidden=16 -S layers=2

tokenize -m tf.tsr src.txt | embed -m tf.tsr | encode -m tf.tsr |
	attend -m tf.tsr > mem.tsr
exits 1 decode -m tf.tsr --shortlist < mem.tsr
err_has "decode: tf.tsr: --shortlist: the model has no shortlist"
err_has "'train-step --shortlist -m tf.tsr PAIRS'"
exits 1 beam -m tf.tsr --shortlist < mem.tsr
err_has "no shortlist"
exits 2 train-step -m tf.tsr --frequent 3 pairs.tsr
err_has --shortlist
exits 2 train-step --shortlist -m tf.tsr --translations 0 pairs.tsr
err_has --translations
exits 2 train-step --shortlist -m tf.tsr -n 3 pairs.tsr
exits 1 train-step --shortlist -m nothing.tsr pairs.tsr
err_has nothing.tsr

# --shortlist keeps every other record, bytes and all; training and
# export keep the shortlist
tensordump tf.tsr > before
cp tf.tsr all.tsr
train-step --shortlist -m all.tsr --frequent $V --translations 1 \
	pairs.tsr 2> log
grep -q "shortlist of $((V - 4)) frequent target units" log ||
	fail "log: $(cat log)"
tensordump all.tsr > after
grep -v ' shortlist\.' after | sed 's/  end$/  -/' > kept
sed 's/  end$/  -/' before | cmp -s - kept || fail "records changed"
grep -q "shortlist.frequent *i32 *\[$((V - 4))\]" after ||
	fail "no shortlist.frequent [$((V - 4))]: $(grep shortlist after)"
grep -q "shortlist.translations *i32 *\[$V,1\]" after ||
	fail "no shortlist.translations [$V,1]"
cp all.tsr trained.tsr
train-step -q -m trained.tsr -n 1 pairs.tsr
tensordump trained.tsr | grep -q shortlist.translations ||
	fail "training dropped the shortlist"
train-step -x all8.tsr -m all.tsr --dtype int8
tensordump all8.tsr | grep -q shortlist.translations ||
	fail "export dropped the shortlist"

# every unit: the full softmax's bytes
same() {	# same MODEL MEMORY: decode and beam with and without
	for p in "decode" "beam -k 3" "beam -k 2 -n 2"; do
		o=-t
		case $p in *-n*) o= ;; esac
		$p -m $1 $o < $2 > full
		$p -m $1 $o --shortlist < $2 > short
		cmp -s full short ||
			fail "$1: $p --shortlist of every unit differs"
	done
}
same all.tsr mem.tsr
if grep -qw avx512_bf16 /proc/cpuinfo && grep -qw avx512f /proc/cpuinfo; then
	for p in "decode" "beam -k 3"; do
		$p -m all.tsr -t --matmul bf16 < mem.tsr > full
		$p -m all.tsr -t --matmul bf16 --shortlist < mem.tsr > short
		cmp -s full short || fail "$p --matmul bf16 --shortlist differs"
	done
fi
tokenize -m all8.tsr src.txt | embed -m all8.tsr | encode -m all8.tsr |
	attend -m all8.tsr > mem8.tsr
same all8.tsr mem8.tsr
for a in rs s2s; do
	train-step --shortlist -m $a.tsr --frequent $V pairs.tsr 2> /dev/null
	train-step -x ${a}8.tsr -m $a.tsr --dtype int8
	for m in $a ${a}8; do
		tokenize -m $m.tsr src.txt | embed -m $m.tsr |
			encode -m $m.tsr | attend -m $m.tsr > mem.$m.tsr
		same $m.tsr mem.$m.tsr
	done
done

# a short list: other output, the same at every batch size (the
# recurrent models' with the reference kernels, whose rounding does not
# depend on the rows of a product)
cp tf.tsr few.tsr
train-step --shortlist -m few.tsr --frequent 2 --translations 1 \
	pairs.tsr 2> /dev/null
decode -m few.tsr -t < mem.tsr > full
decode -m few.tsr -t --shortlist < mem.tsr > short
cmp -s full short && fail "a short list changed nothing"
# every unit said is a special one, a frequent one or a translation of a
# unit of the sentence's source
tensordump -t -n 'shortlist.*' few.tsr > table.txt
tensordump -t -n src.ids -n hyp.ids short > out.txt
awk 'function check() {
		for (j = 0; j < nh; j++) {
			y = hyp[j]; ok = y < 4 || (y in freq)
			for (s = 0; s < ns && !ok; s++)
				for (k = 0; k < K && !ok; k++)
					ok = tr[src[s] * K + k] == y
			if (!ok && !bad) {
				print "unit " y " of frame " f; bad = 1 }
		}
	}
	/^tsr-text/ { next }
	/^record/ { if (name == "hyp.ids") check()
		name = $2; i = 0; f = $NF
		if (name == "shortlist.translations") {
			K = $4; sub(/.*,/, "", K); sub(/]/, "", K) }
		if (name == "src.ids") ns = 0
		if (name == "hyp.ids") nh = 0
		next }
	{ for (j = 1; j <= NF; j++) {
		if (name == "shortlist.frequent") freq[$j] = 1
		if (name == "shortlist.translations") tr[i++] = $j
		if (name == "src.ids") src[ns++] = $j
		if (name == "hyp.ids") hyp[nh++] = $j } }
	END { if (name == "hyp.ids") check(); exit bad }' table.txt out.txt ||
	fail "units outside the shortlist"
check_batches() {	# MODEL MEMORY
	for b in 1 7 64; do
		decode -m $1 -t --shortlist -b $b < $2 > d.$b
		beam -m $1 -k 3 -t --shortlist -b $b < $2 > k.$b
	done
	for b in 7 64; do
		cmp -s d.1 d.$b || fail "$1: decode --shortlist -b $b differs"
		cmp -s k.1 k.$b || fail "$1: beam --shortlist -b $b differs"
	done
}
check_batches few.tsr mem.tsr
for a in rs s2s; do
	train-step --shortlist -m $a.tsr --frequent 2 --translations 1 \
		pairs.tsr 2> /dev/null
	ATTN_KERNELS=reference check_batches $a.tsr mem.$a.tsr
done
exit 0
