#!/bin/sh
# make_arith.sh WORKDIR [BUILDDIR]: tests/fixtures/marian/arith/arith.bin,
# native Marian's own layer norm and attention numbers (arith_fixture.py
# says which), from a Marian built with trace.patch: each int8 product's
# input and output appended to $MDBG.  WORKDIR is a bible-both-ways.sh
# work directory (its exp/ export of the Bible model, int8 file with
# alphas and dev lines in.es); BUILDDIR (default /tmp/marian-trace) gets
# the build: ../shared/tools/marian-native's sources, -march=znver3 (the
# build its prebuilt binaries are: the layer norm's sums follow the
# target's vector width), about 15 minutes on two cores.  Marian runs
# with OpenBLAS's SkylakeX kernels (an AVX-512 CPU is needed for them).
set -eu
[ $# -ge 1 ] || { echo "usage: make_arith.sh WORKDIR [BUILDDIR]" >&2; exit 2; }
W=$1 B=${2:-/tmp/marian-trace}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
tgz=$root/../shared/tools/marian-native/marian-src.tar.gz
if [ ! -x "$B/build/marian-decoder" ]; then
	mkdir -p "$B/build"
	tar xzf "$tgz" -C "$B"
	(cd "$B/src" && patch -p1 < "$here/trace.patch")
	(cd "$B/build" && cmake ../src -DCMAKE_BUILD_TYPE=Release \
		-DCOMPILE_CUDA=OFF -DUSE_MKL=OFF -DUSE_INTGEMM=ON \
		-DUSE_SENTENCEPIECE=ON -DUSE_NCCL=OFF -DUSE_DOXYGEN=OFF \
		-DCOMPILE_SERVER=OFF -DBUILD_ARCH=znver3 >&2 &&
		make -j"$(nproc)" marian_decoder >&2)
fi
for l in 45 5; do
	rm -f "$B/trace$l.bin"
	sed -n "${l}p" "$W/in.es" | OPENBLAS_CORETYPE=SkylakeX \
		MDBG=$B/trace$l.bin "$B/build/marian-decoder" \
		-c "$W/exp/decoder.yml" --cpu-threads 1 --mini-batch 1 \
		--maxi-batch 1 --quiet -m "$W/model.intgemm8.alphas.bin" \
		--gemm-precision int8shiftAlphaAll -b 1 > /dev/null
done
mkdir -p "$root/tests/fixtures/marian/arith"
/usr/bin/python3 "$here/arith_fixture.py" "$B/trace45.bin" "$B/trace5.bin" \
	"$W/exp/model.npz" "$root/tests/fixtures/marian/arith/arith.bin"
