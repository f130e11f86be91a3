#!/bin/sh
# Runs every benchmark binary given as arguments, then every bench/bench_*.sh,
# with the freshly built programs first on PATH.  Each prints its own figures.
# PyTorch's figures, where make bench-torch has written them
# ($BUILD/bench/torch.txt, ATTN_BENCH_TORCH), are the baseline of the
# ratios the model benches print beside their own.
BUILD=${BUILD:-build}
root=$(cd "$(dirname "$0")/.." && pwd)
case $BUILD in /*) bindir=$BUILD/bin ;; *) bindir=$root/$BUILD/bin ;; esac
PATH="$bindir:$PATH"
ATTN_BENCH_TORCH=${ATTN_BENCH_TORCH:-$bindir/../bench/torch.txt}
export PATH BUILD ATTN_BENCH_TORCH
cpu=$(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo 2>/dev/null | head -1)
echo "cpu: $cpu; ATTN_KERNELS=${ATTN_KERNELS:-(best of the CPU)}"
if [ -r "$ATTN_BENCH_TORCH" ]; then
	sed -n 's/^# /PyTorch figures: /p' "$ATTN_BENCH_TORCH"
	grep -q "^# cpu $cpu\$" "$ATTN_BENCH_TORCH" ||
		echo "PyTorch figures: measured on another CPU; ratios unsound"
	grep -q "^# isa ${ATTN_KERNELS:-native}\$" "$ATTN_BENCH_TORCH" ||
		echo "PyTorch figures: measured with another ATTN_KERNELS"
else
	echo "PyTorch figures absent ($ATTN_BENCH_TORCH): make bench-torch" \
	     "measures them"
fi
echo
status=0
for b in "$@" "$root"/bench/bench_*.sh; do
	[ -e "$b" ] || continue
	echo "== $(basename "$b")"
	case $b in *.sh) sh "$b" ;; *) "$b" ;; esac || status=1
	echo
done
exit $status
