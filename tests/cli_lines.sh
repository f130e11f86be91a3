#!/bin/sh
# check-lines (tools/check-lines.sh, run by make check): C files of 800
# lines pass silently; one of 801, a .c or a .h, in lib/ or cmd/, fails
# naming the file and its length; the generated file it exempts and files
# that are not C pass whatever their length; the real tree passes.
set -u
. "$(dirname "$0")/lib/cli.sh"
check=$root/tools/check-lines.sh
errors=0

# lines FILE N: FILE with N lines.
lines() {
	mkdir -p "$(dirname "$1")"
	awk -v n="$2" 'BEGIN { for (i = 1; i <= n; i++) print "/* " i " */" }' \
	    >"$1"
}

mktree() {
	rm -rf "$T/t"
	lines "$T/t/lib/base/a.c" 800
	lines "$T/t/lib/run/b.h" 800
	lines "$T/t/cmd/c.c" 800
	lines "$T/t/cmd/common/d.c" 10
	lines "$T/t/lib/base/unicode_cat.c" 4000	# generated: exempt
	lines "$T/t/lib/base/notes.txt" 2000		# not C
	lines "$T/t/cmd/e.sh" 2000
}

mktree
sh "$check" "$T/t" >"$T/out" 2>&1 ||
	fail "files of 800 lines refused: $(cat "$T/out")"
[ -s "$T/out" ] && fail "files of 800 lines: output: $(cat "$T/out")"

# over FILE: FILE (under the tree) given 801 lines must fail, the one
# line of the report naming it and 801.
over() {
	mktree
	lines "$T/t/$1" 801
	sh "$check" "$T/t" >"$T/out" 2>/dev/null &&
		fail "$1 of 801 lines accepted"
	line="$1: 801 lines, more than 800: split it by what its parts are about"
	grep -qxF "$line" "$T/out" || fail "$1: printed '$(cat "$T/out")'"
	[ "$(wc -l <"$T/out")" -eq 1 ] ||
		fail "$1: more than its line: $(cat "$T/out")"
}
over lib/base/a.c
over lib/run/b.h
over cmd/c.c
over cmd/common/d.c
over lib/models/transformer/new.h

# No lib/ or cmd/: an error of its own, not a pass.
mkdir "$T/empty"
sh "$check" "$T/empty" >/dev/null 2>&1
[ $? -eq 2 ] || fail "a tree without lib/ and cmd/: not exit 2"

# The real tree passes.
sh "$check" "$root" >"$T/out" 2>/dev/null || fail "the tree: $(cat "$T/out")"

[ "$errors" -eq 0 ]
