#!/usr/bin/env node
// run_marian.js: translates lines of text with the real Marian, as the npm
// package @browsermt/bergamot-translator compiles it to WebAssembly, under
// node (>= 18), for tools/marian-ref/ (fixtures) and bench/bench_marian.sh.
//
// Usage: node run_marian.js --package DIR --model MODEL.bin --vocab SPM
//          [--vocab SPM] [--beam-size K] [--normalize A]
//          [--max-length-factor F] [--set 'key: value']... [--scores]
//          [--together] [--time] [--warm] < text > translations
//
// DIR is the package's directory (the one holding worker/).  MODEL.bin is
// a model in Marian's binary layout (the WASM build loads models from
// memory, and from memory only binary files: bergamot's
// TranslationModel::loadBackend hands the bytes to io::loadItems, which
// reads the binary header; an .npz would need a file system, which this
// build lacks: its open/stat system calls are empty stubs).  The float32
// parameters are used as they are (gemm-precision float32, Marian's
// float32 products), with SentencePiece vocabularies from memory.
//
// One output line per input line: the translation, as Marian detokenises
// it.  With --scores a tab and the log-probabilities that Marian's search
// kept for the target's words, space-separated: bergamot's
// UnsupervisedQualityEstimator (asked for with the response option
// qualityScores, given out only in the HTML mode's x-bergamot-word-score
// attributes) averages the path-score differences of each word's
// subwords, </s> left out; with a vocabulary whose every piece begins a
// word (SentencePiece's word model) each is one target id's log p.
// An empty translation has none (the estimator throws on it; it is not
// asked for one).
//
// Each line is translated alone (one translate call), so that Marian's
// maximum length, max-length-factor times the batch's widest source,
// is that of the line itself; --together translates all lines in one
// call, as a user would (bergamot batches them), for timing.  --time
// prints to stderr the seconds spent translating (model loading apart):
// "seconds S" of the clock and "cpu-seconds C", the process's user and
// system CPU time over the same span (node's own threads included: its
// compiler tiering the WASM code up, its garbage collector).  --warm
// translates the first line once before the clock starts, so that node
// has compiled the code that translating runs (not timed).
'use strict';
const fs = require('fs');
const path = require('path');

function usage(msg) {
    process.stderr.write(`run_marian.js: ${msg}\n`);
    process.exit(2);
}

function parseArgs(argv) {
    const o = { vocabs: [], set: [], beam: '1', normalize: '0',
                factor: '2.5', scores: false, together: false,
                time: false, warm: false };
    const need = (i) => {
        if (i + 1 >= argv.length) usage(`${argv[i]} needs a value`);
        return argv[i + 1];
    };
    for (let i = 0; i < argv.length; i++) {
        switch (argv[i]) {
        case '--package': o.pkg = need(i); i++; break;
        case '--model': o.model = need(i); i++; break;
        case '--vocab': o.vocabs.push(need(i)); i++; break;
        case '--beam-size': o.beam = need(i); i++; break;
        case '--normalize': o.normalize = need(i); i++; break;
        case '--max-length-factor': o.factor = need(i); i++; break;
        case '--set': o.set.push(need(i)); i++; break;
        case '--scores': o.scores = true; break;
        case '--together': o.together = true; break;
        case '--time': o.time = true; break;
        case '--warm': o.warm = true; break;
        default: usage(`unknown argument '${argv[i]}'`);
        }
    }
    if (!o.pkg || !o.model || o.vocabs.length < 1 || o.vocabs.length > 2)
        usage('--package, --model and one or two --vocab are needed');
    return o;
}

// The package's gemm imports: its own fallbacks inside the wasm binary,
// as translator-worker.js links them when the browser has no native ones.
const GEMM = {
    int8_prepare_a: 'int8PrepareAFallback',
    int8_prepare_b: 'int8PrepareBFallback',
    int8_prepare_b_from_transposed: 'int8PrepareBFromTransposedFallback',
    int8_prepare_b_from_quantized_transposed:
        'int8PrepareBFromQuantizedTransposedFallback',
    int8_prepare_bias: 'int8PrepareBiasFallback',
    int8_multiply_and_add_bias: 'int8MultiplyAndAddBiasFallback',
    int8_select_columns_of_b: 'int8SelectColumnsOfBFallback',
};

// The Emscripten module (built for web workers: we instantiate it).
function loadModule(dir) {
    const wasm = path.join(dir, 'worker', 'bergamot-translator-worker.wasm');
    const glue = path.join(dir, 'worker', 'bergamot-translator-worker.js');
    return new Promise((resolve, reject) => {
        const Module = {
            instantiateWasm(info, accept) {
                const gemm = {};
                for (const [k, v] of Object.entries(GEMM))
                    gemm[k] = (...a) => Module.asm[v](...a);
                WebAssembly.instantiate(fs.readFileSync(wasm),
                                        { ...info, wasm_gemm: gemm })
                    .then(({ instance }) => accept(instance), reject);
                return {};
            },
            onRuntimeInitialized() { resolve(Module); },
            print: (s) => process.stderr.write(`marian: ${s}\n`),
            printErr: (s) => process.stderr.write(`marian: ${s}\n`),
        };
        global.Module = Module;
        (0, eval)(fs.readFileSync(glue, 'utf8'));
    });
}

