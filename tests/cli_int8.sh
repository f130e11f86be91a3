#!/bin/sh
# train-step --export --dtype int8: the matrices of products as i8 with
# f32 row scales NAME.scale, every other parameter f32; exported from the
# f32 model or from its f16 export; the programs translate and score with
# it (every product by its int8 matrices in int8), one line per input
# line, each sentence's output the same with -b 1 as in a batch of 64;
# and it stays close to the f32 model (scores within a tolerance);
# training refuses it.  The recurrent models load it too.
set -eu
. "$(dirname "$0")/lib/cli.sh"

sentences 5 200 1 4 "s r" "ab cd ef gh ij kl" > pairs.txt
trained m.tsr pairs.txt 40 d_model=32 ffn=64 dec_layers=2 tie=none \
	batch_tokens=300

train-step -x q.tsr --dtype int8 -m m.tsr
train-step -x h.tsr -m m.tsr
train-step -x qh.tsr --dtype int8 -m h.tsr

# what the file holds: i8 exactly for the rank-2 parameters that are not
# embeddings, each with its scales, f32 [rows]
tensordump -H q.tsr | awk '{ print $2, $3, $4 }' > kinds
tensordump -H m.tsr | awk '$2 !~ /^(model\.config|vocab\.|optim\.)/ &&
	$3 == "f32" { print $2, $4 }' > params
awk '$2 ~ /^\[[0-9]+,/ && $1 !~ /\.emb$/ { print $1 " i8 " $2 }
	$2 !~ /^\[[0-9]+,/ || $1 ~ /\.emb$/ { print $1 " f32 " $2 }
	$2 ~ /^\[[0-9]+,/ && $1 !~ /\.emb$/ {
		r = $2; sub(/,.*/, "]", r); print $1 ".scale f32 " r }' \
	params | sort > want
grep -v '^model\.config\|^vocab\.' kinds | sort > got
cmp -s want got || { diff want got >&2; fail "the int8 export's records"; }
grep -q '^out\.W i8' got || fail "out.W is not i8"

translate() {
	cut -f1 pairs.txt | tokenize -m "$1" | stages "$1" "$2" > mem.tsr
	decode -m "$1" "$2" < mem.tsr
	beam -m "$1" -k 3 "$2" < mem.tsr
}
for m in q qh; do
	translate $m.tsr -b64 > out.$m.64
	translate $m.tsr -b1 > out.$m.1
	[ "$(wc -l < out.$m.64)" -eq 400 ] || fail "$m: $(wc -l < out.$m.64) lines"
	cmp -s out.$m.64 out.$m.1 || fail "$m: -b 1 translates otherwise than -b 64"
done

# scores of the references: int8 close to f32 (the model is tiny and
# barely trained; its log-probabilities move by far less than a nat)
score_of() {
	tokenize -p -m "$1" pairs.txt | stages "$1" | score -m "$1" "$2"
}
score_of m.tsr -b64 > s.f32
score_of q.tsr -b64 > s.q
score_of q.tsr -b1 > s.q1
[ "$(wc -l < s.q)" -eq 200 ] || fail "score: $(wc -l < s.q) lines"
cmp -s s.q s.q1 || fail "score: -b 1 scores otherwise than -b 64"
paste s.f32 s.q | awk '{ d = $1 - $2; if (d < 0) d = -d;
	if (d > 0.05 * ($1 < 0 ? -$1 : $1) + 0.05) bad++ } END { exit bad > 0 }' ||
	fail "int8 scores far from f32: $(paste s.f32 s.q | head -3)"
cmp -s s.f32 s.q && fail "int8 scores are f32's to the digit: not int8?"

# the int8 of a core without VNNI (7-bit activations, doc/kernels.md),
# where this one has AVX2: the same checks
if grep -q '^flags.* avx2' /proc/cpuinfo 2>/dev/null; then
	(export ATTN_KERNELS=avx2-novnni
	 score_of q.tsr -b64 > s.u7 && score_of q.tsr -b1 > s.u71)
	[ "$(wc -l < s.u7)" -eq 200 ] || fail "7-bit: $(wc -l < s.u7) lines"
	cmp -s s.u7 s.u71 || fail "7-bit: -b 1 scores otherwise than -b 64"
	paste s.f32 s.u7 | awk '{ d = $1 - $2; if (d < 0) d = -d;
		if (d > 0.05 * ($1 < 0 ? -$1 : $1) + 0.05) bad++ }
		END { exit bad > 0 }' ||
		fail "7-bit scores far from f32: $(paste s.f32 s.u7 | head -3)"
	# (where the default is 8-bit too)
	case ${ATTN_KERNELS:-} in *novnni) ;; *)
		grep -qE '^flags.* (avx_vnni|avx512_vnni)' /proc/cpuinfo &&
		cmp -s s.q s.u7 && fail "7-bit scores are 8-bit's to the digit"
	esac
fi

# training refuses it
if train-step -q -m q.tsr -n 1 pairs.tsr 2> err; then
	fail "trained an int8 export"
fi
grep -q "is i8: an exported model" err || fail "no reason given: $(cat err)"
rc=0
train-step -x x.tsr --dtype int4 -m m.tsr 2> err || rc=$?
[ "$rc" -eq 2 ] || fail "--dtype int4 exited $rc"

# the recurrent models: exported and read
new_model r.tsr rnnsearch vocab vocab emb=16 hidden=16 att=16 maxout=8
train-step -x rq.tsr --dtype int8 -m r.tsr
tensordump -H rq.tsr | grep -q ' enc\.fwd\.U  *i8 ' ||
	fail "rnnsearch: enc.fwd.U not i8"
translate rq.tsr -b64 > out.r
translate rq.tsr -b1 > out.r1
[ "$(wc -l < out.r)" -eq 400 ] || fail "rnnsearch: $(wc -l < out.r) lines"
cmp -s out.r out.r1 || fail "rnnsearch: -b 1 translates otherwise than -b 64"
exit 0
