#!/bin/sh
# A model file cut short under a running decode (overwritten in place, as
# cp over it does, instead of replaced by rename) is not a bare "Bus
# error": decode says what happened and exits 1 (issue 16, item 10).  The
# decode waits on a pipe kept open, has answered a first line from the
# mapped model, the file is truncated, and the second line makes it read
# the lost pages.
set -u
. "$(dirname "$0")/lib/cli.sh"

perro_model m.tsr hidden=64 att=64 maxout=32 || exit 1
cp m.tsr live.tsr
mkfifo fin fout
sh -c "tokenize -m m.tsr | embed -m m.tsr -b 1 | encode -m m.tsr -b 1 |
       attend -m m.tsr -b 1 | decode -m live.tsr -c 3 -b 1 2> err;
       echo \$? > status" < fin > fout &
pids="$pids $!"
exec 3> fin 4< fout
echo "el perro" >&3
timeout 60 head -n 1 <&4 > first || fail "no answer to the first line"
: > live.tsr
echo "el gato come" >&3
# the end of the input ends the pipeline (and with it fout) at once
exec 3>&-
timeout 60 cat <&4 > rest
exec 4<&-
wait
[ "$(cat status)" = 1 ] || fail "decode exited $(cat status): $(cat err)"
[ "$(cat err)" = "decode: bus error: a mapped file (a model?) was cut \
short while in use; replace model files by rename (mv), never in place \
(cp)" ] || fail "decode: $(cat err)"
[ -s rest ] && fail "decode answered from a cut model: $(cat rest)"
exit 0
