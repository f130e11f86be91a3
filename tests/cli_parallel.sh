#!/bin/sh
# Scale-out: a file cut into blocks by GNU parallel (--pipe --keep-order,
# by line count -N and by size --block, locally and through -S remote
# hosts) and run through the toolkit gives, byte for byte, what one process
# gives; empty lines, CRLF, invalid UTF-8, very long lines and a last line
# without a newline included.
set -u
. "$(dirname "$0")/lib/cli.sh"
sh "$root/tools/need.sh" parallel || exit 1
# GNU parallel quotes remote commands for the shell named by $SHELL, and
# with -S it fails silently when that is unset (as under some CI runners).
export SHELL=/bin/sh

# mkinput LINES WORDS AS: odd lines among LINES ordinary ones, with a line
# of WORDS words and one of AS letters a.
mkinput() {
	awk -v lines="$1" -v words="$2" -v as="$3" 'BEGIN {
	split("la casa verde el perro come pan y agua en la mesa", w, " ")
	printf "\n\n"
	for (i = 1; i <= lines; i++) {
		n = 1 + (i * 7) % 11; s = ""
		for (j = 0; j < n; j++) s = s (j ? " " : "") w[1 + (i + j * 3) % 12]
		if (i % 10 == 0) s = s "\r"
		if (i % 13 == 0) s = ""
		if (i % 17 == 0) s = s "\tcañón über naïve ünïcödé € 😀"
		if (i % 29 == 0) s = s " \377\376 invalid\001\177"
		print s
	}
	s = ""; for (i = 0; i < words; i++) s = s w[1 + i % 12] " "
	print s
	s = ""; for (i = 0; i < as; i++) s = s "a"
	print s
	printf "  leading and trailing blanks  \n\n\n"
	printf "the last line, with no newline"
}'
}

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

# split NAME CMD HOW...: CMD over the whole input $T/in, and over blocks of
# it cut by parallel with the options HOW (each one word: "lines", "size",
# "hosts"), gives the same bytes, and more than one block was made.
split() {
	name=$1 cmd=$2
	shift 2
	sh -c "$cmd" <"$T/in" >"$T/one" || fail "$name: one process failed"
	[ -s "$T/one" ] || fail "$name: no output"
	for how in "$@"; do
		case $how in
		lines) opt="-N 37 -j 3" ;;
		size) opt="--block 4k -j 2" ;;
		hosts) opt="-N 61 --ssh $T/fakessh -S 1/host1,1/host2"
			rm -f "$T/hosts" ;;
		esac
		rm -f "$T/jobs"
		parallel --will-cite --pipe --keep-order --joblog "$T/jobs" \
		    $opt "$cmd" <"$T/in" >"$T/par" 2>"$T/err" ||
			fail "$name: parallel $opt failed: $(cat "$T/err")"
		cmp "$T/one" "$T/par" >&2 ||
			fail "$name: parallel $opt: not the output of one process"
		[ "$(wc -l <"$T/jobs")" -gt 2 ] ||
			fail "$name: parallel $opt: the input was not split"
		[ "$how" != hosts ] ||
		    [ "$(sort -u "$T/hosts" | tr '\n' ' ')" = "host1 host2 " ] ||
			fail "$name: the remote hosts were not both used"
	done
}

# Subword ids and back: every line comes back byte for byte (and the last
# with a newline).
mkinput 300 12000 20000 >"$T/in"
[ "$(wc -l <"$T/in")" -gt 300 ] || fail "test input not made"
split tokenize "tokenize -v '$T/vocab' | tokenize -d -v '$T/vocab'" \
    lines size hosts
{ cat "$T/in"; echo; } | cmp - "$T/one" >&2 || fail "tokenize: not a round trip"

# The translation pipeline of an untrained model (deterministic nonsense,
# at most 8 target ids a line, and shorter long lines, to keep it quick).
new_model "$T/m.tsr" rnnsearch "$T/vocab" "$T/vocab" ||
	fail "train-step --init failed"
mkinput 120 1500 3000 >"$T/in"
m=$T/m.tsr
split decode "tokenize -m '$m' | embed -m '$m' | encode -m '$m' |
    attend -m '$m' | decode -m '$m' -a 0 -c 8" lines hosts
[ "$(wc -l <"$T/one")" -eq "$(($(wc -l <"$T/in") + 1))" ] ||
	fail "decode: not a line for every line"
split beam "tokenize -m '$m' | embed -m '$m' | encode -m '$m' |
    attend -m '$m' | beam -m '$m' -a 0 -c 8" size
exit 0
