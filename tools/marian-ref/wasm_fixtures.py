#!/usr/bin/python3
"""wasm_fixtures.py: small random Marian Transformers translated by the
real Marian (bergamot-translator's WebAssembly build, through
run_marian.js under node) and by make_fixtures.py's float64 numpy
reference, which must agree; their outputs become fixtures
(tests/fixtures/marian/wasm/) that tests/cli_marian_wasm.sh checks attn
against, without node.

The models' parameters are scaled up from make_fixtures.py's (larger
embeddings and output layer) so that greedy outputs change across steps
and inputs and beam search finds other translations than greedy on some
inputs.  Variants (name: norm, activation, tying):

  post-swish-all:  post-norm, swish, tied-embeddings-all
  pre-relu-tgt:    pre-norm, relu, tied-embeddings (target-output)
  post-relu-none:  post-norm, relu, nothing tied (decoder_ff_logit_out_W)
  pre-swish-all:   pre-norm, swish, tied-embeddings-all
  ssru-post-relu-all: an SSRU student (transformer-decoder-autoreg: rnn,
                   dec-cell: ssru), post-norm, relu, tied-embeddings-all,
                   as Bergamot's students are
  ssru-pre-swish-tgt: an SSRU student, pre-norm, swish, target tying

all over words.spm, a SentencePiece word model (</s> 0, <unk> 1): every
piece is a word, so Marian's text gives its ids back exactly (split at
spaces); and text-pre-relu-tgt, pre-relu-tgt's shape over
make_fixtures.py's unigram vocab.spm, whose fixture is Marian's text.

The reference searches as Marian's BeamSearch::search does: the first
step keeps the k best ids (its beam starts as k start hypotheses); the beam
shrinks by each hypothesis that ends in </s>; a finished one scores
pathScore / len^normalize (len counting </s>); every step suppresses
<unk> (no allow-unk); the search stops after ceil(max-length-factor * S)
steps, S the source's ids with </s>, the live hypotheses then finished.

Writes, per variant NAME: NAME.bin (Marian's binary layout), NAME.greedy
and NAME.beam, one line per line of input.txt: Marian's ids (from its
text; </s> 0 appended when it stopped short of the maximum length), a
tab, the reference's log p of them (float64), a tab, Marian's own
log-probabilities of the ids but the last (bergamot's word scores: see
run_marian.js); for text-*: NAME.greedy.txt, NAME.beam.txt, Marian's
text.  decoder.yml holds the search settings (beam 4, normalize 0.6,
max-length-factor 2.5).

Usage: tools/marian-ref/marian_wasm.sh (installs the npm package when
missing, then runs this with its directory).  Needs python3-numpy,
python3-sentencepiece, spm_train and node.
"""
import os, subprocess, sys, tempfile
import numpy as np
import sentencepiece

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_fixtures as mf  # noqa: E402

BEAM, NORMALIZE, FACTOR = 4, 0.6, 2.5
EOS, UNK = 0, 1
# Marian's word scores are printed with 6 significant digits, and its
# float32 products differ from float64 by about 1e-5 a target id (more
# in pre-norm, whose raw keys make large attention logits): tolerance
# per id.
TOL = 2e-4

WORDS = ("casa perro gato verde azul come el la un una grande rojo mar sol "
         "luna bebe agua pan libro mesa nino nina corre salta mira tiene "
         "noche dia flor arbol rio nube frio calor viejo nuevo alto bajo "
         "duerme canta").split()

INPUTS = [
    "el gato come pan",
    "la luna",
    "un perro grande corre en la casa",
    "verde",
    "la nina mira el mar azul y canta",
    "el rio frio",
    "una flor roja bebe agua de noche",
    "sol dia calor nube arbol alto bajo viejo nuevo",
]

VARIANTS = {
    "post-swish-all": dict(pre=False, act="swish", tie="all",
                           src_emb="Wemb", tgt_emb="Wemb", out="Wemb"),
    "pre-relu-tgt": dict(pre=True, act="relu", tie="tgt",
                         src_emb="encoder_Wemb", tgt_emb="decoder_Wemb",
                         out="decoder_Wemb"),
    "post-relu-none": dict(pre=False, act="relu", tie="none",
                           src_emb="encoder_Wemb", tgt_emb="decoder_Wemb",
                           out="decoder_ff_logit_out_W"),
    "pre-swish-all": dict(pre=True, act="swish", tie="all", src_emb="Wemb",
                          tgt_emb="Wemb", out="Wemb"),
    # SSRU students (make_fixtures.py's SSRU section: the decoder's
    # self-attention an SSRU, decoder_l{l}_rnn_W, _Wf, _bf; a post-norm's
    # layer norm decoder_l{l}_rnn_ffn_ln_*, a pre-norm's
    # decoder_l{l}_rnn_ln_*_pre).  emb: ssru_params' factor of the
    # embeddings; seed and scales (save_model's) chosen among a few by
    # the reference for varied outputs, some </s> and beam != greedy.
    "ssru-post-relu-all": dict(pre=False, act="relu", tie="all",
                               src_emb="Wemb", tgt_emb="Wemb", out="Wemb",
                               ssru=True, emb=0.5, seed=29,
                               scales=dict(emb=1.0, eos=3.0, mix=1.0)),
    "ssru-pre-swish-tgt": dict(pre=True, act="swish", tie="tgt",
                               src_emb="encoder_Wemb",
                               tgt_emb="decoder_Wemb", out="decoder_Wemb",
                               ssru=True, emb=0.5, seed=30,
                               scales=dict(emb=1.0, eos=3.0, mix=3.0)),
}


