#!/bin/sh
# make_int8.sh [OUTDIR]: regenerates tests/fixtures/marian/int8/ with native
# Marian (browsermt/marian-dev 2781d735's marian-conv and marian-decoder,
# CPU, intgemm): a small random Bergamot-shaped student (post-norm, relu,
# every embedding tied, an SSRU decoder: transformer-decoder-autoreg rnn,
# dec-cell ssru; d 64, as small as intgemm's AVX-512 kernels take, whose
# inner sizes are multiples of 64), its int8 models, and what Marian
# translates with them:
#   student.intgemm8.bin         marian-conv -g intgemm8 of the float model
#   student.intgemm8.alphas.bin  the same after the alphas were added, as
#                                Firefox's pipeline makes them: the
#                                activations' maxima of marian-decoder
#                                --dump-quantmult on input.txt, then
#                                NAME_QuantMultA = 127 / (mean + 1.1 std)
#                                (Marian's scripts/alphas/extract_stats.py,
#                                here without numpy)
#   vocab.spm   words.spm of ../wasm with 6 unused pieces added (48: the
#               output layer's rows must be a multiple of 8)
#   input.txt   100 lines of its words
#   {alphas,noalphas}.{greedy,beam}: Marian's translations, greedy (-b 1)
#   and beam 4 (--normalize 0), with --gemm-precision int8shiftAlphaAll
#   for the alphas file and int8shiftAll (--mini-batch 1: its activation
#   multipliers are the whole batch's) for the other; .scores: the greedy
#   ones' total log-probabilities (--n-best).
#   lex.bin     marian-conv --shortlist of a random lex.s2t of the pieces
#               (8 first, 4 best); lex.{greedy,scores}: Marian's greedy
#               with the alphas file under it (--shortlist lex.bin false)
# With SELF=1 (default OUTDIR tests/fixtures/marian/int8-self; the same
# vocab.spm and input.txt, made in a temporary folder): the decoder has self-attention instead of the
# SSRU (transformer-decoder-autoreg self-attention), whose keys and values
# Marian computes again at every step for all earlier positions, so that
# without alphas their multiplier is the whole history's.
# Native Marian: MARIAN=DIR holding marian-decoder and marian-conv, else
# /work/shared/tools/marian-native/build.sh's folder.  Needs python3 (no
# numpy).  make check does not run this: its outputs are committed.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/int8_runs.sh"
SELF=${SELF:-0}
if [ "$SELF" = 1 ]; then d=int8-self; else d=int8; fi
out=${1:-$here/../../tests/fixtures/marian/$d}
M=${MARIAN:-}
if [ -z "$M" ] && [ -x /work/shared/tools/marian-native/build.sh ]; then
	M=$(/work/shared/tools/marian-native/build.sh 2>/dev/null) || M=
fi
if [ -z "$M" ] || [ ! -x "$M/marian-decoder" ] || [ ! -x "$M/marian-conv" ]; then
	echo "make_int8.sh: native Marian is absent (no marian-decoder and" \
	     "marian-conv in MARIAN=${MARIAN:-unset}): nothing made" >&2
	exit 1
fi
command -v python3 > /dev/null || { echo "make_int8.sh: no python3" >&2; exit 1; }
command -v spm_export_vocab > /dev/null ||
	{ echo "make_int8.sh: no spm_export_vocab (apt-get install sentencepiece)" >&2; exit 1; }
mkdir -p "$out"
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT

# the vocabulary and the input: SELF=1 uses int8's (the same bytes)
if [ "$SELF" = 1 ]; then io=$t; else io=$out; fi
python3 - "$here/../../tests/fixtures/marian/wasm/words.spm" "$io/vocab.spm" <<'PY'
import struct, sys
b = open(sys.argv[1], 'rb').read()
for i in range(6):	# SentencePiece's ModelProto: more pieces (field 1)
    s = ('\u2581zq%d' % i).encode()
    p = b'\x0a' + bytes([len(s)]) + s + b'\x15' + struct.pack('<f', -50.0) + b'\x18\x01'
    b += b'\x0a' + bytes([len(p)]) + p
