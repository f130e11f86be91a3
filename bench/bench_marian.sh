#!/bin/sh
# attn against the real Marian on two random Marian models, both made here
# (nothing committed) over one SentencePiece vocabulary of about 8000
# pieces that spm_train learns from generated text:
#   base:    a Transformer-base (d_model 512, 8 heads, ffn 2048, 6+6
#            layers, post-norm, swish, tied-embeddings-all);
#   student: Bergamot's tiny student shape (d_model 256, 8 heads, ffn 1536,
#            6 encoder layers, 2 decoder layers whose self-attention is an
#            SSRU: transformer-decoder-autoreg rnn, dec-cell ssru; post-norm,
#            relu, tied-embeddings-all, as the students' model.yml have
#            them; their vocabularies are 32000 pieces, this one 8000).
# Each imported with train-step --import marian; BENCH_LINES (default 40)
# generated sentences translated greedily and with beam 4 (normalize 0.6,
# max-length-factor 2.5) by attn (tokenize | embed | encode | attend |
# decode or beam, one thread), with its best kernels and again with
# ATTN_KERNELS=avx2, and by bergamot-translator 0.4.9's WebAssembly Marian
# under node (tools/marian-ref/run_marian.js, gemm-precision float32, one
# thread; the same WASM code whatever attn's kernels: ATTN_KERNELS is
# attn's alone).
#
# Time basis, the same for both: CPU seconds (user + system, which other
# work on a shared machine does not inflate as it does the clock's) of
# translation, model loading apart.  Marian's: run_marian.js's
# cpu-seconds, node's CPU time around its translate call (node's own
# threads included: garbage collection; it translates the first line once
# before, untimed, so that node has compiled the WASM code by then).
# attn's: the CPU seconds of the pipeline on the input less those of the
# same pipeline on an empty input (process start and model loading in
# each of the five programs).
# Target tokens/s of each (the pieces of its output text, </s> apart) and
# attn / Marian.  Marian translates the lines together (as bergamot
# batches them), so its maximum length is 2.5 times the widest source's,
# not each line's: these random models run to it, so Marian says more
# tokens and its text differs from attn's.  Not measured (exit 0) without
# node, the package (MARIAN_WASM, or tools/marian-ref/
# marian_wasm_package.sh's cache), spm_train or python3-numpy.
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/lib.sh"
lines=${BENCH_LINES:-40}
skip() { echo "bench_marian: not measured: $*"; exit 0; }
command -v node > /dev/null 2>&1 || skip "no node"
pkg=${MARIAN_WASM:-${MARIAN_WASM_CACHE:-${HOME:-/tmp}/.cache/attn-marian-wasm}/node_modules/@browsermt/bergamot-translator}
[ -f "$pkg/worker/bergamot-translator-worker.wasm" ] ||
	skip "no @browsermt/bergamot-translator at $pkg" \
	     "(tools/marian-ref/marian_wasm_package.sh installs it)"
command -v spm_train > /dev/null 2>&1 || skip "no spm_train"
command -v spm_encode > /dev/null 2>&1 || skip "no spm_encode"
/usr/bin/python3 -c 'import numpy' 2> /dev/null || skip "no python3-numpy"
in_tmp
export ATTN_THREADS=1
best_isa=$(grep -qw avx512f /proc/cpuinfo && grep -qw avx512bw /proc/cpuinfo &&
	grep -qw avx512dq /proc/cpuinfo && grep -qw avx512vl /proc/cpuinfo &&
	echo avx512 || echo avx2)
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //');" \
	"attn's kernels: ${ATTN_KERNELS:-$best_isa (highest)} and avx2;" \
	"Marian: WebAssembly under node $(node --version);" \
	"1 thread; $lines sentences; CPU seconds of translation," \
	"loading apart"
# text, a vocabulary, the models, their input
/usr/bin/python3 - "$lines" <<'PY' || exit 1
import sys, numpy as np
rng = np.random.default_rng(5)
syl = [a + b for a in "bcdfglmnprstv" for b in "aeiou"]
words = sorted({"".join(rng.choice(syl, rng.integers(1, 4)))
                for _ in range(30000)})
p = 1 / np.arange(1, len(words) + 1)
p /= p.sum()
def sents(k, lo, hi):    # k sentences of lo .. hi-1 Zipfian words
    lens = rng.integers(lo, hi, k)
    w = rng.choice(len(words), lens.sum(), p=p)
    ends = np.cumsum(lens)
    return [" ".join(words[i] for i in w[e - n:e])
            for n, e in zip(lens, ends)]
with open("text", "w") as f:
    f.write("".join(s + "\n" for s in sents(60000, 3, 20)))
with open("input", "w") as f:
    f.write("".join(s + "\n" for s in sents(int(sys.argv[1]), 5, 16)))
PY
spm_train --input=text --model_prefix=v --vocab_size=8000 \
	--model_type=unigram --bos_id=-1 --eos_id=0 --unk_id=1 --pad_id=-1 \
	--num_threads=1 --input_sentence_size=60000 --minloglevel=2 \
	> spm.log 2>&1 || { cat spm.log; exit 1; }
V=$(wc -l < v.vocab)
/usr/bin/python3 - "$root/tools/marian-ref" "$V" <<'PY' || exit 1
import sys, numpy as np
sys.path.insert(0, sys.argv[1])
import make_fixtures as mf
V = int(sys.argv[2])

