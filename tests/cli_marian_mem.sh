#!/bin/sh
# train-step --import checks a Marian .npz against its model.yml before
# anything large is inflated or allocated (issue 45, item 4), so that a
# small crafted file is refused in little memory (ulimit -v; ASan's
# allocation limit in the sanitizer build), naming what is wrong, not
# "out of memory":
# - special:model.yml alone (a few hundred bytes) declaring 240 M
#   parameters: "has no Wemb", before their 1 GB is allocated;
# - a ZIP64 member of zeros, deflated (half a megabyte), whose .npy
#   header declares 512 MiB: refused by its shape before it is inflated.
# (Before, the first took the parameters' room and the second inflated
# every member first: both ended in "out of memory" here.)
set -u
. "$(dirname "$0")/lib/cli.sh"
F=$root/tests/fixtures/marian
command -v python3 >/dev/null || fail "python3 (its zipfile) is needed"

if grep -q __asan_init "$(command -v train-step)"; then
	in_little_memory() {
		ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}max_allocation_size_mb=300:allocator_may_return_null=1 "$@"
	}
else
	in_little_memory() { (ulimit -v 400000 && "$@"); }
fi

# npz OUT.npz YML [NAME D0 D1]: model.yml (the file YML) and, with NAME,
# a float32 [D0, D1] of zeros, deflated, with ZIP64 fields
npz() {
	python3 - "$@" <<'EOF' || fail "python3 could not write $1"
import struct, sys, zipfile
def npy(descr, shape):
    d = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (
        descr, ", ".join(str(x) for x in shape) + ("," if len(shape) == 1 else ""))
    n = len(d) + 1
    while (10 + n) % 64:
        n += 1
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", n) + (d.ljust(n - 1) + "\n").encode()
z = zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_DEFLATED, compresslevel=9)
y = open(sys.argv[2], "rb").read() + b"\0"
z.writestr("special:model.yml.npy", npy("|i1", (len(y),)) + y)
if len(sys.argv) > 3:
    d0, d1 = int(sys.argv[4]), int(sys.argv[5])
    with z.open(sys.argv[3] + ".npy", "w", force_zip64=True) as f:
        f.write(npy("<f4", (d0, d1)))
        zero, left = bytes(1 << 24), 4 * d0 * d1
        while left:
            f.write(zero[:min(left, len(zero))])
            left -= min(left, len(zero))
z.close()
EOF
}

# refused MESSAGE ARGS...: train-step --import marian ARGS exits 1 in
# little memory with MESSAGE
refused() {
	want=$1
	shift
	in_little_memory train-step --import marian -m out.tsr "$@" \
		>/dev/null 2>err
	st=$?
	[ $st -eq 1 ] || fail "$*: exit $st, not 1"
	grep -qF -- "$want" err || { fail "$*: no '$want' in:"; cat err >&2; }
	[ ! -e out.tsr ] || fail "$*: out.tsr written"
}

# the configuration alone: 240 M parameters declared
printf 'type: transformer\ndim-emb: 1024\ndim-vocabs: [65536, 65536]\nenc-depth: 6\ndec-depth: 6\ntransformer-heads: 16\ntransformer-dim-ffn: 4096\ntied-embeddings-all: true\n' \
	> big.yml
npz config.npz big.yml
awk 'BEGIN { print "</s>: 0"; print "<unk>: 1"
	     for (i = 2; i < 65536; i++) print "p" i ": " i }' > vocab.yml
[ "$(wc -c < config.npz)" -lt 1000 ] || fail "config.npz is not small"
refused "config.npz: the Marian model has no Wemb (for tgt.emb)" \
	config.npz vocab.yml

# post.npz's model.yml, and a Wemb of 512 MiB of zeros in half a MB
python3 -c 'import sys, zipfile
sys.stdout.buffer.write(zipfile.ZipFile(sys.argv[1]).read(
    "special:model.yml.npy")[128:].rstrip(b"\0"))' "$F/post.npz" > post.yml ||
	fail "post.npz's model.yml"
npz zeros.npz post.yml Wemb 65536 2048
[ "$(wc -c < zeros.npz)" -lt 1000000 ] || fail "zeros.npz is not small"
refused "zeros.npz: Wemb: shape [36, 16] expected for tgt.emb (rank 2, 134217728 elements given)" \
	zeros.npz "$F/vocab.spm"

# the real model still imports in that memory
in_little_memory train-step --import marian -m post.tsr "$F/post.npz" \
	"$F/vocab.spm" || fail "post.npz is refused in little memory"
exit 0
