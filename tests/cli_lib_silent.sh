#!/bin/sh
# The library never prints or exits on its own: libtensor needs nothing of
# the programs' static library (progname, warnx_, die, usage_error), and
# no file of lib/ includes a header of cmd/common.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-build}
case $BUILD in
/*) so=$BUILD/libtensor.so ;;
*) so=$root/$BUILD/libtensor.so ;;
esac
fail() { echo "cli_lib_silent: $*" >&2; exit 1; }

[ -e "$so" ] || fail "$so: not built"
prog='^(progname|warnx_|die|die_err|usage_error|prog_init|check_write)$'
bad=$(nm -D --undefined-only "$so" | awk -v p="$prog" '$NF ~ p')
[ -z "$bad" ] || fail "libtensor.so needs the programs' $bad"
if grep -rn '"common/' "$root/lib"; then
	fail "lib/ includes cmd/common"
fi
exit 0
