"""The Transformer of MODELS.md in plain PyTorch, and a reader of .tsr files
(FORMAT.md), for bench_torch.py: the same model as attn's, computed by
PyTorch, so that attn's speed can be held against it in the same run.

Shapes: a batch of B sentences is ids [B, S] (int64, padded with 0) and
lengths [B]; activations are [B, S, d] in f32.
"""
import math
import struct
import zlib

import numpy as np
import torch
import torch.nn.functional as F

DTYPES = {1: np.float32, 2: np.float16, 4: np.int32, 5: np.int8,
          6: np.uint8, 7: np.float64, 8: np.int64}


def read_tsr(path):
    """The records of a stream: a list of (frame, name, array); bf16 is
    widened to f32 (numpy has no bf16)."""
    data = open(path, "rb").read()
    out, off = [], 0
    while off < len(data):
        (magic, ver, dt, rank, flags, nlen, pad, crc, frame,
         stored) = struct.unpack_from("<4sBBBBHHIQQ", data, off)
        if magic != b"TNSR" or ver != 1:
            raise ValueError("%s: bad record at byte %d" % (path, off))
        dims = struct.unpack_from("<%dQ" % rank, data, off + 32)
        p = off + 32 + 8 * rank
        name = data[p:p + nlen].decode()
        p += nlen + pad
        payload = data[p:p + stored]
        if flags & 1:
            payload = zlib.decompress(payload)
        if zlib.crc32(payload) != crc:
            raise ValueError("%s: %s: checksum mismatch" % (path, name))
        if dt == 3:
            a = (np.frombuffer(payload, np.uint16).astype(np.uint32)
                 << 16).view(np.float32)
        else:
            a = np.frombuffer(payload, DTYPES[dt])
        out.append((frame, name, a.reshape(dims)))
        off = p + stored
    return out


def parse_config(text):
    cfg = {}
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            k, v = line.split("=", 1)
            cfg[k.strip()] = v.strip()
    return cfg


def load_model(path):
    """(config, {name: f32 tensor}) of a model file."""
    cfg, params = None, {}
    for _, name, a in read_tsr(path):
        if name == "model.config":
            cfg = parse_config(a.tobytes().decode())
        elif not name.startswith(("vocab.", "optim.")):
            params[name] = torch.from_numpy(a.astype(np.float32))
    return cfg, params


def random_params(cfg, seed=1):
    """A fresh model of cfg's sizes, initialised as MODELS.md says
    (Xavier-uniform matrices, embeddings N(0, 1/d), biases 0, gains 1)."""
    g = torch.Generator().manual_seed(seed)
    d, f = int(cfg["d_model"]), int(cfg["ffn"])
    vs, vt = int(cfg["src_vocab"]), int(cfg["tgt_vocab"])
    p = {}

    def mat(name, n_out, n_in):
        a = math.sqrt(6.0 / (n_in + n_out))
        p[name] = (torch.rand(n_out, n_in, generator=g) * 2 - 1) * a

    def lin(name, n_out, n_in):
        mat(name + ".W", n_out, n_in)
        p[name + ".b"] = torch.zeros(n_out)

    def ln(name):
        p[name + ".g"] = torch.ones(d)
        p[name + ".b"] = torch.zeros(d)

    def ffn(name):
        mat(name + ".W1", f, d)
        p[name + ".b1"] = torch.zeros(f)
        mat(name + ".W2", d, f)
        p[name + ".b2"] = torch.zeros(d)

    tie = cfg.get("tie", "none")
    if tie != "all":
        p["src.emb"] = torch.randn(vs, d, generator=g) / math.sqrt(d)
    p["tgt.emb"] = torch.randn(vt, d, generator=g) / math.sqrt(d)
    for l in range(int(cfg["enc_layers"])):
        for x in "qkvo":
            lin("enc.%d.self.%s" % (l, x), d, d)
        ln("enc.%d.ln1" % l)
        ln("enc.%d.ln2" % l)
        ffn("enc.%d.ffn" % l)
    for l in range(int(cfg["dec_layers"])):
        for a in ("self", "cross"):
            for x in "qkvo":
                lin("dec.%d.%s.%s" % (l, a, x), d, d)
        for i in (1, 2, 3):
            ln("dec.%d.ln%d" % (l, i))
        ffn("dec.%d.ffn" % l)
    if cfg.get("norm", "post") == "pre":
        ln("enc.ln")
        ln("dec.ln")
    if tie == "none":
        mat("out.W", vt, d)
    p["out.b"] = torch.zeros(vt)
    return p


