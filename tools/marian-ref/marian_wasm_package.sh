#!/bin/sh
# marian_wasm_package.sh: prints the directory of the npm package
# @browsermt/bergamot-translator 0.4.9 (Marian compiled to WebAssembly),
# installing it with npm into a scratch directory (MARIAN_WASM_CACHE, by
# default ~/.cache/attn-marian-wasm) when missing.  MARIAN_WASM names an
# installed package's directory instead.  Exits 1, saying why, when node
# or the package cannot be had.
set -eu
version=0.4.9
if [ -n "${MARIAN_WASM:-}" ]; then
	dir=$MARIAN_WASM
else
	cache=${MARIAN_WASM_CACHE:-${HOME:-/tmp}/.cache/attn-marian-wasm}
	dir=$cache/node_modules/@browsermt/bergamot-translator
	if [ ! -f "$dir/worker/bergamot-translator-worker.wasm" ]; then
		command -v npm > /dev/null 2>&1 || {
			echo "marian_wasm_package.sh: no npm to install" \
			     "@browsermt/bergamot-translator" >&2
			exit 1
		}
		mkdir -p "$cache"
		npm install --silent --no-audit --no-fund --prefix "$cache" \
		    "@browsermt/bergamot-translator@$version" >&2 || {
			echo "marian_wasm_package.sh: npm could not install" \
			     "@browsermt/bergamot-translator@$version" >&2
			exit 1
		}
	fi
fi
command -v node > /dev/null 2>&1 || {
	echo "marian_wasm_package.sh: no node to run Marian's WebAssembly" >&2
	exit 1
}
[ -f "$dir/worker/bergamot-translator-worker.wasm" ] || {
	echo "marian_wasm_package.sh: $dir holds no" \
	     "worker/bergamot-translator-worker.wasm" >&2
	exit 1
}
echo "$dir"
