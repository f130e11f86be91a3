#!/bin/sh
# The manual: every program cmd/NAME.c has a page man/man1/NAME.1 titled
# NAME(1); every page renders with no warning from mandoc or groff; every
# long option of a program (its getopt_long table, or its shared main's,
# and any --option its --help prints) appears in its page.
set -u
. "$(dirname "$0")/lib/cli.sh"
errors=0
sh "$root/tools/need.sh" mandoc groff || exit 1
bs=$(printf '\b')
# render PAGE: the page as plain text (run in man/, where .so resolves).
render() {
	(cd "$root/man" && mandoc -T ascii "$1") | sed "s/.$bs//g"
}

# options: the long options of the getopt_long table entries on stdin.
options() {
	grep -oE '\{ *"[a-z0-9][a-z0-9-]*" *, *(no|required|optional)_argument' |
		sed 's/^{ *"\([^"]*\)".*/\1/'
}

cd "$root/man" || exit 1
pages=$(ls man1/*.1 man5/*.5 man7/*.7 2>/dev/null)
[ -n "$pages" ] || { echo "cli_manpages: no pages in man/" >&2; exit 1; }
for p in $pages; do
	mandoc -T lint -W warning "$p" >"$T/lint" 2>&1 ||
		fail "$p: mandoc: $(cat "$T/lint")"
	groff -Tutf8 -ww -z -mandoc "$p" >"$T/groff" 2>&1
	[ -s "$T/groff" ] && fail "$p: groff: $(cat "$T/groff")"
done

for c in "$root"/cmd/*.c; do
	[ -e "$c" ] || continue
	name=$(basename "$c" .c)
	page=man1/$name.1
	if [ ! -f "$page" ]; then
		fail "$name: no manual page $page"
		continue
	fi
	render "$page" >"$T/page"
	head -n 1 "$T/page" | grep -qi "^$name(1)" ||
		fail "$page: not titled $name(1): $(head -n 1 "$T/page")"
	# The long options of the getopt_long table: {"name", xxx_argument, ...
	options <"$c" >"$T/table"
	# and those of the tables' shared entries (NAME_LONGOPTS of
	# cmd/common/*.h, which may hold others); or, for a program whose
	# whole main is shared (embed and encode: filter_stage_main), the
	# table of that main in cmd/common
	if [ ! -s "$T/table" ] && grep -q 'filter_stage_main(' "$c"; then
		sed -n '/^int filter_stage_main(/,/^}/p' \
			"$root/cmd/common/filter.c" | options >"$T/table"
	fi
	macros=$(grep -oE '[A-Z_]+_LONGOPTS' "$c" | sort -u)
	seen=
	while [ -n "$macros" ]; do
		next=
		for mac in $macros; do
			case " $seen " in *" $mac "*) continue ;; esac
			seen="$seen $mac"
			def=$(sed -n "/^#define $mac\\b/,/[^\\]\$/p" \
				"$root"/cmd/common/*.h)
			printf '%s\n' "$def" | options >>"$T/table"
			next="$next $(printf '%s\n' "$def" | sed 1d |
				grep -oE '[A-Z_]+_LONGOPTS')"
		done
		macros=$next
	done
	[ -s "$T/table" ] || fail "$c: no getopt_long option table found"
	for o in help version; do
		grep -qx "$o" "$T/table" || fail "$c: no --$o in its option table"
	done
	if command -v "$name" >/dev/null; then
		"$name" --help >"$T/help" 2>/dev/null ||
			fail "$name --help: exit status not 0"
	else
		fail "$name: not built"
		: >"$T/help"
	fi
	grep -oE -- '--[a-z0-9][a-z0-9-]*' "$T/help" | sed 's/^--//' >>"$T/table"
	for o in $(sort -u "$T/table"); do
		grep -qE -- "--$o([^a-z0-9-]|\$)" "$T/page" ||
			fail "$page: option --$o is not documented"
	done
done
[ $errors -eq 0 ]