class Transformer(torch.nn.Module):
    """MODELS.md's transformer; every parameter under its MODELS.md name
    (dots become underscores, as torch.nn wants)."""

    def __init__(self, cfg, params):
        super().__init__()
        self.d = int(cfg["d_model"])
        self.h = int(cfg["heads"])
        self.dk = self.d // self.h
        self.enc_layers = int(cfg["enc_layers"])
        self.dec_layers = int(cfg["dec_layers"])
        self.pre = cfg.get("norm", "post") == "pre"
        self.tie = cfg.get("tie", "none")
        self.eps = float(cfg.get("ln_eps", "1e-5"))
        self.p = torch.nn.ParameterDict(
            {k.replace(".", "_"): torch.nn.Parameter(v.clone())
             for k, v in params.items()})
        self.pe_cache = torch.zeros(0, self.d)

    def w(self, name):
        return self.p[name.replace(".", "_")]

    def pe(self, n):
        if self.pe_cache.shape[0] < n:
            pos = torch.arange(n, dtype=torch.float64)[:, None]
            i = torch.arange(0, self.d, 2, dtype=torch.float64)
            ang = pos / torch.pow(10000.0, i / self.d)
            pe = torch.zeros(n, self.d, dtype=torch.float64)
            pe[:, 0::2] = torch.sin(ang)
            pe[:, 1::2] = torch.cos(ang)
            self.pe_cache = pe.float()
        return self.pe_cache[:n]

    def embed(self, ids, side, start=0):
        """ids [B, T] at positions start.. -> [B, T, d]"""
        emb = self.w("tgt.emb" if side == "tgt" or self.tie == "all"
                     else "src.emb")
        T = ids.shape[1]
        return (F.embedding(ids, emb) * math.sqrt(self.d) +
                self.pe(start + T)[start:])

    def lin(self, x, name):
        return F.linear(x, self.w(name + ".W"), self.w(name + ".b"))

    def ln(self, x, name):
        return F.layer_norm(x, (self.d,), self.w(name + ".g"),
                            self.w(name + ".b"), self.eps)

    def ffn(self, x, name):
        h = F.relu(F.linear(x, self.w(name + ".W1"), self.w(name + ".b1")))
        return F.linear(h, self.w(name + ".W2"), self.w(name + ".b2"))

    def heads(self, x):
        B, T, _ = x.shape
        return x.view(B, T, self.h, self.dk).transpose(1, 2)

    def attend(self, q, k, v, mask, drop):
        """q [B, H, T, dk], k, v [B, H, S, dk], mask broadcast to
        [B, H, T, S] (True: masked) -> [B, T, d]"""
        s = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.dk)
        if mask is not None:
            s = s.masked_fill(mask, float("-inf"))
        a = drop(torch.softmax(s, dim=-1))
        o = torch.matmul(a, v)
        B, H, T, dk = o.shape
        return o.transpose(1, 2).reshape(B, T, self.d)

    def sub(self, x, i, name, fn):
        """A residual sub-layer, pre- or post-norm."""
        if self.pre:
            return x + fn(self.ln(x, "%s.ln%d" % (name, i)))
        return self.ln(x + fn(x), "%s.ln%d" % (name, i))

    def encode(self, src, src_len, drop=lambda x: x):
        """src [B, S] -> E [B, S, d], pad mask [B, 1, 1, S]"""
        S = src.shape[1]
        pad = (torch.arange(S)[None, :] >= src_len[:, None])[:, None, None]
        x = drop(self.embed(src, "src"))
        for l in range(self.enc_layers):
            n = "enc.%d" % l

            def mha(y):
                return drop(self.lin(self.attend(
                    self.heads(self.lin(y, n + ".self.q")),
                    self.heads(self.lin(y, n + ".self.k")),
                    self.heads(self.lin(y, n + ".self.v")), pad, drop),
                    n + ".self.o"))

            def ffn(y):
                return drop(self.ffn(y, n + ".ffn"))
            x = self.sub(x, 1, n, mha)
            x = self.sub(x, 2, n, ffn)
        if self.pre:
            x = self.ln(x, "enc.ln")
        return x, pad

    def logits(self, y):
        W = self.w("tgt.emb") if self.tie != "none" else self.w("out.W")
        return F.linear(y, W, self.w("out.b"))

    def decode_train(self, E, pad, tgt_in, drop=lambda x: x):
        """Teacher forcing: tgt_in [B, T] -> logits [B, T, V]"""
        T = tgt_in.shape[1]
        causal = torch.ones(T, T, dtype=torch.bool).triu(1)
        y = drop(self.embed(tgt_in, "tgt"))
        for l in range(self.dec_layers):
            n = "dec.%d" % l

            def self_att(z):
                return drop(self.lin(self.attend(
                    self.heads(self.lin(z, n + ".self.q")),
                    self.heads(self.lin(z, n + ".self.k")),
                    self.heads(self.lin(z, n + ".self.v")), causal, drop),
                    n + ".self.o"))

            def cross(z):
                return drop(self.lin(self.attend(
                    self.heads(self.lin(z, n + ".cross.q")),
                    self.heads(self.lin(E, n + ".cross.k")),
                    self.heads(self.lin(E, n + ".cross.v")), pad, drop),
                    n + ".cross.o"))

            def ffn(z):
                return drop(self.ffn(z, n + ".ffn"))
            y = self.sub(y, 1, n, self_att)
            y = self.sub(y, 2, n, cross)
            y = self.sub(y, 3, n, ffn)
        if self.pre:
            y = self.ln(y, "dec.ln")
        return self.logits(y)

    def memory(self, E):
        """The cross-attention keys and values of every decoder layer
        (attend's att.{l}.k, .v), as [B, H, S, dk]."""
        return [(self.heads(self.lin(E, "dec.%d.cross.k" % l)),
                 self.heads(self.lin(E, "dec.%d.cross.v" % l)))
                for l in range(self.dec_layers)]

    def step(self, y_ids, t, mem, pad, cache):
        """One decoder step: y_ids [R] at position t, mem and pad of the
        R rows, cache a list of (K, V) [R, H, t, dk] per layer (updated)
        -> logits [R, V]"""
        y = self.embed(y_ids[:, None], "tgt", t)
        for l in range(self.dec_layers):
            n = "dec.%d" % l

            def self_att(z):
                k = self.heads(self.lin(z, n + ".self.k"))
                v = self.heads(self.lin(z, n + ".self.v"))
                if cache[l] is not None:
                    k = torch.cat([cache[l][0], k], 2)
                    v = torch.cat([cache[l][1], v], 2)
                cache[l] = (k, v)
                return self.lin(self.attend(
                    self.heads(self.lin(z, n + ".self.q")), k, v, None,
                    lambda a: a), n + ".self.o")

            def cross(z):
                return self.lin(self.attend(
                    self.heads(self.lin(z, n + ".cross.q")), mem[l][0],
                    mem[l][1], pad, lambda a: a), n + ".cross.o")
            y = self.sub(y, 1, n, self_att)
            y = self.sub(y, 2, n, cross)
            y = self.sub(y, 3, n, lambda z: self.ffn(z, n + ".ffn"))
        if self.pre:
            y = self.ln(y, "dec.ln")
        return self.logits(y[:, 0])