def word_vocab(out):
    """A SentencePiece word model of WORDS, Marian's special ids."""
    rng = np.random.default_rng(3)
    with tempfile.TemporaryDirectory() as t:
        txt = os.path.join(t, "text")
        with open(txt, "w") as f:
            for _ in range(600):
                f.write(" ".join(rng.choice(WORDS, rng.integers(2, 9)))
                        + "\n")
        prefix = os.path.join(t, "w")
        subprocess.run(["spm_train", "--input=" + txt,
                        "--model_prefix=" + prefix, "--vocab_size=%d"
                        % (len(WORDS) + 2), "--hard_vocab_limit=false",
                        "--num_threads=1", "--model_type=word",
                        "--bos_id=-1", "--eos_id=0", "--unk_id=1",
                        "--pad_id=-1", "--minloglevel=2",
                        # no NFKC table: a few hundred bytes, not 238 KB
                        "--normalization_rule_name=identity"],
                       check=True, capture_output=True)
        with open(prefix + ".model", "rb") as f, open(out, "wb") as g:
            g.write(f.read())


def scaled_params(cfg, V, seed, emb=1.0, out=1.0, bias=0.1, eos=0.0,
                  mix=1.0):
    """make_fixtures.py's parameters with the embeddings, the output
    layer's weights and its bias scaled, and eos added to </s>'s bias:
    with a small bias the logits follow the decoder's state, so the
    argmax moves with the context, and </s> comes at some point."""
    P = mf.ssru_params(cfg, V, seed) if cfg.get("ssru") else \
        mf.make_params(cfg, V, seed)
    for k in P:             # the layers' matrices: mix
        if k.endswith(("_Wq", "_Wk", "_Wv", "_Wo", "_W1", "_W2", "_rnn_W",
                       "_rnn_Wf")):
            P[k] = (P[k] * mix).astype(np.float32)
    for k in {cfg["src_emb"], cfg["tgt_emb"]}:
        P[k] = (P[k] * emb).astype(np.float32)
    if cfg["out"] == "decoder_ff_logit_out_W":
        P[cfg["out"]] = (P[cfg["out"]] * out).astype(np.float32)
    b = P["decoder_ff_logit_out_b"] * bias
    b[0, EOS] += eos
    P["decoder_ff_logit_out_b"] = b.astype(np.float32)
    return P


def decode_logp(P, cfg, E, prefix):
    """The reference's log p of the next id: a Transformer's, or with
    cfg["ssru"] an SSRU student's."""
    f = mf.ssru_decode_logp if cfg.get("ssru") else mf.decode_logp
    return f(P, cfg, E, prefix)


def marian_search(P, cfg, src, k, alpha, factor):
    """Marian's beam search over the reference (see the module's
    docstring): the best finished hypothesis' ids, log p and the log p of
    each id."""
    E = mf.encode(P, cfg, src)
    maxlen = factor * len(src)
    beam = [([], 0.0, [])]
    width = k               # Marian's first beam: k start hypotheses
    finished = []           # (normalised, order, ids, score, logps)
    t = 0
    while width:
        cands = []
        for ids, score, lps in beam:
            lp = decode_logp(P, cfg, E, [-1] + ids)
            lp[UNK] = -np.inf
            for w in range(len(lp)):
                cands.append((score + lp[w], ids, w, lps, lp[w]))
        cands.sort(key=lambda c: -c[0])
        new = [(c[1] + [c[2]], c[0], c[3] + [c[4]])
               for c in cands[:width]]
        t += 1
        last = t >= maxlen
        beam = []
        for ids, score, lps in new:
            if ids[-1] == EOS or last:
                finished.append((score / len(ids) ** alpha,
                                 len(finished), ids, score, lps))
            else:
                beam.append((ids, score, lps))
        width = len(beam)
        if last:
            break
    best = max(finished, key=lambda f: (f[0], -f[1]))
    return best[2], best[3], best[4]


def run_marian(pkg, model, vocab, inputs, beam, scores=True):
    cmd = ["node", os.path.join(os.path.dirname(os.path.abspath(
        __file__)), "run_marian.js"), "--package", pkg, "--model", model,
        "--vocab", vocab, "--beam-size", str(beam), "--normalize",
        str(NORMALIZE if beam > 1 else 0), "--max-length-factor",
        str(FACTOR)] + (["--scores"] if scores else [])
    r = subprocess.run(cmd, input="".join(s + "\n" for s in inputs),
                       capture_output=True, text=True, check=True)
    return [l.split("\t") if scores else [l]
            for l in r.stdout.split("\n")[:-1]]