// A thrown C++ exception arrives as a pointer to the object: a
// std::exception's what() string is its second word.
function cxxMessage(M, e) {
    if (typeof e !== 'number') return String(e && e.stack || e);
    const p = M.HEAPU32[(e + 4) >> 2];
    let q = p;
    while (q < M.HEAPU8.length && M.HEAPU8[q]) q++;
    return Buffer.from(M.HEAPU8.subarray(p, q)).toString();
}

function aligned(M, file, align) {
    const b = fs.readFileSync(file);
    const m = new M.AlignedMemory(b.length, align);
    m.getByteArrayView().set(new Int8Array(b.buffer, b.byteOffset,
                                           b.length));
    return m;
}

function translate(M, service, model, texts, html) {
    const input = new M.VectorString();
    const opts = new M.VectorResponseOptions();
    for (const t of texts) {
        input.push_back(t);
        opts.push_back({ alignment: false, html, qualityScores: html });
    }
    const r = service.translate(model, input, opts);
    const out = [];
    for (let i = 0; i < texts.length; i++)
        out.push(r.get(i).getTranslatedText());
    input.delete();
    opts.delete();
    r.delete();
    return out;
}

function wordScores(htmlText) {
    const re = /x-bergamot-word-score="([^"]*)"/g;
    const s = [];
    let m;
    while ((m = re.exec(htmlText)) !== null) s.push(m[1]);
    return s;
}

async function main() {
    const o = parseArgs(process.argv.slice(2));
    const M = await loadModule(o.pkg);
    const config = [
        `beam-size: ${o.beam}`, `normalize: ${o.normalize}`,
        `max-length-factor: ${o.factor}`, 'word-penalty: 0',
        'gemm-precision: float32', 'skip-cost: false', 'cpu-threads: 0',
        'workspace: 128', 'max-length-break: 128',
        'mini-batch-words: 1024', 'quiet: true',
        'quiet-translation: true',
        // the HTML mode (word scores) restores markup by the alignment
        ...(o.scores ? ['alignment: soft'] : []), ...o.set, ''].join('\n');
    let model, service;
    try {
        const vocabs = new M.AlignedMemoryList();
        // one memory per distinct file: bergamot maps equal ones
        const uniq = [...new Set(o.vocabs)];
        for (const v of uniq) vocabs.push_back(aligned(M, v, 64));
        model = new M.TranslationModel(config, aligned(M, o.model, 256),
                                       new M.AlignedMemory(0, 64), vocabs,
                                       null);
        service = new M.BlockingService({ cacheSize: 0 });
    } catch (e) {
        process.stderr.write(`run_marian.js: loading: ${cxxMessage(M, e)}\n`);
        process.exit(1);
    }
    const text = fs.readFileSync(0, 'utf8');
    const lines = text.split('\n');
    if (lines[lines.length - 1] === '') lines.pop();
    const out = [];
    try {
        if (o.warm && lines.length)
            translate(M, service, model, [lines[0]], false);
    } catch (e) {
        process.stderr.write(`run_marian.js: translating: ${cxxMessage(M, e)}\n`);
        process.exit(1);
    }
    const t0 = process.hrtime.bigint();
    const c0 = process.cpuUsage();
    try {
        if (o.together) {
            out.push(...translate(M, service, model, lines, false));
        } else {
            for (const l of lines)
                out.push(translate(M, service, model, [l], false)[0]);
        }
    } catch (e) {
        process.stderr.write(`run_marian.js: translating: ${cxxMessage(M, e)}\n`);
        process.exit(1);
    }
    const secs = Number(process.hrtime.bigint() - t0) / 1e9;
    const cpu = process.cpuUsage(c0);
    if (o.scores) {
        for (let i = 0; i < lines.length; i++) {
            let s = [];
            if (out[i] !== '') {
                const h = translate(M, service, model, [lines[i]], true)[0];
                s = wordScores(h);
            }
            out[i] += '\t' + s.join(' ');
        }
    }
    process.stdout.write(out.map((l) => l + '\n').join(''));
    if (o.time) {
        process.stderr.write(`seconds ${secs.toFixed(6)}\n`);
        process.stderr.write(`cpu-seconds ${
            ((cpu.user + cpu.system) / 1e6).toFixed(6)}\n`);
    }
}

main().catch((e) => {
    process.stderr.write(`run_marian.js: ${e && e.stack || e}\n`);
    process.exit(1);
});