open(sys.argv[2], 'wb').write(b)
PY
python3 - > "$io/input.txt" <<'PY'
import random
r = random.Random(7)
w = ("agua alto arbol azul bajo bebe calor canta casa come corre de dia el en "
     "flor frio gato grande la luna mar mira nina noche nube nuevo pan perro "
     "rio roja sol un una verde viejo y").split()
for i in range(100):
    print(' '.join(r.choice(w) for _ in range(r.randint(1, 12))))
PY
python3 - "$t/student.npz" "$SELF" <<'PY'
"""A small random Bergamot-shaped student (Marian .npz, pure Python)."""
import io, math, random, struct, sys, zipfile

D, F, ENC, DEC, V = 64, 64, 1, 2, 48
rnd = random.Random(44)
SELF = sys.argv[2] == '1'

def npy(shape, vals, descr='<f4'):
    fmt = {'<f4': 'f', '|i1': 'b'}[descr]
    h = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (
        descr, ', '.join('%d' % s for s in shape) if len(shape) != 1 else '%d,' % shape[0])
    pad = 64 - (10 + len(h) + 1) % 64
    h = h + ' ' * pad + '\n'
    return (b'\x93NUMPY\x01\x00' + struct.pack('<H', len(h)) + h.encode()
            + struct.pack('<%d%s' % (len(vals), fmt), *vals))

items = {}
def mat(name, i, o, a=None):
    a = a or math.sqrt(6.0 / (i + o))
    items[name] = ([i, o], [rnd.uniform(-a, a) for _ in range(i * o)])
def vec(name, n, c=0.0, a=0.1):
    items[name] = ([1, n], [c + rnd.uniform(-a, a) for _ in range(n)])
def ln(pfx):
    vec(pfx + '_ln_scale', D, 1.0, 0.2)
    vec(pfx + '_ln_bias', D, 0.0, 0.1)
def ffn(p):
    mat(p + '_ffn_W1', D, F); vec(p + '_ffn_b1', F)
    mat(p + '_ffn_W2', F, D); vec(p + '_ffn_b2', D)
    ln(p + '_ffn_ffn')
def att(p, kind):
    for x in 'qkvo':
        mat('%s_%s_W%s' % (p, kind, x), D, D); vec('%s_%s_b%s' % (p, kind, x), D)
    ln('%s_%s_Wo' % (p, kind))

mat('Wemb', V, D, 0.5)
vec('decoder_ff_logit_out_b', V, 0.0, 1.0)
# ids past the SentencePiece model's 42 pieces: never chosen
items['decoder_ff_logit_out_b'][1][42:] = [-1000.0] * (V - 42)
for l in range(1, ENC + 1):
    att('encoder_l%d' % l, 'self'); ffn('encoder_l%d' % l)
for l in range(1, DEC + 1):
    p = 'decoder_l%d' % l
    if SELF:
        att(p, 'self')
    else:
        mat(p + '_rnn_W', D, D); mat(p + '_rnn_Wf', D, D)
        vec(p + '_rnn_bf', D); ln(p + '_rnn_ffn')
    att(p, 'context'); ffn(p)

yml = """type: transformer
dim-emb: %d
dim-vocabs:
  - %d
  - %d
enc-depth: %d
dec-depth: %d
transformer-heads: 4
transformer-dim-ffn: %d
transformer-ffn-depth: 2
transformer-ffn-activation: relu
transformer-preprocess: ""
transformer-postprocess: dan
transformer-postprocess-top: ""
transformer-postprocess-emb: d
%slayer-normalization: false
transformer-tied-layers:
  []
transformer-train-position-embeddings: false
tied-embeddings: true
tied-embeddings-src: false
tied-embeddings-all: true
version: v1.12.0 (a fixture of attn's tools/marian-ref/make_int8.sh)
""" % (D, V, V, ENC, DEC, F, "transformer-decoder-autoreg: self-attention\n"
        if SELF else "transformer-decoder-autoreg: rnn\ndec-cell: ssru\n"
        "dec-cell-base-depth: 2\ndec-cell-high-depth: 1\n")
