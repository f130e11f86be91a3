#!/usr/bin/env python3
"""PyTorch's figures for attn's benches, measured on this machine: the
same models and workloads in plain PyTorch (transformer.py, written from
MODELS.md), one thread, f32, CPU time of the process.

  - check: the shipped model's greedy translations of the first --check
    dev sentences, against attn's (tokenize | embed | encode | attend |
    decode -t, from PATH): the same ids, and log p within 1e-3 (1 + |log
    p|) nats, or the run stops with status 1;
  - small (bench_transformer.c, bench_train_transformer.c): a fresh
    Transformer of d_model 256, 4 heads, ffn 1024, 3+3 layers,
    vocabularies of 8000, pre-norm, tied; a training step (forward,
    backward, Adam) on 32 pairs of 22-25 random ids (the benches' own:
    glibc's rand with seeds 1 and 2), dropout and label smoothing 0.1; and
    greedy translation of the 32 sources, at most 25 ids each, with
    encoding and the decoding stage alone;
  - base: d_model 512, 8 heads, ffn 2048, 6+6 layers, vocabularies of
    32000: the same greedy translation, and beam 4;
  - e2e (bench_e2e.sh): the shipped model on the dev sentences, greedy and
    beam 4 (alpha 0.6), batches of up to 64 sorted by length in windows of
    1024 as attn's programs batch them, from the ids (tokenize's time is
    left out: attn's own tokenize serves both).

Rates are target tokens per CPU second (training: target tokens of the
batch, </s> included; translation: ids produced, </s> included); each the
best and the median of --reps runs.  Written to --out as lines
"name best median" after '#' comments naming the CPU, torch and the date;
bench_transformer, bench_train_transformer and bench_e2e.sh read it.
"""
import argparse
import ctypes
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time

# The baseline runs on the best kernels the CPU has for the ISA being
# compared, whatever the caller's environment says: a machine here set
# OPENBLAS_CORETYPE=Haswell for every process, which timed PyTorch on
# AVX2 kernels against attn's AVX-512 and made every ratio about 1.9x too
# kind.  So each variable that picks PyTorch's kernels or threads is set
# here, not defaulted, and what the caller had is reported:
#   - one thread everywhere (OpenBLAS, OpenMP); CPU time is measured, so
#     more threads would only add overhead to the baseline;
#   - OpenBLAS's kernels named from the CPU's flags: it chooses by family
#     and model, and a guest whose hypervisor names no model it knows (a
#     Sapphire Rapids under KVM, "Intel(R) Xeon(R) Processor") gets
#     Prescott's SSE3 kernels: 19 GFLOP/s for [800, 256] x [256, 1024]
#     against 104-110 with SkylakeX's;
#   - ATTN_KERNELS=avx2 or avx2-novnni holds PyTorch to AVX2 as attn:
#     OpenBLAS's Haswell kernels, oneDNN and ATen at AVX2 (PyTorch's f32
#     has no use for VNNI); otherwise oneDNN and ATen choose the best
#     they have.
def cpu_flags():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def kernel_env():
    """The environment PyTorch's kernels are chosen by, for this CPU and
    ATTN_KERNELS: {variable: value, or None to unset}."""
    flags = cpu_flags()
    avx2 = (os.environ.get("ATTN_KERNELS") or "").startswith("avx2")
    core = aten = None
    if {"avx512f", "avx512bw", "avx512dq", "avx512vl"} <= flags and not avx2:
        # ATen 1.13 keeps to AVX2 on an AVX-512 Zen 5 unless told
        core, aten = "SkylakeX", "avx512"
    elif "avx2" in flags:
        core, aten = "Haswell", "avx2"
    return {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1",
            "MKL_NUM_THREADS": "1", "GOTO_NUM_THREADS": "1",
            "OPENBLAS_CORETYPE": core, "OPENBLAS_BLOCK_FACTOR": None,
            "DNNL_MAX_CPU_ISA": "AVX2" if avx2 else None,
            "ATEN_CPU_CAPABILITY": aten}


OVERRIDDEN = []
for _v, _x in kernel_env().items():
    _old = os.environ.get(_v)
    if _old is not None and _old != _x:
        OVERRIDDEN.append("%s=%s" % (_v, _old))
    if _x is None:
        os.environ.pop(_v, None)
    else:
        os.environ[_v] = _x


def openblas():
    """(configuration, core) of the BLAS torch calls (libblas.so.3, which
    torch has loaded), or None when it is not OpenBLAS: Debian's
    reference BLAS, there when libopenblas0 is not, is ten times slower."""
    blas = ctypes.CDLL("libblas.so.3")
    if not hasattr(blas, "openblas_get_corename"):
        return None
    blas.openblas_get_corename.restype = ctypes.c_char_p
    blas.openblas_get_config.restype = ctypes.c_char_p
    return (blas.openblas_get_config().decode(),
            blas.openblas_get_corename().decode())


import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import transformer as tf  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
SMALL = dict(src_vocab="8000", tgt_vocab="8000", d_model="256", heads="4",
             ffn="1024", enc_layers="3", dec_layers="3", norm="pre",
             tie="all")
