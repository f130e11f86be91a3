#!/bin/sh
# Runs every benchmark binary given as arguments, then every bench/bench_*.sh,
# with the freshly built programs first on PATH.  Each prints its own figures.
# PyTorch's figures, where make bench-torch has written them, are the
# baseline of the ratios the model benches print beside their own: those
# on the CPU's best kernels ($BUILD/bench/torch.txt) for attn's best, and
# those held to AVX2 (torch-avx2.txt) for ATTN_KERNELS=avx2 or avx2-novnni;
# ATTN_BENCH_TORCH names another file.  On a CPU with more than AVX2
# (AVX-512, or AVX-VNNI) the benches that compare with PyTorch run a second
# time, both sides held to AVX2 and attn to no VNNI (an AVX2 core without
# it, the commonest x86 server core), so that both pairs are printed.
BUILD=${BUILD:-build}
root=$(cd "$(dirname "$0")/.." && pwd)
case $BUILD in /*) bindir=$BUILD/bin ;; *) bindir=$root/$BUILD/bin ;; esac
PATH="$bindir:$PATH"
export PATH BUILD
cpu=$(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo 2>/dev/null | head -1)

# baseline: says which PyTorch figures the benches that follow compare
# with (ATTN_BENCH_TORCH), for the ATTN_KERNELS in force.
baseline() {
	case ${ATTN_KERNELS:-} in
	avx2*)	torch=${ATTN_BENCH_TORCH_AVX2:-$bindir/../bench/torch-avx2.txt} ;;
	*)	torch=${ATTN_BENCH_TORCH_BEST:-$bindir/../bench/torch.txt} ;;
	esac
	ATTN_BENCH_TORCH=$torch
	export ATTN_BENCH_TORCH
	echo "cpu: $cpu; ATTN_KERNELS=${ATTN_KERNELS:-(best of the CPU)}"
	if [ -r "$torch" ]; then
		sed -n 's/^# /PyTorch figures: /p' "$torch"
		grep -q "^# cpu $cpu\$" "$torch" ||
			echo "PyTorch figures: measured on another CPU; ratios unsound"
		grep -q "^# isa ${ATTN_KERNELS:-native}\$" "$torch" ||
			echo "PyTorch figures: measured with another ATTN_KERNELS"
	else
		echo "PyTorch figures absent ($torch): make bench-torch" \
		     "measures them"
	fi
	echo
}

status=0
run() {
	echo "== $(basename "$1")${ATTN_KERNELS:+ (ATTN_KERNELS=$ATTN_KERNELS)}"
	case $1 in *.sh) sh "$1" ;; *) "$1" ;; esac || status=1
	echo
}

if [ -n "${ATTN_BENCH_TORCH:-}" ]; then
	ATTN_BENCH_TORCH_BEST=$ATTN_BENCH_TORCH
	ATTN_BENCH_TORCH_AVX2=$ATTN_BENCH_TORCH
fi
baseline
for b in "$@" "$root"/bench/bench_*.sh; do
	[ -e "$b" ] && run "$b"
done

# The second pair: attn's AVX2 kernels without VNNI against PyTorch's AVX2.
if [ -z "${ATTN_KERNELS:-}" ] && grep -qE '^flags.* (avx512f|avx_vnni)' /proc/cpuinfo; then
	ATTN_KERNELS=avx2-novnni
	export ATTN_KERNELS
	baseline
	for b in "$@" "$root"/bench/bench_e2e.sh; do
		case $(basename "$b") in
		bench_transformer|bench_train_transformer|bench_e2e.sh) run "$b" ;;
		esac
	done
fi
exit $status
