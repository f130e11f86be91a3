#!/bin/sh
# marian_wasm.sh [OUTDIR]: regenerates tests/fixtures/marian/wasm/ with the
# real Marian: the npm package @browsermt/bergamot-translator (Marian
# compiled to WebAssembly) run under node by run_marian.js, and
# wasm_fixtures.py's models and float64 reference, which must agree.
# Installs the package into a scratch directory when missing (MARIAN_WASM
# names one already installed: the package's own directory); nothing of
# node_modules is ever committed.  make check does not run this: its
# outputs are committed.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/../../tests/fixtures/marian/wasm}
pkg=$(sh "$here/marian_wasm_package.sh")
exec /usr/bin/python3 "$here/wasm_fixtures.py" "$pkg" "$out"