BASE = dict(SMALL, src_vocab="32000", tgt_vocab="32000", d_model="512",
            heads="8", ffn="2048", enc_layers="6", dec_layers="6")
B, LEN, STEPS = 32, 25, 25


def bench_batch(len_, V, seed):
    """bench.h's bench_batch: B sentences of len-3 .. len random ids
    4 .. V-1 ending with </s>, from glibc's rand."""
    libc = ctypes.CDLL("libc.so.6")
    libc.srand(seed)
    out = []
    for _ in range(B):
        n = len_ - libc.rand() % 4
        out.append([4 + libc.rand() % (V - 4) for _ in range(n - 1)] + [2])
    return out


def cpu():
    return time.process_time()


def timed(fn, reps):
    """(best, median) of reps runs of fn, which returns (tokens,
    seconds); a first run warms up."""
    fn()
    rates = []
    for _ in range(reps):
        n, t = fn()
        rates.append(n / t)
    return max(rates), statistics.median(rates)


def cpu_model():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def attn_greedy(model, lines):
    """attn's greedy translations of lines: (ids, log p) each."""
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "src")
        out = os.path.join(d, "out.tsr")
        with open(src, "w") as f:
            f.write("".join(l + "\n" for l in lines))
        m = ["-m", model]
        cmd = ("tokenize {m} {src} | embed {m} | encode {m} | attend {m} | "
               "decode {m} -t > {out}").format(m=" ".join(m), src=src,
                                              out=out)
        subprocess.run(cmd, shell=True, check=True)
        recs = tf.read_tsr(out)
        srcs = [r[2].tolist() for r in recs if r[1] == "src.ids"]
        hyps = [r[2].tolist() for r in recs if r[1] == "hyp.ids"]
        scores = [float(r[2]) for r in recs if r[1] == "hyp.score"]
        return srcs, hyps, scores


def logp(m, src, hyp):
    ids, lens = tf.pad_batch([src])
    E, pad = m.encode(ids, lens)
    tin = torch.tensor([[1] + hyp[:-1]])
    lp = torch.log_softmax(m.decode_train(E, pad, tin), -1)[0]
    return float(lp[torch.arange(len(hyp)), torch.tensor(hyp)].sum())


def check(m, model_path, lines):
    srcs, hyps, scores = attn_greedy(model_path, lines)
    bad = 0
    ours = tf.greedy(m, srcs)
    for i, (s, h, sc, o) in enumerate(zip(srcs, hyps, scores, ours)):
        lp = logp(m, s, h)
        if o != h or abs(lp - sc) > 1e-3 * (1 + abs(sc)):
            bad += 1
            print("check: sentence %d: attn %s (%.5f), PyTorch %s (%.5f)" %
                  (i, h, sc, o, lp), file=sys.stderr)
    print("check: %d of %d greedy translations the same (log p within "
          "1e-3 (1 + |log p|))" % (len(srcs) - bad, len(srcs)))
    return bad == 0


def train_rate(cfg, reps):
    m = tf.Transformer(cfg, tf.random_params(cfg))
    src = bench_batch(LEN, int(cfg["src_vocab"]), 1)
    tgt = bench_batch(LEN, int(cfg["tgt_vocab"]), 2)
    sids, slen = tf.pad_batch(src)
    tids, tlen = tf.pad_batch(tgt)
    tin = torch.cat([torch.ones(B, 1, dtype=torch.long), tids[:, :-1]], 1)
    tin = tin.masked_fill(tin == 2, 0)   # </s> is never an input
    opt = torch.optim.Adam(m.parameters(), lr=1e-4, betas=(0.9, 0.98),
                           eps=1e-9)
    m.train()

    def drop(x):
        return F.dropout(x, 0.1, True)

    def run():
        t0 = cpu()
        E, pad = m.encode(sids, slen, drop)
        logits = m.decode_train(E, pad, tin, drop)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                               tids.reshape(-1), ignore_index=0,
                               label_smoothing=0.1)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return int(tlen.sum()), cpu() - t0
    return timed(run, reps)


