#!/usr/bin/python3
"""fullsize.py: Marian models of the shapes people download, with random
weights, for tools/marian-ref/fullsize.sh (not committed: hundreds of MB).

  fullsize.py opus DIR V        an OPUS-MT Transformer-base (d 512, 8 heads,
                                ffn 2048, 6+6, swish, tied-embeddings-all,
                                post-norm) of V ids, as DIR/model.npz
  fullsize.py student DIR V     a Firefox Translations student (d 256, 6
                                encoder layers, 2 SSRU decoder layers, ffn
                                1536, relu, tied-all, post-norm), DIR/model.npz
  fullsize.py tiny DIR V        the same construction at d 32 (2 heads,
                                ffn 32, 1+1 layers; values float16 holds,
                                also as DIR/model.f16.npz, deflated): the
                                committed fixture of a 5,000-entry vocab.yml
  fullsize.py alphas DUMP IN OUT  IN.npz with the activation multipliers
                                Firefox's pipeline adds (marian-dev's
                                scripts/alphas/extract_stats.py: each
                                NAME_QuantMultA = 127 / (mean + 1.1 std)
                                of the MaxAbs lines of marian-decoder
                                --dump-quantmult's DUMP), as OUT.npz
  fullsize.py lex ALIGN VOCAB OUT  align's forward table t(target | source)
                                (its model, as tensordump -t prints it) as
                                Marian's lex.s2t, "target source prob",
                                pieces of VOCAB (a piece first on each
                                line) only
  fullsize.py vocab YML COUNTS  a joint vocab.yml as marian-vocab writes it
                                (</s> 0, <unk> 1, then the pieces of COUNTS,
                                "count piece" lines, most frequent first),
                                quoted only where YAML needs it

Random weights of the usual scales give a model that says one token again
and again, which makes "the same output as Marian" too easy.  These are
random but shaped to copy the source: the embeddings leave the fastest
sine and cosine dimensions of Marian's position encoding (as many as a
head has) to the position alone; every cross-attention head's queries and keys are those
dimensions, scaled, so that q_t . k_j is a sum of cos(w (t - j)), which
peaks sharply at j = t; its values and output are a multiple of the
identity; every other sub-layer is small and random.  Step t of the
decoder then attends to source position t and the tied output layer
gives that position's piece: a translation is its source's pieces, one
per step, ending at the source's </s> -- different for every sentence,
of the source's length, with wide margins between candidates.
"""
import re
import sys

import numpy as np


def mat(rng, shape, scale):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def layer_norm(P, name, d):
    P[name + "_scale"] = np.ones((1, d), np.float32)
    P[name + "_bias"] = np.zeros((1, d), np.float32)


