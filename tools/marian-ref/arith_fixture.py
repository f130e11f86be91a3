#!/usr/bin/python3
"""arith_fixture.py TRACE45 TRACE5 NPZ OUT: tests/fixtures/marian/arith.bin,
the numbers of native Marian's own layer norm and attention that
tests/test_marian_arith.c holds attn_marian_row and layernorm_marian to,
bit for bit: cut from two traces of a Marian built with trace.patch
(make_arith.sh), on the Bible model's int8 export, dev lines 45 (45
pieces) and 5 (33), head 0 of the first layer, and the model's npz (the
layer norm's scale and bias).

Each trace is a run of records, one per int8 product: name char[128], M,
K, N int32, qa, qb float32, x [M, K] float32 (the product's input), x
quantised [M, K] uint8, y [M, N] float32 (its output), the bias [N].

OUT (little-endian): "ATTNMARIANARITH1", then records of int32 kind:
  1, attention: nq, n, dk int32, the form of each of the nq query rows
     (attn_step.h's MARIAN_SCORE_*) int32 [nq], scale float32, then
     q [nq, dk], k [n, dk], v [n, dk] and Marian's context [nq, dk];
  2, layer norm: rows, d int32, eps float32, x [rows, d], g [d], b [d]
     and Marian's output [rows, d].
"""
import struct
import sys

import numpy as np

CHAIN, LANES, PAIRS = 0, 1, 2


def read(path):
    d = open(path, 'rb').read()
    o, out = 0, []
    while o < len(d):
        name = d[o:o + 128].split(b'\0')[0].decode()
        o += 128
        M, K, N = np.frombuffer(d, np.int32, 3, o)
        o += 20
        x = np.frombuffer(d, np.float32, M * K, o).reshape(M, K)
        o += 4 * M * K + M * K
        y = np.frombuffer(d, np.float32, M * N, o).reshape(M, N)
        o += 4 * M * N + 4 * N
        out.append((name.split('::')[-1], x, y))
    return out


def nth(recs, name, i):
    return [r for r in recs if r[0] == name][i]


def attention(f, q, k, v, ctx, forms, dk=64):
    h = slice(0, dk)
    q, k, v, ctx = (np.ascontiguousarray(a[:, h], np.float32)
                    for a in (q, k, v, ctx))
    f.write(struct.pack('<4i', 1, len(q), len(k), dk))
    f.write(struct.pack('<%di' % len(forms), *forms))
    f.write(struct.pack('<f', 1 / np.sqrt(np.float32(dk))))
    for a in (q, k, v, ctx):
        f.write(a.astype('<f4').tobytes())


def main():
    t45, t5, npz, out = sys.argv[1:5]
    r45, r5 = read(t45), read(t5)
    z = np.load(npz)
    with open(out, 'wb') as f:
        f.write(b'ATTNMARIANARITH1')
        # the encoder's self-attention, 45 x 45 (> 1200: one chain)
        q, k, v = (nth(r45, 'encoder_l1_self_W' + c, 0)[2] for c in 'qkv')
        ctx = nth(r45, 'encoder_l1_self_Wo', 0)[1]
        attention(f, q[:4], k, v, ctx[:4], [CHAIN] * 4)
        # 33 x 33 (<= 1200: SkylakeX's small kernel), rows 29-32: the
        # last row's last key alone reduced by halves
        q, k, v = (nth(r5, 'encoder_l1_self_W' + c, 0)[2] for c in 'qkv')
        ctx = nth(r5, 'encoder_l1_self_Wo', 0)[1]
        attention(f, q[29:], k, v, ctx[29:], [PAIRS] * 3 + [LANES])
        # a step's cross-attention: 1 query, 45 keys
        q = nth(r45, 'decoder_l1_context_Wq', 0)[2]
        k = nth(r45, 'decoder_l1_context_Wk', 0)[2]
        v = nth(r45, 'decoder_l1_context_Wv', 0)[2]
        ctx = nth(r45, 'decoder_l1_context_Wo', 0)[1]
        attention(f, q, k, v, ctx, [LANES])
        # self-attention at steps 3, 5 and 7: 4, 6 and 8 keys (Marian's
        # softmax in 4 lanes, in order, in 8 lanes)
        for s in (3, 5, 7):
            q = nth(r45, 'decoder_l1_self_Wq', s)[2]
            k = nth(r45, 'decoder_l1_self_Wk', s)[2]
            v = nth(r45, 'decoder_l1_self_Wv', s)[2]
            ctx = nth(r45, 'decoder_l1_self_Wo', s)[1]
            attention(f, q, k, v, ctx, [LANES])
        # the layer norm after the first self-attention: rows 0-3
        x = nth(r45, 'encoder_l1_self_Wq', 0)[1][:4]
        y = nth(r45, 'encoder_l1_self_Wo', 0)[2][:4]
        ln = nth(r45, 'encoder_l1_ffn_W1', 0)[1][:4]
        g = z['encoder_l1_self_Wo_ln_scale'][0].astype(np.float32)
        b = z['encoder_l1_self_Wo_ln_bias'][0].astype(np.float32)
        f.write(struct.pack('<3i', 2, 4, x.shape[1]))
        f.write(struct.pack('<f', 1e-6))
        for a in ((x + y).astype(np.float32), g, b, ln):
            f.write(np.ascontiguousarray(a).astype('<f4').tobytes())


if __name__ == '__main__':
    main()