def translate_rates(m, srcs, search, reps):
    """(with encoding, decoding stage alone): (best, median) each, of
    search(m, batch) over srcs in batches as attn's programs make them."""
    batches = []
    for w in range(0, len(srcs), 1024):
        win = sorted(srcs[w:w + 1024], key=len)
        for b in range(0, len(win), 64):
            batches.append(win[b:b + 64])
    full, alone = [], []
    for r in range(reps + 1):
        n = enc = 0
        t0 = cpu()
        for b in batches:
            e0 = cpu()
            ids, lens = tf.pad_batch(b)
            E, pad = m.encode(ids, lens)
            m.memory(E)
            enc += cpu() - e0
            n += sum(len(h) for h in search(m, b))
        t = cpu() - t0
        # search() encodes again: its time is counted once, as attn's
        t -= enc
        if r:
            full.append(n / t)
            alone.append(n / (t - enc))
    return ((max(full), statistics.median(full)),
            (max(alone), statistics.median(alone)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default=os.path.join(
        ROOT, "models/bible-es-en.tsr"))
    ap.add_argument("--dev", default=os.path.join(
        os.environ.get("ATTN_DATA", "/work/shared/data"),
        "bible-es-en/dev.es"))
    ap.add_argument("--dev-lines", type=int, default=0,
                    help="the first N dev sentences (default all)")
    ap.add_argument("--check", type=int, default=16)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--only", default="check,small,base,e2e")
    ap.add_argument("--out", default=os.path.join(
        ROOT, "build/bench/torch.txt"))
    a = ap.parse_args()
    torch.set_num_threads(1)
    torch.set_grad_enabled(False)
    only = a.only.split(",")
    res = []

    def put(name, br):
        res.append((name, br[0], br[1]))
        print("%-22s %8.1f %8.1f" % ((name,) + br), flush=True)

    blas = openblas()
    if blas is None:
        print("bench_torch: PyTorch's BLAS (libblas.so.3) is not OpenBLAS, "
              "a crippled baseline: install libopenblas0-pthread",
              file=sys.stderr)
        return 1
    want = os.environ.get("OPENBLAS_CORETYPE")
    if want and blas[1].lower() != want.lower():
        print("bench_torch: OpenBLAS runs its %s kernels, not %s" %
              (blas[1], want), file=sys.stderr)
        return 1
    kernels = "%s, %s kernels" % (blas[0].strip(), blas[1])
    aten = re.search(r"CPU capability usage: (\w+)", torch.__config__.show())
    kernels += "; ATen %s" % (aten.group(1) if aten else "(unknown)")
    print("kernels: %s" % kernels)
    if OVERRIDDEN:
        print("overridden from the environment: %s" % " ".join(OVERRIDDEN))
    print("%-22s %8s %8s  (target tokens per CPU second)" %
          ("PyTorch %s" % torch.__version__, "best", "median"))
    have_dev = os.path.exists(a.dev) and os.path.exists(a.model)
    lines = []
    if have_dev:
        lines = [l.rstrip("\n") for l in open(a.dev)]
        if a.dev_lines:
            lines = lines[:a.dev_lines]
        cfg, params = tf.load_model(a.model)
        shipped = tf.Transformer(cfg, params).eval()
    if "check" in only and have_dev:
        if not check(shipped, a.model, lines[:a.check]):
            return 1
    if "small" in only:
        with torch.enable_grad():
            put("small.train", train_rate(SMALL, a.reps))
    for name, cfg, beams in (("small", SMALL, [1]), ("base", BASE, [1, 4])):
        if name not in only:
            continue
        m = tf.Transformer(cfg, tf.random_params(cfg)).eval()
        srcs = bench_batch(LEN, int(cfg["src_vocab"]), 1)
        for k in beams:
            if k == 1:
                def search(m, b):
                    return tf.greedy(m, b, 0, STEPS)
            else:
                def search(m, b, k=k):
                    return tf.beam(m, b, k, 0.6, 0, STEPS)
            how = "greedy" if k == 1 else "beam%d" % k
            full, alone = translate_rates(m, srcs, search, a.reps)
            put("%s.%s" % (name, how), full)
            put("%s.%s.decode" % (name, how), alone)
    if "e2e" in only and have_dev:
        srcs, _, _ = attn_greedy_ids(a.model, lines)
        for k in (1, 4):
            if k == 1:
                def search(m, b):
                    return tf.greedy(m, b)
            else:
                def search(m, b):
                    return tf.beam(m, b, 4, 0.6)
            full, _ = translate_rates(shipped, srcs, search,
                                      max(1, a.reps // 3))
            put("e2e.%s" % ("greedy" if k == 1 else "beam4"), full)
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    tmp = a.out + ".tmp"
    with open(tmp, "w") as f:
        f.write("# bench/torch/bench_torch.py %s\n" %
                time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()))
        f.write("# cpu %s\n" % cpu_model())
        f.write("# isa %s\n" % (os.environ.get("ATTN_KERNELS") or "native"))
        f.write("# kernels %s\n" % kernels)
        f.write("# torch %s, 1 thread, f32, CPU time; name best median "
                "(target tokens/s)\n" % torch.__version__)
        for r in res:
            f.write("%s %.1f %.1f\n" % r)
    os.replace(tmp, a.out)
    return 0


def attn_greedy_ids(model, lines):
    """The source ids of lines, by attn's tokenize."""
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "src")
        with open(src, "w") as f:
            f.write("".join(l + "\n" for l in lines))
        out = subprocess.run(["tokenize", "-m", model, src], check=True,
                             stdout=subprocess.PIPE).stdout
        path = os.path.join(d, "ids.tsr")
        with open(path, "wb") as f:
            f.write(out)
        return [r[2].tolist() for r in tf.read_tsr(path)
                if r[1] == "src.ids"], None, None


if __name__ == "__main__":
    sys.exit(main())