y = yml.encode() + b'\0'
with zipfile.ZipFile(sys.argv[1], 'w') as z:
    for n, (s, v) in sorted(items.items()):
        z.writestr(n + '.npy', npy(s, v))
    z.writestr('special:model.yml.npy', npy([len(y)], list(struct.unpack('%db' % len(y), y)), '|i1'))
PY
v="$io/vocab.spm"
dec() { "$M/marian-decoder" -v "$v" "$v" --cpu-threads 1 --quiet "$@" < "$io/input.txt" 2> "$t/log"; }
dec -m "$t/student.npz" --dump-quantmult -b 1 > /dev/null
mv "$t/log" "$t/quantmults"
python3 - "$t/quantmults" "$t/student.npz" "$t/alphas.npz" <<'PY'
"""extract_stats.py's alphas: the mean and (population) standard
deviation of each activation's MaxAbs in DUMP, NAME_QuantMultA =
float32(127 / (mean + 1.1 std)) added to IN.npz, written as OUT.npz."""
import math, struct, sys, zipfile

maxabs = {}
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) != 12 or f[0] != 'Name:' or 'QuantMultA' not in f[1]:
        continue
    maxabs.setdefault(f[1].split('::')[-1], []).append(float(f[11]))

def npy1(v):
    h = "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }"
    h += ' ' * (64 - (10 + len(h) + 1) % 64) + '\n'
    return b'\x93NUMPY\x01\x00' + struct.pack('<H', len(h)) + h.encode() + struct.pack('<f', v)

alpha = {}
for n, v in maxabs.items():
    m = sum(v) / len(v)
    s = math.sqrt(sum((x - m) ** 2 for x in v) / len(v))
    alpha[n] = 127 / (m + 1.1 * s)
if 'Wemb_QuantMultA' in alpha:		# the output layer under a shortlist
    alpha['none_QuantMultA'] = alpha['Wemb_QuantMultA']
zin = zipfile.ZipFile(sys.argv[2])
with zipfile.ZipFile(sys.argv[3], 'w') as z:
    for n in zin.namelist():
        z.writestr(n, zin.read(n))
    for n in sorted(alpha):
        z.writestr(n + '.npy', npy1(alpha[n]))
PY
"$M/marian-conv" -f "$t/student.npz" -t "$out/student.intgemm8.bin" -g intgemm8 2> "$t/log"
"$M/marian-conv" -f "$t/alphas.npz" -t "$out/student.intgemm8.alphas.bin" -g intgemm8 2> "$t/log"
# a random lexical shortlist of the pieces (lex.s2t: "target source
# prob", 4 targets a source piece) and marian-conv's lex.bin of it (the 8
# first pieces and the 4 best a source piece); then Marian's translations
# (int8_runs.sh)
spm_export_vocab --model="$v" | cut -f 1 > "$t/pieces"
python3 - "$t/pieces" > "$t/lex.s2t" <<'PY'
import random, sys
p = [l.rstrip('\n') for l in open(sys.argv[1], encoding='utf-8')][2:42]
r = random.Random(8)
for s in p:
    for w in r.sample(p, 4):
        print('%s %s %.4f' % (w, s, r.uniform(0.01, 1)))
PY
"$M/marian-conv" --shortlist "$t/lex.s2t" 8 4 0 -V "$v" "$v" -d "$out/lex.bin" 2> "$t/log"
int8_runs "$out" "$out"
echo "make_int8.sh: wrote $out" >&2
