#!/usr/bin/python3
"""make_fixtures.py: small random Marian Transformers and what they
translate, for tests/cli_marian.sh (tests/fixtures/marian/).

Makes a SentencePiece vocabulary with Debian's spm_train (ids as Marian's
OPUS-MT models have them: </s> 0, <unk> 1, no <s>) from generated text;
writes Marian model files (.npz, numpy's savez: ZIP64 members, as Marian's
own files are read) with their special:model.yml, in two variants:

  post: post-norm (transformer-postprocess dan), swish, tied-embeddings-all
  pre:  pre-norm (n / da / top n), relu, tied-embeddings (target-output
        only: encoder_Wemb, decoder_Wemb), untied nothing else

and translates source id sequences greedily with a reference written here
in numpy from Marian's equations (src/models/transformer.h,
inits::sinusoidalPositionEmbeddings, layerNorm eps 1e-6, the zero start
vector), in float64: this reference is independent of attn's C code.
Writes inputs (ids, </s> appended as Marian appends it) and the expected
greedy ids and scores (sum of log-probabilities, </s> included).

Usage: tools/marian-ref/make_fixtures.py OUTDIR  (needs python3-numpy and
spm_train; make check does not run it: its outputs are committed.)
"""
import os, subprocess, sys, tempfile
import numpy as np

D, H, F, L, MAXLEN = 16, 2, 32, 2, 12


def spm_vocab(out):
    rng = np.random.default_rng(1)
    words = ["casa", "perro", "gato", "verde", "azul", "come", "el", "la",
             "un", "una", "grande", "rojo", "mar", "sol", "luna"]
    with tempfile.TemporaryDirectory() as t:
        txt = os.path.join(t, "text")
        with open(txt, "w") as f:
            for _ in range(400):
                f.write(" ".join(rng.choice(words, rng.integers(2, 8)))
                        + "\n")
        prefix = os.path.join(t, "m")
        subprocess.run(["spm_train", "--input=" + txt,
                        "--model_prefix=" + prefix, "--vocab_size=40",
                        "--hard_vocab_limit=false", "--num_threads=1",
                        "--model_type=unigram", "--bos_id=-1",
                        "--eos_id=0", "--unk_id=1", "--pad_id=-1",
                        "--character_coverage=1.0", "--minloglevel=2"],
                       check=True, capture_output=True)
        with open(prefix + ".model", "rb") as f, open(out, "wb") as g:
            g.write(f.read())
        with open(prefix + ".vocab") as f:
            return len(f.readlines())


def marian_pe(p, d):
    h = d // 2
    inc = np.log(10000.0) / (h - 1)
    a = p * np.exp(-np.arange(h) * inc)
    return np.concatenate([np.sin(a), np.cos(a)])


def ln(x, g, b):
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    return g * (x - m) / np.sqrt(v + 1e-6) + b


def act(x, kind):
    return x / (1 + np.exp(-x)) if kind == "swish" else np.maximum(x, 0)


def mha(P, pfx, q, kv, causal):
    Q = q @ P[pfx + "_Wq"] + P[pfx + "_bq"]
    K = kv @ P[pfx + "_Wk"] + P[pfx + "_bk"]
    V = kv @ P[pfx + "_Wv"] + P[pfx + "_bv"]
    dk = D // H
    out = np.zeros_like(Q)
    for h in range(H):
        s = slice(h * dk, (h + 1) * dk)
        z = Q[:, s] @ K[:, s].T / np.sqrt(dk)
        if causal:
            z = z + np.triu(np.full(z.shape, -1e9), 1)
        w = np.exp(z - z.max(-1, keepdims=True))
        w /= w.sum(-1, keepdims=True)
        out[:, s] = w @ V[:, s]
    return out @ P[pfx + "_Wo"] + P[pfx + "_bo"]


def sub(P, cfg, pfx, lnpfx, x, f):
    """Marian's preProcess, the function, postProcess (the FFN's)."""
    if cfg["pre"]:
        y = f(ln(x, P[lnpfx + "_ln_scale_pre"], P[lnpfx + "_ln_bias_pre"]))
        return x + y
    return ln(x + f(x), P[lnpfx + "_ln_scale"], P[lnpfx + "_ln_bias"])


