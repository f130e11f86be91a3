#!/bin/sh
# A full disk under the programs' text output: each says so with the
# cause, "PROG: <stdout>: No space left on device", and exits 1 (the one
# path, prog_flush_stdout and die_stdout), never a bare "write error".  /dev/full fails
# every write with ENOSPC.
set -u
. "$(dirname "$0")/lib/cli.sh"
errors=0
[ -w /dev/full ] || { echo "cli_write_errors: no /dev/full" >&2; exit 1; }

# full CMD...: CMD with stdout on /dev/full exits 1 naming the cause
full() {
	"$@" > /dev/full 2> err
	st=$?
	[ $st -eq 1 ] || fail "$* > /dev/full: exit $st, not 1"
	grep -qx "$1: <stdout>: No space left on device" err ||
		fail "$* > /dev/full: '$(cat err)'"
}

perro_model m.tsr || exit 1
printf 'el perro\nel gato come\n' > in.txt
tokenize -m m.tsr in.txt > src.tsr || fail "tokenize"
stages m.tsr < src.tsr > mem.tsr || fail "the stages"
printf 'el perro\tel perro\nel gato come\tel gato come\n' |
	tokenize -m m.tsr -p | stages m.tsr > pairs.tsr || fail "the pairs"

full decode -m m.tsr < mem.tsr
full beam -m m.tsr < mem.tsr
full score -m m.tsr < pairs.tsr
full tensordump mem.tsr
full tensordump -v mem.tsr
full bleu -f text in.txt < in.txt
full tokenize -m m.tsr -f ids in.txt
tokenize -m m.tsr in.txt > ids.tsr
full tokenize -d -m m.tsr ids.tsr
full tokenize -l 270 in.txt
# --help and --version too (train-step's exited 0: issue 45, item 11)
for p in align attend beam bleu decode embed encode score tensordump \
	tokenize train-step; do
	full $p --help
	full $p --version
done
exit $((errors > 0))