def model(path, D, H, F, enc, dec, act, ssru, seed):
    mf.D, mf.H, mf.F, mf.L = D, H, F, enc     # model_yml reads these
    rng = np.random.default_rng(seed)
    P = {}
    def mat(n, shape, scale):
        P[n] = (rng.standard_normal(shape) * scale).astype(np.float32)
    def norm(p):
        P[p + "_ln_scale"] = np.ones((1, D), np.float32)
        P[p + "_ln_bias"] = np.zeros((1, D), np.float32)
    def att(p):
        for m in "qkvo":
            mat(p + "_W" + m, (D, D), D ** -0.5)
            P[p + "_b" + m] = np.zeros((1, D), np.float32)
        norm(p + "_Wo")
    mat("Wemb", (V, D), 0.05)
    for side, L in (("encoder", enc), ("decoder", dec)):
        for l in range(1, L + 1):
            p = "%s_l%d" % (side, l)
            if side == "encoder":
                att(p + "_self")
            elif ssru:        # the SSRU's W, Wf, bf and its layer norm
                mat(p + "_rnn_W", (D, D), D ** -0.5)
                mat(p + "_rnn_Wf", (D, D), D ** -0.5)
                P[p + "_rnn_bf"] = np.zeros((1, D), np.float32)
                norm(p + "_rnn_ffn")
            else:
                att(p + "_self")
            if side == "decoder":
                att(p + "_context")
            mat(p + "_ffn_W1", (D, F), D ** -0.5)
            P[p + "_ffn_b1"] = np.zeros((1, F), np.float32)
            mat(p + "_ffn_W2", (F, D), F ** -0.5)
            P[p + "_ffn_b2"] = np.zeros((1, D), np.float32)
            norm(p + "_ffn_ffn")
    mat("decoder_ff_logit_out_b", (1, V), 0.1)
    cfg = dict(pre=False, act=act, tie="all")
    y = mf.ssru_yml(cfg, V) if ssru else mf.model_yml(cfg, V)
    y = y.replace("dec-depth: %d" % enc, "dec-depth: %d" % dec)
    P["special:model.yml"] = np.frombuffer(y.encode() + b"\0", np.int8)
    mf.save_bin(path, P)

model("base.bin", 512, 8, 2048, 6, 6, "swish", False, 9)
model("student.bin", 256, 8, 1536, 6, 2, "relu", True, 10)
PY
printf 'beam-size: 4\nnormalize: 0.6\nmax-length-factor: 2.5\n' > decoder.yml
: > empty
# pieces of the output text, </s> apart
pieces() { spm_encode --model=v.model < "$1" | awk '{ s += NF } END { print s + 0 }'; }
pipeline() {	# MODEL MODE INPUT: the pipeline's CPU seconds, text to out
	times > t0
	tokenize -m $1.tsr "$3" | embed -m $1.tsr | encode -m $1.tsr |
		attend -m $1.tsr | $2 -m $1.tsr --min-len 0 > out || exit 1
	times > t1
	cputime t0 t1
}
attn_run() {	# MODEL MODE KERNELS: translation seconds, text to attn.*
	ATTN_KERNELS=$3 pipeline $1 $2 empty > /dev/null
	e=$(ATTN_KERNELS=$3 pipeline $1 $2 empty)
	t=$(ATTN_KERNELS=$3 pipeline $1 $2 input)
	mv out attn.$1.$2.$3.txt
	echo "$t $e" | awk '{ printf "%.3f", $1 - $2 }'
}
marian_run() {	# MODEL BEAM: CPU seconds of translation
	node "$root/tools/marian-ref/run_marian.js" --package "$pkg" \
		--model $1.bin --vocab v.model --beam-size "$2" \
		--normalize "$([ "$2" = 1 ] && echo 0 || echo 0.6)" \
		--max-length-factor 2.5 --together --time --warm < input \
		> marian.$1.$2.txt 2> marian.$1.$2.err ||
		{ cat marian.$1.$2.err; exit 1; }
	sed -n 's/^cpu-seconds //p' marian.$1.$2.err
}
same() { cmp -s "$1" "$2" && echo "same text" || echo "text differs"; }
row() {	# MODEL LABEL MODE BEAM KERNELS MARIAN_SECONDS
	a=$(attn_run $1 $3 $5)
	printf '%s %s %s %s\n' "$a" "$(pieces attn.$1.$3.$5.txt)" "$6" \
		"$(pieces marian.$1.$4.txt)" |
	awk -v l="$2" -v k="$5" \
	    -v s="$(same attn.$1.$3.$5.txt marian.$1.$4.txt)" '{
		a = $2 / $1; m = $4 / $3
		printf "  %-7s attn (%s) %7.1f tokens/s (%d in %.2f s), Marian " \
		       "WASM %6.1f tokens/s (%d in %.2f s), attn / Marian " \
		       "%.2f x; %s\n", l, k, a, $2, $1, m, $4, $3, a / m, s
	}'
}
for m in base student; do
	train-step --import marian -m $m.tsr --decoder-config decoder.yml \
		$m.bin v.model > import.log 2>&1 || { cat import.log; exit 1; }
	case $m in
	base) echo "base (512, 8 heads, ffn 2048, 6+6, self-attention):" ;;
	*) echo "student (256, 8 heads, ffn 1536, 6 + 2 SSRU decoder layers):" ;;
	esac
	mg=$(marian_run $m 1)
	mb=$(marian_run $m 4)
	for k in ${ATTN_KERNELS:-$best_isa} avx2; do
		row $m greedy: decode 1 $k "$mg"
		row $m "beam 4:" beam 4 $k "$mb"
	done
done