def att_sub(P, cfg, pfx, x, kv, causal):
    """An attention sub-layer as Marian's LayerAttention computes it: in
    pre-norm only the query is layer-normed (preProcess of `input`); the
    keys and values are the sub-layer's input itself (self-attention,
    kv None) or the encoder's output (kv)."""
    kv = x if kv is None else kv
    if cfg["pre"]:
        q = ln(x, P[pfx + "_Wo_ln_scale_pre"], P[pfx + "_Wo_ln_bias_pre"])
        return x + mha(P, pfx, q, kv, causal)
    return ln(x + mha(P, pfx, x, kv, causal), P[pfx + "_Wo_ln_scale"],
              P[pfx + "_Wo_ln_bias"])


def ffn(P, cfg, pfx, x):
    return act(x @ P[pfx + "_W1"] + P[pfx + "_b1"], cfg["act"]) \
        @ P[pfx + "_W2"] + P[pfx + "_b2"]


def embed(E, ids, p0=0):
    x = np.stack([np.zeros(D) if i < 0 else E[i] for i in ids]) * np.sqrt(D)
    return x + np.stack([marian_pe(p0 + t, D) for t in range(len(ids))])


def encode(P, cfg, src):
    x = embed(P[cfg["src_emb"]], src)
    for l in range(1, L + 1):
        p = "encoder_l%d" % l
        x = att_sub(P, cfg, p + "_self", x, None, False)
        x = sub(P, cfg, p + "_ffn", p + "_ffn_ffn", x,
                lambda u: ffn(P, cfg, p + "_ffn", u))
    if cfg["pre"]:
        x = ln(x, P["encoder_top_ln_scale"], P["encoder_top_ln_bias"])
    return x


def decode_logp(P, cfg, E, prefix):
    """log p of the next id after prefix (starting with -1, the zero
    vector), the whole prefix recomputed (no cache)."""
    y = embed(P[cfg["tgt_emb"]], prefix)
    for l in range(1, L + 1):
        p = "decoder_l%d" % l
        y = att_sub(P, cfg, p + "_self", y, None, True)
        y = att_sub(P, cfg, p + "_context", y, E, False)
        y = sub(P, cfg, p + "_ffn", p + "_ffn_ffn", y,
                lambda u: ffn(P, cfg, p + "_ffn", u))
    if cfg["pre"]:
        y = ln(y, P["decoder_top_ln_scale"], P["decoder_top_ln_bias"])
    W = P[cfg["out"]] if cfg["out"] != "decoder_ff_logit_out_W" else \
        P[cfg["out"]].T
    z = y[-1] @ W.T + P["decoder_ff_logit_out_b"][0]
    z = z - z.max()
    return z - np.log(np.exp(z).sum())


def greedy(P, cfg, src, eos=0):
    E = encode(P, cfg, src)
    out, score = [], 0.0
    while len(out) < MAXLEN:
        lp = decode_logp(P, cfg, E, [-1] + out)
        k = int(lp.argmax())
        score += lp[k]
        out.append(k)
        if k == eos:
            break
    return out, score


def make_params(cfg, V, seed):
    rng = np.random.default_rng(seed)
    P = {}

    def mat(name, shape, scale):
        P[name] = (rng.standard_normal(shape) * scale).astype(np.float32)

    for e in sorted({cfg["src_emb"], cfg["tgt_emb"]}):
        mat(e, (V, D), 0.6)
    for side, blocks in (("encoder", ["self"]),
                         ("decoder", ["self", "context"])):
        for l in range(1, L + 1):
            for b in blocks:
                p = "%s_l%d_%s" % (side, l, b)
                for m in "qkvo":
                    mat(p + "_W" + m, (D, D), 0.5)
                    mat(p + "_b" + m, (1, D), 0.1)
                sfx = "_pre" if cfg["pre"] else ""
                mat(p + "_Wo_ln_scale" + sfx, (1, D), 0.2)
                P[p + "_Wo_ln_scale" + sfx] += 1
                mat(p + "_Wo_ln_bias" + sfx, (1, D), 0.1)
            p = "%s_l%d_ffn" % (side, l)
            mat(p + "_W1", (D, F), 0.4)
            mat(p + "_b1", (1, F), 0.1)
            mat(p + "_W2", (F, D), 0.3)
            mat(p + "_b2", (1, D), 0.1)
            sfx = "_pre" if cfg["pre"] else ""
            mat(p + "_ffn_ln_scale" + sfx, (1, D), 0.2)
            P[p + "_ffn_ln_scale" + sfx] += 1
            mat(p + "_ffn_ln_bias" + sfx, (1, D), 0.1)
        if cfg["pre"]:
            mat(side + "_top_ln_scale", (1, D), 0.2)
            P[side + "_top_ln_scale"] += 1
            mat(side + "_top_ln_bias", (1, D), 0.1)
    if cfg["out"] == "decoder_ff_logit_out_W":
        mat("decoder_ff_logit_out_W", (D, V), 0.8)
    mat("decoder_ff_logit_out_b", (1, V), 0.5)
    return P


