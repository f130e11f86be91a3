#!/bin/sh
# check-lines.sh [ROOT]: no C file (.c or .h) under ROOT/lib and ROOT/cmd
# (ROOT is . by default) longer than 800 lines: a file that outgrows them
# is split by what its parts are about, one job a file (doc/ARCHITECTURE.md).
# Prints FILE: N lines for each one over and exits 1 if there is any; 0 if
# none.

MAX=800

# Generated files, exempt by name: their length is their data's.
#   lib/base/unicode_cat.c   tools/gen_unicode.sh, from the Unicode tables
EXEMPT='lib/base/unicode_cat.c'

cd "${1:-.}" || exit 2
[ -d lib ] && [ -d cmd ] || {
	echo "check-lines: no lib/ and cmd/ in $(pwd)" >&2
	exit 2
}
bad=0
for f in $(find lib cmd -name '*.[ch]' | LC_ALL=C sort); do
	case " $EXEMPT " in *" $f "*) continue ;; esac
	n=$(awk 'END { print NR }' "$f")
	[ "$n" -gt "$MAX" ] || continue
	echo "$f: $n lines, more than $MAX:" \
	    "split it by what its parts are about"
	bad=$((bad + 1))
done
[ "$bad" -eq 0 ]
