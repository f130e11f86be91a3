#!/bin/sh
# attn against the real Marian on one Transformer-base-size model: a
# random Marian model (d_model 512, 8 heads, ffn 2048, 6+6 layers,
# post-norm, swish, tied-embeddings-all) over a SentencePiece vocabulary
# of about 8000 pieces that spm_train learns from generated text, all
# made here (nothing committed), imported with train-step --import
# marian; BENCH_LINES (default 40) generated sentences translated
# greedily and with beam 4 (normalize 0.6, max-length-factor 2.5) by
# attn (tokenize | embed | encode | attend | decode or beam, one thread,
# CPU seconds of the whole pipeline, model loading included) and by
# bergamot-translator 0.4.9's WebAssembly Marian under node
# (tools/marian-ref/run_marian.js, gemm-precision float32, one thread,
# seconds of translation, model loading apart), on this machine in this
# run.  Target tokens/s of each (the pieces of its output text, </s>
# apart) and attn / Marian.  Marian translates the lines together (as
# bergamot batches them), so its maximum length is 2.5 times the widest
# source's, not each line's: this random model runs to it, so Marian
# says more tokens and its text differs from attn's.  Not measured (exit 0) without node, the
# package (MARIAN_WASM, or tools/marian-ref/marian_wasm_package.sh's
# cache), spm_train or python3-numpy.
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
echo "$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //');" \
	"ATTN_KERNELS=${ATTN_KERNELS:-(highest)}" \
	"($(grep -qw avx512f /proc/cpuinfo && echo AVX-512 ||
	    echo AVX2) CPU); 1 thread; $lines sentences"
# text, a vocabulary, the model, its input
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
mf.D, mf.H, mf.F, mf.L = 512, 8, 2048, 6
rng = np.random.default_rng(9)
P = {}
def mat(n, shape, scale):
    P[n] = (rng.standard_normal(shape) * scale).astype(np.float32)
mat("Wemb", (V, 512), 0.05)
for side, blocks in (("encoder", ["self"]), ("decoder", ["self", "context"])):
    for l in range(1, 7):
        for b in blocks:
            p = "%s_l%d_%s" % (side, l, b)
            for m in "qkvo":
                mat(p + "_W" + m, (512, 512), 512 ** -0.5)
                P[p + "_b" + m] = np.zeros((1, 512), np.float32)
            P[p + "_Wo_ln_scale"] = np.ones((1, 512), np.float32)
            P[p + "_Wo_ln_bias"] = np.zeros((1, 512), np.float32)
        p = "%s_l%d_ffn" % (side, l)
        mat(p + "_W1", (512, 2048), 512 ** -0.5)
        P[p + "_b1"] = np.zeros((1, 2048), np.float32)
        mat(p + "_W2", (2048, 512), 2048 ** -0.5)
        P[p + "_b2"] = np.zeros((1, 512), np.float32)
        P[p + "_ffn_ln_scale"] = np.ones((1, 512), np.float32)
        P[p + "_ffn_ln_bias"] = np.zeros((1, 512), np.float32)
mat("decoder_ff_logit_out_b", (1, V), 0.1)
cfg = dict(pre=False, act="swish", tie="all")
P["special:model.yml"] = np.frombuffer(mf.model_yml(cfg, V).encode() + b"\0",
                                       dtype=np.int8)
mf.save_bin("model.bin", P)
PY
printf 'beam-size: 4\nnormalize: 0.6\nmax-length-factor: 2.5\n' > decoder.yml
train-step --import marian -m m.tsr --decoder-config decoder.yml model.bin \
	v.model > import.log 2>&1 || { cat import.log; exit 1; }
# pieces of the output text, </s> apart
pieces() { spm_encode --model=v.model < "$1" | awk '{ s += NF } END { print s + 0 }'; }
attn_run() {	# MODE: CPU seconds of the pipeline into $tmp/attn.MODE.txt
	times > t0
	tokenize -m m.tsr input | embed -m m.tsr | encode -m m.tsr |
		attend -m m.tsr | $1 -m m.tsr --min-len 0 > attn.$1.txt || exit 1
	times > t1
	cputime t0 t1 | awk '{ printf "%.3f", $1 }'
}
marian_run() {	# BEAM: seconds of translation
	node "$root/tools/marian-ref/run_marian.js" --package "$pkg" \
		--model model.bin --vocab v.model --beam-size "$1" \
		--normalize "$([ "$1" = 1 ] && echo 0 || echo 0.6)" \
		--max-length-factor 2.5 --together --time < input \
		> marian.$1.txt 2> marian.$1.err || { cat marian.$1.err; exit 1; }
	sed -n 's/^seconds //p' marian.$1.err
}
ag=$(attn_run decode)
ab=$(attn_run beam)
mg=$(marian_run 1)
mb=$(marian_run 4)
same() { cmp -s "$1" "$2" && echo "same text" || echo "text differs"; }
printf '%s %s %s %s %s %s %s %s\n' "$ag" "$(pieces attn.decode.txt)" \
	"$ab" "$(pieces attn.beam.txt)" "$mg" "$(pieces marian.1.txt)" \
	"$mb" "$(pieces marian.4.txt)" |
awk -v sg="$(same attn.decode.txt marian.1.txt)" \
    -v sb="$(same attn.beam.txt marian.4.txt)" '{
	ag = $2 / $1; ab = $4 / $3; mg = $6 / $5; mb = $8 / $7
	printf "greedy: attn %7.1f tokens/s (%d in %.2f s), Marian WASM %7.1f " \
	       "tokens/s (%d in %.2f s), attn / Marian %.2f x; %s\n",
	       ag, $2, $1, mg, $6, $5, ag / mg, sg
	printf "beam 4: attn %7.1f tokens/s (%d in %.2f s), Marian WASM %7.1f " \
	       "tokens/s (%d in %.2f s), attn / Marian %.2f x; %s\n",
	       ab, $4, $3, mb, $8, $7, ab / mb, sb
}'