def save_bin(path, items):
    """Marian's binary model layout (src/common/binary.cpp): version 1,
    the item count, per item (name length with its NUL, type, rank, data
    bytes), the names, the int32 shapes, an 8-byte offset and that much
    padding to a 256-byte boundary, the data."""
    import struct
    types = {np.dtype(np.float32): 0x404, np.dtype(np.int8): 0x101}
    names = list(items)
    out = bytearray(struct.pack("<QQ", 1, len(names)))
    for n in names:
        a = items[n]
        out += struct.pack("<QQQQ", len(n) + 1, types[a.dtype], a.ndim,
                           a.nbytes)
    for n in names:
        out += n.encode() + b"\0"
    for n in names:
        out += struct.pack("<%di" % items[n].ndim, *items[n].shape)
    pos = len(out)
    off = ((pos + 8) // 256 + 1) * 256 - pos - 8
    out += struct.pack("<Q", off) + b"\0" * off
    for n in names:
        out += items[n].tobytes()
    with open(path, "wb") as f:
        f.write(out)


def model_yml(cfg, V):
    tie = cfg["tie"]
    return "\n".join([
        "type: transformer",
        "dim-emb: %d" % D, "dim-vocabs:", "  - %d" % V, "  - %d" % V,
        "enc-depth: %d" % L, "dec-depth: %d" % L,
        "transformer-heads: %d" % H, "transformer-dim-ffn: %d" % F,
        "transformer-ffn-depth: 2",
        "transformer-ffn-activation: %s" % cfg["act"],
        "transformer-preprocess: %s" % ('n' if cfg["pre"] else '""'),
        "transformer-postprocess: %s" % ('da' if cfg["pre"] else 'dan'),
        "transformer-postprocess-top: %s" % ('n' if cfg["pre"] else '""'),
        "transformer-postprocess-emb: d",
        "transformer-decoder-autoreg: self-attention",
        "transformer-tied-layers:", "  []",
        "transformer-train-position-embeddings: false",
        "transformer-dropout: 0.1", "label-smoothing: 0.1",
        "tied-embeddings: %s" % str(tie in ("tgt", "all")).lower(),
        "tied-embeddings-src: false",
        "tied-embeddings-all: %s" % str(tie == "all").lower(),
        "version: v1.12.0 (a fixture of attn's tools/marian-ref)", ""])


VARIANTS = {
    "post": dict(pre=False, act="swish", tie="all", src_emb="Wemb",
                 tgt_emb="Wemb", out="Wemb"),
    "pre": dict(pre=True, act="relu", tie="tgt", src_emb="encoder_Wemb",
                tgt_emb="decoder_Wemb", out="decoder_Wemb"),
}


def main(out):
    os.makedirs(out, exist_ok=True)
    V = spm_vocab(os.path.join(out, "vocab.spm"))
    rng = np.random.default_rng(7)
    inputs = [list(rng.integers(2, V, rng.integers(1, 8))) + [0]
              for _ in range(6)]
    with open(os.path.join(out, "input.ids"), "w") as f:
        for s in inputs:
            f.write(" ".join(map(str, s)) + "\n")
    for name, cfg in VARIANTS.items():
        P = make_params(cfg, V, 11 if name == "post" else 12)
        items = dict(P)
        items["special:model.yml"] = np.frombuffer(
            model_yml(cfg, V).encode() + b"\0", dtype=np.int8)
        np.savez(os.path.join(out, name + ".npz"), **items)
        if name == "pre":
            save_bin(os.path.join(out, name + ".bin"), items)
        P64 = {k: v.astype(np.float64) for k, v in P.items()}
        with open(os.path.join(out, name + ".expected"), "w") as f:
            for s in inputs:
                ids, score = greedy(P64, cfg, s)
                f.write("%s\t%.6f\n" % (" ".join(map(str, ids)), score))
        if name == "post":
            # refusals: a parameter missing, and settings attn lacks
            # (the config is read before any parameter)
            del items["decoder_l2_ffn_b2"]
            np.savez(os.path.join(out, "missing.npz"), **items)
            for bad, old, new in (
                    ("rnn", "transformer-decoder-autoreg: self-attention",
                     "transformer-decoder-autoreg: rnn"),
                    ("s2s", "type: transformer", "type: s2s"),
                    ("tied-layers", "transformer-tied-layers:\n  []",
                     "transformer-tied-layers: [1, 1]")):
                y = model_yml(cfg, V).replace(old, new)
                np.savez(os.path.join(out, "bad-%s.npz" % bad), **{
                    "special:model.yml": np.frombuffer(
                        y.encode() + b"\0", dtype=np.int8)})
    with open(os.path.join(out, "decoder.yml"), "w") as f:
        f.write("models:\n  - post.npz\nvocabs:\n  - vocab.spm\n"
                "  - vocab.spm\nbeam-size: 4\nnormalize: 0.6\n"
                "max-length-factor: 2.5\nmini-batch: 16\n")



# ==== SSRU students (issue 27) ===========================================
# This section is apart from the rest (which it only calls) so that other
# changes to this file merge with it.  Bergamot's students replace the
# decoder's self-attention by an SSRU (transformer-decoder-autoreg: rnn,
# dec-cell: ssru).  From marian-dev's sources:
#
#   src/models/transformer.h, DecoderLayerRNN: the layer is
#     preProcess(prefix "decoder_l{l}_rnn", transformer-preprocess),
#     the cell over the time steps (rnn->transduce, from the previous
#     state), then postProcess(prefix "decoder_l{l}_rnn_ffn",
#     transformer-postprocess, with the layer's input as the residual): so
#     a post-norm's layer norm is decoder_l{l}_rnn_ffn_ln_{scale,bias} and
#     a pre-norm's decoder_l{l}_rnn_ln_{scale,bias}_pre.  The cross-
#     attention and the FFN follow as in a self-attention layer.
#   DecoderTransformer::startState: every layer's state starts as zeros.
#   src/rnn/cells.h, class SSRU: applyInput x = dot(input, W) (no bias),
#     f = affine(input, Wf, bf); applyState: cell = highway(cell, x, f),
#     output relu(cell); the state carried is the cell.
#   src/graph/node_operators_binary.h, HighwayNodeOp: highway(y, x, t) =
#     sigmoid(t) y + (1 - sigmoid(t)) x.
#
# So, per decoder layer and time step t, from c_0 = 0:
#     f_t = sigmoid(u_t Wf + bf);  c_t = f_t c_{t-1} + (1 - f_t) (u_t W);
#     out_t = relu(c_t)
# with Marian's matrices [in, out] (x W).

# seed and emb: make_params' seed and a factor of the embeddings (see
# ssru_params), chosen among a few so that the greedy outputs differ from
# input to input and within one, and two of ssru's end early with </s>.
SSRU_VARIANTS = {
    "ssru": dict(pre=False, act="relu", tie="all", src_emb="Wemb",
                 tgt_emb="Wemb", out="Wemb", seed=29, emb=0.2),
    "ssru-pre": dict(pre=True, act="swish", tie="tgt",
                     src_emb="encoder_Wemb", tgt_emb="decoder_Wemb",
                     out="decoder_Wemb", seed=37, emb=1.0),
}


def ssru_cell(P, pfx, u):
    c, out = np.zeros(D), []
    for x in u:
        f = 1 / (1 + np.exp(-(x @ P[pfx + "_Wf"] + P[pfx + "_bf"][0])))
        c = f * c + (1 - f) * (x @ P[pfx + "_W"])
        out.append(np.maximum(c, 0))
    return np.stack(out)


def ssru_decode_logp(P, cfg, E, prefix):
    """decode_logp's with each layer's self-attention an SSRU over the
    whole prefix from a zero state (no cache)."""
    y = embed(P[cfg["tgt_emb"]], prefix)
    for l in range(1, L + 1):
        p = "decoder_l%d" % l
        y = sub(P, cfg, p + "_rnn", p + ("_rnn" if cfg["pre"] else
                                         "_rnn_ffn"), y,
                lambda u: ssru_cell(P, p + "_rnn", u))
        y = sub(P, cfg, p + "_context", p + "_context_Wo", y,
                lambda u: mha(P, p + "_context", u, E, False))
        y = sub(P, cfg, p + "_ffn", p + "_ffn_ffn", y,
                lambda u: ffn(P, cfg, p + "_ffn", u))
    if cfg["pre"]:
        y = ln(y, P["decoder_top_ln_scale"], P["decoder_top_ln_bias"])
    W = P[cfg["out"]] if cfg["out"] != "decoder_ff_logit_out_W" else \
        P[cfg["out"]].T
    z = y[-1] @ W.T + P["decoder_ff_logit_out_b"][0]
    z = z - z.max()
    return z - np.log(np.exp(z).sum())


def ssru_greedy(P, cfg, src, eos=0, unk=1):
    """Greedy as Marian's search: <unk> never chosen (no allow-unk: its
    log-probability set to -inf, the others' left as they are)."""
    E = encode(P, cfg, src)
    out, score = [], 0.0
    while len(out) < MAXLEN:
        lp = ssru_decode_logp(P, cfg, E, [-1] + out)
        lp[unk] = -np.inf
        k = int(lp.argmax())
        score += lp[k]
        out.append(k)
        if k == eos:
            break
    return out, score


def ssru_params(cfg, V, seed):
    """make_params' model with each decoder layer's self-attention
    replaced by an SSRU's W, Wf, bf and its layer norm.  The embeddings
    are scaled by cfg["emb"] and the last layer norm (which the output
    layer reads) by its inverse: the positions then outweigh the previous
    id in the decoder's input, and a random model moves on where it would
    repeat one id (a previous id's embedding, tied to the output, votes
    for itself)."""
    P = make_params(cfg, V, seed)
    top = "decoder_top_ln" if cfg["pre"] else "decoder_l%d_ffn_ffn_ln" % L
    for k in {cfg["src_emb"], cfg["tgt_emb"]}:
        P[k] = P[k] * np.float32(cfg["emb"])
    for k in ("_scale", "_bias"):
        P[top + k] = P[top + k] / np.float32(cfg["emb"])
    rng = np.random.default_rng(seed + 100)
    sfx = "_pre" if cfg["pre"] else ""
    for l in range(1, L + 1):
        p = "decoder_l%d" % l
        for k in [k for k in P if k.startswith(p + "_self_")]:
            del P[k]
        P[p + "_rnn_W"] = (rng.standard_normal((D, D)) * 0.8).astype(
            np.float32)
        P[p + "_rnn_Wf"] = (rng.standard_normal((D, D)) * 0.5).astype(
            np.float32)
        P[p + "_rnn_bf"] = (rng.standard_normal((1, D)) * 0.5).astype(
            np.float32)
        lnp = p + ("_rnn" if cfg["pre"] else "_rnn_ffn")
        P[lnp + "_ln_scale" + sfx] = (1 + rng.standard_normal((1, D)) *
                                      0.2).astype(np.float32)
        P[lnp + "_ln_bias" + sfx] = (rng.standard_normal((1, D)) *
                                     0.1).astype(np.float32)
    return P


def ssru_yml(cfg, V, cell="ssru", extra=""):
    return model_yml(cfg, V).replace(
        "transformer-decoder-autoreg: self-attention",
        "transformer-decoder-autoreg: rnn\ndec-cell: %s\n"
        "dec-cell-base-depth: 2\ndec-cell-high-depth: 1\n"
        "layer-normalization: false\n%s" % (cell, extra)).replace(
            "\n\n", "\n")


def ssru_main(out):
    """The SSRU models, written beside main's (its vocabulary and
    inputs): ssru.npz (post-norm, relu, every embedding tied, as the
    students are) and ssru-pre.npz (pre-norm, swish, target tying), each
    with its .expected greedy ids and scores."""
    with open(os.path.join(out, "input.ids")) as f:
        inputs = [list(map(int, line.split())) for line in f]
    V = int(np.load(os.path.join(out, "post.npz"))["Wemb"].shape[0])
    for name, cfg in SSRU_VARIANTS.items():
        P = ssru_params(cfg, V, cfg["seed"])
        items = dict(P)
        items["special:model.yml"] = np.frombuffer(
            ssru_yml(cfg, V).encode() + b"\0", dtype=np.int8)
        np.savez(os.path.join(out, name + ".npz"), **items)
        P64 = {k: v.astype(np.float64) for k, v in P.items()}
        with open(os.path.join(out, name + ".expected"), "w") as f:
            for s in inputs:
                ids, score = ssru_greedy(P64, cfg, s)
                f.write("%s\t%.6f\n" % (" ".join(map(str, ids)), score))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "tests/fixtures/marian")
    ssru_main(sys.argv[1] if len(sys.argv) > 1 else "tests/fixtures/marian")
