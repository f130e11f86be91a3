#!/bin/sh
# Runs every benchmark binary given as arguments, then every bench/bench_*.sh,
# with the freshly built programs first on PATH.  Each prints its own figures.
BUILD=${BUILD:-build}
root=$(cd "$(dirname "$0")/.." && pwd)
case $BUILD in /*) bindir=$BUILD/bin ;; *) bindir=$root/$BUILD/bin ;; esac
PATH="$bindir:$PATH"
export PATH BUILD
status=0
for b in "$@" "$root"/bench/bench_*.sh; do
	[ -e "$b" ] || continue
	echo "== $(basename "$b")"
	case $b in *.sh) sh "$b" ;; *) "$b" ;; esac || status=1
	echo
done
exit $status