def save_model(cfg, V, seed, path):
    # post-norm's outputs stay near one id whatever the scales (its last
    # layer norm keeps the state near the tied embedding it came from):
    # these give 3 to 8 distinct ids a variant and some </s>
    scales = dict(emb=0.5, out=2.0, bias=0.1, eos=1.0, mix=2.0)
    scales.update(cfg.get("scales", {}))
    P = scaled_params(cfg, V, seed, **scales)
    items = dict(P)
    yml = mf.ssru_yml(cfg, V) if cfg.get("ssru") else mf.model_yml(cfg, V)
    items["special:model.yml"] = np.frombuffer(yml.encode() + b"\0",
                                               dtype=np.int8)
    mf.save_bin(path, items)
    return {k: v.astype(np.float64) for k, v in P.items()}


def check_variant(name, pkg, out, cfg, V, seed, sp, srcs):
    P = save_model(cfg, V, seed, os.path.join(out, name + ".bin"))
    stats = {}
    for mode, k in (("greedy", 1), ("beam", BEAM)):
        got = run_marian(pkg, os.path.join(out, name + ".bin"),
                         os.path.join(out, "words.spm"), INPUTS, k)
        lines = []
        for i, (src, (text, ws)) in enumerate(zip(srcs, got)):
            ids, score, lps = marian_search(P, cfg, src, k, NORMALIZE
                                            if k > 1 else 0, FACTOR)
            mids = [sp.piece_to_id("\u2581" + w) for w in text.split()]
            if len(mids) < np.ceil(FACTOR * len(src)):
                mids.append(EOS)
            if mids != ids:
                sys.exit("%s %s line %d: Marian says %s (%s), the "
                         "reference %s" % (name, mode, i + 1, mids, text,
                                           ids))
            ws = [float(x) for x in ws.split()]
            want = lps[:len(ids) - 1]
            if len(ws) != len(want) or any(
                    abs(a - b) > TOL for a, b in zip(ws, want)):
                sys.exit("%s %s line %d: Marian's scores %s, the "
                         "reference's %s" % (name, mode, i + 1, ws, want))
            lines.append("%s\t%.6f\t%s" % (" ".join(map(str, ids)), score,
                                           " ".join("%g" % w for w in ws)))
        with open(os.path.join(out, "%s.%s" % (name, mode)), "w") as f:
            f.write("".join(l + "\n" for l in lines))
        stats[mode] = [l.split("\t")[0] for l in lines]
    distinct = len({w for l in stats["greedy"] for w in l.split()})
    differ = sum(a != b for a, b in zip(stats["greedy"], stats["beam"]))
    print("%s: %d distinct ids in greedy outputs, beam differs on %d of "
          "%d" % (name, distinct, differ, len(INPUTS)))
    if distinct < 3 or differ < 1:
        sys.exit("%s: outputs too uniform for a test" % name)


def main(pkg, out):
    os.makedirs(out, exist_ok=True)
    word_vocab(os.path.join(out, "words.spm"))
    sp = sentencepiece.SentencePieceProcessor(
        model_file=os.path.join(out, "words.spm"))
    V = sp.get_piece_size()
    with open(os.path.join(out, "input.txt"), "w") as f:
        f.write("".join(s + "\n" for s in INPUTS))
    srcs = [sp.encode(s) + [EOS] for s in INPUTS]
    with open(os.path.join(out, "decoder.yml"), "w") as f:
        f.write("beam-size: %d\nnormalize: %g\nmax-length-factor: %g\n"
                % (BEAM, NORMALIZE, FACTOR))
    for seed, (name, cfg) in enumerate(VARIANTS.items(), 21):
        check_variant(name, pkg, out, cfg, V, cfg.get("seed", seed), sp,
                      srcs)
    # text through the unigram vocabulary of make_fixtures.py
    spm = os.path.join(os.path.dirname(out.rstrip("/")), "vocab.spm")
    U = sentencepiece.SentencePieceProcessor(model_file=spm).get_piece_size()
    name = "text-pre-relu-tgt"
    save_model(VARIANTS["pre-relu-tgt"], U, 31,
               os.path.join(out, name + ".bin"))
    for mode, k in (("greedy", 1), ("beam", BEAM)):
        got = run_marian(pkg, os.path.join(out, name + ".bin"), spm,
                         INPUTS, k, scores=False)
        with open(os.path.join(out, "%s.%s.txt" % (name, mode)), "w") as f:
            f.write("".join(g[0] + "\n" for g in got))


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: wasm_fixtures.py PACKAGE_DIR OUTDIR")
    main(sys.argv[1], sys.argv[2])
