#!/bin/sh
# decode and beam --matmul bf16: a Transformer's decoder with bf16
# products gives each sentence the output it gets alone whatever its batch
# (-b 1, 5 and 64 the same bytes), beam -k 1 is decode, and the scores are
# not f32's (the option does something); --matmul f32 is the default.
# Refused (exit 1) for a recurrent model, below the AVX-512 kernels, and
# on a CPU without AVX512_BF16 (there, only the refusals can be checked);
# a precision other than f32 and bf16 is a usage error (exit 2).
set -eu
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cd "$T"
fail() { echo "cli_matmul: $*" >&2; exit 1; }

awk 'BEGIN { srand(5); split("ab cd ef gh ij kl", w, " ");
	for (i = 0; i < 40; i++) { n = 1 + int(rand() * 5); s = ""; r = "";
		for (j = 0; j < n; j++) { x = w[1 + int(rand() * 6)];
			s = s (j ? " " : "") x; r = x (j ? " " : "") r }
		print s "\t" r } }' > pairs.txt
cut -f1 pairs.txt > src.txt
tokenize -l 280 src.txt > vocab 2>/dev/null
train-step -i -m m.tsr -a transformer -s vocab -t vocab -S d_model=32 \
	-S heads=2 -S ffn=64 -S enc_layers=1 -S dec_layers=2 -S tie=all \
	-S warmup=10 -S batch_tokens=200
tokenize -p -m m.tsr pairs.txt > pairs.tsr
train-step -q -m m.tsr -n 10 pairs.tsr
tokenize -m m.tsr src.txt | embed -m m.tsr | encode -m m.tsr |
	attend -m m.tsr > mem.tsr

# status and message of a run: "status: stderr"
refusal() {
	set +e
	"$@" < mem.tsr > /dev/null 2> err
	s=$?
	set -e
	echo "$s: $(cat err)"
}

r=$(refusal decode -m m.tsr --matmul f16)
case $r in 2:*f16*) ;; *) fail "--matmul f16: $r" ;; esac
r=$(refusal beam -m m.tsr --matmul=)
case $r in 2:*) ;; *) fail "beam --matmul '': $r" ;; esac
r=$(refusal env ATTN_KERNELS=avx2 decode -m m.tsr --matmul bf16)
case $r in 1:*AVX512_BF16*) ;; *) fail "bf16 with the AVX2 kernels: $r" ;; esac

decode -m m.tsr < mem.tsr > f32.default
decode -m m.tsr --matmul f32 < mem.tsr > f32.opt
cmp -s f32.default f32.opt || fail "--matmul f32 is not the default"

if ! grep -qw avx512_bf16 /proc/cpuinfo ||
   ! grep -qw avx512f /proc/cpuinfo; then
	r=$(refusal decode -m m.tsr --matmul bf16)
	case $r in 1:*AVX512_BF16*) ;; *) fail "no AVX512_BF16: $r" ;; esac
	r=$(refusal beam -m m.tsr --matmul bf16)
	case $r in 1:*AVX512_BF16*) ;; *) fail "beam, no AVX512_BF16: $r" ;; esac
	exit 0
fi

for b in 1 5 64; do
	decode -m m.tsr -b $b --matmul bf16 < mem.tsr > greedy.$b
	beam -m m.tsr -k 1 -b $b --matmul bf16 < mem.tsr > beam1.$b
	beam -m m.tsr -k 3 -b $b --matmul bf16 < mem.tsr > beam3.$b
done
[ "$(wc -l < greedy.1)" -eq 40 ] || fail "$(wc -l < greedy.1) lines, not 40"
for b in 5 64; do
	cmp -s greedy.1 greedy.$b || fail "decode -b $b differs from -b 1"
	cmp -s beam3.1 beam3.$b || fail "beam -k 3 -b $b differs from -b 1"
done
for b in 1 5 64; do
	cmp -s greedy.1 beam1.$b || fail "beam -k 1 -b $b is not decode"
done

# hyp.score of every frame (its value on the line after the record's),
# in f32 and in bf16: some differ
scores() {
	decode -m m.tsr -t "$@" < mem.tsr | tensordump -H -n hyp.score -v |
		awk 'NR % 2 == 0'
}
scores > s.f32
scores --matmul bf16 > s.bf16
[ "$(wc -l < s.bf16)" -eq 40 ] || fail "$(wc -l < s.bf16) scores, not 40"
cmp -s s.f32 s.bf16 && fail "bf16 scores are f32's"

# a recurrent model: refused, naming its architecture
train-step -i -m r.tsr -a rnnsearch -s vocab -t vocab -S emb=8 \
	-S hidden=8 -S att=8 -S maxout=4
tokenize -m r.tsr src.txt | embed -m r.tsr | encode -m r.tsr |
	attend -m r.tsr > mem.tsr
r=$(refusal beam -m r.tsr --matmul bf16)
case $r in 1:*rnnsearch*) ;; *) fail "bf16 rnnsearch: $r" ;; esac
exit 0