def pad_batch(seqs):
    """Lists of ids -> ids [B, S] (0-padded), lengths [B]"""
    S = max(len(s) for s in seqs)
    ids = torch.zeros(len(seqs), S, dtype=torch.long)
    for i, s in enumerate(seqs):
        ids[i, :len(s)] = torch.tensor(s, dtype=torch.long)
    return ids, torch.tensor([len(s) for s in seqs])


def max_len(S, len_a=2, len_b=10):
    return max(1, int(math.floor(len_a * S + len_b)))


def greedy(m, srcs, len_a=2, len_b=10):
    """Greedy translations (lists of ids, </s> included when reached) of
    the source id lists srcs, one batch; finished rows leave the batch."""
    ids, lens = pad_batch(srcs)
    E, pad = m.encode(ids, lens)
    mem = m.memory(E)
    B = len(srcs)
    limit = [max_len(len(s), len_a, len_b) for s in srcs]
    out = [[] for _ in range(B)]
    rows = torch.arange(B)
    y = torch.full((B,), 1, dtype=torch.long)
    cache = [None] * m.dec_layers
    t = 0
    while len(rows):
        logits = m.step(y, t, mem, pad, cache)
        y = logits.argmax(-1)
        keep = []
        for i, (r, tok) in enumerate(zip(rows.tolist(), y.tolist())):
            out[r].append(tok)
            if tok != 2 and len(out[r]) < limit[r]:
                keep.append(i)
        t += 1
        if len(keep) < len(rows):
            k = torch.tensor(keep, dtype=torch.long)
            rows, y, pad = rows[k], y[k], pad[k]
            mem = [(a[k], b[k]) for a, b in mem]
            cache = [(a[k], b[k]) for a, b in cache]
    return out


