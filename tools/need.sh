#!/bin/sh
# need.sh WHAT...: checks that what WHAT needs is installed, before a
# build or a test fails on its absence in some less clear way.  WHAT is
#   build   a C compiler ($CC, default cc) that finds zlib
#   check   build's, Check, pkg-config, nm, mandoc, groff, GNU parallel
#   fuzz    clang ($FUZZ_CC, default clang) with libFuzzer
# or one of the commands below (tests name what they run).  Silent and 0
# when nothing is missing; else one message naming each missing Debian
# package and the apt-get line that installs them, and 1.
CC=${CC:-cc}
missing=
why=
T=$(mktemp -d) || exit 1
trap 'rm -rf "$T"' EXIT

# lack PACKAGE WHY: PACKAGE is missing, for WHY.
lack() {
	case " $missing " in *" $1 "*) return ;; esac
	missing="$missing $1"
	why="$why, $1 ($2)"
}

# links COMPILER PACKAGE WHY CODE FLAGS...: a C program of CODE compiles
# and links with FLAGS, or PACKAGE is missing.
links() {
	c=$1 p=$2 w=$3 code=$4
	shift 4
	printf '%s\n' "$code" >"$T/t.c"
	$c -o "$T/t" "$T/t.c" "$@" >/dev/null 2>&1 || lack "$p" "$w"
}

# has COMMAND: the command is there, or its package is missing.
has() {
	case $1 in
	cc) command -v "$CC" >/dev/null 2>&1 || lack gcc "a C compiler, $CC" ;;
	pkg-config|make|mandoc|clang)
		command -v "$1" >/dev/null 2>&1 || lack "$1" "command $1" ;;
	nm) command -v nm >/dev/null 2>&1 || lack binutils "command nm" ;;
	groff) command -v groff >/dev/null 2>&1 ||
		lack groff-base "command groff" ;;
	# moreutils has a parallel of its own, with other options.
	parallel) parallel --version 2>/dev/null | grep -q 'GNU parallel' ||
		lack parallel "GNU parallel" ;;
	*) echo "need.sh: nothing known of \"$1\"" >&2; exit 2 ;;
	esac
}

build() {
	has cc
	case $missing in *gcc*) return ;; esac
	links "$CC" zlib1g-dev "zlib.h and -lz" '#include <zlib.h>
int main(void) { return zlibVersion() == 0; }' -lz
}

for what in "$@"; do
	case $what in
	build) build ;;
	check)
		build
		has pkg-config
		has nm
		has mandoc
		has groff
		has parallel
		case $missing in *gcc*) continue ;; esac
		# The flags the Makefile uses, pkg-config's or its fallback.
		flags=$(pkg-config --cflags --libs check 2>/dev/null) ||
			flags="-lcheck -lsubunit -lrt -lm -pthread"
		# shellcheck disable=SC2086
		links "$CC" check "check.h and libcheck, for the unit tests" \
		    '#include <check.h>
int main(void) { return srunner_create(NULL) == NULL; }' $flags
		;;
	fuzz)
		fcc=${FUZZ_CC:-clang}
		command -v "$fcc" >/dev/null 2>&1 ||
			{ lack clang "command $fcc"; continue; }
		v=$($fcc -dumpversion 2>/dev/null | cut -d. -f1)
		links "$fcc" "libclang-rt-$v-dev" "$fcc's libFuzzer" \
		    '#include <stddef.h>
#include <stdint.h>
int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { return 0; }' \
		    -fsanitize=fuzzer
		;;
	*) has "$what" ;;
	esac
done

[ -z "$missing" ] && exit 0
echo "attn: missing:${why#,}" >&2
echo "attn: on Debian or Ubuntu: sudo apt-get install$missing" >&2
exit 1
