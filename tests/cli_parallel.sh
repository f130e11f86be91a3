#!/bin/sh
# Scale-out: a file cut into blocks by GNU parallel (--pipe --keep-order,
# by line count -N and by size --block, locally and through -S remote
# hosts) and run through the toolkit gives, byte for byte, what one process
# gives; empty lines, CRLF, invalid UTF-8, very long lines and a last line
# without a newline included.
set -u
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "cli_parallel: $*" >&2; exit 1; }

# The input: odd lines among ordinary ones.
awk 'BEGIN {
	split("la casa verde el perro come pan y agua en la mesa", w, " ")
	printf "\n\n"
	for (i = 1; i <= 300; i++) {
		n = 1 + (i * 7) % 11; s = ""
		for (j = 0; j < n; j++) s = s (j ? " " : "") w[1 + (i + j * 3) % 12]
		if (i % 10 == 0) s = s "\r"
		if (i % 13 == 0) s = ""
		if (i % 17 == 0) s = s "\tcañón über naïve ünïcödé € 😀"
		if (i % 29 == 0) s = s " \377\376 invalid\001\177"
		print s
	}
	s = ""; for (i = 0; i < 12000; i++) s = s w[1 + i % 12] " "
	print s
	s = ""; for (i = 0; i < 20000; i++) s = s "a"
	print s
	printf "  leading and trailing blanks  \n\n\n"
	printf "the last line, with no newline"
}' >"$T/in"
[ "$(wc -l <"$T/in")" -gt 300 ] || fail "test input not made"

# A vocabulary learned from other text.
awk 'BEGIN { for (i = 0; i < 200; i++)
	print "la casa verde y el perro come pan en la mesa con agua" }' >"$T/corpus"
tokenize -l 300 "$T/corpus" >"$T/vocab" 2>/dev/null || fail "tokenize --learn failed"

# fakessh HOST -- COMMAND: ssh to this machine, for -S host1,host2.
cat >"$T/fakessh" <<'SSH'
#!/bin/sh
while [ $# -gt 0 ]; do case $1 in -*) shift ;; *) break ;; esac; done
echo "$1" >>"$T/hosts"
shift
[ "${1-}" = -- ] && shift
exec sh -c "$*"
SSH
chmod +x "$T/fakessh"
export T

# split NAME CMD: CMD over the whole input, and over blocks of it in three
# ways, gives the same bytes, and more than one block was made.
split() {
	sh -c "$2" <"$T/in" >"$T/one" || fail "$1: one process failed"
	[ -s "$T/one" ] || fail "$1: no output"
	rm -f "$T/hosts"
	for how in "-N 37 -j 3" "--block 4k -j 2" \
	    "-N 61 --ssh $T/fakessh -S 1/host1,1/host2"; do
		rm -f "$T/jobs"
		parallel --will-cite --pipe --keep-order --joblog "$T/jobs" \
		    $how "$2" <"$T/in" >"$T/par" 2>"$T/err" ||
			fail "$1: parallel $how failed: $(cat "$T/err")"
		cmp "$T/one" "$T/par" >&2 ||
			fail "$1: parallel $how: not the output of one process"
		[ "$(wc -l <"$T/jobs")" -gt 2 ] ||
			fail "$1: parallel $how: the input was not split"
	done
	[ "$(sort -u "$T/hosts" | tr '\n' ' ')" = "host1 host2 " ] ||
		fail "$1: the remote hosts were not both used"
}

# Subword ids and back: every line comes back byte for byte (and the last
# with a newline).
split tokenize "tokenize -v '$T/vocab' | tokenize -d -v '$T/vocab'"
{ cat "$T/in"; echo; } | cmp - "$T/one" >&2 || fail "tokenize: not a round trip"
exit 0