def beam(m, srcs, k, alpha=0.6, len_a=2, len_b=10):
    """Beam search as MODELS.md: per sentence the best k - f candidates by
    raw log-probability; the result is the best finished one by raw / lp.
    Returns the best hypothesis (ids) of each source."""
    ids, lens = pad_batch(srcs)
    E, pad = m.encode(ids, lens)
    mem = m.memory(E)
    B = len(srcs)
    limit = [max_len(len(s), len_a, len_b) for s in srcs]
    fin = [[] for _ in range(B)]            # (normalised, ids)
    # the live hypotheses: their sentence, ids and raw scores
    sent = torch.arange(B)
    hyps = [[] for _ in range(B)]
    raw = torch.zeros(B)
    y = torch.full((B,), 1, dtype=torch.long)
    cache = [None] * m.dec_layers
    t = 0

    def lp(n):
        return ((5.0 + n) / 6.0) ** alpha

    while len(sent):
        lprob = torch.log_softmax(m.step(y, t, mem, pad, cache), -1)
        cand = raw[:, None] + lprob         # [R, V]
        V = cand.shape[1]
        sel, ny, nraw, nsent, nhyps = [], [], [], [], []
        s_list = sent.tolist()
        i = 0
        while i < len(s_list):
            s, j = s_list[i], i
            while j < len(s_list) and s_list[j] == s:
                j += 1
            want = k - len(fin[s])
            sc, ix = torch.topk(cand[i:j].reshape(-1), want)
            for score, flat in zip(sc.tolist(), ix.tolist()):
                row, tok = i + flat // V, flat % V
                h = hyps[row] + [tok]
                if tok == 2 or len(h) >= limit[s]:
                    fin[s].append((score / lp(len(h)), h))
                else:
                    sel.append(row)
                    ny.append(tok)
                    nraw.append(score)
                    nsent.append(s)
                    nhyps.append(h)
            i = j
        t += 1
        if not sel:
            break
        r = torch.tensor(sel, dtype=torch.long)
        sent = torch.tensor(nsent, dtype=torch.long)
        y = torch.tensor(ny, dtype=torch.long)
        raw = torch.tensor(nraw)
        hyps = nhyps
        pad = pad[r]
        mem = [(a[r], b[r]) for a, b in mem]
        cache = [(a[r], b[r]) for a, b in cache]
    # of equal normalised scores, the first finished
    return [max(f, key=lambda e: e[0])[1] for f in fin]
