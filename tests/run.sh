#!/bin/sh
# Runs every unit test binary given as arguments, then every tests/cli_*.sh
# with the freshly built programs first on PATH.  Prints one line per test
# and a closing "N passed, N failed" line; exits 1 if anything failed.
BUILD=${BUILD:-build}
root=$(cd "$(dirname "$0")/.." && pwd)
case $BUILD in /*) bindir=$BUILD/bin ;; *) bindir=$root/$BUILD/bin ;; esac
PATH="$bindir:$PATH"
export PATH BUILD
export CK_FORK=${CK_FORK:-yes}
# Check's default of 4 s per test is too short for ASan builds on a loaded
# two-core machine; a hang still ends, after CK_DEFAULT_TIMEOUT seconds.
export CK_DEFAULT_TIMEOUT=${CK_DEFAULT_TIMEOUT:-300}
pass=0 fail=0 failed=
log=$(mktemp)
trap 'rm -f "$log"' EXIT
for t in "$@" "$root"/tests/cli_*.sh; do
	[ -e "$t" ] || continue
	name=$(basename "$t")
	case $t in *.sh) set -- sh "$t" ;; *) set -- "$t" ;; esac
	if "$@" >"$log" 2>&1; then
		pass=$((pass + 1))
		echo "PASS: $name  $(grep -E '^[0-9]+%: Checks' "$log" | tail -1)"
	else
		fail=$((fail + 1))
		failed="$failed $name"
		echo "FAIL: $name"
		sed 's/^/    /' "$log" | tail -40
	fi
done
echo
[ -n "$failed" ] && echo "failed:$failed"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