# the position dimensions the copy reads, as many as a head has: the
# dk/2 fastest sines (dims 0 .. dk/2-1 of Marian's [sin, cos] encoding)
# and their cosines (d/2 .. d/2+dk/2-1)
def pos_dims(d, h):
    n = d // h // 2
    return list(range(n)) + list(range(d // 2, d // 2 + n))


def attention(rng, P, pfx, d, h, copy):
    """Marian's names of one attention block of h heads: a copying one
    (queries and keys the position dimensions in every head, values and
    output 10 I) or a small random one."""
    dk = d // h
    if copy:
        M = np.zeros((d, d), np.float32)
        for head in range(h):
            for k, p in enumerate(pos_dims(d, h)):
                M[p, head * dk + k] = 8.0
        for m in "qk":
            P[pfx + "_W" + m] = M
            P[pfx + "_b" + m] = np.zeros((1, d), np.float32)
    else:
        for m in "qk":
            P[pfx + "_W" + m] = mat(rng, (d, d), 0.01)
            P[pfx + "_b" + m] = mat(rng, (1, d), 0.01)
    for m in "vo":
        P[pfx + "_W" + m] = (np.eye(d, dtype=np.float32) * 10.0 if copy
                             else mat(rng, (d, d), 0.01))
        P[pfx + "_b" + m] = mat(rng, (1, d), 0.01)
    layer_norm(P, pfx + "_Wo_ln", d)


def ffn(rng, P, pfx, d, f):
    P[pfx + "_W1"] = mat(rng, (d, f), 0.01)
    P[pfx + "_b1"] = mat(rng, (1, f), 0.01)
    P[pfx + "_W2"] = mat(rng, (f, d), 0.01)
    P[pfx + "_b2"] = mat(rng, (1, d), 0.01)
    layer_norm(P, pfx + "_ffn_ln", d)


def model_yml(d, h, f, enc, dec, V, act, ssru):
    lines = [
        "type: transformer", "dim-emb: %d" % d,
        "dim-vocabs:", "  - %d" % V, "  - %d" % V,
        "enc-depth: %d" % enc, "dec-depth: %d" % dec,
        "transformer-heads: %d" % h, "transformer-dim-ffn: %d" % f,
        "transformer-ffn-depth: 2",
        "transformer-ffn-activation: %s" % act,
        'transformer-preprocess: ""', "transformer-postprocess: dan",
        'transformer-postprocess-top: ""',
        "transformer-postprocess-emb: d",
        "transformer-decoder-autoreg: %s" %
        ("rnn" if ssru else "self-attention"),
        "transformer-tied-layers:", "  []",
        "transformer-train-position-embeddings: false",
        "transformer-dropout: 0.1", "label-smoothing: 0.1",
        "tied-embeddings: true", "tied-embeddings-src: false",
        "tied-embeddings-all: true",
        "version: v1.10.0 (random, attn's tools/marian-ref/fullsize.py)"]
    if ssru:
        lines[lines.index("transformer-ffn-depth: 2"):
              lines.index("transformer-ffn-depth: 2")] = [
            "dec-cell: ssru", "layer-normalization: false",
            "transformer-rnn-projection: false"]
    return "\n".join(lines) + "\n"


def model(kind, out, V, seed=1):
    rng = np.random.default_rng(seed)
    if kind == "opus":
        d, h, f, enc, dec, act, ssru = 512, 8, 2048, 6, 6, "swish", False
    elif kind == "tiny":
        d, h, f, enc, dec, act, ssru = 32, 2, 32, 1, 1, "swish", False
    else:
        d, h, f, enc, dec, act, ssru = 256, 8, 1536, 6, 2, "relu", True
    # rows of one norm: the layer norms then scale every position alike,
    # and the attention's choice is the position's, not the token's
    E = mat(rng, (V, d), 1.0)
    E[:, pos_dims(d, h)] = 0
    m = d - len(pos_dims(d, h))
    E *= (0.1 if d >= 256 else 0.5) * np.sqrt(m) / \
        np.linalg.norm(E, axis=1, keepdims=True)
    P = {"Wemb": E,
         "decoder_ff_logit_out_b": np.zeros((1, V), np.float32)}
    for l in range(1, enc + 1):
        attention(rng, P, "encoder_l%d_self" % l, d, h, False)
        ffn(rng, P, "encoder_l%d_ffn" % l, d, f)
    for l in range(1, dec + 1):
        p = "decoder_l%d" % l
        if ssru:
            P[p + "_rnn_W"] = mat(rng, (d, d), 0.01)
            P[p + "_rnn_Wf"] = mat(rng, (d, d), 0.01)
            P[p + "_rnn_bf"] = mat(rng, (1, d), 0.01)
            layer_norm(P, p + "_rnn_ffn_ln", d)
        else:
            attention(rng, P, p + "_self", d, h, False)
        attention(rng, P, p + "_context", d, h, True)
        ffn(rng, P, p + "_ffn", d, f)
    if kind == "tiny":
        # values float16 holds exactly, so that the committed copy can be
        # float16 (attn widens it back; Marian reads float32 only)
        P = {k: v.astype(np.float16).astype(np.float32) for k, v in P.items()}
    P["special:model.yml"] = np.frombuffer(
        model_yml(d, h, f, enc, dec, V, act, ssru).encode() + b"\0",
        dtype=np.int8)
    np.savez(out + "/model.npz", **P)
    if kind == "tiny":
        np.savez_compressed(out + "/model.f16.npz", **{
            k: v.astype(np.float16) if v.dtype == np.float32 else v
            for k, v in P.items()})


# a piece yaml-cpp would write unquoted: no indicator first, nothing that
# reads as a number, boolean or null, no ": " or " #", no quotes or
# backslashes, no leading or trailing blank
PLAIN = re.compile(r"^[^-?:,\[\]{}#&*!|>'\"%@`\s\\][^\"\\\s]*$")
SPECIAL = re.compile(r"^(y|Y|yes|Yes|YES|n|N|no|No|NO|true|True|TRUE|false|"
                     r"False|FALSE|on|On|ON|off|Off|OFF|null|Null|NULL|~|"
                     r"[-+]?[0-9].*|\.[0-9].*|\.inf|\.nan)$")


def yml_key(p):
    if PLAIN.match(p) and not SPECIAL.match(p) and ": " not in p and \
            not p.endswith(":") and " #" not in p:
        return p
    out = ""
    for c in p:
        if c in '"\\':
            out += "\\" + c
        elif ord(c) < 0x20 or ord(c) == 0x7f:
            out += "\\x%02x" % ord(c)
        else:
            out += c
    return '"' + out + '"'


def vocab(path, counts):
    pieces = ["</s>", "<unk>"]
    seen = set(pieces)
    with open(counts, encoding="utf-8") as f:
        for line in f:
            p = line.rstrip("\n").lstrip().split(" ", 1)
            if len(p) == 2 and p[1] and p[1] not in seen:
                seen.add(p[1])
                pieces.append(p[1])
    with open(path, "w", encoding="utf-8") as f:
        for i, p in enumerate(pieces):
            f.write("%s: %d\n" % (yml_key(p), i))
    print(len(pieces))


def lex(align, vocab, out):
    rec, name = {}, None
    for line in open(align, encoding="utf-8"):
        if line.startswith("record "):
            name = line.split()[1]
            rec[name] = []
        elif name:
            rec[name].append(line)

    def words(n):   # its strings: UTF-8, and \xNN, \n escapes
        b = bytearray()
        for m in re.finditer(r'"((?:[^"\\]|\\.)*)"', "".join(rec[n])):
            for e in re.finditer(r'\\x([0-9a-fA-F]{2})|\\(.)|([^\\]+)',
                                 m.group(1)):
                if e.group(1):
                    b.append(int(e.group(1), 16))
                elif e.group(2):
                    b += {"n": b"\n", "t": b"\t", "r": b"\r"}.get(
                        e.group(2), e.group(2).encode())
                else:
                    b += e.group(3).encode("utf-8")
        return b.decode("utf-8", "replace").split("\n")[:-1]

    def nums(n):
        return " ".join(rec[n]).split()
    src, tgt = words("align.src.words"), words("align.tgt.words")
    rows = [int(x) for x in nums("align.fwd.rows")]
    cols = [int(x) for x in nums("align.fwd.cols")]
    probs = nums("align.fwd.probs")
    known = set(l.rstrip("\n").split("\t")[0]
                for l in open(vocab, encoding="utf-8"))
    with open(out, "w", encoding="utf-8") as f:
        for i, s in enumerate(src):     # row 0: the NULL word
            if s not in known:
                continue
            for k in range(rows[i + 1], rows[i + 2]):
                t = tgt[cols[k] - 1]
                if t in known:
                    f.write("%s %s %s\n" % (t, s, probs[k]))


def alphas(dump, src, out):
    maxabs = {}
    for line in open(dump):
        f = line.split()
        if len(f) != 12 or f[0] != "Name:":
            continue
        maxabs.setdefault(f[1].split("::")[-1], []).append(float(f[11]))
    d = dict(np.load(src))
    for n, v in maxabs.items():
        if "QuantMultA" in n:
            r = np.array((1,), dtype=np.float32)
            r[0] = 127 / (np.mean(v) + 1.1 * np.std(v))
            d[n] = r
    # the tied output layer's multiplier under both of Marian's names
    if "Wemb_QuantMultA" in d:
        d["none_QuantMultA"] = d["Wemb_QuantMultA"]
    elif "none_QuantMultA" in d:
        d["Wemb_QuantMultA"] = d["none_QuantMultA"]
    np.savez(out, **d)


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] in ("opus", "student", "tiny"):
        model(sys.argv[1], sys.argv[2], int(sys.argv[3]))
    elif len(sys.argv) == 5 and sys.argv[1] == "lex":
        lex(sys.argv[2], sys.argv[3], sys.argv[4])
    elif len(sys.argv) == 5 and sys.argv[1] == "alphas":
        alphas(sys.argv[2], sys.argv[3], sys.argv[4])
    elif len(sys.argv) == 4 and sys.argv[1] == "vocab":
        vocab(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)
